// `toolreg serve` driven by a client toolreg did not write: the official MCP TypeScript SDK's
// client, over stdio and Streamable HTTP, in front of the real reference servers
// (server-everything, server-memory) and our rmcp test server. Each gateway is the CLI run as a
// user runs it.
import { execFileSync, spawn } from 'node:child_process'
import { createReadStream, createWriteStream, mkdtempSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import { bin, cliEnv, root, startCli, startServeHttp, writeConfig } from './cliRun.mjs'
import { processGone, referenceServer, searchInspectInvokeSum, testServer, textOf } from './mcpServers.mjs'
import { createRequire } from 'node:module'

const { buildMcpToolWireId } = createRequire(import.meta.url)('../index.js')

const cache = mkdtempSync(join(tmpdir(), 'toolreg-serve-cache-'))
const env = cliEnv({ TOOLREG_CACHE_DIR: cache, TOOLREG_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'toolreg-serve-config-')) })

/** A config file in the format the CLI reads, from hub server configs. */
function configOf(...servers) {
  return writeConfig({
    mcpServers: Object.fromEntries(servers.map(({ id, command, args, env: serverEnv, protocolVersion }) => [id, { command, args, ...(serverEnv && { env: serverEnv }), ...(protocolVersion && { protocolVersion }) }])),
  })
}

const config = configOf(referenceServer('everything'), referenceServer('memory'), testServer('faulty'))

/**
 * Tests that look at the first tool list let every server list first; the default startup wait
 * is covered on its own ("answers at once").
 */
const WAIT_FOR_SERVERS = ['--startup-wait', '60000']

async function stdioClient(args) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'serve', ...WAIT_FOR_SERVERS, ...args], env, stderr: 'pipe' })
  const client = new Client({ name: 'sdk-test-client', version: '1.0.0' })
  await client.connect(transport)
  return { client, transport }
}

const closing = []
afterAll(async () => {
  await Promise.allSettled(closing.map((close) => close()))
})

describe('toolreg serve over stdio, with the official MCP SDK client', () => {
  it('lists the meta-tools and the inline tools under their own names, finds, inspects and invokes a deferred tool', async () => {
    const { client } = await stdioClient(['--config', config, '--context-window', '8000'])
    closing.push(() => client.close())
    expect(client.getInstructions()).toMatch(/^<deferred-tools>[\s\S]*<namespace name="mcp:everything"/)
    const { tools } = await client.listTools()
    const names = tools.map((t) => t.name)
    expect(names.slice(0, 3)).toEqual(['tool_search', 'tool_inspect', 'tool_invoke'])
    // Destructive tools stay inline, under their own names, marked to stay loaded.
    const remove = tools.find((t) => t.name === 'delete_entities')
    expect(remove?._meta?.['anthropic/alwaysLoad']).toBe(true)
    expect(remove?.annotations?.destructiveHint).toBe(true)

    const { sum, inspected, invoked } = await searchInspectInvokeSum(client)
    expect(sum).toBeDefined()
    expect(inspected).toMatch(/@param \{number\} params\.a/)
    expect(invoked).toMatchObject({ content: [{ type: 'text', text: 'The sum of 2 and 40 is 42.' }], isError: false })
  }, 60_000)

  it('never lets tool_invoke reach a destructive tool; the inline one goes through to its server', async () => {
    const { client } = await stdioClient(['--config', config, '--context-window', '8000'])
    closing.push(() => client.close())
    const found = textOf(await client.callTool({ name: 'tool_search', arguments: { query: 'delete entities knowledge graph', limit: 10 } }))
    expect(found).not.toMatch(/delete_entities/)
    const wireId = buildMcpToolWireId({ serverId: 'memory', serverName: 'memory', toolName: 'delete_entities' })
    for (const name of [wireId, 'delete_entities']) {
      // Inspected first, so a refusal is approval's, not the inspect-first guard's.
      await client.callTool({ name: 'tool_inspect', arguments: { name } })
      const refused = await client.callTool({ name: 'tool_invoke', arguments: { name, params: { entityNames: ['x'] } } })
      expect(refused.isError).toBe(true)
      // Either name reaches the approval check, which names the tool as the client lists it.
      expect(textOf(refused)).toMatch(/^Tool "delete_entities" requires user approval; call it directly/)
    }
    const direct = await client.callTool({ name: 'delete_entities', arguments: { entityNames: ['nobody'] } })
    expect(textOf(direct)).toMatch(/deleted successfully/i)
  }, 60_000)

  it('keeps a server error to that call: a crash mid-call fails it, the others go on', async () => {
    const { client } = await stdioClient(['--config', config])
    closing.push(() => client.close())
    const crashed = await client.callTool({ name: 'crash', arguments: {} })
    expect(crashed.isError).toBe(true)
    // The crashed server restarts for the next call; the other servers never noticed.
    expect((await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } })).structuredContent).toEqual({ sum: 3 })
    const echoed = await client.callTool({ name: buildMcpToolWireId({ serverId: 'everything', serverName: 'everything', toolName: 'echo' }), arguments: { message: 'still here' } })
    expect(textOf(echoed)).toMatch(/still here/)
  }, 60_000)

  it('checks a listed server tool\'s arguments before forwarding them: an invalid call is refused with the issues and the signature, at both revisions', async () => {
    const { client } = await stdioClient(['--config', config])
    closing.push(() => client.close())
    const refused = await client.callTool({ name: 'add', arguments: { a: 'lots', b: 2 } })
    expect(refused.isError).toBe(true)
    // The gateway's sentence, not the server's: the call never reached it.
    expect(textOf(refused)).toMatch(/^Invalid params for "add":\n- at \$\.a: "lots" is not of type "number"/)
    expect(textOf(refused)).toMatch(/Expected signature:[\s\S]*@param \{number\} params\.a/)
    expect(textOf(await client.callTool({ name: 'add', arguments: { a: 1 } }))).toMatch(/Invalid params for "add"[\s\S]*"b" is a required property/)
    expect((await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } })).structuredContent).toEqual({ sum: 3 })
    // A 2026-07-28 request meets the same check.
    const { url } = await startHttp(['--config', config, '--no-auth'])
    const stateless2026 = await stateless(url, 'tools/call', { name: 'add', arguments: { a: 'lots', b: 2 } })
    expect(stateless2026.answer.result).toMatchObject({ resultType: 'complete', isError: true })
    expect(stateless2026.answer.result.content[0].text).toMatch(/^Invalid params for "add"/)
  }, 60_000)

  it('passes a server\'s progress, log messages and list changes on to the client', async () => {
    const { client } = await stdioClient(['--config', configOf(testServer('live', ['--rug-pull', 'none']))])
    closing.push(() => client.close())
    const progress = []
    const result = await client.callTool({ name: 'progress', arguments: { steps: 3 } }, undefined, { onprogress: (p) => progress.push(p) })
    expect(textOf(result)).toBe('done in 3 steps')
    expect(progress.map((p) => [p.progress, p.total, p.message])).toEqual([[1, 3, 'step 1'], [2, 3, 'step 2'], [3, 3, 'step 3']])

    const logs = []
    const { LoggingMessageNotificationSchema, ToolListChangedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js')
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params))
    await client.setLoggingLevel('info')
    await client.callTool({ name: 'log', arguments: { text: 'disk almost full' } })
    for (let i = 0; i < 50 && logs.length === 0; i++) await new Promise((r) => setTimeout(r, 20))
    expect(logs).toEqual([{ level: 'warning', logger: 'live', data: 'disk almost full' }])
    await client.setLoggingLevel('error')
    await client.callTool({ name: 'log', arguments: { text: 'below the level' } })

    let changes = 0
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => changes++)
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('toggled')
    await client.callTool({ name: 'toggle', arguments: {} })
    // A tool that appears after the server's first listing is held by tool trust until approved
    // (on by default, pins in memory): not listed, and a call of it says why. The list the
    // client has did not change, so it is not told that it did.
    let held = ''
    for (let i = 0; i < 100 && !/is held/.test(held); i++) {
      held = await client.callTool({ name: 'toggled', arguments: {} }).then(textOf, (error) => error.message)
      await new Promise((r) => setTimeout(r, 50))
    }
    expect(held).toMatch(/is held until the user approves it: toggled: new tool, not yet approved/)
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('toggled')
    expect(changes).toBe(0)
    // A change of what the client sees (echo renamed: the old name goes, the new one is held)
    // is passed on, once.
    await client.callTool({ name: 'rug_pull', arguments: { kind: 'rename' } })
    for (let i = 0; i < 100 && changes === 0; i++) await new Promise((r) => setTimeout(r, 50))
    await new Promise((r) => setTimeout(r, 300))
    expect(changes).toBe(1)
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('echo')
    expect(logs).toHaveLength(1)
  }, 60_000)

  it("passes the servers' prompts, resources and completions through; a prompt name two servers share gets the server's prefix", async () => {
    const twin = referenceServer('everything', 'twin', 'twin')
    // Pinned: resources/subscribe (below) belongs to the session era of the server behind.
    const conformance = { ...testServer('conformance', ['--conformance']), protocolVersion: '2025-11-25' }
    const { client, transport } = await stdioClient(['--config', configOf(referenceServer('everything'), twin, conformance)])
    closing.push(() => client.close())
    let stderr = ''
    transport.stderr.on('data', (chunk) => (stderr += chunk))
    expect(client.getServerCapabilities()).toMatchObject({ prompts: { listChanged: true }, resources: { subscribe: true, listChanged: true }, completions: {} })

    const prompts = (await client.listPrompts()).prompts.map((p) => p.name)
    expect(prompts).toEqual(expect.arrayContaining(['everything__simple-prompt', 'twin__simple-prompt', 'test_simple_prompt', 'test_prompt_with_arguments']))
    expect(prompts).not.toContain('simple-prompt')
    const simple = await client.getPrompt({ name: 'twin__simple-prompt' })
    expect(simple.messages[0]).toMatchObject({ role: 'user', content: { type: 'text' } })
    const withArgs = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'hello', arg2: 'world' } })
    expect(withArgs.messages[0].content.text).toBe("Prompt with arguments: arg1='hello', arg2='world'")
    await expect(client.getPrompt({ name: 'simple-prompt' })).rejects.toThrow(/no server behind the gateway offers the prompt "simple-prompt"/)

    // A URI two servers list is the first one's; the other's copies are left out, with a warning.
    const uris = (await client.listResources()).resources.map((r) => r.uri)
    expect(uris).toContain('test://static-text')
    expect(uris.some((uri) => uri.startsWith('demo://'))).toBe(true)
    expect(new Set(uris).size).toBe(uris.length)
    for (let i = 0; i < 50 && !stderr.includes("twin's resources"); i++) await new Promise((r) => setTimeout(r, 20))
    expect(stderr).toMatch(/warning: twin's resources demo:\/\/\S+ and \d+ more are left out: earlier servers list the same URIs/)
    const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)
    expect(templates).toContain('test://template/{id}/data')

    expect((await client.readResource({ uri: 'test://static-text' })).contents).toEqual([
      { uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
    ])
    // Not listed, but a template of one server matches it.
    const templated = await client.readResource({ uri: 'test://template/7/data' })
    expect(JSON.parse(templated.contents[0].text)).toEqual({ id: '7', templateTest: true, data: 'Data for ID: 7' })
    await expect(client.readResource({ uri: 'test://nowhere' })).rejects.toThrow(/not found/i)

    const completion = await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'pa' } })
    expect(completion.completion.values).toEqual(['paris', 'park', 'party'])

    // The server behind announces a change of a subscribed resource; the client hears it.
    const { ResourceUpdatedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js')
    const updated = new Promise((resolve) => client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params)))
    await client.subscribeResource({ uri: 'test://watched-resource' })
    expect(await updated).toEqual({ uri: 'test://watched-resource' })
    await client.unsubscribeResource({ uri: 'test://watched-resource' })
  }, 60_000)

  it('lists the same bytes 20 times, across a restart', async () => {
    const lists = []
    for (let run = 0; run < 2; run++) {
      const { client } = await stdioClient(['--config', config, '--context-window', '8000'])
      for (let i = 0; i < 10; i++) lists.push(JSON.stringify((await client.listTools()).tools))
      await client.close()
    }
    expect(new Set(lists).size).toBe(1)
  }, 60_000)

  it('leaves no server process behind when the client disconnects', async () => {
    const { client } = await stdioClient(['--config', configOf(testServer('pids'))])
    const pid = Number(textOf(await client.callTool({ name: 'pid', arguments: {} })))
    expect(processGone(pid)).toBe(false)
    await client.close()
    for (let i = 0; i < 50 && !processGone(pid); i++) await new Promise((r) => setTimeout(r, 100))
    expect(processGone(pid)).toBe(true)
  }, 60_000)

  // Node clients (the SDK above) start a server on socket pairs; Python's and most others on
  // pipes. The gateway reads and writes either kind on its reactor, each its own way.
  it.runIf(process.platform === 'linux')('serves a client that starts it on pipes (FIFOs) as it serves socket pairs', async () => {
    const fifos = mkdtempSync(join(tmpdir(), 'toolreg-serve-fifo-'))
    const [input, output] = [join(fifos, 'in'), join(fifos, 'out')]
    execFileSync('mkfifo', [input, output])
    const args = [bin, 'serve', ...WAIT_FOR_SERVERS, '--config', configOf(testServer('fifo'))]
    const child = spawn('sh', ['-c', 'exec "$0" "$@" < "$IN" > "$OUT"', process.execPath, ...args], { env: { ...env, IN: input, OUT: output }, stdio: ['ignore', 'ignore', 'ignore'] })
    const gone = new Promise((resolve) => child.once('exit', resolve))
    // Opening a FIFO waits for its other end: these opens and the shell's redirections meet.
    const writer = createWriteStream(input)
    const reader = createReadStream(output)
    const buffer = new ReadBuffer()
    const transport = {
      async start() {
        reader.on('data', (chunk) => {
          buffer.append(chunk)
          for (let message; (message = buffer.readMessage()); ) transport.onmessage?.(message)
        })
      },
      async send(message) {
        writer.write(serializeMessage(message))
      },
      async close() {
        writer.end()
        transport.onclose?.()
      },
    }
    const client = new Client({ name: 'fifo-client', version: '1.0.0' })
    await client.connect(transport)
    expect(readlinkSync(`/proc/${child.pid}/fd/0`)).toBe(input)
    expect(readlinkSync(`/proc/${child.pid}/fd/1`)).toBe(output)
    // The FIFOs are reopened for the reactor: O_NONBLOCK stays off the process's own fd 0.
    const flags = Number.parseInt(/^flags:\s+(\d+)/m.exec(readFileSync(`/proc/${child.pid}/fdinfo/0`, 'utf8'))[1], 8)
    expect(flags & 0o4000).toBe(0)
    for (let i = 0; i < 3; i++) expect(textOf(await client.callTool({ name: 'echo', arguments: { text: `fifo ${i}` } }))).toBe(`fifo ${i}`)
    await client.close()
    // Its stdin closed, the gateway ends as it does for a client on sockets.
    expect(await gone).toBe(0)
  }, 60_000)
})

