// tool_exec and MCP tools: calls to an McpHub's tools go from the sandbox's thread straight to
// the hub in Rust (a busy JS thread does not hold them up), with the same checks, errors, media
// and cancellation as the JS path; approval-gated tools and hosts that wrap a tool or the hub
// keep every call on the JS path. Our rmcp test server answers over stdio.
import { describe, it, expect, afterAll } from 'vitest'
import { ToolRegistry, McpHub, applyDeferExposition, buildMcpToolWireId, createToolExecTool, syncMcpToolsToRegistry } from '../index.js'
import { testServer } from './mcpServers.mjs'

const idOf = (serverId, toolName) => buildMcpToolWireId({ serverId, serverName: serverId, toolName })
const call = (id, params = {}) => `tools[${JSON.stringify(id)}](${JSON.stringify(params)})`
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Keeps the JS thread busy, as a long synchronous task in an Electron main process would. */
function blockJsThread(ms) {
  const until = Date.now() + ms
  while (Date.now() < until) {
    // busy
  }
  return Date.now()
}

const hubs = []
async function setUp(serverId, tools, syncOptions = {}) {
  const hub = new McpHub({ servers: [testServer(serverId)] })
  hubs.push(hub)
  const registry = new ToolRegistry({ logger: { warn() {} } })
  const ids = Object.fromEntries(tools.map((name) => [name, idOf(serverId, name)]))
  const synced = await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: Object.values(ids), ...syncOptions })
  expect(synced.registered.sort()).toEqual(Object.values(ids).sort())
  return { hub, registry, ids }
}

afterAll(() => Promise.all(hubs.map((hub) => hub.close())))

