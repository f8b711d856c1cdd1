// The ai@7 lane (Node 22): the native-deferral scenarios on ai@7 with @ai-sdk/anthropic 4 and
// @ai-sdk/openai 4, plus ai@7's own `deferLoading` + `toolSearch({ search })` ranked by
// `registry.rank`. Run by the main suite's __tests__/lane.ai7.test.mjs.
import { describe, it, expect } from 'vitest'
import * as ai from 'ai'
import { generateText, jsonSchema, stepCountIs, tool } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAI } from '@ai-sdk/openai'
import { z } from 'zod'
import { ToolRegistry, applyDeferExposition, shouldDefer } from 'toolreg'
import { createWeatherRegistry, anthropicWireScenario, openaiWireScenario, scriptedConversation, TURNS } from '../../__tests__/nativeFixtures.mjs'
import { anthropicAppendScenario, openaiAppendScenario, anthropicChangeScenario, openaiChangeScenario } from '../../__tests__/appendFixtures.mjs'
import { invalidCallScenario } from '../../__tests__/callPathFixtures.mjs'

const deps = { tool, jsonSchema, z, ToolRegistry, applyDeferExposition, shouldDefer, generateText, stepCountIs, createAnthropic, createOpenAI, MockModel: MockLanguageModelV4 }

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
}
const step = (content, unified = 'tool-calls') => ({ content, finishReason: { unified, raw: undefined }, usage, warnings: [] })
const call = (id, toolName, input) => step([{ type: 'tool-call', toolCallId: id, toolName, input: JSON.stringify(input) }])

