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

const NATIVE_PREFIX = /^\[(TOOLREG_[A-Z_]+)\] ([\s\S]*)$/

/** Turns an error thrown by the addon (`[CODE] message`) into the matching JS error. */
function fromNative(error) {
  const match = typeof error?.message === 'string' ? NATIVE_PREFIX.exec(error.message) : null
  if (!match) return error
  const [, code, message] = match
  if (BAD_INPUT_CODES.has(code)) {
    const typeError = new TypeError(message)
    typeError.code = code
    return typeError
  }
  return new ToolregError(message, code)
}

/** Runs a call into the addon, rethrowing its errors as JS errors with codes. */
function callNative(fn) {
  try {
    return fn()
  } catch (error) {
    throw fromNative(error)
  }
}

module.exports = { ToolregError, ToolInvocationError, invalidArgument, fromNative, callNative }
