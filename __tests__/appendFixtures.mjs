// Append-only tool loading on the wire, shared by appendDeferral.test.mjs (ai@6) and the ai@7
// lane (lanes/ai7): no imports of its own, so each side brings its own `ai`, `zod`, providers
// and toolreg. Each scenario is a replayed conversation over the real provider package with a
// scripted fetch, asserting on the exact request bodies.
import { createWeatherRegistry, scriptedFetch, anthropicMessage, openaiResponse, responseMessages } from './nativeFixtures.mjs'

/** `later` starts with every message of `earlier`, byte for byte: nothing before the end was rewritten. */
function expectPrefix(expect, earlier, later) {
  expect(JSON.stringify(later.slice(0, earlier.length))).toBe(JSON.stringify(earlier))
}

/** Every request's `tools` is byte-identical to the first one's; returns that JSON. */
function expectSameTools(expect, bodies) {
  const toolsJson = JSON.stringify(bodies[0].tools)
  for (const body of bodies) expect(JSON.stringify(body.tools)).toBe(toolsJson)
  return toolsJson
}

/**
 * Records each request's body and headers while answering with the next scripted response.
 * `expect(bodies).toHaveLength(n)` then checks that nothing was left unanswered.
 */
function capture(responses) {
  const { fetch, bodies } = scriptedFetch(responses)
  const headers = []
  return { bodies, headers, fetch: (url, init) => (headers.push(init.headers), fetch(url, init)) }
}

/**
 * Anthropic: the request's tools are the eager ones and tool_search; a search result is followed
 * by a system message adding the found tool by value (inline-tools beta); the found tool runs;
 * an approval-gated tool still asks; a tool the host withdraws is removed at the end of the
 * conversation and stays removed there; no request rewrites a byte of the one before it.
 * `deps`: { tool, z, ToolRegistry, applyDeferExposition, generateText, stepCountIs, createAnthropic }.
 */
