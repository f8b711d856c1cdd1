// The on-disk cache of each server's last tools/list, so commands answer without starting
// servers whose tools are known, and of its last failure, so a broken server does not cost every
// command its whole timeout. Keyed by a digest of everything that starts the server (command,
// args, env, cwd, url, headers), so an edited config entry is never served stale tools nor an
// old failure; the files hold the tool list or the failure's sentence only, never the env or
// headers themselves.
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

/** How long a listing is trusted without --refresh: servers rarely change tools within a day. */
export const CACHE_MAX_AGE_MS = 24 * 60 * 60 * 1000

export function cacheDir(env = process.env) {
  return join(env.TOOLREG_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'toolreg'), 'tools-list')
}

/** A server config's digest; `{ key }` is a digest made by the caller. */
function keyOf({ key, type, command, args, env, cwd, url, headers }) {
  return key ?? createHash('sha256').update(JSON.stringify({ type, command, args, env, cwd, url, headers })).digest('hex').slice(0, 32)
}

/**
 * How long a failure is remembered before the server is tried again: long enough that a burst
 * of commands pays for a hanging server at most once, short enough that a server fixed
 * outside toolreg (an install, a login) is soon tried again without --refresh. The retry runs
 * in the background (a detached process for CLI commands, a timer in `serve`): no command or
 * request waits on it, and the failure stays remembered until the server starts.
 */
export const FAILURE_MAX_AGE_MS = 10 * 60 * 1000

const fileOf = (config, kind) => join(cacheDir(), `${keyOf(config)}${kind}.json`)

function readSaved(config, kind, maxAgeMs, now) {
  try {
    const saved = JSON.parse(readFileSync(fileOf(config, kind), 'utf8'))
    return now - saved.savedAt < maxAgeMs ? saved : null
  } catch {
    return null // nothing saved yet, or an unreadable file: as if nothing were saved
  }
}

/** Saves `value` with the time; a cache that cannot be written only costs the next run a start-up. */
function writeSaved(config, kind, value) {
  try {
    mkdirSync(cacheDir(), { recursive: true })
    const file = fileOf(config, kind)
    // Written aside and renamed: a concurrent reader sees the old file or the new, never half.
    writeFileSync(`${file}.${process.pid}`, JSON.stringify({ server: config.id, savedAt: Date.now(), ...value }))
    renameSync(`${file}.${process.pid}`, file)
  } catch {
    // read-only home, full disk: carry on without a cache
  }
}

/** `{ tools, savedAt }` of a fresh listing of this server config, or null. */
export function readCachedTools(config, { maxAgeMs = CACHE_MAX_AGE_MS, now = Date.now() } = {}) {
  const saved = readSaved(config, '', maxAgeMs, now)
  return Array.isArray(saved?.tools) ? saved : null
}

/**
 * Saves a live listing (with the server's `instructions`, null when it sent none), and forgets
 * the server's last failure.
 */
export function writeCachedTools(config, tools, instructions) {
  writeSaved(config, '', { tools, instructions })
  for (const kind of ['.failed', '.slow']) {
    try {
      rmSync(fileOf(config, kind), { force: true })
    } catch {
      // an unremovable file: the memory is forgotten when it ages out
    }
  }
}

/**
 * Remembers that the server had not listed its tools when `serve` answered its first
 * `tools/list` (it neither answered nor failed within the start-up wait): the next start does
 * not wait for it either, but lists it in the background. Forgotten when it lists its tools.
 */
export function rememberSlowStart(config) {
  writeSaved(config, '.slow', {})
}

/** `{ savedAt }` when the server was slower than `serve`'s start-up wait at an earlier start (within a day), or null. */
export function readSlowStart(config, { maxAgeMs = CACHE_MAX_AGE_MS, now = Date.now() } = {}) {
  return readSaved(config, '.slow', maxAgeMs, now)
}

/**
 * `{ summary, hint?, savedAt }` of this server config's last failure (since it last started),
 * or null; `maxAgeMs` (FAILURE_MAX_AGE_MS unless given, Infinity for every one kept) bounds
 * how old it may be.
 */
export function readRememberedFailure(config, { maxAgeMs = FAILURE_MAX_AGE_MS, now = Date.now() } = {}) {
  const saved = readSaved(config, '.failed', maxAgeMs, now)
  return typeof saved?.summary === 'string' ? saved : null
}

/**
 * `{ definitions, instructions }` the gateway last served for these inputs (`key`: a digest of
 * everything its tool list follows from), or null: a start with the same servers and tools
 * answers the client from it while the token counts are rebuilt.
 */
export function readGatewayAnswer(key, { maxAgeMs = CACHE_MAX_AGE_MS, now = Date.now() } = {}) {
  const saved = readSaved({ key }, '.answer', maxAgeMs, now)
  return Array.isArray(saved?.definitions) ? saved : null
}

export function writeGatewayAnswer(key, { definitions, instructions }) {
  writeSaved({ key }, '.answer', { definitions, instructions })
}

/** Remembers why the server failed to start (the one-sentence summary and hint, never its stderr). */
export function rememberFailure(config, { summary, hint }) {
  writeSaved(config, '.failed', { summary, ...(hint && { hint }) })
}
