// Append-only tool loading on ai@6 (Node 20): the real @ai-sdk/anthropic 3 with a scripted fetch,
// asserting on the exact request bodies. @ai-sdk/openai 3 has no `additionalTools`, so OpenAI
// keeps native deferral here; the ai@7 lane (lanes/ai7) runs both providers' append scenarios.
import { describe, it, expect } from 'vitest'
import { generateText, stepCountIs, streamText, tool } from 'ai'
import { createAnthropic } from '@ai-sdk/anthropic'
import { z } from 'zod'
import { ToolRegistry, applyDeferExposition } from '../index.js'
import { createWeatherRegistry, anthropicMessage } from './nativeFixtures.mjs'
import { anthropicAppendScenario, anthropicChangeScenario } from './appendFixtures.mjs'

const deps = { tool, z, ToolRegistry, applyDeferExposition, generateText, stepCountIs, createAnthropic }

describe('choosing append-only loading', () => {
  it("'auto' appends only where the installed SDK and a documented model have it; 'append' says why not", async () => {
    const { registry, tools } = createWeatherRegistry(deps)
    const expose = (opts) => applyDeferExposition(tools, registry, 128_000, opts)
    // Without a model id, or with one the SDK does not document it for, `auto` stays native.
    expect((await expose({ strategy: 'auto', provider: 'anthropic.messages' })).strategy).toBe('anthropic-native')
    expect((await expose({ strategy: 'auto', provider: 'anthropic.messages', modelId: 'claude-sonnet-4-5' })).strategy).toBe('anthropic-native')
    expect((await expose({ strategy: 'auto', provider: 'anthropic.messages', modelId: 'claude-opus-4-8' })).strategy).toBe('anthropic-append')
    // `native` never appends; `append` trusts the host's model.
    expect((await expose({ strategy: 'native', provider: 'anthropic.messages', modelId: 'claude-opus-4-8' })).strategy).toBe('anthropic-native')
    const forced = await expose({ strategy: 'append', provider: 'anthropic.messages', modelId: 'claude-sonnet-4-5' })
    expect(forced.strategy).toBe('anthropic-append')
    expect(forced.warnings).toEqual([])
    // @ai-sdk/openai 3.0.141 is installed here: no additionalTools, so OpenAI stays native.
    expect((await expose({ strategy: 'auto', provider: 'openai.responses', modelId: 'gpt-5.4' })).strategy).toBe('openai-native')
    const openai = await expose({ strategy: 'append', provider: 'openai.responses', modelId: 'gpt-5.4' })
    expect(openai.strategy).toBe('openai-native')
    expect(openai.warnings).toEqual(["strategy 'append' fell back to native deferral: @ai-sdk/openai 3.0.141 cannot add tools mid-conversation by value (needs >= 4.0.96)"])
    const other = await expose({ strategy: 'append', provider: 'mistral.chat' })
    expect(other.strategy).toBe('meta-tools')
    expect(other.warnings[0]).toMatch(/^strategy 'append' fell back to native deferral: provider "mistral.chat" cannot add tools/)
    expect(other.warnings[1]).toMatch(/^strategy 'append' fell back to 'meta-tools'/)
    await expect(expose({ strategy: 'append', provider: 'anthropic.messages', modelId: 42 })).rejects.toMatchObject({ code: 'TOOLREG_INVALID_ARGUMENT' })
  })

  it('never defers approval-gated tools', async () => {
    const { registry, tools } = createWeatherRegistry(deps, { gated: true })
    const exposed = await applyDeferExposition(tools, registry, 128_000, { strategy: 'append', provider: 'anthropic.messages' })
    expect(exposed.deferredEntries.map((e) => e.name).sort()).toEqual(['create_issue', 'get_weather'])
    expect(exposed.tools.send_email.needsApproval).toBe(true)
    expect(exposed.tools.send_email.execute).toBe(tools.send_email.execute)
  })
})

