import { describe, it, expect, afterAll } from 'vitest'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { McpHub, buildMcpToolWireId } from '../index.js'
import { execFileSync } from 'node:child_process'
import { referenceServer, testServer, processGone, startHttpTestServer } from './mcpServers.mjs'

const SAFE = /^[a-zA-Z0-9_-]{1,64}$/

describe('buildMcpToolWireId', () => {
  it('is readable, provider-safe and deterministic', () => {
    const id = buildMcpToolWireId({ serverId: 'srv-1', serverName: 'GitHub', toolName: 'search_issues' })
    expect(id).toMatch(SAFE)
    expect(id).toMatch(/^mcp__git_?hub__search_issues_[0-9a-f]{10}$/)
    expect(buildMcpToolWireId({ serverId: 'srv-1', serverName: 'GitHub', toolName: 'search_issues' })).toBe(id)
  })

  it('transliterates Chinese names to ASCII', () => {
    const id = buildMcpToolWireId({ serverId: 's', serverName: '钉钉', toolName: '发送消息' })
    expect(id).toMatch(SAFE)
    expect(id.toLowerCase()).toContain('ding')
    expect(id.toLowerCase()).toContain('fa')
  })

  it('keeps two servers with the same display name apart', () => {
    const a = buildMcpToolWireId({ serverId: 'a', serverName: 'Files', toolName: 'read' })
    const b = buildMcpToolWireId({ serverId: 'b', serverName: 'Files', toolName: 'read' })
    expect(a).not.toBe(b)
  })

  it('truncates to 64 characters keeping the distinguishing part', () => {
    const long = 'a_really_long_server_name_that_goes_on_and_on_forever_and_ever'
    const one = buildMcpToolWireId({ serverId: 'x', serverName: long, toolName: 'list_billing_accounts_for_organization_unit_v1' })
    const two = buildMcpToolWireId({ serverId: 'x', serverName: long, toolName: 'list_billing_accounts_for_organization_unit_v2' })
    expect(one).toMatch(SAFE)
    expect(two).toMatch(SAFE)
    expect(one).not.toBe(two)
  })

  it('rejects a missing tool name', () => {
    expect(() => buildMcpToolWireId({ serverId: 'x', serverName: 'y' })).toThrow(TypeError)
  })
})

