'use strict'

const { tool, jsonSchema } = require('ai')
const { internals } = require('../registry')
const { callNative, ToolInvocationError } = require('../errors')
const { createLookup, needsApprovalFor, schemaFor } = require('./shared')
const { resolveToolName } = require('./names')
const { checkParams, invalidParamsError } = require('../guard')
const { providerTarget } = require('../provider')

const DESCRIPTION =
  'Call a deferred tool by name with its params. Inspect it first (tool_inspect, or tool_search with ' +
  'verbose): an un-inspected tool or params that do not match return its signature instead of running.'

const inputSchema = jsonSchema({
  type: 'object',
  properties: {
    name: { type: 'string', description: 'Tool name as returned by tool_search' },
    params: { type: 'object', description: "The tool's input, matching its signature" },
  },
  required: ['name'],
  additionalProperties: false,
})

/**
 * The checks every deferred call goes through, in order; returns the validated params.
 * `tool_exec` passes `requestApproval` (asks the host once the params are valid) and no
 * `inspectedNames` (its description already carries the signatures); `target` is the request's
 * provider, whose form of the schema the signatures show.
 */
async function admitCall({ lookup, native, trust, inspectedNames, requestApproval, target, shownNames }, asked, params, options) {
  // A tool its server changed, added late or poisoned is held by tool trust: say what changed.
  const held = typeof asked === 'string' && !lookup.allows(asked) ? trust?.heldSentence(asked) : undefined
  if (held !== undefined) throw new ToolInvocationError(held, 'TOOLREG_TOOL_HELD')
  const name = resolveToolName(lookup, asked, { shownNames })
  const entry = lookup.get(name)
  if (!entry) throw new ToolInvocationError(`Tool not found: ${name}`, 'TOOLREG_UNKNOWN_TOOL')
  if (typeof entry.tool.execute !== 'function') {
    throw new ToolInvocationError(`Tool ${name} has no execute handler`, 'TOOLREG_NOT_EXECUTABLE')
  }
  await schemaFor(entry)
  if (inspectedNames && !inspectedNames.has(name)) {
    inspectedNames.add(name)
    const strict = target && (target.strict || entry.tool.strict === true)
    const signature = callNative(() => native.describe(name, target?.provider, strict))
    throw new ToolInvocationError(
      `Tool "${name}" hasn't been inspected yet — its signature is below. Call tool_invoke again with params matching it:\n${signature}`,
      'TOOLREG_NOT_INSPECTED',
    )
  }
  const checked = await checkParams(native, name, entry.tool.inputSchema, params)
  if (checked.problems !== undefined) throw invalidParamsError(native, name, checked.problems)
  const value = checked.value
  // Decided on the params that will execute (defaults applied, transformed), never the raw ones.
  if (await needsApprovalFor(entry.tool, value, options)) {
    if (!requestApproval) {
      throw new ToolInvocationError(
        `Tool "${shownNames?.get(name) ?? name}" requires user approval; call it directly instead of via tool_invoke.`,
        'TOOLREG_APPROVAL_REQUIRED',
      )
    }
    await requestApproval(name, value)
  }
  return { name, entry, params: value }
}

/**
 * `tool_invoke`: runs a deferred tool after the allow-list, approval, inspect-first and
 * validation checks. The inner tool's `toModelOutput` shapes the result.
 */
function createToolInvokeTool(registry, allowedNames, inspectedNames = new Set(), requestEntries, opts = {}) {
  const context = {
    lookup: createLookup(registry, allowedNames, requestEntries),
    native: registry[internals].native,
    trust: registry[internals].trust,
    inspectedNames,
    target: providerTarget(opts),
    shownNames: opts.shownNames,
  }
  // toModelOutput only sees the outer input; remember which tool ran and what it received.
  const admittedCalls = new Map()

  return tool({
    description: DESCRIPTION,
    inputSchema,
    inputExamples: [{ input: { name: 'web_search', params: { query: 'latest rust release' } } }],
    async execute({ name, params = {} }, options = {}) {
      const admitted = await admitCall(context, name, params, options)
      const innerCallId = `${options.toolCallId}::${admitted.name}`
      admittedCalls.set(options.toolCallId, admitted)
      try {
        const output = await admitted.entry.tool.execute(admitted.params, { ...options, toolCallId: innerCallId })
        if (opts.usage) registry.recordUse(admitted.name, opts.usage)
        return output
      } catch (error) {
        admittedCalls.delete(options.toolCallId)
        throw error
      }
    },
    // Not async: hosts rebuilding messages call it synchronously, so it answers in kind with
    // the inner tool's (a promise only when the inner one returns one).
    toModelOutput({ toolCallId, input, output }) {
      const admitted = admittedCalls.get(toolCallId)
      admittedCalls.delete(toolCallId)
      const name = admitted?.name ?? input?.name
      const entry = name !== undefined && context.lookup.allows(name) ? context.lookup.get(name) : undefined
      const params = admitted?.params ?? input?.params ?? {}
      if (entry?.tool.toModelOutput) {
        return entry.tool.toModelOutput({ toolCallId: `${toolCallId}::${name}`, input: params, output })
      }
      return { type: 'json', value: output === undefined ? null : output }
    },
  })
}

module.exports = { createToolInvokeTool, admitCall }
