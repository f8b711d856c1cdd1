import { asSchema, tool, jsonSchema } from 'ai'
import { z } from 'zod'
import { ToolRegistry } from '../index.js'

/** A registry whose warnings are collected instead of printed. */
export function quietRegistry() {
  const warnings = []
  const registry = new ToolRegistry({ logger: { warn: (message) => warnings.push(message) } })
  return { registry, warnings }
}

export function simpleTool(description = 'does something', extra = {}) {
  return tool({
    description,
    inputSchema: z.object({ query: z.string().describe('What to look for') }),
    execute: async ({ query }) => ({ echoed: query }),
    ...extra,
  })
}

export function entry(name, overrides = {}) {
  return {
    name,
    namespace: 'web',
    description: `${name} tool`,
    defer: 'auto',
    tool: simpleTool(`${name} description`),
    ...overrides,
  }
}

/** An entry whose definition is large: `chars` characters of description. */
export function heavyEntry(name, chars, overrides = {}) {
  const words = []
  let length = 0
  for (let i = 0; length < chars; i++) {
    const word = `word${i % 97}`
    words.push(word)
    length += word.length + 1
  }
  return entry(name, { tool: simpleTool(words.join(' ').slice(0, chars)), ...overrides })
}

export function mcpTool(schema, execute = async (input) => ({ ok: true, input })) {
  return tool({ description: 'an MCP tool', inputSchema: jsonSchema(schema), execute })
}

/** Registers a test tool `name` (namespace `test`) whose params default to `{ value }`. */
export function registerTool(registry, name, execute, { schema = { type: 'object', properties: { value: {} } }, needsApproval } = {}) {
  registry.register({
    name,
    namespace: 'test',
    description: `${name} tool`,
    defer: 'auto',
    tool: tool({ description: `${name} tool`, inputSchema: jsonSchema(schema), needsApproval, execute }),
  })
}

/** A registry made with `options` holding `tools` (`[name, description]` pairs, deferred, doing nothing); its warnings collected. */
export function registryOfTools(tools, options = {}) {
  const warnings = []
  const registry = new ToolRegistry({ logger: { warn: (m) => warnings.push(m) }, ...options })
  registry.registerMany(
    tools.map(([name, description]) => ({
      name,
      namespace: 'demo',
      description,
      defer: 'always',
      tool: tool({ description, inputSchema: jsonSchema({ type: 'object' }), execute: async () => null }),
    })),
  )
  return { registry, warnings }
}

/**
 * `handed` is the host's `original` as applyDeferExposition hands a registered tool out: its
 * description, approval gate, execute and output shaping, the schema the provider is sent, and
 * toolreg's input check as the schema's `validate`.
 */
export function expectHandedOut(expect, handed, original) {
  expect(handed, 'handed out').toBeDefined()
  for (const key of ['description', 'needsApproval', 'execute', 'toModelOutput', 'providerOptions']) expect(handed[key], key).toBe(original[key])
  expect(handed.inputSchema.jsonSchema).toEqual(asSchema(original.inputSchema).jsonSchema)
  expect(typeof handed.inputSchema.validate).toBe('function')
}