describe('McpHub over stdio with the reference servers', () => {
  const everything = referenceServer('everything')
  const memory = referenceServer('memory')
  const filesystem = referenceServer('filesystem')
  const hub = new McpHub({ servers: [everything, memory, filesystem] })
  afterAll(() => hub.close())

  it('connects lazily', () => {
    expect(hub.status().map((s) => s.state)).toEqual(['idle', 'idle', 'idle'])
  })

  it('lists and calls tools of server-everything, and caches the list', async () => {
    const tools = await hub.listTools('everything')
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image']))
    const echoed = await hub.callTool('everything', 'echo', { message: 'hi there' })
    expect(echoed.isError).toBe(false)
    expect(echoed.content[0].text).toContain('hi there')
    const sum = await hub.callTool('everything', 'get-sum', { a: 2, b: 40 })
    expect(sum.content[0].text).toContain('42')
    const status = hub.status().find((s) => s.id === 'everything')
    expect(status.state).toBe('connected')
    expect(status.pid).toBeGreaterThan(0)
    expect(hub.status().find((s) => s.id === 'memory').state).toBe('idle')
  })

  it('returns images from server-everything as content blocks', async () => {
    const image = await hub.callTool('everything', 'get-tiny-image', {})
    const block = image.content.find((c) => c.type === 'image')
    expect(block.mimeType).toBe('image/png')
    expect(block.data.length).toBeGreaterThan(10)
  })

  it('works with server-memory and server-filesystem', async () => {
    await hub.callTool('memory', 'create_entities', { entities: [{ name: 'toolreg', entityType: 'project', observations: ['written in Rust'] }] })
    const graph = await hub.callTool('memory', 'read_graph', {})
    expect(JSON.stringify(graph)).toContain('written in Rust')
    writeFileSync(join(filesystem.root, 'hello.txt'), 'hello from toolreg')
    const read = await hub.callTool('filesystem', 'read_text_file', { path: join(filesystem.root, 'hello.txt') })
    expect(read.content[0].text).toBe('hello from toolreg')
  })

  it('reports a tool-level failure as isError, and an unknown server as an error with a code', async () => {
    const bad = await hub.callTool('filesystem', 'read_text_file', { path: '/etc/passwd' })
    expect(bad.isError).toBe(true)
    await expect(hub.callTool('nope', 'echo', {})).rejects.toMatchObject({ code: 'TOOLREG_MCP_UNKNOWN_SERVER' })
  })

  it("reads server-everything's prompts, resources and completions; a server without them lists none and refuses the rest", async () => {
    const prompts = await hub.listPrompts('everything')
    expect(prompts.map((p) => p.name)).toEqual(expect.arrayContaining(['simple-prompt', 'args-prompt', 'completable-prompt']))
    const weather = await hub.getPrompt('everything', 'args-prompt', { city: 'Paris', state: 'TX' })
    expect(weather.messages[0]).toMatchObject({ role: 'user', content: { type: 'text', text: expect.stringContaining('Paris, TX') } })
    const department = await hub.complete('everything', { type: 'ref/prompt', name: 'completable-prompt' }, { name: 'department', value: 'E' })
    expect(department.values).toEqual(['Engineering'])

    const resources = await hub.listResources('everything')
    expect(resources.length).toBeGreaterThan(0)
    const read = await hub.readResource('everything', resources[0].uri)
    expect(read.contents[0]).toMatchObject({ uri: resources[0].uri, text: expect.any(String) })
    const templates = await hub.listResourceTemplates('everything')
    expect(templates.map((t) => t.uriTemplate)).toContain('demo://resource/dynamic/text/{resourceId}')
    expect((await hub.readResource('everything', 'demo://resource/dynamic/text/7')).contents[0].text).toMatch(/^Resource 7:/)

    expect(await hub.listPrompts('memory')).toEqual([])
    await expect(hub.getPrompt('memory', 'anything')).rejects.toMatchObject({ code: 'TOOLREG_MCP_CALL', message: expect.stringMatching(/does not offer prompts/) })
    await expect(hub.readResource('everything', 42)).rejects.toMatchObject({ code: 'TOOLREG_INVALID_ARGUMENT' })
    await expect(hub.complete('everything', { type: 'ref/tool' }, { name: 'x', value: '' })).rejects.toMatchObject({ code: 'TOOLREG_INVALID_ARGUMENT' })
  })

  it('close() leaves no child process behind', async () => {
    const local = new McpHub({ servers: [referenceServer('everything', 'e2')] })
    await local.listTools('e2')
    const pid = local.status()[0].pid
    expect(processGone(pid)).toBe(false)
    await local.close()
    expect(processGone(pid)).toBe(true)
    expect(local.status()[0].state).toBe('closed')
  })
})

describe('McpHub with an old-protocol server', () => {
  it('lists server-github 2025.4.8 (protocol 2024-11-05) without a token', async () => {
    const hub = new McpHub({ servers: [referenceServer('github')] })
    try {
      const tools = await hub.listTools('github')
      expect(tools.map((t) => t.name)).toContain('create_issue')
      expect(hub.status()[0].protocolVersion).toBe('2024-11-05')
    } finally {
      await hub.close()
    }
  })
})

