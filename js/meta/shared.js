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
 */
function createLookup(registry, allowedNames) {
  if (allowedNames === undefined) {
    return { allows: () => true, get: (name) => registry.getByName(name) }
  }
  const allowed = new Set(allowedNames)
  const snapshot = new Map()
  for (const name of allowed) {
    const entry = registry.getByName(name)
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

/** Whether a tool is approval-gated at all, decided without calling anything. */
function isApprovalGated(tool) {
  return tool.needsApproval === true || typeof tool.needsApproval === 'function'
}

async function schemaFor(entry) {
  return (await resolveJsonSchema(entry.tool)) ?? {}
}

module.exports = { MetaToolName, createLookup, needsApprovalFor, isApprovalGated, schemaFor }