describe('tool_exec calls MCP tools through the hub in Rust', () => {
  it('keeps calling the server while the JS thread is busy; a wrapped tool waits for it', async () => {
    const { registry, ids } = await setUp('direct', ['echo'])
    const code = `const texts = []
      for (let i = 0; i < 5; i++) texts.push((await ${call(ids.echo, { text: 'hi' })}).content[0].text + i)
      return { texts, at: Date.now() }`
    const direct = createToolExecTool(registry, { allowedNames: [ids.echo] })
    await direct.execute({ code: `return (await ${call(ids.echo, { text: 'warm' })}).content[0].text` }, { toolCallId: 'warm' })

    const running = direct.execute({ code }, { toolCallId: 'busy' })
    const unblocked = blockJsThread(1500)
    const output = await running
    expect(output.result.texts).toEqual(['hi0', 'hi1', 'hi2', 'hi3', 'hi4'])
    expect(output.result.at).toBeLessThan(unblocked)

    // The host wraps the tool (telemetry, say): every call now runs the wrapper, on the JS thread.
    const entry = registry.getByName(ids.echo)
    const hubExecute = entry.tool.execute
    const seen = []
    entry.tool.execute = (input, options) => {
      seen.push(options.toolCallId)
      return hubExecute(input, options)
    }
    const wrapped = createToolExecTool(registry, { allowedNames: [ids.echo] })
    const waiting = wrapped.execute({ code }, { toolCallId: 'wrapped' })
    const unblockedAgain = blockJsThread(300)
    const wrappedOutput = await waiting
    expect(wrappedOutput.result.texts).toEqual(output.result.texts)
    expect(wrappedOutput.result.at).toBeGreaterThanOrEqual(unblockedAgain)
    expect(seen).toEqual([1, 2, 3, 4, 5].map((n) => `wrapped::exec::${n}`))
  })

  it('gives the same tool errors, validation errors and media as the JS path', async () => {
    const { registry, ids } = await setUp('shapes', ['fail', 'image', 'echo'])
    const execTool = createToolExecTool(registry, { allowedNames: Object.values(ids) })
    const code = `const errors = []
      for (const attempt of [() => ${call(ids.fail)}, () => ${call(ids.echo, { text: 5 })}]) {
        try { await attempt() } catch (e) { errors.push({ code: e.code, message: e.message }) }
      }
      const image = await ${call(ids.image)}
      return { errors, kinds: image.content.map((c) => c.type) }`
    const output = await execTool.execute({ code }, { toolCallId: 'shapes' })
    expect(output.isError).toBeUndefined()
    expect(output.result.kinds).toEqual(['text', 'image'])
    const [toolError, invalid] = output.result.errors
    expect(toolError.code).toBe('TOOLREG_MCP_TOOL_ERROR')
    expect(toolError.message).toMatch(/./)
    expect(invalid.code).toBe('TOOLREG_INVALID_PARAMS')
    expect(invalid.message).toContain(`Invalid params for "${ids.echo}"`)
    expect(invalid.message).toContain('Expected signature')

    const modelOutput = await execTool.toModelOutput({ toolCallId: 'shapes', input: { code }, output })
    expect(modelOutput.type).toBe('content')
    expect(modelOutput.value.map((part) => part.type)).toEqual(['text', 'image-data'])
    expect(modelOutput.value[1].mediaType).toBe('image/png')
  })

  it('takes a tool by the name a gateway lists it under (its own, when one server has it) and by server/tool', async () => {
    const { registry, ids } = await setUp('names', ['echo', 'add'])
    const execTool = createToolExecTool(registry, { allowedNames: Object.values(ids) })
    const code = `return [(await tools.invoke('echo', { text: 'own' })).content[0].text, (await tools['names/add']({ a: 1, b: 2 })).structuredContent.sum]`
    const output = await execTool.execute({ code }, { toolCallId: 'names' })
    expect(output.result).toEqual(['own', 3])
    const typo = await execTool.execute({ code: "return await tools.invoke('ehco', { text: 'x' })" }, { toolCallId: 'typo' })
    expect(typo.error).toMatch(/Did you mean echo\?/)
  })

  it('never lets an approval-gated MCP tool skip the approval', async () => {
    const { registry, ids } = await setUp('gated', ['echo'], { needsApproval: true })
    const code = `try { return (await ${call(ids.echo, { text: 'ran' })}).content[0].text } catch (e) { return [e.code, e.message] }`
    const refused = await createToolExecTool(registry, { allowedNames: [ids.echo] }).execute({ code }, { toolCallId: 'a' })
    expect(refused.result).toEqual([
      'TOOLREG_APPROVAL_REQUIRED',
      `Tool "${ids.echo}" requires user approval, which code cannot ask for here; call it directly instead of from tool_exec.`,
    ])

    const asked = []
    const deny = createToolExecTool(registry, {
      allowedNames: [ids.echo],
      onApprovalRequest: (request) => {
        asked.push(request)
        return false
      },
    })
    const denied = await deny.execute({ code }, { toolCallId: 'b' })
    expect(denied.result).toEqual(['TOOLREG_APPROVAL_DENIED', `The user denied the call to "${ids.echo}".`])
    expect(asked).toEqual([{ toolName: ids.echo, input: { text: 'ran' }, toolCallId: 'b::exec::1', abortSignal: expect.any(AbortSignal) }])

    const allow = createToolExecTool(registry, { allowedNames: [ids.echo], onApprovalRequest: async () => true })
    expect(await allow.execute({ code }, { toolCallId: 'c' })).toEqual({ result: 'ran' })
  })

  it('cancels direct calls at the server when the run ends or is aborted', async () => {
    const { hub, registry, ids } = await setUp('cancel', ['slow', 'cancelled_count'])
    const serverCancelled = async () => Number((await hub.callTool('cancel', 'cancelled_count', {})).content[0].text)
    const execTool = createToolExecTool(registry, { allowedNames: [ids.slow] })
    expect(await serverCancelled()).toBe(0)

    // The second call keeps the run going until the first is at the server.
    const leftPending = await execTool.execute({ code: `${call(ids.slow, { ms: 10_000 })}; await ${call(ids.slow, { ms: 300 })}; return 1` }, { toolCallId: 'p' })
    expect(leftPending.isError).toBe(true)
    for (let i = 0; i < 100 && (await serverCancelled()) < 1; i++) await sleep(20)
    expect(await serverCancelled()).toBe(1)

    const controller = new AbortController()
    const running = execTool.execute({ code: `await ${call(ids.slow, { ms: 10_000 })}; return 'finished'` }, { toolCallId: 'q', abortSignal: controller.signal })
    await sleep(300)
    const started = Date.now()
    controller.abort()
    const aborted = await running
    expect(aborted.errorCode).toBe('TOOLREG_EXEC_ABORTED')
    expect(Date.now() - started).toBeLessThan(1000)
    for (let i = 0; i < 100 && (await serverCancelled()) < 2; i++) await sleep(20)
    expect(await serverCancelled()).toBe(2)
  })

  it('sends every call through a callTool the host replaced on its hub', async () => {
    const { hub, registry, ids } = await setUp('hosted', ['echo'])
    const seen = []
    hub.callTool = function (serverId, name, args, options) {
      seen.push(name)
      return McpHub.prototype.callTool.call(this, serverId, name, args, options)
    }
    const output = await createToolExecTool(registry, { allowedNames: [ids.echo] }).execute(
      { code: `return (await ${call(ids.echo, { text: 'via host' })}).content[0].text` },
      { toolCallId: 'h' },
    )
    expect(output).toEqual({ result: 'via host' })
    expect(seen).toEqual(['echo'])
  })
})