describe('McpHub bad input', () => {
  it('rejects invalid configs with a TypeError naming the problem', () => {
    expect(() => new McpHub({ servers: [{ id: 'x', type: 'carrier-pigeon' }] })).toThrow(TypeError)
    expect(() => new McpHub({ servers: [{ id: 'x', type: 'stdio', command: '' }] })).toThrow(/command/)
    expect(() => new McpHub({ servers: [{ id: 'x', type: 'stdio', command: 'a' }, { id: 'x', type: 'stdio', command: 'b' }] })).toThrow(/duplicate/)
  })

  it('reports a command that does not exist as a connect error, and keeps going', async () => {
    const hub = new McpHub({ servers: [{ id: 'ghost', type: 'stdio', command: '/nonexistent/mcp-server' }, referenceServer('everything')] })
    try {
      await expect(hub.listTools('ghost', { timeoutMs: 5000 })).rejects.toMatchObject({ code: 'TOOLREG_MCP_CONNECT' })
      expect(hub.status()[0].state).toBe('failed')
      expect((await hub.listTools('everything')).length).toBeGreaterThan(5)
    } finally {
      await hub.close()
    }
  })

  it('backs off after a failed connect instead of starting the server on every call', async () => {
    expect(() => new McpHub({ reconnectBackoffMs: -1 })).toThrow(TypeError)
    expect(() => new McpHub({ connectTimeoutMs: 1.5 })).toThrow(/connectTimeoutMs/)
    const ghost = { id: 'ghost', type: 'stdio', command: '/nonexistent/mcp-server' }
    const patient = new McpHub({ servers: [ghost], reconnectBackoffMs: 60_000 })
    const eager = new McpHub({ servers: [ghost], reconnectBackoffMs: 0 })
    try {
      await expect(patient.listTools('ghost')).rejects.toMatchObject({ code: 'TOOLREG_MCP_CONNECT' })
      await expect(patient.callTool('ghost', 'x', {})).rejects.toMatchObject({
        code: 'TOOLREG_MCP_CONNECT',
        message: expect.stringMatching(/could not start.*not retried until \d+ ms from now/),
      })
      await expect(eager.listTools('ghost')).rejects.toMatchObject({ code: 'TOOLREG_MCP_CONNECT' })
      const again = await eager.listTools('ghost').catch((e) => e)
      expect(again.code).toBe('TOOLREG_MCP_CONNECT')
      expect(again.message).not.toMatch(/not retried/)
    } finally {
      await Promise.all([patient.close(), eager.close()])
    }
  })
})

