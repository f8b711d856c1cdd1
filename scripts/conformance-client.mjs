#!/usr/bin/env node
// The MCP client that the official conformance suite drives:
//   conformance client --command "node scripts/conformance-client.mjs" --scenario <name>
// The suite starts the scenario's test server, appends its URL to the command and sets
// MCP_CONFORMANCE_SCENARIO. This client uses McpHub exactly as a host would, with no path of
// its own per scenario: it lists the server's tools and calls each one with arguments built
// from its input schema, accepting any elicitation, then closes.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { McpHub } = require('../index.js')

/** A value of the schema's type: its default or first enum value when it has one. */
function sample(schema = {}) {
  if (schema.default !== undefined) return schema.default
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case 'number':
    case 'integer':
      return 1
    case 'boolean':
      return true
    case 'array':
      return []
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([key, property]) => [key, sample(property)]))
    default:
      return 'test'
  }
}

const url = process.argv.at(-1)
// A user who accepts what a server asks with the values it proposes: the hub fills in the
// schema's defaults (SEP-1034).
const hub = new McpHub({
  servers: [{ id: 'scenario', name: 'scenario', type: 'streamableHttp', url }],
  onElicitation: async () => ({ action: 'accept', content: {} }),
})
let failed = false
try {
  for (const tool of await hub.listTools('scenario')) {
    const args = sample({ type: 'object', ...tool.inputSchema })
    try {
      const result = await hub.callTool('scenario', tool.name, args)
      console.log(JSON.stringify({ tool: tool.name, args, isError: result.isError === true }))
    } catch (error) {
      failed = true
      console.error(`${tool.name}: ${error.code ?? ''} ${error.message}`)
    }
  }
} catch (error) {
  failed = true
  console.error(`${error.code ?? 'error'}: ${error.message}`)
} finally {
  await hub.close()
}
process.exit(failed ? 1 : 0)