describe('the append middleware on a language-model prompt', () => {
  const definition = (name) => ({ type: 'function', name, description: name, inputSchema: { type: 'object', properties: {} } })
  const searchTurn = (id, names) => [
    { role: 'assistant', content: [{ type: 'tool-call', toolCallId: id, toolName: 'tool_search', input: { query: 'x' } }] },
    { role: 'tool', content: [{ type: 'tool-result', toolCallId: id, toolName: 'tool_search', output: { type: 'json', value: { tools: names } } }] },
  ]
  const params = (prompt) => ({ prompt, tools: ['get_weather', 'send_email', 'create_issue', 'echo', 'tool_search'].map(definition) })
  const expose = (provider, conversation) => {
    const { registry, tools } = createWeatherRegistry(deps)
    return applyDeferExposition(tools, registry, 128_000, { strategy: 'append', provider, conversation })
  }

  it('Anthropic: adds a found tool once, right before the next assistant message, and only deferred tools leave the request', async () => {
    const { middleware } = await expose('anthropic.messages')
    const prompt = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
      ...searchTurn('c1', ['get_weather', 'nope']),
      // The run stopped after the search; the user spoke next: the change waits for the assistant.
      { role: 'user', content: [{ type: 'text', text: 'and email?' }] },
      ...searchTurn('c2', ['get_weather', 'send_email']),
    ]
    const out = await middleware.transformParams({ params: params(prompt), type: 'generate' })
    expect(out.tools.map((t) => t.name)).toEqual(['echo', 'tool_search'])
    expect(out.providerOptions.anthropic.anthropicBeta).toContain('inline-tools-2026-09-15')
    const changes = (m) => m.providerOptions.anthropic.toolChanges.map((c) => `${c.type}:${c.tool?.name ?? c.toolName}`)
    expect(out.prompt.map((m) => (m.role === 'system' && m.content === '' ? changes(m).join(',') : m.role))).toEqual([
      'system', 'user', 'assistant', 'tool', 'user', 'tool_addition:get_weather', 'assistant', 'tool', 'tool_addition:send_email',
    ])
    // The host's prompt is left as it was.
    expect(prompt).toHaveLength(7)
  })

  it('Anthropic: a withdrawn tool is removed where it was first missing, only with conversation state', async () => {
    const conversation = {}
    const { middleware } = await expose('anthropic.messages', conversation)
    const prompt = [{ role: 'user', content: [{ type: 'text', text: 'weather?' }] }, ...searchTurn('c1', ['get_weather'])]
    await middleware.transformParams({ params: params(prompt), type: 'generate' })
    const withdrawn = { prompt, tools: params(prompt).tools.filter((t) => t.name !== 'get_weather') }
    const out = await middleware.transformParams({ params: withdrawn, type: 'generate' })
    expect(out.prompt.at(-1).providerOptions.anthropic.toolChanges.map((c) => c.type)).toEqual(['tool_addition', 'tool_removal'])
    expect(conversation.toolreg.append.removals).toEqual([{ name: 'get_weather', beforeAssistantTurn: 1 }])
    // Without state nothing pinned the definition: the addition is gone too, and nothing is removed.
    const { middleware: stateless } = await expose('anthropic.messages')
    await stateless.transformParams({ params: params(prompt), type: 'generate' })
    expect((await stateless.transformParams({ params: withdrawn, type: 'generate' })).prompt).toEqual(prompt)
  })
})

describe('Anthropic append-only on the wire (@ai-sdk/anthropic 3, scripted fetch)', () => {
  it('adds found tools by value after the search, removes withdrawn ones, never rewrites an earlier byte', async () => {
    await anthropicAppendScenario(deps, expect)
  })

  it('applies to streamText too: the streamed search turn gets the same tools and addition', async () => {
    const { registry, tools } = createWeatherRegistry(deps)
    const exposed = await applyDeferExposition(tools, registry, 128_000, { strategy: 'append', provider: 'anthropic.messages' })
    const bodies = []
    const events = [
      [{ type: 'message_start', message: { ...anthropicMessage('s1', [], null), usage: { input_tokens: 10, output_tokens: 0 } } }, { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'tu_1', name: 'tool_search', input: {} } }, { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: '{"query":"weather"}' } }, { type: 'content_block_stop', index: 0 }, { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 5 } }, { type: 'message_stop' }],
      [{ type: 'message_start', message: { ...anthropicMessage('s2', [], null), usage: { input_tokens: 10, output_tokens: 0 } } }, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Found it.' } }, { type: 'content_block_stop', index: 0 }, { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } }, { type: 'message_stop' }],
    ]
    const fetch = async (_url, init) => {
      bodies.push(JSON.parse(init.body))
      const sse = events[bodies.length - 1].map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join('')
      return new Response(sse, { status: 200, headers: { 'content-type': 'text/event-stream' } })
    }
    const result = streamText({
      model: createAnthropic({ apiKey: 'test', fetch })('claude-opus-4-8'),
      tools: exposed.tools,
      prepareStep: exposed.prepareStep,
      prompt: 'Weather?',
      stopWhen: stepCountIs(3),
    })
    expect(await result.text).toBe('Found it.')
    expect(bodies).toHaveLength(2)
    expect(bodies.map((b) => b.tools.map((t) => t.name))).toEqual([['echo', 'tool_search'], ['echo', 'tool_search']])
    expect(bodies[1].messages.at(-1).content[0]).toMatchObject({ type: 'tool_addition', tool: { definition: { name: 'get_weather' } } })
  })

  it('Anthropic on the wire: a found tool redefined mid-conversation is added again at the end with the definition the SDK validates', async () => {
    await anthropicChangeScenario(deps, expect)
  })
})