describe('McpHub fault cases with our rmcp test server', () => {
  it('cancels a slow call on timeout and on abort, and the server sees the cancellation', async () => {
    const hub = new McpHub({ servers: [testServer('t')] })
    try {
      const started = Date.now()
      await expect(hub.callTool('t', 'slow', { ms: 30_000 }, { timeoutMs: 300 })).rejects.toMatchObject({ code: 'TOOLREG_MCP_TIMEOUT' })
      expect(Date.now() - started).toBeLessThan(5_000)
      const controller = new AbortController()
      const pending = hub.callTool('t', 'slow', { ms: 30_000 }, { signal: controller.signal })
      setTimeout(() => controller.abort(), 100)
      await expect(pending).rejects.toMatchObject({ code: 'TOOLREG_MCP_CANCELLED' })
      const already = new AbortController()
      already.abort()
      await expect(hub.callTool('t', 'slow', { ms: 30_000 }, { signal: already.signal })).rejects.toMatchObject({ code: 'TOOLREG_MCP_CANCELLED' })
      // The server hears each cancellation in its own time.
      const cancelled = async () => Number(JSON.stringify(await hub.callTool('t', 'cancelled_count', {})).match(/\d+/)[0])
      await expect.poll(cancelled, { timeout: 10_000 }).toBeGreaterThanOrEqual(2)
    } finally {
      await hub.close()
    }
  })

  it('many calls sharing one request signal: one abort listener, all of them cancelled', async () => {
    const hub = new McpHub({ servers: [testServer('s')] })
    const warnings = []
    const onWarning = (warning) => warnings.push(warning)
    process.on('warning', onWarning)
    try {
      await hub.listTools('s')
      const controller = new AbortController()
      const finished = await Promise.all(
        Array.from({ length: 3 }, (_, i) => hub.callTool('s', 'echo', { text: `quick ${i}` }, { signal: controller.signal })),
      )
      expect(finished).toHaveLength(3)
      const slow = Array.from({ length: 12 }, () => hub.callTool('s', 'slow', { ms: 30_000 }, { signal: controller.signal }).catch((e) => e))
      setTimeout(() => controller.abort(), 100)
      const errors = await Promise.all(slow)
      expect(errors.map((e) => e.code)).toEqual(Array(12).fill('TOOLREG_MCP_CANCELLED'))
      // A later call with the aborted signal still fails at once.
      await expect(hub.callTool('s', 'slow', { ms: 30_000 }, { signal: controller.signal })).rejects.toMatchObject({ code: 'TOOLREG_MCP_CANCELLED' })
      await new Promise((resolve) => setImmediate(resolve))
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([])
    } finally {
      process.off('warning', onWarning)
      await hub.close()
    }
  })

  // resources/subscribe in a session up to 2025-11-25, the hub's subscriptions/listen stream at 2026-07-28.
  for (const protocolVersion of ['2025-11-25', '2026-07-28']) {
    it(`hears a subscribed resource's updates through onResourceUpdated, and stops at unsubscribe (${protocolVersion})`, async () => {
      const updates = []
      const hub = new McpHub({ servers: [{ ...testServer('watched', ['--conformance']), protocolVersion }], onResourceUpdated: (u) => updates.push(u) })
      try {
        await hub.subscribeResource('watched', 'test://watched-resource')
        for (let i = 0; i < 100 && updates.length === 0; i++) await new Promise((r) => setTimeout(r, 10))
        expect(updates).toEqual([{ serverId: 'watched', uri: 'test://watched-resource' }])
        await hub.unsubscribeResource('watched', 'test://watched-resource')
      } finally {
        await hub.close()
      }
    })
  }

  it('survives a crash mid-call and reconnects on the next call', async () => {
    const hub = new McpHub({ servers: [testServer('c')] })
    try {
      await hub.listTools('c')
      const firstPid = hub.status()[0].pid
      await expect(hub.callTool('c', 'crash', {})).rejects.toMatchObject({ code: 'TOOLREG_MCP_CLOSED' })
      const echoed = await hub.callTool('c', 'echo', { text: 'back' })
      expect(JSON.stringify(echoed)).toContain('back')
      expect(hub.status()[0].pid).not.toBe(firstPid)
      expect(processGone(firstPid)).toBe(true)
    } finally {
      await hub.close()
    }
  })

  it('times out a server that hangs on tools/list while others answer', async () => {
    const hub = new McpHub({ servers: [testServer('hang', ['--hang-on-list']), testServer('ok')] })
    try {
      const [hung, ok] = await Promise.allSettled([hub.listTools('hang', { timeoutMs: 500 }), hub.listTools('ok', { timeoutMs: 5_000 })])
      expect(hung.status).toBe('rejected')
      expect(hung.reason.code).toBe('TOOLREG_MCP_TIMEOUT')
      expect(ok.status).toBe('fulfilled')
    } finally {
      await hub.close()
    }
  })

  it('follows pagination over 10,000 tools and drops the cache on list_changed', async () => {
    const hub = new McpHub({ servers: [testServer('many', ['--tools', '10000'])] })
    try {
      const tools = await hub.listTools('many')
      expect(tools.filter((t) => t.name.startsWith('gen_'))).toHaveLength(10_000)
      expect(await hub.listTools('many')).toBe(tools)
      await hub.callTool('many', 'toggle', {})
      // The list change arrives as a notification, in its own time.
      await expect.poll(async () => (await hub.listTools('many')).map((t) => t.name), { timeout: 10_000 }).toContain('toggled')
      expect(await hub.listTools('many')).not.toBe(tools)
    } finally {
      await hub.close()
    }
  })

  it('captures stderr and returns a 20 MB result', async () => {
    const hub = new McpHub({ servers: [testServer('io')] })
    try {
      await hub.callTool('io', 'stderr', { text: 'diagnostic line from the server', repeat: 1 })
      await expect.poll(() => hub.status()[0].stderrTail, { timeout: 10_000 }).toContain('diagnostic line from the server')
      const big = await hub.callTool('io', 'big', { mb: 20 })
      expect(big.content[0].text.length).toBeGreaterThanOrEqual(20 * 1024 * 1024)
    } finally {
      await hub.close()
    }
  })

  it('speaks Streamable HTTP and legacy SSE on 127.0.0.1', async () => {
    const server = await startHttpTestServer()
    try {
      const hub = new McpHub({
        servers: [
          { id: 'http', type: 'streamableHttp', url: `${server.origin}/mcp` },
          { id: 'sse', type: 'sse', url: `${server.origin}/sse` },
        ],
      })
      try {
        for (const id of ['http', 'sse']) {
          expect((await hub.listTools(id)).map((t) => t.name)).toContain('echo')
          const echoed = await hub.callTool(id, 'echo', { text: `over ${id}` })
          expect(JSON.stringify(echoed)).toContain(`over ${id}`)
        }
        expect(hub.status().map((s) => s.transport)).toEqual(['streamableHttp', 'sse'])
      } finally {
        await hub.close()
      }
    } finally {
      server.stop()
    }
  })
})

