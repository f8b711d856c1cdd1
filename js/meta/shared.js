'use strict'

const native = require('../../binding.js')
const { resolveJsonSchema } = require('../schema')
const { hasApprovalGate } = require('../registry')

/** Wire names of the meta-tools. */
const MetaToolName = Object.freeze({
  Search: 'tool_search',
  Inspect: 'tool_inspect',
  Invoke: 'tool_invoke',
  Exec: 'tool_exec',
})

/**
 * The entries a request may reach, captured when its meta-tools are built: an MCP sync for
 * another request can replace or evict entries meanwhile, and this request keeps one
 * consistent view. Names allowed but not yet registered are looked up live.
 */
class Lookup {
  #registry
  #allowed
  #snapshot

  /** `allowed` undefined: every registered name. */
  constructor(registry, allowed, snapshot = new Map()) {
    this.#registry = registry
    this.#allowed = allowed
    this.#snapshot = snapshot
  }

  allows(name) {
    return this.#allowed === undefined || this.#allowed.has(name)
  }

  get(name) {
    return this.#snapshot.get(name) ?? this.#registry.getByName(name)
  }

  /** The allowed names (every registered name when all are allowed). */
  *[Symbol.iterator]() {
    if (this.#allowed) yield* this.#allowed
    else for (const entry of this.#registry.getAll()) yield entry.name
  }
}

/**
 * A prebuilt `Lookup` (the exposition shares one per tool set) or one over `allowedNames`.
 * `requestEntries` (name → entry) are this request's own copies, e.g. from `selectActive` with
 * a `buildTool`; they win over the registered entries.
 */
function createLookup(registry, allowedNames, requestEntries) {
  if (allowedNames instanceof Lookup) return allowedNames
  const registered = (name) => requestEntries?.get(name) ?? registry.getByName(name)
  if (allowedNames === undefined) return new Lookup(registry, undefined, requestEntries)
  const allowed = new Set(allowedNames)
  const snapshot = new Map()
  for (const name of allowed) {
    const entry = registered(name)
    if (entry) snapshot.set(name, entry)
  }
  return new Lookup(registry, allowed, snapshot)
}

/**
 * The deferred entries `tool_search` ranks over (name → entry, captured like a `Lookup`), and
 * the native name filter built from them on the first search.
 */
class DeferredView {
  #nameSet = null

  constructor(entries) {
    this.entries = entries
  }

  get nameSet() {
    return (this.#nameSet ??= new native.NameSet([...this.entries.keys()]))
  }

  static of(registry, deferredNames, requestEntries) {
    if (deferredNames instanceof DeferredView) return deferredNames
    const entries = new Map()
    for (const name of deferredNames) {
      const entry = requestEntries?.get(name) ?? registry.getByName(name)
      if (entry) entries.set(name, entry)
    }
    return new DeferredView(entries)
  }
}

/** Approval check used before any deferred call: an unknown shape or a throwing check fails closed. */
async function needsApprovalFor(tool, input, options = {}) {
  const { needsApproval } = tool
  if (needsApproval === undefined || needsApproval === false) return false
  if (needsApproval === true) return true
  if (typeof needsApproval !== 'function') return true
  try {
    return Boolean(
      await needsApproval(input, {
        toolCallId: options.toolCallId,
        messages: options.messages ?? [],
        experimental_context: options.experimental_context,
      }),
    )
  } catch {
    return true
  }
}

/**
 * The reference registry's `isApprovalGated(tool, ctx?)`: resolves to whether this call needs
 * approval, calling a `needsApproval` function with `ctx.input`. Fails closed: a function that
 * throws or rejects, or a value that is neither boolean nor function, means gated.
 * @param {{ input?, toolCallId?, messages?, experimental_context? }} [ctx]
 */
async function isApprovalGated(tool, ctx = {}) {
  return needsApprovalFor(tool, ctx.input, ctx)
}

async function schemaFor(entry) {
  return (await resolveJsonSchema(entry.tool)) ?? {}
}

module.exports = { MetaToolName, Lookup, DeferredView, createLookup, needsApprovalFor, hasApprovalGate, isApprovalGated, schemaFor }
