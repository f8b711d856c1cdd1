// tool_exec end to end: a scripted model writes code that calls a JS tool and a tool of a real
// MCP reference server in parallel, and answers from the combined result.
import { describe, it, expect, afterAll } from 'vitest'
import { generateText, stepCountIs, tool } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { z } from 'zod'
import { ToolRegistry, McpHub, applyDeferExposition, buildMcpToolWireId, syncMcpToolsToRegistry } from '../index.js'
import { referenceServer } from './mcpServers.mjs'

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
}
const reply = (content, unified) => ({ content, finishReason: { unified, raw: undefined }, usage, warnings: [] })

describe('tool_exec end to end with generateText', () => {
  const hub = new McpHub({ servers: [referenceServer('everything', 'ev', 'Everything')] })
  afterAll(() => hub.close())

  it('runs model code that calls a JS tool and an MCP tool in parallel', async () => {
    const registry = new ToolRegistry({ logger: { warn() {} } })
    const sumId = buildMcpToolWireId({ serverId: 'ev', serverName: 'Everything', toolName: 'get-sum' })
    const imageId = buildMcpToolWireId({ serverId: 'ev', serverName: 'Everything', toolName: 'get-tiny-image' })
    const synced = await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: [sumId, imageId] })
    expect(synced.registered.sort()).toEqual([sumId, imageId].sort())

    // Record the ids the hub's tools are executed with (the call itself still goes to the server).
    const mcpCalls = []
    for (const id of [sumId, imageId]) {
      const mcpTool = registry.getByName(id).tool
      const execute = mcpTool.execute
      mcpTool.execute = (input, options) => {
        mcpCalls.push({ tool: id, input, toolCallId: options.toolCallId })
        return execute(input, options)
      }
    }
    const weatherCalls = []
    registry.register({
      name: 'get_weather',
      namespace: 'weather',
      description: 'Current weather for a city',
      defer: 'always',
      tool: tool({
        description: 'Current weather for a city',
        inputSchema: z.object({ city: z.string().describe('City name') }),
        execute: async (input, { toolCallId }) => {
          weatherCalls.push({ input, toolCallId })
          return { city: input.city, temperature: 21 }
        },
      }),
    })

    const active = registry.selectActive({ mcpToolIds: new Set([sumId, imageId]) })
    const tools = Object.fromEntries(active.map((e) => [e.name, e.tool]))
    const exposed = await applyDeferExposition(tools, registry, 128_000, { exec: true })
    expect(Object.keys(exposed.tools)).toContain('tool_exec')
    const description = exposed.tools.tool_exec.description
    expect(description).toContain('tools.get_weather(params: { city: string }) // Current weather for a city')
    expect(sumId).toMatch(/^[A-Za-z_]\w*$/)
    expect(description).toContain(`tools.${sumId}(params: { a: number; b: number }) // Returns the sum of two numbers`)
    expect(description).toContain(`tools.${imageId}(params: {})`)

    const code = [
      `const [weather, sum] = await parallel(tools.get_weather({ city: 'Paris' }), tools.${sumId}({ a: 19, b: 2 }))`,
      `const image = await tools.invoke('${imageId}', {})`,
      "console.log('image blocks', image.content.length)",
      'return { city: weather.city, temperature: weather.temperature, sum: sum.content[0].text }',
    ].join('\n')
    const script = [
      reply([{ type: 'tool-call', toolCallId: 'exec-1', toolName: 'tool_exec', input: JSON.stringify({ code }) }], 'tool-calls'),
      reply([{ type: 'text', text: 'Paris is at 21°C; 19 + 2 = 21.' }], 'stop'),
    ]
    const prompts = []
    const model = new MockLanguageModelV3({
      doGenerate: async (options) => {
        prompts.push(options)
        return script[prompts.length - 1]
      },
    })

    const result = await generateText({ model, tools: exposed.tools, system: exposed.systemPrompt, prompt: 'Weather in Paris, and 19 + 2?', stopWhen: stepCountIs(4) })

    expect(result.text).toBe('Paris is at 21°C; 19 + 2 = 21.')
    const [execResult] = result.steps.flatMap((s) => s.toolResults)
    expect(execResult.toolName).toBe('tool_exec')
    expect(execResult.output).toEqual({
      result: { city: 'Paris', temperature: 21, sum: 'The sum of 19 and 2 is 21.' },
      logs: [expect.stringMatching(/^image blocks \d+$/)],
    })
    expect(weatherCalls).toEqual([{ input: { city: 'Paris' }, toolCallId: 'exec-1::exec::1' }])
    expect(mcpCalls).toEqual([
      { tool: sumId, input: { a: 19, b: 2 }, toolCallId: 'exec-1::exec::2' },
      { tool: imageId, input: {}, toolCallId: 'exec-1::exec::3' },
    ])

    // The model got the JSON output plus the MCP image as a media part, not as base64 text.
    const toolMessage = prompts[1].prompt.find((m) => m.role === 'tool')
    const output = toolMessage.content[0].output
    expect(output.type).toBe('content')
    expect(output.value[0]).toEqual({ type: 'text', text: JSON.stringify(execResult.output) })
    expect(output.value.slice(1)).toEqual([{ type: 'image-data', data: expect.any(String), mediaType: 'image/png' }])
  })
})