describe('toolreg serve never waits on a broken server', () => {
  it('answers initialize and tools/list while a server hangs; a slow one joins with list_changed, a crashing one is left out once, with why', async () => {
    const file = writeConfig({
      mcpServers: {
        live: { command: testServer('live').command, args: testServer('live').args },
        hanging: { command: testServer('hanging').command, args: [...testServer('hanging').args, '--hang-on-list'] },
        slow: { command: testServer('slow').command, args: [...testServer('slow').args, '--slow-start-ms', '15000'] },
        crashing: { command: process.execPath, args: ['-e', 'console.error("cannot open the database"); process.exit(3)'] },
      },
    })
    const cold = mkdtempSync(join(tmpdir(), 'toolreg-serve-cold-'))
    const started = Date.now()
    // A start-up wait long enough for the healthy server on a busy machine, far below the others.
    const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'serve', '--config', file, '--timeout', '30000', '--startup-wait', '5000'], env: { ...env, TOOLREG_CACHE_DIR: cold }, stderr: 'pipe' })
    let stderr = ''
    transport.stderr.on('data', (d) => (stderr += d))
    const client = new Client({ name: 'sdk-test-client', version: '1.0.0' })
    const { ToolListChangedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js')
    let changed = 0
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed++)
    await client.connect(transport)
    closing.push(() => client.close())
    const first = (await client.listTools()).tools.map((t) => t.name)
    // Before the slow server's 15 s and far below the hanging one's 30 s: the gateway waited on
    // neither (the 1 s goal is measured in bench/broken-server.bench.mjs, not here).
    expect(Date.now() - started).toBeLessThan(12_000)
    // Every test server has the same tools: once `slow` joins, they go by their wire ids.
    const slowEcho = buildMcpToolWireId({ serverId: 'slow', serverName: 'slow', toolName: 'echo' })
    expect(first).toContain('echo')
    expect(first).not.toContain(slowEcho)
    for (let i = 0; i < 400 && !(await client.listTools()).tools.some((t) => t.name === slowEcho); i++) await new Promise((r) => setTimeout(r, 50))
    expect((await client.listTools()).tools.map((t) => t.name)).toContain(slowEcho)
    expect(changed).toBeGreaterThan(0)
    expect(stderr).toMatch(/slow joined with \d+ tools; now/)
    // Left out once, with what the server said; the hanging one is still starting.
    expect(stderr.match(/crashing is left out/g)).toHaveLength(1)
    expect(stderr).toMatch(/warning: crashing is left out: the server process exited with status 3[^\n]*stderr: cannot open the database/)
    expect(stderr).not.toMatch(/hanging is left out/)
  }, 60_000)

  it('a client that goes away before its handshake, while a server is still listing, ends serve quietly: exit 0, no failure logged or remembered', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'toolreg-serve-gone-'))
    const slow = testServer('slow', ['--slow-start-ms', '3000'])
    const file = writeConfig({ mcpServers: { slow: { command: slow.command, args: slow.args } } })
    // stdin closed at once: the client is gone before the server lists its tools.
    const run = await startCli(['serve', '--config', file, '--startup-wait', '0'], { env: cliEnv({ TOOLREG_CACHE_DIR: cacheDir }) }).done
    expect(run.stderr).toMatch(/serving MCP on stdio/)
    expect(run.stderr).not.toMatch(/slow is left out|Unexpected error|handshake/)
    expect(run.code).toBe(0)
    expect(readdirSync(join(cacheDir, 'tools-list')).filter((f) => f.endsWith('.failed.json'))).toEqual([])
  }, 60_000)

  it('tool_inspect and tool_invoke take the names the client lists, server/tool and near misses get "did you mean"', async () => {
    const { client } = await stdioClient(['--config', config, '--context-window', '8000'])
    closing.push(() => client.close())
    const listed = (await client.listTools()).tools.map((t) => t.name)
    expect(listed).not.toContain('get-sum') // deferred
    for (const name of ['everything/get-sum', 'get-sum', buildMcpToolWireId({ serverId: 'everything', serverName: 'everything', toolName: 'get-sum' })]) {
      expect(textOf(await client.callTool({ name: 'tool_inspect', arguments: { name } })), name).toMatch(/@param \{number\} params\.a/)
      const invoked = await client.callTool({ name: 'tool_invoke', arguments: { name, params: { a: 2, b: 40 } } })
      expect(textOf(invoked), name).toBe('The sum of 2 and 40 is 42.')
    }
    const miss = await client.callTool({ name: 'tool_inspect', arguments: { name: 'everything/get-summ' } })
    expect(miss.isError).toBe(true)
    expect(textOf(miss)).toMatch(/^No tool named "everything\/get-summ" here\. Did you mean "everything\/get-sum"/)
    // `echo` is on two servers: the short name is ambiguous and says which names to use.
    const shared = await client.callTool({ name: 'tool_inspect', arguments: { name: 'echo' } })
    expect(textOf(shared)).toMatch(/"echo" is the name of 2 tools here; use one of "everything\/echo", "faulty\/echo"/)
  }, 60_000)
})

