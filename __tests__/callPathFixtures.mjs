// Every path a call of a registered tool can take goes through the same check: shared by
// callPaths.test.mjs (ai@6) and the ai@7 lane, so each side brings its own `ai`, model mock and
// toolreg. The tool is what MCP sync makes of a server's tool: a plain JSON Schema, no validator.

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
}
const step = (content, unified = 'tool-calls') => ({ content, finishReason: { unified, raw: undefined }, usage, warnings: [] })
const call = (id, toolName, input) => step([{ type: 'tool-call', toolCallId: id, toolName, input: JSON.stringify(input) }])

export const TRANSFER_SCHEMA = {
  type: 'object',
  properties: {
    amount: { type: 'number', exclusiveMinimum: 0 },
    to: { type: 'string', pattern: '^[A-Z]{3}[0-9]*$' },
    memo: { type: 'string', default: 'none' },
  },
  required: ['amount', 'to'],
  additionalProperties: false,
}

/**
 * A registry with `transfer` (deferred unless `inline`) behind a plain `jsonSchema()`, an
 * eager `echo`, and enough deferred filler that the catalog is worth deferring.
 */
export function transferRegistry({ tool, jsonSchema, ToolRegistry }, { inline = false } = {}) {
  const registry = new ToolRegistry({ logger: { warn() {} } })
  const ran = []
  const transfer = tool({
    description: 'Transfer money to an account',
    inputSchema: jsonSchema(TRANSFER_SCHEMA),
    execute: async (input) => {
      ran.push(input)
      return { ok: true }
    },
  })
  registry.register({ name: 'transfer', namespace: 'mcp:bank', description: 'Transfer money to an account', defer: inline ? 'never' : 'always', tool: transfer })
  registry.register({ name: 'echo', namespace: 'util', description: 'Echo text', defer: 'never', tool: tool({ inputSchema: jsonSchema({ type: 'object', properties: { text: { type: 'string' } } }), execute: async ({ text }) => text }) })
  for (let i = 0; i < 3; i++) {
    registry.register({ name: `weather_${i}`, namespace: 'mcp:weather', description: `Weather report ${i}`, defer: inline ? 'never' : 'always', tool: tool({ inputSchema: jsonSchema({ type: 'object', properties: {} }), execute: async () => 'sunny' }) })
  }
  const tools = Object.fromEntries(registry.getAll().map((entry) => [entry.name, entry.tool]))
  return { registry, tools, ran }
}

/** The tool results of a run, as `[toolName, 'ok' | error text]`. */
function outcomes(result) {
  return result.steps.flatMap((s) =>
    s.content.filter((part) => part.type === 'tool-result' || part.type === 'tool-error').map((part) => [part.toolName, part.type === 'tool-error' ? String(part.error?.message ?? part.error) : 'ok']),
  )
}

/**
 * One conversation with a scripted model: a call of `transfer` before any search (refused: the
 * model never saw it, where a search loads it), a search, an invalid call (refused, never run),
 * a valid one (runs, with the schema's default filled in). `opts` are applyDeferExposition's.
 */
export async function invalidCallScenario(deps, expect, opts) {
  const { generateText, stepCountIs, applyDeferExposition, MockModel } = deps
  const inline = opts.strategy === 'inline'
  const { registry, tools, ran } = transferRegistry(deps, { inline })
  const exposed = await applyDeferExposition(tools, registry, 128_000, inline ? {} : opts)
  expect(exposed.strategy).toBe(opts.expectStrategy ?? opts.strategy)
  const meta = exposed.strategy === 'meta-tools'
  const bad = { amount: 'lots', to: 'XYZ1' }
  const good = { amount: 5, to: 'EUR' }
  const script = meta
    ? [
        call('c1', 'tool_search', { query: 'transfer money' }),
        call('c2', 'tool_inspect', { name: 'transfer' }),
        call('c3', 'tool_invoke', { name: 'transfer', params: bad }),
        call('c4', 'tool_invoke', { name: 'transfer', params: good }),
      ]
    : [
        ...(inline ? [] : [call('c0', 'transfer', good)]),
        // OpenAI's client tool search takes its input as `arguments`.
        ...(inline ? [] : [call('c1', 'tool_search', exposed.strategy === 'openai-native' ? { arguments: { query: 'transfer money' } } : { query: 'transfer money' })]),
        call('c3', 'transfer', bad),
        call('c4', 'transfer', good),
      ]
  script.push(step([{ type: 'text', text: 'done' }], 'stop'))
  const model = new MockModel({ provider: opts.provider ?? 'mock.chat', modelId: opts.modelId ?? 'mock', doGenerate: script })
  const result = await generateText({ model, tools: exposed.tools, prepareStep: exposed.prepareStep, prompt: 'Send 5 to EUR', stopWhen: stepCountIs(script.length + 1) })
  expect(result.text).toBe('done')
  const seen = outcomes(result)
  const invalid = seen.find(([, outcome]) => /Invalid params for "transfer"/.test(outcome))
  expect(invalid, `the invalid call was refused on ${exposed.strategy}: ${JSON.stringify(seen)}`).toBeDefined()
  expect(invalid[1]).toMatch(/amount/)
  expect(invalid[1]).toMatch(/Expected signature/)
  if (!inline && !meta) {
    // The call before any search never runs; where the provider loads definitions on a search,
    // toolreg says how to load it (ai@7's own tool search answers it as a tool it does not have).
    expect(seen[0][1]).not.toBe('ok')
    if (exposed.strategy !== 'sdk-tool-search') expect(seen[0]).toEqual(['transfer', expect.stringMatching(/not loaded in this conversation: call tool_search/)])
  }
  // Only the valid call ran, with the default the schema gives.
  expect(ran).toEqual([{ amount: 5, to: 'EUR', memo: 'none' }])
  return { exposed, seen }
}