export async function anthropicAppendScenario(deps, expect) {
  const { generateText, stepCountIs, createAnthropic, applyDeferExposition } = deps
  const { registry, tools } = createWeatherRegistry(deps, { gated: true })
  const conversation = {}
  const expose = (toolSet, messages) =>
    applyDeferExposition(toolSet, registry, 128_000, { strategy: 'auto', provider: 'anthropic.messages', modelId: 'claude-opus-4-8', messages, conversation })
  const first = await expose(tools)
  expect(first.strategy).toBe('anthropic-append')
  expect(first.warnings).toEqual([])
  expect(typeof first.prepareStep).toBe('function')

  // Turn 1: search, then call the found tool.
  const turn1 = capture([
    anthropicMessage('m1', [{ type: 'tool_use', id: 'tu_1', name: 'tool_search', input: { query: 'github issue' } }]),
    anthropicMessage('m2', [{ type: 'tool_use', id: 'tu_2', name: 'create_issue', input: { title: 'Flaky test' } }]),
    anthropicMessage('m3', [{ type: 'text', text: 'Filed.' }], 'end_turn'),
  ])
  const model = (fetch) => createAnthropic({ apiKey: 'test', fetch })('claude-opus-4-8')
  const messages = [{ role: 'user', content: 'File an issue about the flaky test.' }]
  const result1 = await generateText({ model: model(turn1.fetch), tools: first.tools, prepareStep: first.prepareStep, messages, stopWhen: stepCountIs(5) })
  expect(result1.text).toBe('Filed.')
  expect(result1.steps[1].toolResults.map((r) => [r.toolName, r.output])).toEqual([['create_issue', 'created']])
  expect(turn1.bodies).toHaveLength(3)
  const toolsJson = expectSameTools(expect, turn1.bodies)
  const requestTools = turn1.bodies[0].tools
  // Only what is loaded from the start: the eager tool, the approval-gated one, tool_search
  // (carrying the host's breakpoint from the deferred get_weather). No deferred definitions.
  expect(requestTools.map((t) => t.name)).toEqual(['send_email', 'echo', 'tool_search'])
  expect(requestTools.some((t) => 'defer_loading' in t)).toBe(false)
  expect(requestTools.at(-1).cache_control).toEqual({ type: 'ephemeral' })
  // The definition follows the search result, by value.
  expect(turn1.bodies[1].messages.slice(-2)).toEqual([
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: '{"tools":["create_issue"]}' }] },
    {
      role: 'system',
      content: [{
        type: 'tool_addition',
        tool: {
          type: 'tool_definition',
          definition: {
            name: 'create_issue',
            description: 'Create a GitHub issue',
            input_schema: {
              $schema: 'http://json-schema.org/draft-07/schema#', type: 'object',
              properties: { title: { type: 'string' } }, required: ['title'], additionalProperties: false,
            },
          },
        },
      }],
    },
  ])
  // The betas by-value additions need are there from the first request on, unchanged.
  expect(turn1.headers[0]['anthropic-beta']).toContain('inline-tools-2026-09-15')
  for (const headers of turn1.headers) expect(headers['anthropic-beta']).toBe(turn1.headers[0]['anthropic-beta'])
  expectPrefix(expect, turn1.bodies[0].messages, turn1.bodies[1].messages)
  expectPrefix(expect, turn1.bodies[1].messages, turn1.bodies[2].messages)
  expect(JSON.stringify(turn1.bodies[2].messages).match(/tool_addition/g)).toHaveLength(1)

  // Turn 2: the host withdrew create_issue; the gated send_email is called and waits for approval.
  messages.push(...responseMessages(result1), { role: 'user', content: 'Email Bob about it.' })
  const { create_issue: _withdrawn, ...remaining } = tools
  const second = await expose(remaining, messages)
  expect(second.strategy).toBe('anthropic-append')
  const turn2 = capture([anthropicMessage('m4', [{ type: 'tool_use', id: 'tu_3', name: 'send_email', input: { to: 'bob', body: 'Filed.' } }])])
  const result2 = await generateText({ model: model(turn2.fetch), tools: second.tools, prepareStep: second.prepareStep, messages, stopWhen: stepCountIs(5) })
  expect(JSON.stringify(turn2.bodies[0].tools)).toBe(toolsJson)
  expectPrefix(expect, turn1.bodies[2].messages, turn2.bodies[0].messages)
  expect(turn2.headers[0]['anthropic-beta']).toBe(turn1.headers[0]['anthropic-beta'])
  expect(turn2.bodies[0].messages.at(-1)).toEqual({ role: 'system', content: [{ type: 'tool_removal', tool: { type: 'tool_reference', name: 'create_issue' } }] })
  expect(result2.content.map((part) => part.type)).toEqual(['tool-call', 'tool-approval-request'])
  expect(result2.toolResults).toEqual([])

  // Turn 3: the user refuses; replayed, the removal stays where it was and the addition as added.
  const approvalId = result2.content.find((part) => part.type === 'tool-approval-request').approvalId
  messages.push(...responseMessages(result2), { role: 'tool', content: [{ type: 'tool-approval-response', approvalId, approved: false }] })
  const third = await expose(remaining, messages)
  const turn3 = capture([anthropicMessage('m5', [{ type: 'text', text: 'Not sent.' }], 'end_turn')])
  await generateText({ model: model(turn3.fetch), tools: third.tools, prepareStep: third.prepareStep, messages })
  expect(JSON.stringify(turn3.bodies[0].tools)).toBe(toolsJson)
  expect(turn3.headers[0]['anthropic-beta']).toBe(turn1.headers[0]['anthropic-beta'])
  expectPrefix(expect, turn2.bodies[0].messages, turn3.bodies[0].messages)
  expect(JSON.stringify(turn3.bodies[0].messages).match(/tool_removal/g)).toHaveLength(1)
  expect(JSON.parse(JSON.stringify(conversation)).toolreg.append.removals).toEqual([{ name: 'create_issue', beforeAssistantTurn: 3 }])
}