describe('McpHub in the host process', () => {
  const indexPath = new URL('../index.js', import.meta.url).pathname
  const run = (body) =>
    execFileSync(process.execPath, ['--expose-gc', '-e', `const { McpHub } = require(${JSON.stringify(indexPath)});\n(async () => {\n${body}\n})()`], {
      encoding: 'utf8',
      timeout: 20_000,
    })

  it('lets Node exit while a connection is still open', () => {
    const out = run(`const hub = new McpHub({ servers: [${JSON.stringify(testServer('open'))}] })
      await hub.listTools('open')
      console.log('listed')`)
    expect(out.trim()).toBe('listed')
  })

  it("hears a 2026-07-28 server's tool list change on the hub's listen stream, and lets Node exit with that stream open", () => {
    const server = { ...testServer('modern', ['--list-ttl-ms', '600000']), protocolVersion: '2026-07-28' }
    const out = run(`const heard = []
      const hub = new McpHub({ servers: [${JSON.stringify(server)}], onToolsChanged: (id) => heard.push(id) })
      await hub.listTools('modern')
      // rmcp acknowledges a stream before the server's handler holds it: wait until it does.
      for (let i = 0; i < 200 && (await hub.callTool('modern', 'listens', {})).content[0].text !== '1'; i++) await new Promise((resolve) => setTimeout(resolve, 10))
      await hub.callTool('modern', 'toggle', {})
      for (let i = 0; i < 200 && heard.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10))
      const tools = await hub.listTools('modern')
      console.log(heard.join(','), tools.some((t) => t.name === 'toggled'))`)
    expect(out.trim()).toBe('modern true')
  })

  it('kills the child of a hub that is garbage-collected without close(), without crashing', () => {
    const out = run(`let hub = new McpHub({ servers: [${JSON.stringify(testServer('gc'))}] })
      await hub.listTools('gc')
      const pid = hub.status()[0].pid
      hub = null
      let alive = true
      for (let i = 0; i < 40 && alive; i++) {
        global.gc()
        await new Promise((resolve) => setTimeout(resolve, 50))
        try { process.kill(pid, 0) } catch { alive = false }
      }
      console.log(alive ? 'alive' : 'gone')`)
    expect(out.trim()).toBe('gone')
  })
})
