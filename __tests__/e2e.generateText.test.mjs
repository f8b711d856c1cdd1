import { describe, it, expect } from 'vitest'
import { generateText, stepCountIs, tool } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { z } from 'zod'
import { ToolRegistry, applyDeferExposition } from '../index.js'

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
}

function toolCall(id, toolName, input) {
  return {
    content: [{ type: 'tool-call', toolCallId: id, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: 'tool-calls', raw: undefined },
    usage,
    warnings: [],
  }
}

describe('end to end with generateText and a scripted model', () => {
  it('finds, inspects and invokes a deferred tool and gets the real result', async () => {
    const registry = new ToolRegistry({ logger: { warn() {} } })
    const calls = []
    const weather = tool({
      description: 'Current weather for a city',
      inputSchema: z.object({ city: z.string().describe('City name'), unit: z.enum(['c', 'f']).default('c') }),
      execute: async (input, options) => {
        calls.push({ input, toolCallId: options.toolCallId })
        return { city: input.city, temperature: 21, unit: input.unit }
      },
    })
    registry.register({ name: 'get_weather', namespace: 'mcp:weather', description: 'Current weather for a city', defer: 'always', tool: weather })
    registry.register({
      name: 'send_email', namespace: 'mcp:gmail', description: 'Send an email', defer: 'always',
      tool: tool({ inputSchema: z.object({ to: z.string() }), execute: async () => 'sent' }),
    })
    const echo = tool({ description: 'Echo text', inputSchema: z.object({ text: z.string() }), execute: async ({ text }) => text })
    registry.register({ name: 'echo', namespace: 'util', description: 'Echo', defer: 'never', tool: echo })

    const active = registry.selectActive({ mcpToolIds: new Set() })
    const tools = Object.fromEntries(active.map((e) => [e.name, e.tool]))
    const exposed = await applyDeferExposition(tools, registry, 128_000)
    expect(Object.keys(exposed.tools).sort()).toEqual(['echo', 'tool_inspect', 'tool_invoke', 'tool_search'])

    const script = [
      toolCall('call-1', 'tool_search', { query: 'weather in a city' }),
      toolCall('call-2', 'tool_inspect', { name: 'get_weather' }),
      toolCall('call-3', 'tool_invoke', { name: 'get_weather', params: { city: 'Paris' } }),
      { content: [{ type: 'text', text: 'It is 21°C in Paris.' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] },
    ]
    const prompts = []
    const model = new MockLanguageModelV3({
      doGenerate: async (options) => {
        prompts.push(options)
        return script[prompts.length - 1]
      },
    })

    const result = await generateText({
      model,
      tools: exposed.tools,
      system: exposed.systemPrompt,
      prompt: 'What is the weather in Paris?',
      stopWhen: stepCountIs(6),
    })

    expect(result.text).toBe('It is 21°C in Paris.')
    expect(prompts[0].tools.map((t) => t.name).sort()).toEqual(['echo', 'tool_inspect', 'tool_invoke', 'tool_search'])
    expect(JSON.stringify(prompts[0].prompt)).toContain('<deferred-tools>')

    const results = result.steps.flatMap((s) => s.toolResults)
    expect(results.map((r) => r.toolName)).toEqual(['tool_search', 'tool_inspect', 'tool_invoke'])
    expect(results[0].output.matchedNamespaces[0].tools[0].name).toBe('get_weather')
    expect(results[1].output).toContain('function get_weather(params)')
    expect(results[2].output).toEqual({ city: 'Paris', temperature: 21, unit: 'c' })
    expect(calls).toEqual([{ input: { city: 'Paris', unit: 'c' }, toolCallId: 'call-3::get_weather' }])

    // The model saw the compact text form of the search result, not the raw object.
    const secondPrompt = JSON.stringify(prompts[1].prompt)
    expect(secondPrompt).toContain('mcp:weather\\n  - get_weather — Current weather for a city')
  })

  it('a model that skips inspection gets the signature back and succeeds on retry', async () => {
    const registry = new ToolRegistry({ logger: { warn() {} } })
    const hidden = tool({ inputSchema: z.object({ n: z.number() }), execute: async ({ n }) => n + 1 })
    registry.register({ name: 'increment', namespace: 'math', description: 'Add one', defer: 'always', tool: hidden })
    const exposed = await applyDeferExposition({ increment: hidden }, registry, 128_000)
    const script = [
      toolCall('c1', 'tool_invoke', { name: 'increment', params: { n: 1 } }),
      toolCall('c2', 'tool_invoke', { name: 'increment', params: { n: 'one' } }),
      toolCall('c3', 'tool_invoke', { name: 'increment', params: { n: 1 } }),
      { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] },
    ]
    let step = 0
    const model = new MockLanguageModelV3({ doGenerate: async () => script[step++] })
    const result = await generateText({ model, tools: exposed.tools, prompt: 'add one to 1', stopWhen: stepCountIs(6) })
    const parts = result.steps.flatMap((s) => s.content.filter((p) => p.type === 'tool-result' || p.type === 'tool-error'))
    expect(parts.map((p) => p.type)).toEqual(['tool-error', 'tool-error', 'tool-result'])
    expect(String(parts[0].error)).toContain("hasn't been inspected yet")
    expect(String(parts[1].error)).toContain('Invalid params for "increment"')
    expect(parts[2].output).toBe(2)
  })
})
