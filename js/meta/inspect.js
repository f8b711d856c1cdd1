'use strict'

const { tool, jsonSchema } = require('ai')
const { internals } = require('../registry')
const { callNative, ToolInvocationError } = require('../errors')
const { createLookup, schemaFor } = require('./shared')
const { resolveToolName } = require('./names')
const { providerTarget } = require('../provider')

const DESCRIPTION =
  "Show a deferred tool's signature (JSDoc with every parameter, its type, whether it is required, " +
  'enum values and defaults). Call it before tool_invoke.'

const inputSchema = jsonSchema({
  type: 'object',
  properties: { name: { type: 'string', description: 'Tool name as returned by tool_search' } },
  required: ['name'],
  additionalProperties: false,
})

/**
 * `tool_inspect`: the tool's signature as JSDoc, plus its exact JSON Schema when JSDoc cannot
 * show it (in the form `opts.provider` accepts, when given). Records the name as inspected,
 * which unlocks `tool_invoke` for it.
 */
function createToolInspectTool(registry, allowedNames, inspectedNames = new Set(), requestEntries, opts = {}) {
  const lookup = createLookup(registry, allowedNames, requestEntries)
  const target = providerTarget(opts)
  const { native } = registry[internals]
  return tool({
    description: DESCRIPTION,
    inputSchema,
    inputExamples: [{ input: { name: 'mcp__github__create_issue' } }],
    async execute({ name: asked }) {
      const name = resolveToolName(lookup, asked, { shownNames: opts.shownNames })
      const entry = lookup.get(name)
      if (!entry) throw new ToolInvocationError(`Tool not found: ${name}`, 'TOOLREG_UNKNOWN_TOOL')
      await schemaFor(entry)
      const strict = target && (target.strict || entry.tool.strict === true)
      const description = callNative(() => native.describe(name, target?.provider, strict))
      inspectedNames.add(name)
      return description
    },
    toModelOutput: ({ output }) => ({ type: 'text', value: String(output) }),
  })
}

module.exports = { createToolInspectTool }
