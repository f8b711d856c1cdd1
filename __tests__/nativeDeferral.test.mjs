// Provider-native deferral on ai@6 (Node 20): the real @ai-sdk/anthropic and @ai-sdk/openai
// providers with a scripted fetch, asserting on the exact request bodies. The ai@7 lane
// (lanes/ai7, run by lane.ai7.test.mjs) repeats these scenarios on ai@7.
import { describe, it, expect } from 'vitest'
import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { generateText, stepCountIs, tool } from 'ai'
import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAI } from '@ai-sdk/openai'
import { z } from 'zod'
import { ToolRegistry, applyDeferExposition } from '../index.js'
import { createWeatherRegistry, anthropicWireScenario, openaiWireScenario } from './nativeFixtures.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

const deps = { tool, z, ToolRegistry, applyDeferExposition, generateText, stepCountIs, createAnthropic, createOpenAI }
const weatherRegistry = (opts) => createWeatherRegistry(deps, opts)

describe('registry.rank (the ai@7 search callback signature)', () => {
  it('ranks registered candidates with the registry search and unknown ones by their description', async () => {
    const { registry } = weatherRegistry()
    const candidates = [{ name: 'send_email' }, { name: 'get_weather' }, { name: 'create_issue' }]
    expect(await registry.rank('weather in a city', candidates)).toEqual(['get_weather'])
    expect((await registry.rank('github issue', candidates))[0]).toBe('create_issue')
    // Not registered: ranked by name and description, after the registered ones.
    const mixed = [...candidates, { name: 'forecast_api', description: 'Weather forecast for the next days in a city' }, { name: 'stocks', description: 'Share prices' }]
    expect(await registry.rank('weather forecast city', mixed)).toEqual(['get_weather', 'forecast_api'])
    // Only candidates come back; an empty query matches nothing; duplicates count once.
    expect(await registry.rank('weather', [{ name: 'send_email' }])).toEqual([])
    expect(await registry.rank('  ', candidates)).toEqual([])
    expect(await registry.rank('weather', [{ name: 'get_weather' }, { name: 'get_weather' }])).toEqual(['get_weather'])
    await expect(registry.rank('x', 'nope')).rejects.toThrow(/candidates/)
    await expect(registry.rank(3, [])).rejects.toThrow(/query/)
  })
})

describe('applyDeferExposition strategies on ai@6', () => {
  it("defaults to 'meta-tools'; 'native' without a native provider falls back with a warning, 'auto' silently", async () => {
    const { registry, tools } = weatherRegistry()
    const plain = await applyDeferExposition(tools, registry, 128_000)
    expect(plain.strategy).toBe('meta-tools')
    expect(plain.warnings).toEqual([])
    const native = await applyDeferExposition(tools, registry, 128_000, { strategy: 'native', provider: 'mistral.chat' })
    expect(native.strategy).toBe('meta-tools')
    expect(native.warnings[0]).toMatch(/fell back to 'meta-tools'.*mistral\.chat.*toolSearch/)
    expect(Object.keys(native.tools).sort()).toEqual(['echo', 'tool_inspect', 'tool_invoke', 'tool_search'])
    const auto = await applyDeferExposition(tools, registry, 128_000, { strategy: 'auto', provider: 'mistral.chat' })
    expect(auto.strategy).toBe('meta-tools')
    expect(auto.warnings).toEqual([])
    await expect(applyDeferExposition(tools, registry, 128_000, { strategy: 'provider' })).rejects.toThrow(/strategy/)
    const inline = await applyDeferExposition({ echo: tools.echo }, registry, 128_000, { strategy: 'native', provider: 'anthropic.messages' })
    expect(inline.strategy).toBe('inline')
  })

  it('never defers approval-gated tools on the native paths', async () => {
    const { registry, tools } = weatherRegistry({ gated: true })
    for (const provider of ['anthropic.messages', 'openai.responses']) {
      const result = await applyDeferExposition(tools, registry, 128_000, { strategy: 'native', provider })
      expect(result.tools.send_email.needsApproval).toBe(true)
      expect(result.tools.send_email.execute).toBe(tools.send_email.execute)
      expect(result.deferredEntries.map((e) => e.name).sort()).toEqual(['create_issue', 'get_weather'])
    }
  })

  it('keeps signatures inspected earlier in the conversation (meta-tools): no second inspect round-trip', async () => {
    const { registry, tools } = weatherRegistry()
    const messages = [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'tool_inspect', input: { name: 'get_weather' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'tool_inspect', output: { type: 'text', value: 'function get_weather(params)' } }] },
    ]
    const fresh = await applyDeferExposition(tools, registry, 128_000)
    await expect(fresh.tools.tool_invoke.execute({ name: 'get_weather', params: { city: 'Oslo' } }, { toolCallId: 'x', messages: [] })).rejects.toThrow(/hasn't been inspected/)
    const next = await applyDeferExposition(tools, registry, 128_000, { messages })
    expect(Object.keys(next.tools)).toEqual(Object.keys(fresh.tools))
    await expect(next.tools.tool_invoke.execute({ name: 'get_weather', params: { city: 'Oslo' } }, { toolCallId: 'y', messages })).resolves.toEqual({ city: 'Oslo', temperature: 21 })
  })
})

describe('Anthropic on the wire (@ai-sdk/anthropic 3, scripted fetch)', () => {
  it('defers with defer_loading, answers the search with tool_reference blocks, keeps the tools array byte-identical', async () => {
    await anthropicWireScenario(deps, expect)

  })
})

describe('OpenAI Responses on the wire (@ai-sdk/openai 3, scripted fetch)', () => {
  it('defers with defer_loading and answers a client tool_search with the definitions in the wire shape', async () => {
    await openaiWireScenario(deps, expect)

  })
})

describe('the provider packages stay optional', () => {
  it('works with neither @ai-sdk/anthropic nor @ai-sdk/openai installed', () => {
    // A child process in which both packages cannot be resolved, as on a host without them.
    const script = `
      const Module = require('node:module')
      const resolve = Module._resolveFilename
      Module._resolveFilename = function (request, ...rest) {
        if (request === '@ai-sdk/openai' || request === '@ai-sdk/anthropic') throw Object.assign(new Error('Cannot find module ' + request), { code: 'MODULE_NOT_FOUND' })
        return resolve.call(this, request, ...rest)
      }
      const { ToolRegistry, applyDeferExposition } = require(${JSON.stringify(path.join(root, 'index.js'))})
      const { tool, jsonSchema } = require('ai')
      const registry = new ToolRegistry({ logger: { warn() {} } })
      const tools = {}
      for (const name of ['a', 'b']) {
        tools[name] = tool({ description: name, inputSchema: jsonSchema({ type: 'object' }), execute: async () => name })
        registry.register({ name, namespace: 'x', description: name, defer: 'always', tool: tools[name] })
      }
      ;(async () => {
        const out = {}
        for (const provider of ['anthropic.messages', 'openai.responses']) {
          const r = await applyDeferExposition(tools, registry, 128000, { strategy: 'native', provider })
          out[provider] = { strategy: r.strategy, warnings: r.warnings, tools: Object.keys(r.tools).sort() }
        }
        console.log(JSON.stringify(out))
      })().catch((e) => { console.error(e); process.exit(1) })
    `
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8' }))
    expect(out['anthropic.messages']).toEqual({ strategy: 'anthropic-native', warnings: [], tools: ['a', 'b', 'tool_search'] })
    expect(out['openai.responses'].strategy).toBe('meta-tools')
    expect(out['openai.responses'].warnings[0]).toMatch(/@ai-sdk\/openai >= 3\.0\.46/)
  })
})