describe('toolreg serve: approval, profiles, faults and shutdown', () => {
  it('keeps destructive tools and the config\'s needsApproval tools away from tool_exec as from tool_invoke', async () => {
    const file = writeConfig({
      mcpServers: {
        memory: { command: process.execPath, args: referenceServer('memory').args, env: referenceServer('memory').env },
        everything: { command: process.execPath, args: referenceServer('everything').args },
      },
      toolreg: { needsApproval: ['memory/create_*'] },
    })
    // A small window defers tools, so tool_invoke is listed too.
    const { client } = await stdioClient(['--config', file, '--exec', '--context-window', '8000'])
    closing.push(() => client.close())
    const wireId = (toolName) => buildMcpToolWireId({ serverId: 'memory', serverName: 'memory', toolName })
    const validParams = {
      delete_entities: { entityNames: ['x'] },
      create_entities: { entities: [{ name: 'x', entityType: 'test', observations: [] }] },
    }
    for (const [name, params] of Object.entries(validParams)) {
      const id = JSON.stringify(wireId(name))
      for (const code of [`return await tools.invoke(${id}, ${JSON.stringify(params)})`, `return await tools[${id}](${JSON.stringify(params)})`]) {
        const viaExec = await client.callTool({ name: 'tool_exec', arguments: { code } })
        expect(viaExec.isError, code).toBe(true)
        expect(textOf(viaExec), code).toMatch(/TOOLREG_APPROVAL_REQUIRED/)
      }
      // Inspected first, so the refusal is approval's, not the inspect-first guard's.
      await client.callTool({ name: 'tool_inspect', arguments: { name: wireId(name) } })
      const viaInvoke = await client.callTool({ name: 'tool_invoke', arguments: { name: wireId(name), params } })
      expect(viaInvoke.isError, name).toBe(true)
      expect(textOf(viaInvoke), name).toMatch(/approval/i)
    }
    // The memory graph is untouched: nothing was created through the refused paths.
    const graph = await client.callTool({ name: 'tool_exec', arguments: { code: `return await tools[${JSON.stringify(wireId('read_graph'))}]({})` } })
    expect(textOf(graph)).toMatch(/"entities": ?\[\]/)
    // Both stay inline, so the client's own confirmation applies to them.
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['delete_entities', 'create_entities']))
  }, 60_000)

  it('--profile serves only its servers and tools; an unknown profile names the ones there are', async () => {
    const file = writeConfig({
      mcpServers: {
        everything: { command: process.execPath, args: referenceServer('everything').args },
        memory: { command: process.execPath, args: referenceServer('memory').args, env: referenceServer('memory').env },
        faulty: { command: testServer('faulty').command, args: testServer('faulty').args },
      },
      toolreg: { profiles: { review: { servers: ['everything', 'memory'], tools: ['memory/*', '!memory/delete_*', 'everything/get-sum'] } } },
    })
    const { client } = await stdioClient(['--config', file, '--profile', 'review'])
    closing.push(() => client.close())
    const names = (await client.listTools()).tools.map((t) => t.name)
    expect(names).toEqual(expect.arrayContaining(['get-sum', 'read_graph', 'create_entities']))
    expect(names.filter((n) => /delete|^add$|^echo$|crash/.test(n))).toEqual([])
    expect(textOf(await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } }))).toMatch(/3/)

    const unknown = spawn(process.execPath, [bin, 'serve', '--config', file, '--profile', 'nope'], { env, stdio: ['pipe', 'ignore', 'pipe'] })
    let stderr = ''
    unknown.stderr.on('data', (d) => (stderr += d))
    const code = await new Promise((resolve) => unknown.once('exit', resolve))
    expect(code).not.toBe(0)
    expect(stderr).toMatch(/no profile named "nope"; the config has "review"/)
  }, 60_000)

  it('a server gone at start, a hanging call and a crash each fail alone; cancelling reaches the server', async () => {
    const file = writeConfig({
      mcpServers: {
        gone: { command: '/nonexistent/mcp-server' },
        live: { command: testServer('live').command, args: testServer('live').args },
      },
    })
    const { client } = await stdioClient(['--config', file, '--timeout', '5000'])
    closing.push(() => client.close())
    const names = (await client.listTools()).tools.map((t) => t.name)
    expect(names).toContain('slow')
    // A call the client gives up on is cancelled at the server, and the gateway goes on.
    await expect(client.callTool({ name: 'slow', arguments: { ms: 600_000 } }, undefined, { timeout: 500 })).rejects.toThrow(/timed out/i)
    let cancelled = '0'
    for (let i = 0; i < 50 && cancelled === '0'; i++) {
      await new Promise((r) => setTimeout(r, 100))
      cancelled = textOf(await client.callTool({ name: 'cancelled_count', arguments: {} }))
    }
    expect(cancelled).toBe('1')
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'still here' } }))).toBe('still here')
  }, 60_000)

  it('--call-timeout bounds a forwarded call: past it the call fails, saying so, and the server is told to stop', async () => {
    const { client } = await stdioClient(['--config', configOf(testServer('live')), '--call-timeout', '400'])
    closing.push(() => client.close())
    expect(textOf(await client.callTool({ name: 'slow', arguments: { ms: 50 } }))).toBe('slept 50 ms')
    const started = Date.now()
    const late = await client.callTool({ name: 'slow', arguments: { ms: 30_000 } })
    expect(late.isError).toBe(true)
    expect(textOf(late)).toMatch(/timed out after 400 ms/)
    expect(Date.now() - started).toBeLessThan(10_000)
    let cancelled = '0'
    for (let i = 0; i < 50 && cancelled === '0'; i++) {
      await new Promise((r) => setTimeout(r, 100))
      cancelled = textOf(await client.callTool({ name: 'cancelled_count', arguments: {} }))
    }
    expect(cancelled).toBe('1')
  }, 60_000)

  it("passes a server's sampling request to a client that can sample, and refuses it for one that cannot", async () => {
    // Pinned: the server behind sends `sampling/createMessage`, a request of the session era.
    const file = configOf({ ...testServer('conformance', ['--conformance']), protocolVersion: '2025-11-25' })
    const { CreateMessageRequestSchema } = await import('@modelcontextprotocol/sdk/types.js')
    const sampler = new Client({ name: 'sampling-client', version: '1.0.0' }, { capabilities: { sampling: {} } })
    sampler.setRequestHandler(CreateMessageRequestSchema, async (request) => ({
      role: 'assistant',
      content: { type: 'text', text: `echo of ${request.params.messages[0].content.text}` },
      model: 'test-model',
    }))
    await sampler.connect(new StdioClientTransport({ command: process.execPath, args: [bin, 'serve', ...WAIT_FOR_SERVERS, '--config', file], env, stderr: 'pipe' }))
    closing.push(() => sampler.close())
    expect(textOf(await sampler.callTool({ name: 'test_sampling', arguments: { prompt: 'hi' } }))).toBe('LLM response: echo of hi')

    const { client } = await stdioClient(['--config', file])
    closing.push(() => client.close())
    const refused = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'hi' } })
    expect(refused.isError).toBe(true)
    expect(textOf(refused)).toMatch(/does not support sampling/)
  }, 60_000)

  it('never fronts itself: its own entry in the config is left out, and a gateway a wrapper starts below it refuses to run', async () => {
    const live = testServer('live')
    const file = writeConfig({
      mcpServers: {
        toolreg: { command: 'npx', args: ['-y', 'toolreg', 'serve', '--model', 'claude-sonnet-4'] },
        // The same, hidden in a shell command line: only the environment tells.
        wrapped: { command: '/bin/sh', args: ['-c', `exec ${JSON.stringify(process.execPath)} ${JSON.stringify(bin)} serve`] },
        live: { command: live.command, args: live.args },
      },
    })
    const child = spawn(process.execPath, [bin, 'serve', ...WAIT_FOR_SERVERS, '--config', file, '--timeout', '20000'], { env, stdio: ['pipe', 'pipe', 'pipe'] })
    closing.push(() => child.kill('SIGTERM'))
    let stderr = ''
    await new Promise((resolve, reject) => {
      child.stderr.on('data', (d) => {
        stderr += d
        if (/serving MCP on stdio/.test(stderr)) resolve()
      })
      child.once('exit', (code) => reject(new Error(`exited with ${code}: ${stderr}`)))
    })
    expect(stderr).toMatch(/leaving out toolreg: it runs toolreg serve itself/)
    expect(stderr).toMatch(/warning: wrapped is left out: [^\n]*stderr: toolreg serve was started by another toolreg serve/)
    expect(stderr).toMatch(/toolreg serve: \d+ tools from 1 of 2 servers/)
    child.kill('SIGTERM')
  }, 60_000)

  for (const signal of ['SIGINT', 'SIGTERM']) {
    it(`leaves no server process behind on ${signal}`, async () => {
      const { client, transport } = await stdioClient(['--config', configOf(testServer('pids'))])
      const pid = Number(textOf(await client.callTool({ name: 'pid', arguments: {} })))
      expect(processGone(pid)).toBe(false)
      process.kill(transport.pid, signal)
      for (let i = 0; i < 50 && !processGone(pid); i++) await new Promise((r) => setTimeout(r, 100))
      expect(processGone(pid)).toBe(true)
      await client.close()
    }, 60_000)
  }
})