describe("a synced MCP tool's progress reaches the host's onProgress", () => {
  it('named by the call it belongs to, from execute, tool_invoke and tool_exec (on the JS path); a callback that throws is only warned about', async () => {
    const heard = []
    const { hub, registry, ids } = await setUp('progressive', ['progress', 'echo', 'add', 'fail', 'image'], { onProgress: (update) => heard.push(update) })
    const progress = registry.getByName(ids.progress).tool
    const steps = (toolCallId, n) => Array.from({ length: n }, (_, i) => ({ toolCallId, name: ids.progress, serverId: 'progressive', toolName: 'progress', progress: i + 1, total: n, message: `step ${i + 1}` }))

    expect((await progress.execute({ steps: 3 }, { toolCallId: 'direct', messages: [] })).content[0].text).toBe('done in 3 steps')
    expect(heard).toEqual(steps('direct', 3))

    heard.length = 0
    // Five tools in a small window: deferred behind the meta-tools.
    const synced = Object.fromEntries(Object.values(ids).map((id) => [id, registry.getByName(id).tool]))
    const { tools } = await applyDeferExposition(synced, registry, 300, { metaToolsOverheadTokens: 0 })
    await tools.tool_inspect.execute({ name: ids.progress }, { toolCallId: 'look', messages: [] })
    await tools.tool_invoke.execute({ name: ids.progress, params: { steps: 2 } }, { toolCallId: 'invoked', messages: [] })
    expect(heard).toEqual(steps(`invoked::${ids.progress}`, 2))

    heard.length = 0
    const execTool = createToolExecTool(registry, { allowedNames: [ids.progress] })
    const output = await execTool.execute({ code: `return (await ${call(ids.progress, { steps: 2 })}).content[0].text` }, { toolCallId: 'run' })
    expect(output.result).toBe('done in 2 steps')
    expect(heard).toEqual(steps('run::exec::1', 2))

    const warnings = []
    const loud = new ToolRegistry({ logger: { warn: (message) => warnings.push(message) } })
    await syncMcpToolsToRegistry(loud, hub, { selectedToolIds: [ids.progress], onProgress: () => { throw new Error('the window closed') } })
    expect((await loud.getByName(ids.progress).tool.execute({ steps: 2 }, { toolCallId: 'c', messages: [] })).content[0].text).toBe('done in 2 steps')
    expect(warnings).toEqual([expect.stringMatching(/onProgress threw .*the window closed/), expect.stringMatching(/onProgress threw/)])

    await expect(syncMcpToolsToRegistry(loud, hub, { selectedToolIds: [ids.progress], onProgress: 'log' })).rejects.toMatchObject({ code: 'TOOLREG_INVALID_ARGUMENT', message: expect.stringMatching(/onProgress/) })
  })
})
