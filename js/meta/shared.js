'use strict'

const native = require('../../binding.js')
const { resolveJsonSchema } = require('../schema')
const { isApprovalGated } = require('../registry')

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
}

/** A prebuilt `Lookup` (the exposition shares one per tool set) or one over `allowedNames`. */
function createLookup(registry, allowedNames) {
  if (allowedNames instanceof Lookup) return allowedNames
  if (allowedNames === undefined) return new Lookup(registry, undefined)
  const allowed = new Set(allowedNames)
  const snapshot = new Map()
  for (const name of allowed) {
    const entry = registry.getByName(name)
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

  static of(registry, deferredNames) {
    if (deferredNames instanceof DeferredView) return deferredNames
    const entries = new Map()
    for (const name of deferredNames) {
      const entry = registry.getByName(name)
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

async function schemaFor(entry) {
  return (await resolveJsonSchema(entry.tool)) ?? {}
}

module.exports = { MetaToolName, Lookup, DeferredView, createLookup, needsApprovalFor, isApprovalGated, schemaFor }