/** Starts `toolreg serve --http 0`; resolves to `{ url, token, child }` once it listens. */
function startHttp(args) {
  return startServeHttp([...WAIT_FOR_SERVERS, ...args], { env, onStart: (child) => closing.push(() => child.kill('SIGTERM')) })
}

/**
 * A raw POST of `initialize`, with headers fetch() would not let us set (Host): its HTTP status,
 * or with `answer` the body as text.
 */
function rawInitialize(url, headers, { protocolVersion = '2025-06-18', answer = false } = {}) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion, capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      let text = ''
      res.on('data', (d) => (text += d))
      res.on('end', () => resolve(answer ? text : res.statusCode))
    })
    req.once('error', reject)
    req.end(body)
  })
}

describe('toolreg serve over Streamable HTTP', () => {
  it('serves the SDK client with the printed token, and refuses no token, a foreign Origin and a rebinding Host', async () => {
    const { url, token } = await startHttp(['--config', config, '--context-window', '8000'])
    expect(token).toMatch(/^[\w-]{40,}$/)
    const port = new URL(url).port
    expect(await rawInitialize(url, {})).toBe(401)
    expect(await rawInitialize(url, { authorization: 'Bearer wrong' })).toBe(401)
    expect(await rawInitialize(url, { authorization: `Bearer ${token}`, origin: 'http://evil.example' })).toBe(403)
    expect(await rawInitialize(url, { authorization: `Bearer ${token}`, host: `evil.example:${port}` })).toBe(403)
    expect(await rawInitialize(url, { authorization: `Bearer ${token}`, origin: `http://127.0.0.1:${port}` })).toBe(200)

    const client = new Client({ name: 'sdk-http-client', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }))
    closing.push(() => client.close())
    const { tools } = await client.listTools()
    expect(tools.map((t) => t.name)).toContain('tool_search')
    const found = textOf(await client.callTool({ name: 'tool_search', arguments: { query: 'echo text back' } }))
    expect(found).toMatch(/mcp__everything__echo_[0-9a-f]{10}/)
  }, 60_000)

  it('--no-auth serves without a token, says so, and still binds loopback only', async () => {
    const { url, stderr } = await startHttp(['--config', config, '--no-auth'])
    expect(new URL(url).hostname).toBe('127.0.0.1')
    // startServeHttp resolves once the line after the address is out.
    expect(stderr()).toMatch(/warning: --no-auth/)
    expect(await rawInitialize(url, {})).toBe(200)
    // The revisions clients use today are spoken as asked; a newer one gets the newest known.
    for (const [asked, spoken] of [['2025-06-18', '2025-06-18'], ['2025-11-25', '2025-11-25'], ['2099-01-01', '2025-11-25']]) {
      const answer = await rawInitialize(url, {}, { protocolVersion: asked, answer: true })
      expect(/"protocolVersion":"([^"]+)"/.exec(answer)?.[1], asked).toBe(spoken)
    }
  }, 60_000)
})

/**
 * One request as a client of MCP 2026-07-28 sends it: no session, its revision, capabilities and
 * identity in `_meta`, the revision and method in headers. Resolves to the HTTP status and the
 * JSON-RPC answer (the last message of an event stream); `signal` abandons the request.
 */
async function stateless(url, method, params = {}, capabilities = {}, { meta = {}, signal } = {}) {
  const response = await postStateless(url, method, params, capabilities, meta, signal)
  const text = await response.text()
  const messages = response.headers.get('content-type')?.includes('text/event-stream')
    ? text.split('\n').filter((line) => line.startsWith('data:') && line.length > 5).map((line) => JSON.parse(line.slice(5)))
    : [JSON.parse(text)]
  return { status: response.status, answer: messages.filter((m) => m.id === 7).at(-1), notifications: messages.filter((m) => m.id === undefined) }
}

/** The POST of a 2026-07-28 request (id 7), its response not read yet. */
function postStateless(url, method, params, capabilities, meta, signal) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': method }
  // What the request names (a tool, prompt or resource) goes in a header too, for routers.
  const name = params.name ?? params.uri
  if (name) headers['mcp-name'] = name
  const _meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': capabilities, 'io.modelcontextprotocol/clientInfo': { name: 'raw-2026', version: '1' }, ...meta }
  return fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { ...params, _meta } }), signal })
}

/**
 * A `subscriptions/listen` stream of a 2026-07-28 client with this filter: the messages that
 * arrived so far, a way to wait for one, and `close()` (which cancels the request).
 */
