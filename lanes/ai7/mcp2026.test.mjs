// `toolreg serve --http` driven by the AI SDK's own MCP client, @ai-sdk/mcp 2.x, which speaks MCP
// 2026-07-28 (no session: `server/discover`, then every request carries its revision): it lists
// the gateway's tools, finds, inspects and invokes a deferred tool of the real server-everything,
// and the AI SDK runs the same path as tools of a model's turn (a test model's tool calls); and it
// answers the forms a server of 2025-11-25 asks for during a call, which reach it as
// input_required rounds.
import { afterAll, describe, expect, it } from 'vitest'
import { createMCPClient, ElicitationRequestSchema } from '@ai-sdk/mcp'
import { generateText, stepCountIs } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import { cliEnv, startServeHttp, writeConfig } from '../../__tests__/cliRun.mjs'
import { referenceServer, searchInspectInvokeSum, testServer, textOf } from '../../__tests__/mcpServers.mjs'

const TOKEN = 'lane-ai7-token'
const closing = []
afterAll(async () => {
  await Promise.allSettled(closing.map((close) => close()))
})

/**
 * `toolreg serve --http 0` over these servers (server-everything by default, in a context window
 * small enough to defer its tools); resolves to its URL once it listens.
 */
async function startGateway(servers = [referenceServer('everything')], window = ['--context-window', '8000']) {
  const config = writeConfig({ mcpServers: Object.fromEntries(servers.map(({ id, command, args, protocolVersion }) => [id, { command, args, ...(protocolVersion && { protocolVersion }) }])) })
  const { url } = await startServeHttp(['--config', config, ...window, '--startup-wait', '60000'], {
    env: cliEnv({ TOOLREG_SERVE_TOKEN: TOKEN }),
    onStart: (child) => closing.push(() => child.kill('SIGTERM')),
  })
  return url
}


describe('@ai-sdk/mcp 2.x (MCP 2026-07-28) through toolreg serve', () => {
  it('lists the meta-tools, finds, inspects and invokes a deferred tool of a real server', async () => {
    const url = await startGateway()
    const client = await createMCPClient({ transport: { type: 'http', url, headers: { authorization: `Bearer ${TOKEN}` } } })
    closing.push(() => client.close())
    expect(client.initializeResult.protocolVersion).toBe('2026-07-28')

    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name).slice(0, 3)).toEqual(['tool_search', 'tool_inspect', 'tool_invoke'])
    const { sum, inspected, invoked } = await searchInspectInvokeSum(client)
    expect(sum).toBeDefined()
    expect(inspected).toMatch(/@param \{number\} params\.a/)
    expect(invoked).toMatchObject({ content: [{ type: 'text', text: 'The sum of 2 and 40 is 42.' }], isError: false })

    // The same tools as the AI SDK gives them to a model: a scripted turn searches, inspects,
    // invokes, and the gateway's answers come back as the tool results of the run.
    const calls = [
      { toolName: 'tool_search', input: { query: 'echo a message back' } },
      { toolName: 'tool_inspect', input: { name: 'ECHO' } },
      { toolName: 'tool_invoke', input: { name: 'ECHO', params: { message: 'hello from ai@7' } } },
    ]
    let echo
    let step = 0
    const model = new MockLanguageModelV4({
      doGenerate: async ({ prompt }) => {
        if (step === 1) {
          // The search's answer, as the model reads it, names the echo tool's wire name.
          echo = /mcp__everything__echo_[0-9a-f]{10}/.exec(JSON.stringify(prompt))?.[0]
        }
        const call = calls[step++]
        const usage = { inputTokens: { total: 1 }, outputTokens: { total: 1 } }
        if (!call) return { content: [{ type: 'text', text: 'done' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
        const input = JSON.stringify(call.input).replaceAll('ECHO', echo ?? 'ECHO')
        return { content: [{ type: 'tool-call', toolCallId: `call-${step}`, toolName: call.toolName, input }], finishReason: { unified: 'tool-calls', raw: 'tool_use' }, usage, warnings: [] }
      },
    })
    const result = await generateText({ model, tools: await client.tools(), prompt: 'Echo "hello from ai@7".', stopWhen: stepCountIs(5) })
    expect(echo).toBeDefined()
    const outputs = result.steps.flatMap((s) => s.toolResults)
    expect(outputs.map((r) => r.toolName)).toEqual(['tool_search', 'tool_inspect', 'tool_invoke'])
    expect(JSON.stringify(outputs[2].output)).toMatch(/Echo: hello from ai@7/)
  }, 90_000)

  it('answers, in its onElicitationRequest, the forms a server of 2025-11-25 asks for during a call: the gateway hands them over as input_required rounds', async () => {
    // Both ask within the call, the handshake lifecycle's way; the gateway parks the call.
    const url = await startGateway([
      { ...testServer('asker'), protocolVersion: '2025-11-25' },
      { ...testServer('mrtr', ['--conformance-mrtr']), protocolVersion: '2025-11-25' },
    ], [])
    const client = await createMCPClient({ transport: { type: 'http', url, headers: { authorization: `Bearer ${TOKEN}` } }, capabilities: { elicitation: {} } })
    closing.push(() => client.close())
    const asked = []
    client.onElicitationRequest(ElicitationRequestSchema, async ({ params }) => {
      asked.push(params.message)
      if (params.message.startsWith('Step 2')) return { action: 'accept', content: { color: 'green' } }
      return { action: 'accept', content: { name: 'Grace' } }
    })
    const form = await client.callTool({ name: 'ask' })
    expect(JSON.parse(textOf(form))).toEqual({ action: 'accept', content: { name: 'Grace', age: 36 } })
    const rounds = await client.callTool({ name: 'test_input_required_result_multi_round' })
    expect(textOf(rounds)).toBe("Grace's favorite color is green")
    expect(asked).toEqual(['Who are you?', 'Step 1: What is your name?', 'Step 2: What is your favorite color?'])
  }, 90_000)
})
