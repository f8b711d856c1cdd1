'use strict'

const { createHash } = require('node:crypto')
const native = require('../../binding.js')
const { invalidArgument } = require('../errors')

const STYLES = ['toolreg', 'reference']

/** Throws a TypeError naming `field` unless `style` is a wire id style. */
function checkStyle(field, style) {
  if (!STYLES.includes(style)) throw invalidArgument(field, `${JSON.stringify(style)} is not one of ${STYLES.map((s) => `'${s}'`).join(', ')}`)
}

/**
 * The name the model sees for an MCP tool: `mcp__<server>__<tool>`, provider-safe
 * (`^[a-zA-Z0-9_-]{1,64}$`), transliterated to ASCII, and unique per server id and tool name
 * (a short digest of `serverId + "\0" + toolName`).
 *
 * `{ style: 'reference' }` returns the reference registry's ids byte for byte (see
 * `referenceWireId`), so tool ids persisted in a migrating host's settings keep matching.
 */
function buildMcpToolWireId({ serverId, serverName, toolName }, { style = 'toolreg' } = {}) {
  for (const [field, value] of [['serverId', serverId], ['toolName', toolName]]) {
    if (typeof value !== 'string' || value === '') throw invalidArgument(field, 'expected a non-empty string')
  }
  if (serverName !== undefined && typeof serverName !== 'string') throw invalidArgument('serverName', 'expected a string')
  checkStyle('style', style)
  if (style === 'reference') return referenceWireId(serverId, serverName ?? serverId, toolName)
  return native.buildMcpToolWireId(serverId, serverName ?? serverId, toolName)
}

/** Longest id the reference builds, and how many hex chars of the identity digest end it. */
const REFERENCE_MAX_LEN = 63
const REFERENCE_DIGEST_HEX = 20

/** `tiny-pinyin`'s token type for a Han character (1 is Latin, 3 anything else). */
const HAN_TOKEN = 2

let tinyPinyin
/** `tiny-pinyin`, loaded on first use of the reference style only. */
function pinyin() {
  tinyPinyin ??= require('tiny-pinyin')
  return tinyPinyin
}

/**
 * The reference's camelCase: trim, lowercase, a run of characters outside `[a-z0-9]` followed by
 * any character becomes that character upper-cased, then everything outside `[a-zA-Z0-9]` is
 * dropped (non-ASCII included); a leading digit gets a `_`. Kept operation for operation, since
 * ids must match byte for byte (e.g. a run followed by a non-ASCII letter capitalises nothing).
 */
function referenceCamelCase(text) {
  const joined = text
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+(.)/g, (_run, next) => next.toUpperCase())
    .replace(/[^a-zA-Z0-9]/g, '')
  return /^[0-9]/.test(joined) ? `_${joined}` : joined
}

/** Han characters romanised by tiny-pinyin, each syllable its own word; everything else as is. */
function referenceSlug(text) {
  const tp = pinyin()
  if (!tp.isSupported()) return referenceCamelCase(text)
  const romanised = tp
    .parse(text)
    .map((token) => (token.type === HAN_TOKEN ? ` ${token.target} ` : token.source))
    .join('')
  return referenceCamelCase(romanised)
}

/**
 * `mcp__<server>__<tool>` in the reference's slugs, cut to leave room for the digest, trailing
 * `_` removed, then always `_` + the first 20 hex chars of `sha256(serverId + "\0" + toolName)`.
 */
function referenceWireId(serverId, serverName, toolName) {
  const digest = createHash('sha256').update(`${serverId}\0${toolName}`).digest('hex').slice(0, REFERENCE_DIGEST_HEX)
  const body = `mcp__${referenceSlug(serverName) || 'server'}__${referenceSlug(toolName) || 'tool'}`
    .slice(0, REFERENCE_MAX_LEN - REFERENCE_DIGEST_HEX - 1)
    .replace(/_+$/, '')
  return `${body}_${digest}`
}

/**
 * Whether `wireId` can be a reference-style id of a tool on a server with this display name,
 * decided from the id alone: its body starts with the server's `mcp__<slug>__`, or, cut short,
 * is a start of it (so long names sharing their first characters may all match).
 */
function isReferenceWireIdOf(wireId, serverName) {
  const body = REFERENCE_ID.exec(wireId)?.[1]
  if (body === undefined) return false
  const prefix = `mcp__${referenceSlug(serverName) || 'server'}__`
  return body.length >= prefix.length ? body.startsWith(prefix) : prefix.startsWith(body)
}

const REFERENCE_ID = new RegExp(`^(mcp__.*)_[0-9a-f]{${REFERENCE_DIGEST_HEX}}$`)

module.exports = { buildMcpToolWireId, isReferenceWireIdOf, checkStyle }