async function listen(url, notifications) {
  const abort = new AbortController()
  const response = await postStateless(url, 'subscriptions/listen', { notifications }, {}, {}, abort.signal)
  expect(response.headers.get('content-type')).toContain('text/event-stream')
  const messages = []
  const decoder = new TextDecoder()
  let pending = ''
  const reading = (async () => {
    for await (const chunk of response.body) {
      pending += decoder.decode(chunk, { stream: true })
      const lines = pending.split('\n')
      pending = lines.pop()
      for (const line of lines) if (line.startsWith('data:') && line.length > 5) messages.push(JSON.parse(line.slice(5)))
    }
  })().catch(() => {})
  const waitFor = async (what, pick) => {
    const deadline = Date.now() + 10_000
    while (!messages.some(pick)) {
      if (Date.now() > deadline) throw new Error(`no ${what} on the listen stream; it carried ${JSON.stringify(messages)}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    return messages.find(pick)
  }
  return { messages, waitFor, close: () => { abort.abort(); return reading } }
}

/** The resource URIs the test server behind the gateway holds subscribed now. */
async function subscribedAtServer(url) {
  const read = await stateless(url, 'resources/read', { uri: 'test://subscriptions' })
  return JSON.parse(read.answer.result.contents[0].text)
}

/** Waits until the server holds exactly `uris` subscribed (a stream's end reaches it later). */
async function untilSubscribedAtServer(url, uris) {
  const deadline = Date.now() + 10_000
  let now
  while (JSON.stringify(now = await subscribedAtServer(url)) !== JSON.stringify(uris)) {
    if (Date.now() > deadline) throw new Error(`the server behind the gateway holds ${JSON.stringify(now)} subscribed, not ${JSON.stringify(uris)}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe('toolreg serve answers MCP 2025-11-25 and 2026-07-28 on one endpoint, by what each request asks', () => {
  it('a 2026-07-28 request: discovery, resultType on forwarded results, MissingRequiredClientCapabilityError (HTTP 400) for an undeclared capability; a 2025-11-25 session alongside gets its own shapes', async () => {
    // The backend pinned to the handshake: its sampling tool asks within a session, where the
    // gateway finds the capability the 2026-07-28 request did not declare.
    const { url } = await startHttp(['--config', configOf({ ...testServer('conformance', ['--conformance']), protocolVersion: '2025-11-25' }), '--no-auth'])
    const discovered = await stateless(url, 'server/discover')
    expect(discovered.status).toBe(200)
    expect(discovered.answer.result.supportedVersions).toEqual(expect.arrayContaining(['2025-11-25', '2026-07-28']))
    expect(discovered.answer.result.capabilities.tools).toBeDefined()

    const called = await stateless(url, 'tools/call', { name: 'test_simple_text', arguments: {} })
    expect(called.answer.result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'This is a simple text response for testing.' }] })
    const read = await stateless(url, 'resources/read', { uri: 'test://static-text' })
    expect(read.answer.result).toMatchObject({ resultType: 'complete', ttlMs: expect.any(Number), cacheScope: expect.any(String) })
    const prompt = await stateless(url, 'prompts/get', { name: 'test_simple_prompt' })
    expect(prompt.answer.result.resultType).toBe('complete')

    // The server's tool asks the client's model; the request declared no sampling.
    const refused = await stateless(url, 'tools/call', { name: 'test_sampling', arguments: { prompt: 'hi' } })
    expect(refused.status).toBe(400)
    expect(refused.answer.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } })
    // The handshake's requests are not methods of 2026-07-28.
    expect((await stateless(url, 'ping')).status).toBe(404)

    // A client of the handshake lifecycle on the same endpoint: no resultType, as its revision has none.
    const client = new Client({ name: 'sdk-http-client', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    closing.push(() => client.close())
    const result = await client.callTool({ name: 'test_simple_text', arguments: {} })
    expect(result.content[0].text).toBe('This is a simple text response for testing.')
    expect(result).not.toHaveProperty('resultType')
  }, 60_000)
})

describe('toolreg serve gives 2026-07-28 clients list changes, resource updates and log messages on their own streams', () => {
  for (const backend of ['2025-11-25', '2026-07-28']) {
    it(`a listen stream subscribes the resources of its filter it knows, and only it hears their updates; a call's _meta logLevel picks its log messages (a server at ${backend})`, async () => {
      const { url } = await startHttp(['--config', configOf({ ...testServer('conformance', ['--conformance']), protocolVersion: backend }), '--no-auth'])
      // A process that listed no resources yet (the client listed them through another replica)
      // takes the URI and finds its server as the stream starts.
      const unlisted = await listen(url, { resourceSubscriptions: ['test://watched-resource'] })
      closing.push(unlisted.close)
      const taken = await unlisted.waitFor('acknowledgment', (m) => m.method === 'notifications/subscriptions/acknowledged')
      expect(taken.params.notifications).toEqual({ resourceSubscriptions: ['test://watched-resource'] })
      await unlisted.waitFor('resource update', (m) => m.method === 'notifications/resources/updated')
      await unlisted.close()
      await untilSubscribedAtServer(url, [])
      // Resources listed but not their templates: a URI a template may match cannot be judged.
      const templated = await startHttp(['--config', configOf({ ...testServer('conformance', ['--conformance']), protocolVersion: backend }), '--no-auth'])
      await stateless(templated.url, 'resources/list')
      const byTemplate = await listen(templated.url, { resourceSubscriptions: ['test://template/7/data'] })
      closing.push(byTemplate.close)
      expect((await byTemplate.waitFor('acknowledgment', (m) => m.method === 'notifications/subscriptions/acknowledged')).params.notifications).toEqual({ resourceSubscriptions: ['test://template/7/data'] })
      await byTemplate.waitFor('resource update', (m) => m.method === 'notifications/resources/updated' && m.params.uri === 'test://template/7/data')
      await byTemplate.close()

      // Listed, the gateway routes a URI by that list.
      const listed = await stateless(url, 'resources/list')
      expect(listed.answer.result.resources.map((r) => r.uri)).toContain('test://watched-resource')

      const watching = await listen(url, { toolsListChanged: true, resourceSubscriptions: ['test://watched-resource', 'test://nowhere'] })
      const listing = await listen(url, { toolsListChanged: true })
      closing.push(watching.close, listing.close)
      const acknowledged = await watching.waitFor('acknowledgment', (m) => m.method === 'notifications/subscriptions/acknowledged')
      // A URI no server behind the gateway is known to have is left out, as the revision has it.
      expect(acknowledged.params.notifications).toEqual({ toolsListChanged: true, resourceSubscriptions: ['test://watched-resource'] })
      expect(acknowledged.params._meta['io.modelcontextprotocol/subscriptionId']).toBe(7)
      // The test server announces a subscribed resource updated once, shortly after.
      const updated = await watching.waitFor('resource update', (m) => m.method === 'notifications/resources/updated')
      expect(updated.params).toMatchObject({ uri: 'test://watched-resource', _meta: { 'io.modelcontextprotocol/subscriptionId': 7 } })
      await listing.waitFor('acknowledgment', (m) => m.method === 'notifications/subscriptions/acknowledged')
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(listing.messages.map((m) => m.method)).toEqual(['notifications/subscriptions/acknowledged'])
      expect(await subscribedAtServer(url)).toEqual(['test://watched-resource'])
      await Promise.all([watching.close(), listing.close()])
      // The last stream that named the resource is gone, so the gateway drops it at the server
      // once it sees the streams end: a new stream subscribes it there again, which the test
      // server answers with an update.
      await untilSubscribedAtServer(url, [])
      const again = await listen(url, { resourceSubscriptions: ['test://watched-resource'] })
      closing.push(again.close)
      await again.waitFor('resource update after resubscribing', (m) => m.method === 'notifications/resources/updated')
      await again.close()
      await untilSubscribedAtServer(url, [])

      // Streams that open while others end, all at once: whatever order the gateway's subscribe
      // and unsubscribe requests take, the server holds the resource while a stream names it.
      for (let round = 0; round < 3; round++) {
        const first = await Promise.all(Array.from({ length: 4 }, () => listen(url, { resourceSubscriptions: ['test://watched-resource'] })))
        const [second] = await Promise.all([
          Promise.all(Array.from({ length: 4 }, () => listen(url, { resourceSubscriptions: ['test://watched-resource'] }))),
          ...first.map((stream) => stream.close()),
        ])
        await Promise.all(second.slice(1).map((stream) => stream.close()))
        await new Promise((resolve) => setTimeout(resolve, 200))
        expect(await subscribedAtServer(url)).toEqual(['test://watched-resource'])
        await second[0].close()
        await untilSubscribedAtServer(url, [])
      }

      // Log messages ride the call's own stream, from the level its _meta asks for; none unasked.
      const logged = (meta) => stateless(url, 'tools/call', { name: 'test_tool_with_logging', arguments: {} }, {}, { meta })
      const info = await logged({ 'io.modelcontextprotocol/logLevel': 'info' })
      expect(info.answer.result.content[0].text).toBe('Tool with logging executed successfully')
      expect(info.notifications.filter((m) => m.method === 'notifications/message').map((m) => m.params.data)).toEqual(['Tool execution started', 'Tool processing data', 'Tool execution completed'])
      for (const meta of [{ 'io.modelcontextprotocol/logLevel': 'error' }, {}]) {
        const quiet = await logged(meta)
        expect(quiet.answer.result.content[0].text).toBe('Tool with logging executed successfully')
        expect(quiet.notifications.filter((m) => m.method === 'notifications/message')).toEqual([])
      }
    }, 60_000)
  }
})

describe('toolreg serve relays input-required results to 2026-07-28 clients', () => {
  it('rounds of one call may reach different replicas that share the state key; a state signed with another key, altered, or a request the client cannot answer is refused', async () => {
    const keys = mkdtempSync(join(tmpdir(), 'toolreg-serve-keys-'))
    const keyFile = (name, secret) => {
      const file = join(keys, name)
      writeFileSync(file, `${secret}\n`)
      return file
    }
    const shared = keyFile('shared', 'a'.repeat(48))
    const config = configOf({ ...testServer('mrtr', ['--conformance-mrtr']), protocolVersion: '2026-07-28' })
    const replica = (file) => startHttp(['--config', config, '--no-auth', '--state-key-file', file]).then(({ url }) => url)
    const [first, second, stranger] = await Promise.all([replica(shared), replica(shared), replica(keyFile('other', 'b'.repeat(48)))])
    const asks = { elicitation: {} }
    const call = (url, extra = {}, capabilities = asks) => stateless(url, 'tools/call', { name: 'test_input_required_result_multi_round', arguments: {}, ...extra }, capabilities)

    const round1 = (await call(first)).answer.result
    expect(round1).toMatchObject({ resultType: 'input_required', inputRequests: { step1: { method: 'elicitation/create' } } })
    expect(round1.requestState).toEqual(expect.any(String))
    // The server's own state travels inside the gateway's, signed: not readable as the server's text.
    expect(round1.requestState).not.toBe('round-1')

    const round2 = (await call(second, { inputResponses: { step1: { action: 'accept', content: { name: 'Ada' } } }, requestState: round1.requestState })).answer.result
    expect(round2).toMatchObject({ resultType: 'input_required', inputRequests: { step2: { method: 'elicitation/create' } } })
    expect(round2.requestState).not.toBe(round1.requestState)

    const answer2 = { inputResponses: { step2: { action: 'accept', content: { color: 'blue' } } } }
    const foreign = await call(stranger, { ...answer2, requestState: round2.requestState })
    expect(foreign.answer.error).toMatchObject({ code: -32602, message: expect.stringMatching(/integrity check/) })
    const altered = await call(first, { ...answer2, requestState: `${round2.requestState}x` })
    expect(altered.answer.error.code).toBe(-32602)
    // Bound to its request: the same state on other arguments is refused too.
    const elsewhere = await stateless(first, 'tools/call', { name: 'test_input_required_result_multi_round', arguments: { other: 1 }, ...answer2, requestState: round2.requestState }, asks)
    expect(elsewhere.answer.error.code).toBe(-32602)

    const done = (await call(first, { ...answer2, requestState: round2.requestState })).answer.result
    expect(done).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: "Ada's favorite color is blue" }] })

    // Asked only for roots, which the request did not declare.
    const roots = await stateless(first, 'tools/call', { name: 'test_input_required_result_list_roots', arguments: {} }, { sampling: {} })
    expect(roots.answer.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { roots: {} } } })
  }, 90_000)
})