describe('ai@7 lane', () => {
  it('runs on ai@7 under Node 22, with toolreg resolving the same ai', async () => {
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(22)
    expect(typeof ai.toolSearch).toBe('function')
    const { registry, tools } = createWeatherRegistry(deps)
    // toolreg's own `require('ai')` sees ai@7: with no native provider it picks the SDK's tool search.
    const exposed = await applyDeferExposition(tools, registry, 128_000, { strategy: 'native', provider: 'mock.chat' })
    expect(exposed.strategy).toBe('sdk-tool-search')
    expect(exposed.warnings).toEqual([])
  })

  it('pins learned from use are loaded up front in sdk-tool-search and openai-append', async () => {
    const { registry: plain, tools } = createWeatherRegistry(deps)
    const uses = [1, 2].map(() => ({ tool: 'create_issue', namespace: 'mcp:github', at: Date.now() }))
    const registry = new ToolRegistry({ logger: { warn() {} }, usageStore: { load: () => uses, record: (use) => void uses.push(use) } })
    registry.registerMany(plain.getAll())
    const sdk = await applyDeferExposition(tools, registry, 128_000, { strategy: 'native', provider: 'mock.chat', conversation: {} })
    expect(sdk.strategy).toBe('sdk-tool-search')
    expect(sdk.pinned).toEqual(['create_issue'])
    expect(sdk.tools.create_issue.deferLoading).toBeUndefined()
    expect(sdk.tools.get_weather.deferLoading).toBe(true)
    const openai = await applyDeferExposition(tools, registry, 128_000, { strategy: 'append', provider: 'openai.responses', modelId: 'gpt-5.4', conversation: {} })
    expect(openai.strategy).toBe('openai-append')
    const definition = (name) => ({ type: 'function', name, description: name, inputSchema: { type: 'object', properties: {} } })
    const params = { prompt: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], tools: Object.keys(openai.tools).map(definition) }
    const sent = await openai.middleware.transformParams({ params, type: 'generate' })
    // The deferred tools stay registered for their additions, out of the request's `tools`.
    const requestTools = sent.tools.filter((t) => t.providerOptions?.openai?.omitFromRequestTools !== true)
    expect(requestTools.map((t) => t.name).sort()).toEqual(['create_issue', 'echo', 'tool_search'])
    // The SDK's direct call of a pinned tool is recorded.
    await openai.tools.create_issue.execute({ title: 't' }, { toolCallId: 'c', messages: [] })
    await registry.pins()
    expect(uses).toHaveLength(3)
  })

  it("sdk-tool-search: core deferLoading + toolSearch ranked by registry.rank; discoveries survive into the next call", async () => {
    const { registry, tools, calls } = createWeatherRegistry(deps)
    const exposed = await applyDeferExposition(tools, registry, 128_000, { strategy: 'auto', provider: 'mock.chat' })
    expect(exposed.strategy).toBe('sdk-tool-search')
    for (const name of ['get_weather', 'send_email', 'create_issue']) expect(exposed.tools[name].deferLoading).toBe(true)
    expect(exposed.tools.echo.deferLoading).toBeUndefined()

    const model = new MockLanguageModelV4({
      provider: 'mock.chat',
      doGenerate: [
        call('c1', 'tool_search', { query: 'weather in a city' }),
        call('c2', 'get_weather', { city: 'Paris' }),
        step([{ type: 'text', text: 'It is 21°C in Paris.' }], 'stop'),
      ],
    })
    const result = await generateText({ model, tools: exposed.tools, prompt: 'Weather in Paris?', stopWhen: stepCountIs(5) })
    expect(result.text).toBe('It is 21°C in Paris.')
    expect(calls).toEqual(['Paris'])
    const names = model.doGenerateCalls.map((c) => (c.tools ?? []).map((t) => t.name).sort())
    expect(names[0]).toEqual(['echo', 'tool_search'])
    expect(names[1]).toEqual(['echo', 'get_weather', 'tool_search'])
    const searchResult = result.steps[0].toolResults[0]
    expect(searchResult.output.tools.map((t) => t.name)).toEqual(['get_weather'])

    // ai@7 forgets discoveries between calls; from `messages`, toolreg exposes them again.
    const messages = [{ role: 'user', content: 'Weather in Paris?' }, ...result.responseMessages, { role: 'user', content: 'And in Oslo?' }]
    const forgetful = await applyDeferExposition(tools, registry, 128_000, { strategy: 'auto', provider: 'mock.chat' })
    const remembered = await applyDeferExposition(tools, registry, 128_000, { strategy: 'auto', provider: 'mock.chat', messages })
    const next = (exposition) => {
      const m = new MockLanguageModelV4({ provider: 'mock.chat', doGenerate: [step([{ type: 'text', text: 'ok' }], 'stop')] })
      return generateText({ model: m, tools: exposition.tools, messages }).then(() => m.doGenerateCalls[0].tools.map((t) => t.name).sort())
    }
    expect(await next(forgetful)).toEqual(['echo', 'tool_search'])
    expect(await next(remembered)).toEqual(['echo', 'get_weather', 'tool_search'])
  })

  it('registry.rank is a drop-in search for toolSearch({ search }): unknown names dropped, maxResults kept', async () => {
    const { registry, tools } = createWeatherRegistry(deps)
    const search = ai.toolSearch({ search: ({ query, tools: candidates }) => registry.rank(query, candidates), maxResults: 1 })
    const model = new MockLanguageModelV4({
      doGenerate: [call('c1', 'search', { query: 'github issue' }), step([{ type: 'text', text: 'done' }], 'stop')],
    })
    const deferred = Object.fromEntries(Object.entries(tools).map(([name, t]) => [name, name === 'echo' ? t : { ...t, deferLoading: true }]))
    const result = await generateText({ model, tools: { ...deferred, search }, prompt: 'file an issue', stopWhen: stepCountIs(3) })
    expect(result.steps[0].toolResults[0].output.tools.map((t) => t.name)).toEqual(['create_issue'])
    expect(model.doGenerateCalls[1].tools.map((t) => t.name).sort()).toEqual(['create_issue', 'echo', 'search'])
  })

  it('never defers approval-gated tools', async () => {
    const { registry, tools } = createWeatherRegistry(deps, { gated: true })
    for (const provider of ['mock.chat', 'anthropic.messages', 'openai.responses']) {
      const exposed = await applyDeferExposition(tools, registry, 128_000, { strategy: 'native', provider })
      expect(exposed.tools.send_email.needsApproval).toBe(true)
      expect(exposed.tools.send_email.execute).toBe(tools.send_email.execute)
    }
  })

  it('Anthropic on the wire (@ai-sdk/anthropic 4)', async () => {
    await anthropicWireScenario(deps, expect)
  })

  it('OpenAI Responses on the wire (@ai-sdk/openai 4)', async () => {
    await openaiWireScenario(deps, expect)
  })

  it('Anthropic append-only on the wire (@ai-sdk/anthropic 4): found tools added by value, withdrawn ones removed, no earlier byte rewritten', async () => {
    await anthropicAppendScenario(deps, expect)
  })

  it('OpenAI Responses append-only on the wire (@ai-sdk/openai 4): additional_tools after the search result, no earlier byte rewritten', async () => {
    await openaiAppendScenario(deps, expect)
  })

  it('Anthropic append-only: a definition that changed mid-conversation is added again at the end, earlier bytes kept', async () => {
    await anthropicChangeScenario(deps, expect)
  })

  it('OpenAI Responses append-only: the model is shown the definition the SDK validates, also after it changed', async () => {
    await openaiChangeScenario(deps, expect)
  })

  describe('every call path checks the params (ai@7)', () => {
    for (const [strategy, provider, expected] of [
      ['append', 'openai.responses', 'openai-append'],
      ['append', 'anthropic.messages', 'anthropic-append'],
      ['native', 'openai.responses', 'openai-native'],
      ['native', 'anthropic.messages', 'anthropic-native'],
      ['native', 'mock.chat', 'sdk-tool-search'],
      ['meta-tools', undefined, 'meta-tools'],
      ['inline', undefined, 'inline'],
    ]) {
      it(expected, async () => {
        await invalidCallScenario(deps, expect, { strategy, provider, expectStrategy: expected })
      })
    }
  })

  it(`sticky decision over ${TURNS} turns: the tools array changes at most once with conversation state`, async () => {
    for (const [strategy, provider, key] of [['native', 'mock.chat', 'tools'], ['native', 'anthropic.messages', 'eager'], ['meta-tools', undefined, 'tools']]) {
      const flipping = await scriptedConversation(deps, { strategy, provider })
      const sticky = await scriptedConversation(deps, { strategy, provider, sticky: true })
      console.log(`ai@7 ${strategy} ${provider ?? ''}: ${key} changed in ${flipping[key]} / ${sticky[key]} of ${TURNS - 1} requests (without / with conversation state); tools array ${flipping.tools} / ${sticky.tools}; system ${flipping.system} / ${sticky.system}`)
      expect(flipping[key]).toBeGreaterThanOrEqual(12)
      expect(sticky[key]).toBeLessThanOrEqual(1)
      expect(sticky.system).toBeLessThanOrEqual(1)
    }
  })
})
