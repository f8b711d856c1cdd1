'use strict'

/**
 * Errors with a stable `code`. Invalid input is a `TypeError` (what JS callers expect from a
 * bad argument); everything else is a `ToolregError`.
 */
class ToolregError extends Error {
  constructor(message, code, options) {
    super(message, options)
    this.name = 'ToolregError'
    this.code = code
  }
}

/** A tool call the meta-tools refused or could not run; the message is written for the model. */
class ToolInvocationError extends ToolregError {
  constructor(message, code, options) {
    super(message, code, options)
    this.name = 'ToolInvocationError'
  }
}

function invalidArgument(field, reason) {
  const error = new TypeError(`invalid ${field}: ${reason}`)
  error.code = 'TOOLREG_INVALID_ARGUMENT'
  return error
}

/** Codes that mean the caller passed something unusable: surfaced as `TypeError`s. */
const BAD_INPUT_CODES = new Set(['TOOLREG_INVALID_ARGUMENT', 'TOOLREG_MCP_INVALID_CONFIG'])

/** `[CODE] message`, then optionally `[details] raw text` on a line of its own (the MCP hub's). */
const NATIVE_PREFIX = /^\[(TOOLREG_[A-Z_]+)\] ([\s\S]*?)(?:\n\[details\] ([\s\S]*))?$/

/** A Rust type path (`crate::module::Type<…>`), generics included. */
const RUST_PATH = /\b[a-z_][a-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)+(?:<[^\s]*>)?/g
/** rmcp's wrapper around a transport's error: only the error inside says anything. */
const TRANSPORT_WRAPPER = /(?:Send message error )?Transport \[[^\s\]]*(?:\][^\s\]]*)*\] error: /g
/** An HTML document, up to its end or the end of the text. */
const HTML_DOCUMENT = /<(?:!doctype html|html)\b[\s\S]*?(?:<\/html>|$)/gi

/**
 * The last guard on error text that reaches users (the CLI, McpHub's errors, the gateway's
 * log): Rust type paths shortened to their last name, HTML pages to their title. The sentences
 * are written clean at their source; this only keeps a new library message from leaking.
 */
function cleanErrorText(text) {
  return String(text)
    .replace(TRANSPORT_WRAPPER, '')
    .replace(RUST_PATH, (path) => path.replace(/<[\s\S]*$/, '').split('::').pop())
    .replace(HTML_DOCUMENT, (page) => {
      const title = /<title[^>]*>([^<]*)/i.exec(page)?.[1].replace(/\s+/g, ' ').trim()
      return title ? `(an HTML page titled "${title}")` : '(an HTML page)'
    })
}

/**
 * Turns an error thrown by the addon (`[CODE] message`) into the matching JS error; the raw
 * transport error behind a message, when the addon sends one, is its `details`.
 */
function fromNative(error) {
  const match = typeof error?.message === 'string' ? NATIVE_PREFIX.exec(error.message) : null
  if (!match) return error
  const [, code, rawMessage, details] = match
  const message = cleanErrorText(rawMessage)
  const converted = BAD_INPUT_CODES.has(code) ? Object.assign(new TypeError(message), { code }) : new ToolregError(message, code)
  if (details !== undefined) converted.details = details
  return converted
}

/** Runs a call into the addon, rethrowing its errors as JS errors with codes. */
function callNative(fn) {
  try {
    return fn()
  } catch (error) {
    throw fromNative(error)
  }
}

module.exports = { ToolregError, ToolInvocationError, invalidArgument, fromNative, callNative, cleanErrorText }