describe('toolreg serve parks a call whose server of 2025-11-25 asks during it, for a 2026-07-28 client', () => {
  const everything = { elicitation: {}, sampling: {}, roots: {} }
  const accept = (content) => ({ elicitation: { action: 'accept', content } })

  it('hands each request of the server to the client as an input_required round and resumes the call with the answer; states are checked and only resume their own call', async () => {
    const keyFile = join(mkdtempSync(join(tmpdir(), 'toolreg-serve-keys-')), 'shared')
    writeFileSync(keyFile, 'c'.repeat(48))
    // Both servers ask with requests of their own, within the call (the handshake lifecycle).
    const config = configOf({ ...testServer('mrtr', ['--conformance-mrtr']), protocolVersion: '2025-11-25' }, { ...testServer('asker'), protocolVersion: '2025-11-25' })
    const [gateway, { url: replica }] = await Promise.all([0, 1].map(() => startHttp(['--config', config, '--no-auth', '--state-key-file', keyFile])))
    const { url } = gateway
    const call = (name, extra = {}, capabilities = everything, at = url) => stateless(at, 'tools/call', { name, arguments: {}, ...extra }, capabilities)

    // Two requests of the server, one after the other: two rounds, then the result.
    const round1 = (await call('test_input_required_result_multi_round')).answer.result
    expect(round1).toMatchObject({ resultType: 'input_required', inputRequests: { elicitation: { method: 'elicitation/create', params: { message: 'Step 1: What is your name?' } } } })
    const round2 = (await call('test_input_required_result_multi_round', { inputResponses: accept({ name: 'Ada' }), requestState: round1.requestState })).answer.result
    expect(round2).toMatchObject({ resultType: 'input_required', inputRequests: { elicitation: { params: { message: 'Step 2: What is your favorite color?' } } } })
    // The retry brings no answer under the key it was asked with: refused, the call stays parked.
    const unanswered = await call('test_input_required_result_multi_round', { inputResponses: { step2: {} }, requestState: round2.requestState })
    expect(unanswered.answer.error).toMatchObject({ code: -32602, message: expect.stringMatching(/no answer to the server's elicitation request/) })
    // Another replica with the same key can read the state but does not hold the call.
    const elsewhere = await call('test_input_required_result_multi_round', { inputResponses: accept({ color: 'blue' }), requestState: round2.requestState }, everything, replica)
    expect(elsewhere.answer.error).toMatchObject({ code: -32602, message: expect.stringMatching(/parked in another toolreg serve process/) })
    const altered = await call('test_input_required_result_multi_round', { inputResponses: accept({ color: 'blue' }), requestState: `${round2.requestState}x` })
    expect(altered.answer.error).toMatchObject({ code: -32602, message: expect.stringMatching(/integrity check/) })
    const done = (await call('test_input_required_result_multi_round', { inputResponses: accept({ color: 'blue' }), requestState: round2.requestState })).answer.result
    expect(done).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: "Ada's favorite color is blue" }] })

    // Elicitation, sampling and roots, each a round of its own.
    const multiple = 'test_input_required_result_multiple_inputs'
    const asked = (await call(multiple)).answer.result
    expect(Object.keys(asked.inputRequests)).toEqual(['elicitation'])
    const sampling = (await call(multiple, { inputResponses: accept({ name: 'Ada' }), requestState: asked.requestState })).answer.result
    expect(sampling.inputRequests.sampling).toMatchObject({ method: 'sampling/createMessage', params: { maxTokens: 50 } })
    const sampled = { sampling: { role: 'assistant', content: { type: 'text', text: 'Hello' }, model: 'test-model' } }
    const roots = (await call(multiple, { inputResponses: sampled, requestState: sampling.requestState })).answer.result
    expect(roots.inputRequests.roots).toMatchObject({ method: 'roots/list' })
    const listed = { roots: { roots: [{ uri: 'file:///work/a', name: 'a' }] } }
    const all = (await call(multiple, { inputResponses: listed, requestState: roots.requestState })).answer.result
    expect(all).toMatchObject({ resultType: 'complete', content: [{ text: 'Hello Ada, your roots are: file:///work/a' }] })

    // A prompt whose server asks while it builds it.
    const prompt = (name, extra = {}) => stateless(url, 'prompts/get', { name, ...extra }, everything)
    const context = (await prompt('test_input_required_result_prompt')).answer.result
    expect(context).toMatchObject({ resultType: 'input_required', inputRequests: { elicitation: { method: 'elicitation/create' } } })
    const built = (await prompt('test_input_required_result_prompt', { inputResponses: accept({ context: 'tests' }), requestState: context.requestState })).answer.result
    expect(built).toMatchObject({ resultType: 'complete', messages: [{ content: { text: 'Answer within this context: tests' } }] })

    // A decline reaches the server as it is.
    const form = (await call('ask')).answer.result
    expect(form.inputRequests.elicitation.params).toMatchObject({ message: 'Who are you?' })
    const declined = (await call('ask', { inputResponses: { elicitation: { action: 'decline' } }, requestState: form.requestState })).answer.result
    expect(declined).toMatchObject({ resultType: 'complete', content: [{ text: expect.stringMatching(/"action":"decline"/) }] })

    // Calls parked side by side (each asked before the next began), resumed in reverse order:
    // each state resumes its own call, once.
    const parked = []
    for (let i = 0; i < 4; i++) parked.push((await call('test_input_required_result_elicitation')).answer.result.requestState)
    const resumed = await Promise.all(parked.map((requestState, i) => i).reverse().map((i) => call('test_input_required_result_elicitation', { inputResponses: accept({ name: `client-${i}` }), requestState: parked[i] })))
    expect(resumed.map(({ answer }) => answer.result.content[0].text)).toEqual(['Hello, client-3!', 'Hello, client-2!', 'Hello, client-1!', 'Hello, client-0!'])
    const again = await call('test_input_required_result_elicitation', { inputResponses: accept({ name: 'late' }), requestState: parked[0] })
    expect(again.answer.error).toMatchObject({ code: -32602, message: expect.stringMatching(/no longer waiting/) })

    // The request did not declare elicitation: MissingRequiredClientCapabilityError, as before.
    const undeclared = await call('ask', {}, { sampling: {} })
    expect(undeclared.answer.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: {} } } })

    // Two calls to the server in flight, neither waiting: which one asked cannot be told, so the
    // question reaches no client; the server hears why, the operator too.
    const running = call('slow', { arguments: { ms: 5000 } })
    await expect.poll(async () => (await call('sleeping')).answer.result.content[0].text, { timeout: 4000 }).toBe('1')
    const unclear = (await call('ask')).answer.result
    expect(unclear).toMatchObject({ resultType: 'complete', content: [{ text: expect.stringMatching(/elicitation failed: .*2 of its calls were running/) }] })
    expect((await running).answer.result.content[0].text).toBe('slept 5000 ms')
    expect(gateway.stderr()).toMatch(/warning: asker asked for elicitation while 2 of its calls were running/)

    // A request that goes away while it waits on its call takes the server's call down with it.
    const abandoned = stateless(url, 'tools/call', { name: 'slow', arguments: { ms: 30_000 } }, everything, { signal: AbortSignal.timeout(500) })
    await expect(abandoned).rejects.toThrow(/abort/i)
    const cancelled = async () => Number((await call('cancelled_count')).answer.result.content[0].text)
    await expect.poll(cancelled, { timeout: 5000 }).toBe(1)

    // The server dies while its call is parked: the retry gets the call's failure.
    const pid = Number((await call('pid')).answer.result.content[0].text)
    const waiting = (await call('ask')).answer.result
    process.kill(pid, 'SIGKILL')
    await expect.poll(() => processGone(pid)).toBe(true)
    const failed = (await call('ask', { inputResponses: accept({ name: 'Ada' }), requestState: waiting.requestState })).answer.result
    expect(failed).toMatchObject({ resultType: 'complete', isError: true, content: [{ text: expect.stringMatching(/asker/) }] })
  }, 120_000)

  it('frees a parked call nobody resumes when its call timeout runs out; the retry is told its state expired', async () => {
    const config = configOf({ ...testServer('asker'), protocolVersion: '2025-11-25' })
    const { url } = await startHttp(['--config', config, '--no-auth', '--call-timeout', '2000'])
    const asked = (await stateless(url, 'tools/call', { name: 'ask', arguments: {} }, everything)).answer.result
    expect(asked.resultType).toBe('input_required')
    await new Promise((resolve) => setTimeout(resolve, 2500))
    const late = await stateless(url, 'tools/call', { name: 'ask', arguments: {}, inputResponses: accept({ name: 'Ada' }), requestState: asked.requestState }, everything)
    expect(late.answer.error).toMatchObject({ code: -32602, message: expect.stringMatching(/expired/) })
    // The expired call is gone, not left beside the next one (which would make the server's next
    // request ambiguous, refused): the next call is asked afresh.
    const fresh = (await stateless(url, 'tools/call', { name: 'ask', arguments: {} }, everything)).answer.result
    expect(fresh).toMatchObject({ resultType: 'input_required', inputRequests: { elicitation: { method: 'elicitation/create' } } })
  }, 60_000)
})

