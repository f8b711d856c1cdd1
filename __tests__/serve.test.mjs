// `toolreg serve` driven by a client toolreg did not write: the official MCP TypeScript SDK's
// client, over stdio and Streamable HTTP, in front of the real reference servers
// (server-everything, server-memory) and our rmcp test server. Each gateway is the CLI run as a
// user runs it.
import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { bin, cliEnv, writeConfig } from './cliRun.mjs'
import { processGone, referenceServer, testServer } from './mcpServers.mjs'
import { createRequire } from 'node:module'

const { buildMcpToolWireId } = createRequire(import.meta.url)('../index.js')

const cache = mkdtempSync(join(tmpdir(), 'toolreg-serve-cache-'))
const env = cliEnv({ TOOLREG_CACHE_DIR: cache, TOOLREG_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'toolreg-serve-config-')) })

/** A config file in the format the CLI reads, from hub server configs. */
function configOf(...servers) {
  return writeConfig({
    mcpServers: Object.fromEntries(servers.map(({ id, command, args, env: serverEnv }) => [id, { command, args, ...(serverEnv && { env: serverEnv }) }])),
  })
}

const config = configOf(referenceServer('everything'), referenceServer('memory'), testServer('faulty'))

async function stdioClient(args) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'serve', ...args], env, stderr: 'pipe' })
  const client = new Client({ name: 'sdk-test-client', version: '1.0.0' })
  await client.connect(transport)
  return { client, transport }
}

const textOf = (result) => result.content.map((c) => c.text ?? '').join('\n')
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

    const found = textOf(await client.callTool({ name: 'tool_search', arguments: { query: 'add two numbers' } }))
    const sum = /mcp__everything__get_sum_[0-9a-f]{10}/.exec(found)?.[0]
    expect(sum).toBeDefined()
    expect(textOf(await client.callTool({ name: 'tool_inspect', arguments: { name: sum } }))).toMatch(/@param \{number\} params\.a/)
    const invoked = await client.callTool({ name: 'tool_invoke', arguments: { name: sum, params: { a: 2, b: 40 } } })
    expect(invoked).toMatchObject({ content: [{ type: 'text', text: 'The sum of 2 and 40 is 42.' }], isError: false })
  }, 60_000)

  it('never lets tool_invoke reach a destructive tool; the inline one goes through to its server', async () => {
    const { client } = await stdioClient(['--config', config, '--context-window', '8000'])
    closing.push(() => client.close())
    const found = textOf(await client.callTool({ name: 'tool_search', arguments: { query: 'delete entities knowledge graph', limit: 10 } }))
    expect(found).not.toMatch(/delete_entities/)
    const wireId = buildMcpToolWireId({ serverId: 'memory', serverName: 'memory', toolName: 'delete_entities' })
    for (const name of [wireId, 'delete_entities']) {
      const refused = await client.callTool({ name: 'tool_invoke', arguments: { name, params: { entityNames: ['x'] } } })
      expect(refused.isError).toBe(true)
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

  it('passes a server\'s progress, log messages and list changes on to the client', async () => {
    const { client } = await stdioClient(['--config', configOf(testServer('live'))])
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

    const changed = new Promise((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, resolve))
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('toggled')
    await client.callTool({ name: 'toggle', arguments: {} })
    await changed
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('toggled')
    expect(logs).toHaveLength(1)
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
})

/** Starts `toolreg serve --http 0`; resolves to `{ url, token, child }` once it listens. */
function startHttp(args) {
  const child = spawn(process.execPath, [bin, 'serve', '--http', '0', ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] })
  closing.push(() => child.kill('SIGTERM'))
  let stderr = ''
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      stderr += d
      const url = /serving MCP at (\S+)/.exec(stderr)?.[1]
      if (url && (/Bearer (\S+)/.test(stderr) || /--no-auth/.test(stderr))) resolve({ url, token: /Bearer (\S+)/.exec(stderr)?.[1], child, stderr: () => stderr })
    })
    child.once('exit', (code) => reject(new Error(`toolreg serve exited with ${code}: ${stderr}`)))
  })
}

/** A raw POST of `initialize`, with headers fetch() would not let us set (Host). */
function rawInitialize(url, headers) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } })
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      res.resume()
      resolve(res.statusCode)
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
    expect(stderr()).toMatch(/warning: --no-auth/)
    expect(await rawInitialize(url, {})).toBe(200)
  }, 60_000)
})