/**
 * OpenAI Responses (@ai-sdk/openai >= 4.0.96): the request's tools are the eager ones and
 * tool_search; the found definitions follow the search's function_call_output as an
 * `additional_tools` item; the found tool runs; the gated tool asks; the input only grows.
 * `deps`: { tool, z, ToolRegistry, applyDeferExposition, generateText, stepCountIs, createOpenAI }.
 */
export async function openaiAppendScenario(deps, expect) {
  const { generateText, stepCountIs, createOpenAI, applyDeferExposition } = deps
  const { registry, tools, calls } = createWeatherRegistry(deps, { gated: true })
  const conversation = {}
  const expose = (messages) =>
    applyDeferExposition(tools, registry, 128_000, { strategy: 'auto', provider: 'openai.responses', modelId: 'gpt-5.4', messages, conversation })
  const first = await expose()
  expect(first.strategy).toBe('openai-append')
  const model = (fetch) => createOpenAI({ apiKey: 'test', fetch }).responses('gpt-5.4')
  const functionCall = (id, name, args) => ({ type: 'function_call', id: `fc_${id}`, call_id: `call_${id}`, name, arguments: JSON.stringify(args), status: 'completed' })
  const text = (id, value) => ({ type: 'message', id: `msg_${id}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: value, annotations: [] }] })
  // store: false sends every item by value, so the input is the whole conversation.
  const providerOptions = { openai: { store: false } }

  const turn1 = capture([
    openaiResponse('r1', [functionCall('1', 'tool_search', { query: 'weather in a city' })]),
    openaiResponse('r2', [functionCall('2', 'get_weather', { city: 'Paris' })]),
    openaiResponse('r3', [text('1', 'It is 21°C in Paris.')]),
  ])
  const messages = [{ role: 'user', content: 'Weather in Paris?' }]
  const result1 = await generateText({ model: model(turn1.fetch), tools: first.tools, prepareStep: first.prepareStep, messages, providerOptions, stopWhen: stepCountIs(5) })
  expect(result1.text).toBe('It is 21°C in Paris.')
  expect(calls).toEqual(['Paris'])
  expect(turn1.bodies).toHaveLength(3)
  const toolsJson = expectSameTools(expect, turn1.bodies)
  expect(turn1.bodies[0].tools.map((t) => t.name)).toEqual(['send_email', 'echo', 'tool_search'])
  expect(turn1.bodies[0].tools.some((t) => 'defer_loading' in t)).toBe(false)
  const input = turn1.bodies[1].input
  const output = input.findIndex((item) => item.type === 'function_call_output' && item.call_id === 'call_1')
  expect(input[output + 1]).toEqual({
    type: 'additional_tools',
    role: 'developer',
    tools: [{
      type: 'function', name: 'get_weather', description: 'Current weather for a city', strict: false,
      parameters: {
        $schema: 'http://json-schema.org/draft-07/schema#', type: 'object',
        properties: { city: { type: 'string', description: 'City name' } }, required: ['city'], additionalProperties: false,
      },
    }],
  })
  expectPrefix(expect, turn1.bodies[0].input, turn1.bodies[1].input)
  expectPrefix(expect, turn1.bodies[1].input, turn1.bodies[2].input)

  // Turn 2: the gated send_email waits for approval; the replayed input keeps the addition in place.
  messages.push(...responseMessages(result1), { role: 'user', content: 'Email Bob the forecast.' })
  const second = await expose(messages)
  const turn2 = capture([openaiResponse('r4', [functionCall('3', 'send_email', { to: 'bob', body: '21°C' })])])
  const result2 = await generateText({ model: model(turn2.fetch), tools: second.tools, prepareStep: second.prepareStep, messages, providerOptions })
  expect(JSON.stringify(turn2.bodies[0].tools)).toBe(toolsJson)
  expectPrefix(expect, turn1.bodies[2].input, turn2.bodies[0].input)
  expect(turn2.bodies[0].input.filter((item) => item.type === 'additional_tools')).toHaveLength(1)
  expect(result2.content.map((part) => part.type)).toEqual(['tool-call', 'tool-approval-request'])
  expect(result2.toolResults).toEqual([])
}

/**
 * get_weather as its server may redefine it mid-conversation (a `unit` it now takes),
 * registered again as the MCP sync would; the tools the host passes from then on.
 */
function redefineWeather({ tool, z }, registry, tools, calls) {
  const changed = tool({
    description: 'Current weather for a city, in the unit asked for',
    inputSchema: z.object({ city: z.string().describe('City name'), unit: z.enum(['c', 'f']) }),
    execute: async ({ city, unit }) => {
      calls.push(`${city} ${unit}`)
      return { city, temperature: 21, unit }
    },
  })
  registry.register({ name: 'get_weather', namespace: 'mcp:weather', description: 'Current weather for a city', defer: 'always', tool: changed })
  return { ...tools, get_weather: changed }
}

/**
 * Anthropic: a found tool whose definition changes mid-conversation keeps its first addition
 * where it stands and is added again, by value, with the new definition at the end of the next
 * request (an addition under a known name replaces the definition from there on); the call the
 * model makes with the new schema is validated against it; replayed, nothing before moves.
 */
export async function anthropicChangeScenario(deps, expect) {
  const { generateText, stepCountIs, createAnthropic, applyDeferExposition } = deps
  const { registry, tools, calls } = createWeatherRegistry(deps)
  const conversation = {}
  const expose = (toolSet, messages) =>
    applyDeferExposition(toolSet, registry, 128_000, { strategy: 'append', provider: 'anthropic.messages', modelId: 'claude-opus-4-8', messages, conversation })
  const model = (fetch) => createAnthropic({ apiKey: 'test', fetch })('claude-opus-4-8')
  const messages = [{ role: 'user', content: 'Weather in Paris?' }]
  const first = await expose(tools, messages)
  const turn1 = capture([
    anthropicMessage('m1', [{ type: 'tool_use', id: 'tu_1', name: 'tool_search', input: { query: 'weather in a city' } }]),
    anthropicMessage('m2', [{ type: 'text', text: 'Which unit?' }], 'end_turn'),
  ])
  const result1 = await generateText({ model: model(turn1.fetch), tools: first.tools, prepareStep: first.prepareStep, messages, stopWhen: stepCountIs(3) })
  messages.push(...responseMessages(result1), { role: 'user', content: 'In Fahrenheit.' })

  const changedTools = redefineWeather(deps, registry, tools, calls)
  const second = await expose(changedTools, messages)
  const turn2 = capture([
    anthropicMessage('m3', [{ type: 'tool_use', id: 'tu_2', name: 'get_weather', input: { city: 'Paris' } }]),
    anthropicMessage('m4', [{ type: 'tool_use', id: 'tu_3', name: 'get_weather', input: { city: 'Paris', unit: 'f' } }]),
    anthropicMessage('m5', [{ type: 'text', text: '70°F.' }], 'end_turn'),
  ])
  const result2 = await generateText({ model: model(turn2.fetch), tools: second.tools, prepareStep: second.prepareStep, messages, stopWhen: stepCountIs(4) })
  // Everything the first turn sent is sent again unchanged; the new definition follows.
  expectPrefix(expect, turn1.bodies[1].messages, turn2.bodies[0].messages)
  const additions = (body) => body.messages.filter((m) => m.role === 'system').flatMap((m) => m.content).filter((c) => c.type === 'tool_addition').map((c) => c.tool.definition)
  expect(additions(turn2.bodies[0]).map((d) => [d.name, d.description, Object.keys(d.input_schema.properties)])).toEqual([
    ['get_weather', 'Current weather for a city', ['city']],
    ['get_weather', 'Current weather for a city, in the unit asked for', ['city', 'unit']],
  ])
  // The call without the now required unit is refused; the one with it runs.
  const refused = result2.steps[0].content.find((p) => p.type === 'tool-error')
  // ai@6 keeps the error, ai@7 its text.
  expect(String(refused?.error?.message ?? refused?.error)).toMatch(/Invalid params for "get_weather":\n- at \$: "unit" is a required property/)
  expect(calls).toEqual(['Paris f'])
  expectPrefix(expect, turn2.bodies[0].messages, turn2.bodies[2].messages)
  expect(additions(turn2.bodies[2])).toHaveLength(2)

  // Replayed, the change stays where it was made; nothing is added again.
  messages.push(...responseMessages(result2), { role: 'user', content: 'Thanks.' })
  const third = await expose(changedTools, messages)
  const turn3 = capture([anthropicMessage('m6', [{ type: 'text', text: 'Welcome.' }], 'end_turn')])
  await generateText({ model: model(turn3.fetch), tools: third.tools, prepareStep: third.prepareStep, messages })
  expectPrefix(expect, turn2.bodies[2].messages, turn3.bodies[0].messages)
  expect(additions(turn3.bodies[0])).toHaveLength(2)
  expect(JSON.parse(JSON.stringify(conversation)).toolreg.append.changes.map((c) => [c.name, c.beforeAssistantTurn])).toEqual([['get_weather', 2]])
}

/**
 * OpenAI Responses: whichever `@ai-sdk/openai` 4 is installed (by value before 4.0.119, the
 * registered definition from then on), the `additional_tools` item carries the definition the
 * SDK validates and runs, also after the tool changed; the request's `tools` never change.
 */
export async function openaiChangeScenario(deps, expect) {
  const { generateText, stepCountIs, createOpenAI, applyDeferExposition } = deps
  const { registry, tools, calls } = createWeatherRegistry(deps)
  const conversation = {}
  const expose = (toolSet, messages) =>
    applyDeferExposition(toolSet, registry, 128_000, { strategy: 'append', provider: 'openai.responses', modelId: 'gpt-5.4', messages, conversation })
  const model = (fetch) => createOpenAI({ apiKey: 'test', fetch }).responses('gpt-5.4')
  const functionCall = (id, name, args) => ({ type: 'function_call', id: `fc_${id}`, call_id: `call_${id}`, name, arguments: JSON.stringify(args), status: 'completed' })
  const text = (id, value) => ({ type: 'message', id: `msg_${id}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: value, annotations: [] }] })
  const providerOptions = { openai: { store: false } }
  const messages = [{ role: 'user', content: 'Weather in Paris?' }]
  const first = await expose(tools, messages)
  const turn1 = capture([openaiResponse('r1', [functionCall('1', 'tool_search', { query: 'weather in a city' })]), openaiResponse('r2', [text('1', 'Which unit?')])])
  const result1 = await generateText({ model: model(turn1.fetch), tools: first.tools, prepareStep: first.prepareStep, messages, providerOptions, stopWhen: stepCountIs(3) })
  const shown = (body) => body.input.filter((item) => item.type === 'additional_tools').flatMap((item) => item.tools)
  expect(shown(turn1.bodies[1]).map((t) => [t.name, Object.keys(t.parameters.properties)])).toEqual([['get_weather', ['city']]])

  messages.push(...responseMessages(result1), { role: 'user', content: 'In Fahrenheit.' })
  const second = await expose(redefineWeather(deps, registry, tools, calls), messages)
  const turn2 = capture([openaiResponse('r3', [functionCall('2', 'get_weather', { city: 'Paris', unit: 'f' })]), openaiResponse('r4', [text('2', '70°F.')])])
  await generateText({ model: model(turn2.fetch), tools: second.tools, prepareStep: second.prepareStep, messages, providerOptions, stopWhen: stepCountIs(3) })
  expect(JSON.stringify(turn2.bodies[0].tools)).toBe(JSON.stringify(turn1.bodies[0].tools))
  expect(turn2.bodies[0].tools.map((t) => t.name)).toEqual(['echo', 'tool_search'])
  // The one addition, where it was made, now shows the schema the call is validated against.
  expect(shown(turn2.bodies[0]).map((t) => [t.name, t.description, Object.keys(t.parameters.properties)])).toEqual([
    ['get_weather', 'Current weather for a city, in the unit asked for', ['city', 'unit']],
  ])
  expect(calls).toEqual(['Paris f'])
}
