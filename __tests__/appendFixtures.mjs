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
