// Shared by nativeDeferral.test.mjs (ai@6) and the ai@7 lane (lanes/ai7): no imports of its own,
// so each side brings its own `ai`, `zod` and toolreg.

/** Three deferred tools (one with a host cache breakpoint) and an inline one; `deps` from the lane's own `ai` and `zod`. */
export function createWeatherRegistry({ tool, z, ToolRegistry }, { gated = false } = {}) {
  const registry = new ToolRegistry({ logger: { warn() {} } })
  const calls = []
  const tools = {
    get_weather: tool({
      description: 'Current weather for a city',
      inputSchema: z.object({ city: z.string().describe('City name') }),
      execute: async ({ city }) => {
        calls.push(city)
        return { city, temperature: 21 }
      },
      // A breakpoint the host set: Anthropic rejects it next to defer_loading.
      providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
    }),
    send_email: tool({ description: 'Send an email', inputSchema: z.object({ to: z.string(), body: z.string() }), execute: async () => 'sent', ...(gated && { needsApproval: true }) }),
    create_issue: tool({ description: 'Create a GitHub issue', inputSchema: z.object({ title: z.string() }), execute: async () => 'created' }),
    echo: tool({ description: 'Echo text', inputSchema: z.object({ text: z.string() }), execute: async ({ text }) => text }),
  }
  registry.register({ name: 'get_weather', namespace: 'mcp:weather', description: 'Current weather for a city', defer: 'always', tool: tools.get_weather })
  registry.register({ name: 'send_email', namespace: 'mcp:gmail', description: 'Send an email message', defer: 'always', tool: tools.send_email })
  registry.register({ name: 'create_issue', namespace: 'mcp:github', description: 'Create an issue in a GitHub repository', defer: 'always', tool: tools.create_issue })
  registry.register({ name: 'echo', namespace: 'util', description: 'Echo', defer: 'never', tool: tools.echo })
  return { registry, tools, calls }
}

/** A fetch that answers each request with the next scripted JSON body and records the requests. */
/** All steps' response messages: `responseMessages` on ai@7 (its `response.messages` is the last step's), `response.messages` on ai@6. */
export function responseMessages(result) {
  return result.responseMessages ?? result.response.messages
}

export function scriptedFetch(responses) {
  const bodies = []
  const fetch = async (url, init) => {
    bodies.push(JSON.parse(init.body))
    const body = responses[bodies.length - 1]
    if (!body) throw new Error(`unscripted request #${bodies.length} to ${url}`)
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } })
  }
  return { fetch, bodies }
}

export const anthropicMessage = (id, content, stop = 'tool_use') => ({
  id, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content, stop_reason: stop, stop_sequence: null,
  usage: { input_tokens: 100, output_tokens: 10 },
})

