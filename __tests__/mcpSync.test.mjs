import { describe, it, expect, afterAll } from 'vitest'
import { McpHub, ToolRegistry, buildMcpToolWireId, syncMcpToolsToRegistry, applyDeferExposition } from '../index.js'
import { referenceServer } from './mcpServers.mjs'

const quiet = () => new ToolRegistry({ logger: { warn() {} } })
const wire = (serverId, serverName, toolName) => buildMcpToolWireId({ serverId, serverName, toolName })

/** A host that manages its own connections: a scripted catalog, counting list calls. */
function hostAdapter(catalog) {
  const lists = []
  return {
    lists,
    servers: Object.entries(catalog).map(([id, s]) => ({ id, name: s.name })),
    async listTools(serverId) {
      lists.push(serverId)
      const server = catalog[serverId]
      if (server.fail) throw new Error(server.fail)
      if (server.hang) return new Promise(() => {})
      return server.tools
    },
    async callTool(serverId, name, args) {
      return { content: [{ type: 'text', text: `${serverId}/${name} ${JSON.stringify(args)}` }], isError: name === 'broken' }
    },
  }
}

const schema = { type: 'object', properties: { q: { type: 'string' } } }
const descriptor = (name, description = `${name} tool`) => ({ name, description, inputSchema: schema })

describe('syncMcpToolsToRegistry with real servers', () => {
  const hub = new McpHub({ servers: [referenceServer('everything', 'ev', 'Everything'), referenceServer('memory', 'mem', 'Memory'), referenceServer('filesystem', 'fs', 'Files')] })
  afterAll(() => hub.close())

  it('lists only the servers owning a selected id, and registers the selected tools', async () => {
    const registry = quiet()
    const echoId = wire('ev', 'Everything', 'echo')
    const result = await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: [echoId] })
    expect(result.listedServers).toEqual(['ev'])
    expect(result.failedServers).toEqual([])
    expect(result.registered).toEqual([echoId])
    expect(hub.status().filter((s) => s.state !== 'idle').map((s) => s.id)).toEqual(['ev'])
    const entry = registry.getByName(echoId)
    expect(entry).toMatchObject({ namespace: 'mcp:ev', namespaceLabel: 'mcp:Everything', defer: 'auto' })
    expect(entry.applies({ mcpToolIds: new Set([echoId]) })).toBe(true)
    expect(entry.applies({ mcpToolIds: new Set() })).toBe(false)
    const output = await entry.tool.execute({ message: 'through the registry' }, { toolCallId: 't1', messages: [] })
    expect(output.content[0].text).toContain('through the registry')
    expect(await entry.tool.toModelOutput({ toolCallId: 't1', input: {}, output })).toEqual({ type: 'text', value: output.content[0].text })
  })

  it('lists only owners: servers sharing a display name may both be listed, never any other', async () => {
    const owners = new McpHub({ servers: [referenceServer('memory', 'a', 'Files'), referenceServer('memory', 'b', 'Files'), referenceServer('memory', 'c', 'Mail')] })
    try {
      const id = wire('a', 'Files', 'read_graph')
      const result = await syncMcpToolsToRegistry(quiet(), owners, { selectedToolIds: [id] })
      expect(result.listedServers.sort()).toEqual(['a', 'b'])
      expect(owners.status().filter((s) => s.state !== 'idle').map((s) => s.id).sort()).toEqual(['a', 'b'])
      expect(result.registered).toEqual([id])
    } finally {
      await owners.close()
    }
  })

  it('calls no server for an empty selection', async () => {
    const fresh = new McpHub({ servers: [referenceServer('everything', 'ev2')] })
    try {
      const result = await syncMcpToolsToRegistry(quiet(), fresh, { selectedToolIds: [] })
      expect(result).toEqual({ registered: [], evicted: [], listedServers: [], failedServers: [] })
      expect(fresh.status()[0].state).toBe('idle')
    } finally {
      await fresh.close()
    }
  })

  it('refuses a sync with no selection instead of registering nothing silently', async () => {
    const fresh = new McpHub({ servers: [referenceServer('everything', 'ev3')] })
    try {
      const missing = syncMcpToolsToRegistry(quiet(), fresh, {})
      await expect(missing).rejects.toThrow(TypeError)
      await expect(missing).rejects.toMatchObject({ code: 'TOOLREG_INVALID_ARGUMENT', message: expect.stringMatching(/selectedToolIds: is required with an McpHub/) })
      expect(fresh.status()[0].state).toBe('idle')
    } finally {
      await fresh.close()
    }
  })

  it('takes mcpToolIds as any iterable: an array selects the same tools as a Set', async () => {
    const warnings = []
    const registry = new ToolRegistry({ logger: { warn: (w) => warnings.push(w) } })
    const ids = [wire('ev', 'Everything', 'echo'), wire('ev', 'Everything', 'get-sum')]
    await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: ids })
    const fromSet = Object.keys(registry.selectActiveTools({ mcpToolIds: new Set(ids) }))
    expect(fromSet).toHaveLength(2)
    expect(Object.keys(registry.selectActiveTools({ mcpToolIds: ids }))).toEqual(fromSet)
    expect(registry.selectActive({ mcpToolIds: ids.values() }).map((e) => e.name)).toEqual(fromSet)
    expect(() => registry.selectActive({ mcpToolIds: 42 })).toThrow(/scope\.mcpToolIds/)
    expect(warnings).toEqual([])
  })

  it('converts images to media parts for the model', async () => {
    const registry = quiet()
    const imageId = wire('ev', 'Everything', 'get-tiny-image')
    await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: [imageId] })
    const entry = registry.getByName(imageId)
    const output = await entry.tool.execute({}, { toolCallId: 'img', messages: [] })
    const modelOutput = await entry.tool.toModelOutput({ toolCallId: 'img', input: {}, output })
    expect(modelOutput.type).toBe('content')
    const image = modelOutput.value.find((p) => p.type === 'image-data')
    expect(image.mediaType).toBe('image/png')
    expect(modelOutput.value.filter((p) => p.type === 'text').every((p) => !p.text.includes(image.data))).toBe(true)
  })

  it('reaches a synced MCP tool through the deferred meta-tools', async () => {
    const registry = quiet()
    const ids = ['echo', 'get-sum', 'get-tiny-image', 'get-env', 'get-structured-content'].map((t) => wire('ev', 'Everything', t))
    await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: ids })
    const active = registry.selectActive({ mcpToolIds: new Set(ids) })
    const tools = Object.fromEntries(active.map((e) => [e.name, e.tool]))
    // Five small tools do not pay for the meta-tools on their own; force the defer path.
    const { tools: exposed } = await applyDeferExposition(tools, registry, 2_000, { metaToolsOverheadTokens: 0 })
    const found = await exposed.tool_search.execute({ query: 'add two numbers' }, { toolCallId: 's', messages: [] })
    const sumId = found.matchedNamespaces[0].tools[0].name
    expect(sumId).toBe(ids[1])
    await exposed.tool_inspect.execute({ name: sumId }, { toolCallId: 'i', messages: [] })
    const out = await exposed.tool_invoke.execute({ name: sumId, params: { a: 1, b: 2 } }, { toolCallId: 'c', messages: [] })
    expect(out.content[0].text).toContain('3')
    await expect(exposed.tool_invoke.execute({ name: sumId, params: { a: 'one', b: 2 } }, { toolCallId: 'c2', messages: [] })).rejects.toThrow(/Invalid params/)
  })
})