describe("toolreg serve passes a server's question during tool_invoke or tool_exec to the client whose call it serves", () => {
  it('asks the calling client, not the one that connected last; a 2026-07-28 request is asked in input_required rounds, and no session client in its place', async () => {
    const config = configOf({ ...testServer('asker'), protocolVersion: '2025-11-25' }, { ...testServer('other', [], 'other'), protocolVersion: '2025-11-25' })
    // A window this small defers every tool: `ask` is reached through the meta-tools only.
    const { url } = await startHttp(['--config', config, '--no-auth', '--exec', '--context-window', '2000'])
    const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js')
    const asked = []
    const answering = async (who) => {
      const client = new Client({ name: who, version: '1.0.0' }, { capabilities: { elicitation: {} } })
      client.setRequestHandler(ElicitRequestSchema, async () => {
        asked.push(who)
        return { action: 'accept', content: { name: who, age: 1 } }
      })
      await client.connect(new StreamableHTTPClientTransport(new URL(url)))
      closing.push(() => client.close())
      return client
    }
    const first = await answering('first')
    const second = await answering('second')
    expect((await first.listTools()).tools.map((t) => t.name)).not.toContain('ask')
    const answeredBy = (result) => JSON.parse(textOf(result)).content?.name
    const viaExec = (client) => client.callTool({ name: 'tool_exec', arguments: { code: 'return await tools.invoke("asker/ask", {})' } })
    const viaInvoke = async (client) => {
      await client.callTool({ name: 'tool_inspect', arguments: { name: 'asker/ask' } })
      return client.callTool({ name: 'tool_invoke', arguments: { name: 'asker/ask', params: {} } })
    }
    expect(answeredBy(await viaInvoke(first))).toBe('first')
    expect(JSON.parse(textOf(await viaExec(first))).result.content[0].text).toMatch(/"name":"first"/)
    expect(answeredBy(await viaInvoke(second))).toBe('second')
    expect(asked).toEqual(['first', 'first', 'second'])

    // The second client's call started later and still runs, on another server: the question
    // is still the first's, whose code called the server that asks.
    const code = 'await tools.invoke("other/slow", { ms: 1000 }); return await tools.invoke("asker/ask", {})'
    const firsts = first.callTool({ name: 'tool_exec', arguments: { code } })
    await new Promise((resolve) => setTimeout(resolve, 300))
    await second.callTool({ name: 'tool_inspect', arguments: { name: 'other/slow' } })
    const seconds = second.callTool({ name: 'tool_invoke', arguments: { name: 'other/slow', params: { ms: 3000 } } })
    expect(JSON.parse(textOf(await firsts)).result.content[0].text).toMatch(/"name":"first"/)
    expect(textOf(await seconds)).toBe('slept 3000 ms')
    expect(asked).toEqual(['first', 'first', 'second', 'first'])

    // A 2026-07-28 request is asked in rounds: the host's run is parked, and the retry resumes
    // it with the answer (the host does not run the tool again). No session client is asked.
    const asks = { elicitation: {} }
    await stateless(url, 'tools/call', { name: 'tool_inspect', arguments: { name: 'asker/ask' } }, asks)
    for (const [name, args, read] of [
      ['tool_invoke', { name: 'asker/ask', params: {} }, (result) => textOf(result)],
      ['tool_exec', { code: 'return await tools.invoke("asker/ask", {})' }, (result) => JSON.parse(textOf(result)).result.content[0].text],
    ]) {
      const round = (await stateless(url, 'tools/call', { name, arguments: args }, asks)).answer.result
      expect(round, name).toMatchObject({ resultType: 'input_required', inputRequests: { elicitation: { method: 'elicitation/create', params: { message: 'Who are you?' } } } })
      const answer = { inputResponses: { elicitation: { action: 'accept', content: { name: 'Ada', age: 36 } } }, requestState: round.requestState }
      const done = (await stateless(url, 'tools/call', { name, arguments: args, ...answer }, asks)).answer.result
      expect(done.resultType, name).toBe('complete')
      expect(JSON.parse(read(done)), name).toEqual({ action: 'accept', content: { name: 'Ada', age: 36 } })
      // The state resumes that run once.
      const again = await stateless(url, 'tools/call', { name, arguments: args, ...answer }, asks)
      expect(again.answer.error, name).toMatchObject({ code: -32602, message: expect.stringMatching(/no longer waiting/) })
    }
    // Not declared: the call fails as 2026-07-28 says, naming the capability.
    const undeclared = await stateless(url, 'tools/call', { name: 'tool_invoke', arguments: { name: 'asker/ask', params: {} } }, {})
    expect(undeclared.answer.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: {} } } })
    // An unknown tool is still refused as before, and a tool that asks nothing answers at once.
    const unknown = await stateless(url, 'tools/call', { name: 'no_such_tool', arguments: {} }, asks)
    expect(unknown.answer.error).toMatchObject({ code: -32602, message: expect.stringMatching(/no tool named "no_such_tool"/) })
    const found = await stateless(url, 'tools/call', { name: 'tool_search', arguments: { query: 'ask who they are' } }, asks)
    expect(found.answer.result).toMatchObject({ resultType: 'complete' })
    expect(textOf(found.answer.result)).toMatch(/ask/)
    // A request that goes away while the host's run waits on its server takes the run down.
    await stateless(url, 'tools/call', { name: 'tool_inspect', arguments: { name: 'asker/slow' } }, asks)
    await stateless(url, 'tools/call', { name: 'tool_inspect', arguments: { name: 'asker/cancelled_count' } }, asks)
    const abandoned = stateless(url, 'tools/call', { name: 'tool_invoke', arguments: { name: 'asker/slow', params: { ms: 30_000 } } }, asks, { signal: AbortSignal.timeout(500) })
    await expect(abandoned).rejects.toThrow(/abort/i)
    const cancelled = async () => Number(textOf((await stateless(url, 'tools/call', { name: 'tool_invoke', arguments: { name: 'asker/cancelled_count', params: {} } }, asks)).answer.result))
    await expect.poll(cancelled, { timeout: 5000 }).toBe(1)
    expect(asked).toHaveLength(4)
  }, 60_000)

  it("passes the servers' progress of a tool the host runs to the client that asked for it, rising, and to a 2026-07-28 request's retry after its round", async () => {
    const config = configOf({ ...testServer('asker'), protocolVersion: '2025-11-25' }, referenceServer('everything'))
    const { url } = await startHttp(['--config', config, '--no-auth', '--exec', '--context-window', '2000', ...WAIT_FOR_SERVERS])
    const { ElicitRequestSchema } = await import('@modelcontextprotocol/sdk/types.js')
    const client = new Client({ name: 'progress', version: '1.0.0' }, { capabilities: { elicitation: {} } })
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Grace', age: 85 } }))
    await client.connect(new StreamableHTTPClientTransport(new URL(url)))
    closing.push(() => client.close())
    const heard = []
    const onprogress = ({ progress, total, message }) => heard.push({ progress, total, message })
    await client.callTool({ name: 'tool_inspect', arguments: { name: 'asker/ask' } })
    const invoked = await client.callTool({ name: 'tool_invoke', arguments: { name: 'asker/ask', params: { steps: 3 } } }, undefined, { onprogress })
    expect(JSON.parse(textOf(invoked)).content.name).toBe('Grace')
    expect(heard).toEqual([1, 2, 3].map((step) => ({ progress: step, total: 3, message: `step ${step}` })))

    // Two server calls in one run: the second's count starts over, and only what rises above
    // the first's last step passes.
    heard.length = 0
    const code = 'await tools.invoke("asker/progress", { steps: 2 }); return await tools.invoke("asker/progress", { steps: 4 })'
    const ran = await client.callTool({ name: 'tool_exec', arguments: { code } }, undefined, { onprogress })
    expect(JSON.parse(textOf(ran)).result.content[0].text).toBe('done in 4 steps')
    expect(heard.map((p) => p.progress)).toEqual([1, 2, 3, 4])

    // The official reference server's own long-running tool, deferred like the rest.
    heard.length = 0
    const longRunning = buildMcpToolWireId({ serverId: 'everything', serverName: 'everything', toolName: 'trigger-long-running-operation' })
    await client.callTool({ name: 'tool_inspect', arguments: { name: longRunning } })
    const operated = await client.callTool({ name: 'tool_invoke', arguments: { name: longRunning, params: { duration: 0.6, steps: 3 } } }, undefined, { onprogress })
    expect(textOf(operated)).toMatch(/Long running operation completed/)
    expect(heard.map((p) => [p.progress, p.total])).toEqual([[1, 3], [2, 3], [3, 3]])

    // A 2026-07-28 request: the server reports after the answer, so the retry hears it, under
    // its own token, before its result.
    const asks = { elicitation: {} }
    const args = { name: 'asker/ask', params: { steps: 3 } }
    const round = await stateless(url, 'tools/call', { name: 'tool_invoke', arguments: args }, asks, { meta: { progressToken: 'first' } })
    expect(round.answer.result.resultType).toBe('input_required')
    expect(round.notifications.filter((m) => m.method === 'notifications/progress')).toEqual([])
    const answer = { inputResponses: { elicitation: { action: 'accept', content: { name: 'Ada', age: 36 } } }, requestState: round.answer.result.requestState }
    const done = await stateless(url, 'tools/call', { name: 'tool_invoke', arguments: args, ...answer }, asks, { meta: { progressToken: 'retry' } })
    expect(done.answer.result.resultType).toBe('complete')
    expect(done.notifications.filter((m) => m.method === 'notifications/progress').map((m) => [m.params.progressToken, m.params.progress])).toEqual([['retry', 1], ['retry', 2], ['retry', 3]])
  }, 60_000)

  it("passes the log messages of the servers a tool the host runs reaches to a 2026-07-28 request, at the level its _meta asks, and to the retry that resumed the run", async () => {
    const config = configOf({ ...testServer('asker'), protocolVersion: '2025-11-25' })
    const { url } = await startHttp(['--config', config, '--no-auth', '--exec', '--context-window', '2000'])
    const asks = { elicitation: {} }
    const logsOf = (reply) => reply.notifications.filter((m) => m.method === 'notifications/message').map((m) => [m.params.level, m.params.data])
    const level = (lowest) => ({ meta: lowest ? { 'io.modelcontextprotocol/logLevel': lowest } : {} })
    await stateless(url, 'tools/call', { name: 'tool_inspect', arguments: { name: 'asker/log' } }, asks)
    const invoke = { name: 'tool_invoke', arguments: { name: 'asker/log', params: { text: 'invoked' } } }
    const heard = await stateless(url, 'tools/call', invoke, asks, level('info'))
    expect(textOf(heard.answer.result)).toBe('logged')
    expect(logsOf(heard)).toEqual([['warning', 'invoked']])
    for (const lowest of ['error', undefined]) expect(logsOf(await stateless(url, 'tools/call', invoke, asks, level(lowest))), lowest).toEqual([])

    // The run is parked at the question and logs after the answer: the retry's level counts.
    const code = 'await tools.invoke("asker/ask", {}); return await tools.invoke("asker/log", { text: "after the answer" })'
    for (const [lowest, expected] of [['warning', [['warning', 'after the answer']]], [undefined, []]]) {
      const round = await stateless(url, 'tools/call', { name: 'tool_exec', arguments: { code } }, asks, level('debug'))
      expect(round.answer.result.resultType).toBe('input_required')
      expect(logsOf(round)).toEqual([])
      const answer = { inputResponses: { elicitation: { action: 'accept', content: { name: 'Ada', age: 36 } } }, requestState: round.answer.result.requestState }
      const done = await stateless(url, 'tools/call', { name: 'tool_exec', arguments: { code }, ...answer }, asks, level(lowest))
      expect(JSON.parse(textOf(done.answer.result)).result.content[0].text).toBe('logged')
      expect(logsOf(done), lowest).toEqual(expected)
    }
  }, 60_000)
})