export const openaiResponse = (id, output) => ({
  id, object: 'response', created_at: 1_760_000_000, status: 'completed', model: 'gpt-5.4', output,
  incomplete_details: null, usage: { input_tokens: 100, output_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
})


/**
 * Anthropic on the wire: deferred tools carry defer_loading and no cache_control, the search
 * answers with tool_reference blocks, the tools array is byte-identical across steps and turns.
 * `deps`: { tool, z, ToolRegistry, applyDeferExposition, generateText, stepCountIs, createAnthropic }.
 */
export async function anthropicWireScenario(deps, expect) {
  const { generateText, stepCountIs, createAnthropic, applyDeferExposition } = deps
  const { registry, tools, calls } = createWeatherRegistry(deps)
  const exposed = await applyDeferExposition(tools, registry, 128_000, { strategy: 'native', provider: 'anthropic.messages' })
  expect(exposed.strategy).toBe('anthropic-native')
  expect(exposed.warnings).toEqual(['removed cacheControl from deferred tool "get_weather" (Anthropic rejects it with defer_loading)'])
  expect(exposed.systemPrompt).toBeUndefined()

  const { fetch, bodies } = scriptedFetch([
    anthropicMessage('m1', [{ type: 'tool_use', id: 'tu_1', name: 'tool_search', input: { query: 'weather in a city' } }]),
    anthropicMessage('m2', [{ type: 'tool_use', id: 'tu_2', name: 'get_weather', input: { city: 'Paris' } }]),
    anthropicMessage('m3', [{ type: 'text', text: 'It is 21°C in Paris.' }], 'end_turn'),
  ])
  const model = createAnthropic({ apiKey: 'test', fetch })('claude-sonnet-4-5')
  expect(model.provider).toBe('anthropic.messages')
  const result = await generateText({ model, tools: exposed.tools, prompt: 'Weather in Paris?', stopWhen: stepCountIs(5) })
  expect(result.text).toBe('It is 21°C in Paris.')
  expect(calls).toEqual(['Paris'])

  expect(bodies).toHaveLength(3)
  const byName = Object.fromEntries(bodies[0].tools.map((t) => [t.name, t]))
  expect(Object.keys(byName).sort()).toEqual(['create_issue', 'echo', 'get_weather', 'send_email', 'tool_search'])
  for (const name of ['get_weather', 'send_email', 'create_issue']) {
    expect(byName[name].defer_loading).toBe(true)
    expect(byName[name]).not.toHaveProperty('cache_control')
  }
  expect(byName.echo).not.toHaveProperty('defer_loading')
  expect(byName.tool_search).not.toHaveProperty('defer_loading')
  // The host's breakpoint moved to the eager search tool, last in the array.
  expect(byName.tool_search.cache_control).toEqual({ type: 'ephemeral' })
  expect(bodies[0].tools.at(-1).name).toBe('tool_search')
  expect(bodies[1].messages.at(-1)).toEqual({
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: [{ type: 'tool_reference', tool_name: 'get_weather' }] }],
  })
  const toolsJson = JSON.stringify(bodies[0].tools)
  for (const body of bodies) expect(JSON.stringify(body.tools)).toBe(toolsJson)

  // The next turn re-sends the reference from the stored messages, with the same tools array.
  const again = await applyDeferExposition(tools, registry, 128_000, { strategy: 'native', provider: 'anthropic.messages', messages: responseMessages(result) })
  const next = scriptedFetch([anthropicMessage('m4', [{ type: 'text', text: 'ok' }], 'end_turn')])
  await generateText({
    model: createAnthropic({ apiKey: 'test', fetch: next.fetch })('claude-sonnet-4-5'),
    tools: again.tools,
    messages: [{ role: 'user', content: 'Weather in Paris?' }, ...responseMessages(result), { role: 'user', content: 'thanks' }],
  })
  expect(JSON.stringify(next.bodies[0].tools)).toBe(toolsJson)
  expect(JSON.stringify(next.bodies[0].messages)).toContain('{"type":"tool_reference","tool_name":"get_weather"}')
}

/**
 * OpenAI Responses on the wire: defer_loading on deferred functions, a client tool_search whose
 * output carries the found definitions in the wire shape, the tools array identical across steps
 * and into the next turn (the stored messages re-send the search output).
 */
export async function openaiWireScenario(deps, expect) {
  const { generateText, stepCountIs, createOpenAI, applyDeferExposition } = deps
  const { registry, tools, calls } = createWeatherRegistry(deps)
  const exposed = await applyDeferExposition(tools, registry, 128_000, { strategy: 'native', provider: 'openai.responses' })
  expect(exposed.strategy).toBe('openai-native')
  const { fetch, bodies } = scriptedFetch([
    openaiResponse('r1', [{ type: 'tool_search_call', id: 'ts_1', call_id: 'call_ts1', execution: 'client', status: 'completed', arguments: { query: 'weather in a city' } }]),
    openaiResponse('r2', [{ type: 'function_call', id: 'fc_1', call_id: 'call_2', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' }]),
    openaiResponse('r3', [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'It is 21°C in Paris.', annotations: [] }] }]),
  ])
  const model = createOpenAI({ apiKey: 'test', fetch }).responses('gpt-5.4')
  expect(model.provider).toBe('openai.responses')
  const result = await generateText({ model, tools: exposed.tools, prompt: 'Weather in Paris?', stopWhen: stepCountIs(5) })
  expect(result.text).toBe('It is 21°C in Paris.')
  expect(calls).toEqual(['Paris'])

  const search = bodies[0].tools.find((t) => t.type === 'tool_search')
  expect(search).toMatchObject({ type: 'tool_search', execution: 'client', parameters: { required: ['query'] } })
  const fns = Object.fromEntries(bodies[0].tools.filter((t) => t.type === 'function').map((t) => [t.name, t]))
  for (const name of ['get_weather', 'send_email', 'create_issue']) expect(fns[name].defer_loading).toBe(true)
  expect(fns.echo).not.toHaveProperty('defer_loading')
  const output = bodies[1].input.find((item) => item.type === 'tool_search_output')
  expect(output).toMatchObject({ type: 'tool_search_output', execution: 'client', call_id: 'call_ts1' })
  expect(output.tools).toEqual([{ ...fns.get_weather }])
  expect(bodies[1].input.some((item) => item.type === 'tool_search_call' || item.type === 'item_reference')).toBe(true)
  const toolsJson = JSON.stringify(bodies[0].tools)
  for (const body of bodies) expect(JSON.stringify(body.tools)).toBe(toolsJson)

  // The next turn re-sends the search output from the stored messages, with the same tools array.
  const again = await applyDeferExposition(tools, registry, 128_000, { strategy: 'native', provider: 'openai.responses', messages: responseMessages(result) })
  const next = scriptedFetch([openaiResponse('r4', [{ type: 'message', id: 'msg_2', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'ok', annotations: [] }] }])])
  await generateText({
    model: createOpenAI({ apiKey: 'test', fetch: next.fetch }).responses('gpt-5.4'),
    tools: again.tools,
    messages: [{ role: 'user', content: 'Weather in Paris?' }, ...responseMessages(result), { role: 'user', content: 'thanks' }],
  })
  expect(JSON.stringify(next.bodies[0].tools)).toBe(toolsJson)
  expect(next.bodies[0].input.find((item) => item.type === 'tool_search_output')?.tools).toEqual(output.tools)
}