describe('syncMcpToolsToRegistry semantics (host adapter)', () => {
  it('is idempotent: a second sync keeps the same entries', async () => {
    const host = hostAdapter({ s1: { name: 'One', tools: [descriptor('a'), descriptor('b')] } })
    const registry = quiet()
    const ids = [wire('s1', 'One', 'a'), wire('s1', 'One', 'b')]
    await syncMcpToolsToRegistry(registry, host, { selectedToolIds: ids })
    const first = registry.getByName(ids[0])
    const again = await syncMcpToolsToRegistry(registry, host, { selectedToolIds: ids })
    expect(again.registered).toEqual(ids)
    expect(registry.getByName(ids[0])).toBe(first)
    expect(registry.size).toBe(2)
  })

  it('holds a changed definition (tool trust): the old entry leaves, the new one waits for approval; tools the server dropped are evicted', async () => {
    const catalog = { s1: { name: 'One', tools: [descriptor('a'), descriptor('b')] } }
    const host = hostAdapter(catalog)
    const registry = quiet()
    const ids = [wire('s1', 'One', 'a'), wire('s1', 'One', 'b')]
    await syncMcpToolsToRegistry(registry, host, { selectedToolIds: ids })
    catalog.s1.tools = [descriptor('a', 'changed description')]
    const result = await syncMcpToolsToRegistry(registry, host, { selectedToolIds: ids })
    expect(result.evicted.sort()).toEqual([...ids].sort())
    expect(registry.trust().map((t) => [t.toolName, t.state, t.change])).toEqual([
      ['a', 'held', 'a: description changed ("a tool" → "changed description")'],
      ['b', 'gone', 'b: tool removed by the server'],
    ])
    expect(await registry.approveTool('s1/a')).toEqual(['a'])
    expect((await syncMcpToolsToRegistry(registry, host, { selectedToolIds: ids })).registered).toEqual([ids[0]])
    expect(registry.getByName(ids[0]).description).toBe('changed description')
  })

  it('without tool trust, replaces a changed schema without a duplicate, and evicts tools the server dropped', async () => {
    const catalog = { s1: { name: 'One', tools: [descriptor('a'), descriptor('b')] } }
    const host = hostAdapter(catalog)
    const registry = new ToolRegistry({ logger: { warn() {} }, trust: false })
    registry.register({ name: 'web_search', namespace: 'web', description: 'x', defer: 'never', tool: (await import('./helpers.mjs')).simpleTool() })
    const ids = [wire('s1', 'One', 'a'), wire('s1', 'One', 'b')]
    await syncMcpToolsToRegistry(registry, host, { selectedToolIds: ids })
    catalog.s1.tools = [descriptor('a', 'changed description')]
    const result = await syncMcpToolsToRegistry(registry, host, { selectedToolIds: ids })
    expect(result.evicted).toEqual([ids[1]])
    expect(registry.getByName(ids[0]).description).toBe('changed description')
    expect(registry.has('web_search')).toBe(true)
    expect(registry.size).toBe(2)
  })

  it('never evicts after a failed or timed-out list, and one failing server does not stop the others', async () => {
    const catalog = { ok: { name: 'Ok', tools: [descriptor('t')] }, bad: { name: 'Bad', tools: [descriptor('u')] }, slow: { name: 'Slow', tools: [descriptor('v')] } }
    const host = hostAdapter(catalog)
    const registry = quiet()
    const ids = [wire('ok', 'Ok', 't'), wire('bad', 'Bad', 'u'), wire('slow', 'Slow', 'v')]
    await syncMcpToolsToRegistry(registry, host, { selectedToolIds: ids })
    expect(registry.size).toBe(3)
    catalog.bad.fail = 'server exploded'
    catalog.slow.hang = true
    catalog.ok.tools = [descriptor('t')]
    const started = Date.now()
    const result = await syncMcpToolsToRegistry(registry, host, { selectedToolIds: ids, timeoutMs: 300 })
    expect(Date.now() - started).toBeLessThan(2000)
    expect(result.listedServers).toEqual(['ok'])
    expect(result.failedServers.map((f) => f.serverId).sort()).toEqual(['bad', 'slow'])
    expect(result.failedServers.find((f) => f.serverId === 'bad').error).toContain('server exploded')
    expect(result.evicted).toEqual([])
    expect(registry.size).toBe(3)
  })

  it('overlapping concurrent syncs keep both selections', async () => {
    const host = hostAdapter({ s: { name: 'S', tools: [descriptor('x'), descriptor('y')] } })
    const registry = quiet()
    const [x, y] = [wire('s', 'S', 'x'), wire('s', 'S', 'y')]
    await Promise.all([
      syncMcpToolsToRegistry(registry, host, { selectedToolIds: [x] }),
      syncMcpToolsToRegistry(registry, host, { selectedToolIds: [y] }),
    ])
    expect(registry.has(x) && registry.has(y)).toBe(true)
  })

  it('gives approval-gated tools defer never, and the tool refuses through tool_invoke', async () => {
    const host = hostAdapter({ s: { name: 'S', tools: [descriptor('delete_all'), descriptor('read')] } })
    const registry = quiet()
    const [del, read] = [wire('s', 'S', 'delete_all'), wire('s', 'S', 'read')]
    await syncMcpToolsToRegistry(registry, host, { selectedToolIds: [del, read], needsApproval: (info) => info.toolName === 'delete_all' })
    expect(registry.getByName(del).defer).toBe('never')
    expect(registry.getByName(del).tool.needsApproval).toBe(true)
    expect(registry.getByName(read).defer).toBe('auto')
  })

  it('turns isError results into thrown errors carrying the text', async () => {
    const host = hostAdapter({ s: { name: 'S', tools: [descriptor('broken')] } })
    const registry = quiet()
    const id = wire('s', 'S', 'broken')
    await syncMcpToolsToRegistry(registry, host, { selectedToolIds: [id] })
    await expect(registry.getByName(id).tool.execute({ q: 'x' }, { toolCallId: 'b', messages: [] })).rejects.toMatchObject({
      name: 'McpToolError',
      message: 's/broken {"q":"x"}',
    })
  })

  it('rejects a hub without listTools/callTool', async () => {
    await expect(syncMcpToolsToRegistry(quiet(), {}, { selectedToolIds: ['x'] })).rejects.toThrow(TypeError)
  })
})
