'use strict'

const { resolveJsonSchema } = require('../schema')

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
 * `requestEntries` (name → entry) are this request's own copies, e.g. from `selectActive` with
 * a `buildTool`; they win over the registered entries.
 */
function createLookup(registry, allowedNames, requestEntries) {
  const registered = (name) => requestEntries?.get(name) ?? registry.getByName(name)
  if (allowedNames === undefined) {
    return { allows: () => true, get: registered }
  }
  const allowed = new Set(allowedNames)
  const snapshot = new Map()
  for (const name of allowed) {
    const entry = registered(name)
    if (entry) snapshot.set(name, entry)
  }
  return {
    allows: (name) => allowed.has(name),
    get: (name) => snapshot.get(name) ?? registry.getByName(name),
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

/** Whether a tool may need approval, decided without calling anything (the defer decision's rule). */
function hasApprovalGate(tool) {
  return tool.needsApproval === true || typeof tool.needsApproval === 'function'
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

module.exports = { MetaToolName, createLookup, needsApprovalFor, hasApprovalGate, isApprovalGated, schemaFor }