export const TURNS = 20
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
}

/** An `auto` entry whose definition is about `chars` characters of description. */
function heavyEntry({ tool, z }, name, chars) {
  const words = []
  for (let i = 0, length = 0; length < chars; i++) {
    words.push(`word${i % 97}`)
    length += words.at(-1).length + 1
  }
  const description = words.join(' ').slice(0, chars)
  return { name, namespace: 'web', description: `${name} tool`, defer: 'auto', tool: tool({ description, inputSchema: z.object({ query: z.string() }), execute: async () => name }) }
}

/**
 * A scripted 20-turn conversation whose tool pool flaps around the defer threshold: one tool of
 * seven comes and goes every turn (an MCP server reconnecting), four more join at turn 14. Counts
 * the requests whose tools array (as the model received it), eager tools (those without
 * Anthropic's deferLoading: the cached prefix) and system prompt differ from the previous request's.
 * `deps`: { tool, z, ToolRegistry, applyDeferExposition, shouldDefer, generateText, MockModel }.
 */
export async function scriptedConversation(deps, { strategy, provider, sticky }) {
  const { ToolRegistry, applyDeferExposition, shouldDefer, generateText, MockModel } = deps
  const registry = new ToolRegistry({ logger: { warn() {} } })
  const base = Array.from({ length: 6 }, (_, i) => heavyEntry(deps, `base_${i}`, 1500))
  const flapping = heavyEntry(deps, 'flapping', 1500)
  const late = Array.from({ length: 4 }, (_, i) => heavyEntry(deps, `late_${i}`, 1500))
  for (const e of [...base, flapping, ...late]) registry.register(e)
  // The context window puts the threshold between the 6-tool and the 7-tool pool.
  const without = (await shouldDefer(base, undefined)).autoTokens
  const withFlapping = (await shouldDefer([...base, flapping], undefined)).autoTokens
  const contextWindow = Math.round((without + withFlapping) / 2 / 0.1)

  const state = {}
  const messages = []
  const requests = []
  const decisions = []
  const model = new MockModel({
    provider: provider ?? 'mock',
    doGenerate: async (options) => {
      requests.push(options)
      return { content: [{ type: 'text', text: `answer ${requests.length}` }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] }
    },
  })
  for (let turn = 0; turn < TURNS; turn++) {
    const entries = [...base, ...(turn % 2 === 0 ? [flapping] : []), ...(turn >= 14 ? late : [])]
    const tools = Object.fromEntries(entries.map((e) => [e.name, e.tool]))
    messages.push({ role: 'user', content: `question ${turn}` })
    const exposed = await applyDeferExposition(tools, registry, contextWindow, {
      strategy, provider, messages, ...(sticky && { conversation: state }),
    })
    decisions.push(exposed.deferredEntries.length > 0)
    const result = await generateText({ model, tools: exposed.tools, system: exposed.systemPrompt, messages })
    messages.push(...responseMessages(result))
  }
  const changes = (key) => requests.slice(1).filter((r, i) => key(r) !== key(requests[i])).length
  const toolsJson = (r) => JSON.stringify(r.tools ?? [])
  const eagerJson = (r) => JSON.stringify((r.tools ?? []).filter((t) => t.providerOptions?.anthropic?.deferLoading !== true))
  const systemJson = (r) => JSON.stringify(r.prompt.filter((m) => m.role === 'system'))
  return { tools: changes(toolsJson), eager: changes(eagerJson), system: changes(systemJson), decisions, state }
}