/** The MCP Inspector's CLI mode (@modelcontextprotocol/inspector 1.0.3, its launcher as published): one method per run, its JSON answer. */
function inspector(args, extraEnv = {}) {
  const launcher = join(root, 'node_modules', '@modelcontextprotocol', 'inspector', 'cli', 'build', 'cli.js')
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [launcher, '--cli', ...args], { env: { ...env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.once('exit', (code) => {
      const json = stdout.slice(stdout.indexOf('{'))
      if (code !== 0) reject(new Error(`the inspector exited with ${code}: ${stdout}${stderr}`))
      else resolve(JSON.parse(json))
    })
  })
}

describe('toolreg serve driven by the MCP Inspector CLI', () => {
  const serverConfig = configOf(referenceServer('everything'), referenceServer('memory'))
  const sum = buildMcpToolWireId({ serverId: 'everything', serverName: 'everything', toolName: 'get-sum' })
  const call = (name, args) => ['--method', 'tools/call', '--tool-name', name, ...(args.length ? ['--tool-arg', ...args] : [])]

  it('over stdio, from an Inspector config entry: lists, searches, inspects, and runs a server tool through tool_exec', async () => {
    const inspectorConfig = writeConfig({
      mcpServers: { toolreg: { command: process.execPath, args: [bin, 'serve', ...WAIT_FOR_SERVERS, '--config', serverConfig, '--context-window', '8000', '--exec'], env } },
    })
    const viaInspector = (args) => inspector(['--config', inspectorConfig, '--server', 'toolreg', ...args])
    const { tools } = await viaInspector(['--method', 'tools/list'])
    expect(tools.slice(0, 4).map((t) => t.name)).toEqual(['tool_search', 'tool_inspect', 'tool_invoke', 'tool_exec'])
    expect(textOf(await viaInspector(call('tool_search', ['query=add two numbers'])))).toContain(sum)
    expect(textOf(await viaInspector(call('tool_inspect', [`name=${sum}`])))).toMatch(/@param \{number\} params\.b/)
    const exec = await viaInspector(call('tool_exec', [`code=return await tools['${sum}']({ a: 20, b: 22 })`]))
    expect(exec.isError).toBe(false)
    expect(textOf(exec)).toMatch(/The sum of 20 and 22 is 42\./)
  }, 90_000)

  it('over Streamable HTTP with the bearer token: inspect, then invoke, in separate sessions of one gateway', async () => {
    const { url, token } = await startHttp(['--config', serverConfig, '--context-window', '8000'])
    const viaInspector = (args) => inspector([url, '--transport', 'http', '--header', `Authorization: Bearer ${token}`, ...args])
    expect((await viaInspector(['--method', 'tools/list'])).tools.map((t) => t.name)).toContain('tool_invoke')
    await viaInspector(call('tool_inspect', [`name=${sum}`]))
    const invoked = await viaInspector(call('tool_invoke', [`name=${sum}`, 'params={"a":2,"b":40}']))
    expect(invoked).toMatchObject({ content: [{ type: 'text', text: 'The sum of 2 and 40 is 42.' }], isError: false })
    await expect(inspector([url, '--transport', 'http', '--method', 'tools/list'])).rejects.toThrow(/invalid_token/)
  }, 90_000)
})
