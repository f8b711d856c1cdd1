// Drop-in compatibility with the reference TypeScript registry (Cherry Studio v2): each block
// states the reference's behaviour and checks it here; the last block checks the deliberate
// deviations, each with its reason. See docs/migration.md.
import { describe, it, expect, afterAll } from 'vitest'
import { createHash } from 'node:crypto'
import { tool, jsonSchema, asSchema, generateText, stepCountIs } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { z } from 'zod'
import * as toolreg from '../index.js'
import { quietRegistry, entry, heavyEntry, simpleTool } from './helpers.mjs'
import { referenceServer } from './mcpServers.mjs'

const {
  McpHub,
  MetaToolName,
  applyDeferExposition,
  shouldDefer,
  countTokens,
  buildMcpToolWireId,
  syncMcpToolsToRegistry,
  createToolInvokeTool,
  isApprovalGated,
  TOOL_SEARCH_TOOL_NAME,
  TOOL_INSPECT_TOOL_NAME,
  TOOL_INVOKE_TOOL_NAME,
  TOOL_EXEC_TOOL_NAME,
} = toolreg

const call = (id) => ({ toolCallId: id, messages: [] })
const EMPTY_OBJECT_SCHEMA = { type: 'object', properties: {}, additionalProperties: false }

/** What a provider is sent for one tool, counted the way the defer decision counts it. */
const definitionTokens = (name, description, schema) =>
  countTokens(JSON.stringify({ name, description, input_schema: schema }))

describe('compat 1: registration accepts what the AI SDK accepts', () => {
  it('reads a tool without inputSchema as the empty-object schema, as asSchema does', async () => {
    const { registry } = quietRegistry()
    const bare = { description: 'Current time', execute: async () => '12:00' }
    registry.register(entry('clock', { tool: bare }))
    expect(registry.getByName('clock').tool).toBe(bare)
    // The very schema the AI SDK sends for such a tool.
    expect(await asSchema(undefined).jsonSchema).toEqual(EMPTY_OBJECT_SCHEMA)
    const decision = await shouldDefer([registry.getByName('clock')], 32_000)
    expect(decision.autoTokens).toBe(definitionTokens('clock', 'Current time', EMPTY_OBJECT_SCHEMA))
  })

  it('reads a plain JSON Schema object as raw JSON Schema, and validates calls against it', async () => {
    const { registry } = quietRegistry()
    const weather = {
      description: 'Weather for a city',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      execute: async ({ city }) => `sunny in ${city}`,
    }
    registry.register(entry('weather', { tool: weather }))
    expect(registry.search('city weather')[0].name).toBe('weather')
    const invoke = createToolInvokeTool(registry, ['weather'], new Set(['weather']))
    await expect(invoke.execute({ name: 'weather', params: {} }, call('w1'))).rejects.toMatchObject({ code: 'TOOLREG_INVALID_PARAMS' })
    expect(await invoke.execute({ name: 'weather', params: { city: 'Oslo' } }, call('w2'))).toBe('sunny in Oslo')
  })

  it('accepts {} as inputSchema (any input)', async () => {
    const { registry } = quietRegistry()
    registry.register(entry('anything', { tool: { description: 'x', inputSchema: {}, execute: async (input) => input } }))
    const invoke = createToolInvokeTool(registry, ['anything'], new Set(['anything']))
    expect(await invoke.execute({ name: 'anything', params: { free: ['form'] } }, call('a1'))).toEqual({ free: ['form'] })
  })

  const notSchemas = [
    ['a number', 42, /got number/],
    ['a string', '{"type":"object"}', /got string/],
    ['an array', [{ type: 'object' }], /got an array/],
    ['a lazy schema that throws', jsonSchema(() => { throw new Error('bad $ref') }), /cannot be converted to JSON Schema \(bad \$ref\)/],
  ]
  for (const [label, inputSchema, message] of notSchemas) {
    it(`still rejects ${label} with a TypeError naming tool.inputSchema, leaving the registry as it was`, () => {
      const { registry } = quietRegistry()
      registry.register(entry('kept'))
      let thrown
      try {
        registry.register(entry('bad', { tool: { description: 'x', inputSchema, execute: async () => 1 } }))
      } catch (error) {
        thrown = error
      }
      expect(thrown).toBeInstanceOf(TypeError)
      expect(thrown.code).toBe('TOOLREG_INVALID_ARGUMENT')
      expect(thrown.message).toMatch(/invalid tool\.inputSchema/)
      expect(thrown.message).toMatch(message)
      expect(registry.size).toBe(1)
    })
  }
})

describe('compat 2: request-scoped tools (buildTool)', () => {
  const kbTool = (kbIds) =>
    tool({
      description: `Search the knowledge bases ${kbIds.join(', ')}`,
      inputSchema: z.object({ query: z.string() }),
      execute: async ({ query }) => ({ searched: kbIds, query }),
    })

  it('selectActive returns this request\'s tool on a copy; the registered entry is untouched', async () => {
    const { registry } = quietRegistry()
    const template = kbTool([])
    const registered = entry('kb_search', { namespace: 'kb', tool: template, buildTool: (scope) => kbTool(scope.knowledgeBaseIds) })
    registry.register(registered)
    const [a] = registry.selectActive({ mcpToolIds: new Set(), knowledgeBaseIds: ['kb1'] })
    const [b] = registry.selectActive({ mcpToolIds: new Set(), knowledgeBaseIds: ['kb2', 'kb3'] })
    expect(a).not.toBe(registered)
    expect(a).toMatchObject({ name: 'kb_search', namespace: 'kb', defer: 'auto' })
    expect(await a.tool.execute({ query: 'q' }, call('1'))).toEqual({ searched: ['kb1'], query: 'q' })
    expect(await b.tool.execute({ query: 'q' }, call('2'))).toEqual({ searched: ['kb2', 'kb3'], query: 'q' })
    expect(registry.getByName('kb_search')).toBe(registered)
    expect(registry.getByName('kb_search').tool).toBe(template)
    const { kb_search: built } = registry.selectActiveTools({ mcpToolIds: new Set(), knowledgeBaseIds: ['kb4'] })
    expect(await built.execute({ query: 'q' }, call('3'))).toEqual({ searched: ['kb4'], query: 'q' })
  })

  it('a builder that throws (or does not return a tool) makes the entry inactive, with one warning', () => {
    const { registry, warnings } = quietRegistry()
    registry.register(entry('fragile', { buildTool: () => { throw new Error('no assistant') } }))
    registry.register(entry('lazy', { buildTool: async () => kbTool([]) }))
    registry.register(entry('plain'))
    const scope = { mcpToolIds: new Set() }
    expect(registry.selectActive(scope).map((e) => e.name)).toEqual(['plain'])
    expect(registry.selectActive(scope).map((e) => e.name)).toEqual(['plain'])
    expect(warnings).toHaveLength(2)
    expect(warnings[0]).toMatch(/buildTool\(\) of tool "fragile" failed; treating it as inactive: no assistant/)
    expect(warnings[1]).toMatch(/"lazy".*a promise/)
  })

  it('applies() is asked first: an inactive entry is never built', () => {
    const { registry } = quietRegistry()
    let builds = 0
    registry.register(entry('kb_search', { applies: () => false, buildTool: () => (builds++, kbTool([])) }))
    expect(registry.selectActive({ mcpToolIds: new Set() })).toEqual([])
    expect(builds).toBe(0)
  })

  it('rejects a buildTool that is not a function', () => {
    const { registry } = quietRegistry()
    expect(() => registry.register(entry('x', { buildTool: 'yes' }))).toThrow(/invalid buildTool/)
  })

  it('costs, deferral and tool_invoke follow the built tool, not the registered template', async () => {
    const { registry } = quietRegistry()
    const names = ['kb_a', 'kb_b', 'kb_c', 'kb_d', 'kb_e']
    // Tiny templates; the built tools carry a long description (as many knowledge bases would).
    const longIds = Array.from({ length: 300 }, (_, i) => `knowledge-base-${i}`)
    for (const name of names) {
      registry.register(entry(name, { namespace: 'kb', tool: kbTool([]), buildTool: (scope) => kbTool(scope.knowledgeBaseIds) }))
    }
    const active = registry.selectActive({ mcpToolIds: new Set(), knowledgeBaseIds: longIds })
    const tools = Object.fromEntries(active.map((e) => [e.name, e.tool]))
    const { tools: exposed, decision, deferredEntries } = await applyDeferExposition(tools, registry, 32_000)

    const schema = await asSchema(tools.kb_a.inputSchema).jsonSchema
    const expected = names.reduce((sum, name) => sum + definitionTokens(name, tools[name].description, schema), 0)
    expect(decision.autoTokens).toBe(expected)
    expect(decision.reasonCode).toBe('auto_pool_deferred')
    expect(deferredEntries.map((e) => e.tool)).toEqual(names.map((n) => tools[n]))

    await exposed.tool_inspect.execute({ name: 'kb_c' }, call('i'))
    const out = await exposed.tool_invoke.execute({ name: 'kb_c', params: { query: 'rust' } }, call('c'))
    expect(out.searched).toHaveLength(300)
  })
})

describe('compat 3: tool_invoke toModelOutput answers in kind', () => {
  function invokeOver(inner) {
    const { registry } = quietRegistry()
    registry.register(entry('inner', { tool: inner }))
    return createToolInvokeTool(registry, ['inner'], new Set(['inner']))
  }

  it('is synchronous when the inner tool\'s is (hosts call it while rebuilding messages)', async () => {
    const invoke = invokeOver(simpleTool('x', { toModelOutput: ({ output, toolCallId }) => ({ type: 'text', value: `${toolCallId}: ${output.echoed}` }) }))
    const output = await invoke.execute({ name: 'inner', params: { query: 'hi' } }, call('t1'))
    const modelOutput = invoke.toModelOutput({ toolCallId: 't1', input: { name: 'inner', params: { query: 'hi' } }, output })
    expect(modelOutput).toEqual({ type: 'text', value: 't1::inner: hi' })
  })

  it('is a promise only when the inner tool\'s is', async () => {
    const invoke = invokeOver(simpleTool('x', { toModelOutput: async ({ output }) => ({ type: 'text', value: output.echoed }) }))
    const output = await invoke.execute({ name: 'inner', params: { query: 'later' } }, call('t2'))
    const modelOutput = invoke.toModelOutput({ toolCallId: 't2', input: { name: 'inner', params: { query: 'later' } }, output })
    expect(modelOutput).toBeInstanceOf(Promise)
    expect(await modelOutput).toEqual({ type: 'text', value: 'later' })
  })

  it('falls back to JSON synchronously when the inner tool has none', () => {
    const invoke = invokeOver(simpleTool())
    expect(invoke.toModelOutput({ toolCallId: 't3', input: { name: 'inner' }, output: { a: 1 } })).toEqual({ type: 'json', value: { a: 1 } })
  })
})

describe('compat 4: the reference\'s exported names', () => {
  it('exports the meta-tool name constants, equal to the names applyDeferExposition injects', async () => {
    expect([TOOL_SEARCH_TOOL_NAME, TOOL_INSPECT_TOOL_NAME, TOOL_INVOKE_TOOL_NAME, TOOL_EXEC_TOOL_NAME]).toEqual(['tool_search', 'tool_inspect', 'tool_invoke', 'tool_exec'])
    expect(TOOL_SEARCH_TOOL_NAME).toBe(MetaToolName.Search)
    const { registry } = quietRegistry()
    const entries = ['a', 'b', 'c', 'd', 'e'].map((n) => heavyEntry(n, 8000))
    for (const e of entries) registry.register(e)
    const { tools } = await applyDeferExposition(Object.fromEntries(entries.map((e) => [e.name, e.tool])), registry, 32_000)
    expect(Object.keys(tools).sort()).toEqual([TOOL_INSPECT_TOOL_NAME, TOOL_INVOKE_TOOL_NAME, TOOL_SEARCH_TOOL_NAME])
  })

  it('isApprovalGated(tool, ctx?) resolves like the reference and fails closed', async () => {
    const gate = (needsApproval) => ({ ...simpleTool(), needsApproval })
    expect(isApprovalGated(simpleTool())).toBeInstanceOf(Promise)
    expect(await isApprovalGated(simpleTool())).toBe(false)
    expect(await isApprovalGated(gate(true))).toBe(true)
    expect(await isApprovalGated(gate(false))).toBe(false)
    const seen = []
    const byInput = gate((input, options) => (seen.push(options.toolCallId), input.path?.startsWith('/etc') ?? false))
    expect(await isApprovalGated(byInput, { input: { path: '/etc/passwd' }, toolCallId: 'c1' })).toBe(true)
    expect(await isApprovalGated(byInput, { input: { path: '/tmp/x' } })).toBe(false)
    expect(seen[0]).toBe('c1')
    expect(await isApprovalGated(gate(async () => false))).toBe(false)
    expect(await isApprovalGated(gate(async () => true))).toBe(true)
    // Fail closed: a broken policy never lets a tool run unasked.
    expect(await isApprovalGated(gate(() => { throw new Error('policy store down') }))).toBe(true)
    expect(await isApprovalGated(gate(async () => { throw new Error('timeout') }))).toBe(true)
    expect(await isApprovalGated(gate('sometimes'))).toBe(true)
  })
})

/** A host that owns its MCP catalog, over real servers: its own ids, names and identity records. */
function catalogHost(hub, idOf, { duplicate = false } = {}) {
  const lists = []
  return {
    lists,
    get servers() {
      return hub.servers
    },
    async listTools(serverId, opts) {
      lists.push(serverId)
      const server = hub.servers.find((s) => s.id === serverId)
      const tools = (await hub.listTools(serverId, opts)).map((t) => ({ ...t, id: idOf(server, t.name), serverId, serverName: `${server.name} (host)` }))
      return duplicate ? [...tools, ...tools.map((t) => ({ ...t }))] : tools
    },
    callTool: (serverId, name, args, opts) => hub.callTool(serverId, name, args, opts),
    metadata: (descriptor) => ({ serverId: descriptor.serverId, toolName: descriptor.name }),
  }
}

/** The reference's ids, as a migrating host has them persisted. */
const referenceId = (server, toolName) => buildMcpToolWireId({ serverId: server.id, serverName: server.name, toolName }, { style: 'reference' })

describe('compat 5: MCP sync for a host that owns its catalog (real servers)', () => {
  const hub = new McpHub({ servers: [referenceServer('everything', 'ev', 'Everything'), referenceServer('memory', 'mem', 'Memory')] })
  afterAll(() => hub.close())
  const ev = { id: 'ev', name: 'Everything' }
  const mem = { id: 'mem', name: 'Memory' }

  it('without a selection syncs every server\'s tools under the host\'s ids, with its metadata and label', async () => {
    const { registry } = quietRegistry()
    const host = catalogHost(hub, referenceId)
    const result = await syncMcpToolsToRegistry(registry, host)
    expect(result.listedServers.sort()).toEqual(['ev', 'mem'])
    const [evTools, memTools] = await Promise.all([hub.listTools('ev'), hub.listTools('mem')])
    const ids = [...evTools.map((t) => referenceId(ev, t.name)), ...memTools.map((t) => referenceId(mem, t.name))]
    expect(result.registered.sort()).toEqual(ids.sort())
    const echo = registry.getByName(referenceId(ev, 'echo'))
    expect(echo).toMatchObject({ namespace: 'mcp:ev', namespaceLabel: 'mcp:Everything (host)', defer: 'auto' })
    expect(echo.tool.metadata).toEqual({ serverId: 'ev', toolName: 'echo' })
    const out = await echo.tool.execute({ message: 'via host ids' }, call('e'))
    expect(out.content[0].text).toContain('via host ids')
  })

  it('matches selected ids against the listed ids, listing every server', async () => {
    const { registry } = quietRegistry()
    const host = catalogHost(hub, referenceId)
    const echoId = referenceId(ev, 'echo')
    const result = await syncMcpToolsToRegistry(registry, host, { selectedToolIds: [echoId, 'mcp__not__listed_0000'] })
    expect(host.lists.sort()).toEqual(['ev', 'mem'])
    expect(result.registered).toEqual([echoId])
    expect(registry.getAll().map((e) => e.name)).toEqual([echoId])
  })

  it('lists nothing for an empty selection', async () => {
    const host = catalogHost(hub, referenceId)
    const result = await syncMcpToolsToRegistry(quietRegistry().registry, host, { selectedToolIds: new Set() })
    expect(result).toEqual({ registered: [], evicted: [], listedServers: [], failedServers: [] })
    expect(host.lists).toEqual([])
  })

  it('evicts entries of servers the host no longer has; keeps those of listed but unselected servers', async () => {
    const { registry } = quietRegistry()
    const host = catalogHost(hub, referenceId)
    await syncMcpToolsToRegistry(registry, host)
    const memIds = registry.getAll({ namespace: 'mcp:mem' }).map((e) => e.name)
    expect(memIds.length).toBeGreaterThan(0)
    registry.register(entry('mcp__gone__tool', { namespace: 'mcp:gone' }))
    registry.register(entry('web_search', { namespace: 'web' }))
    const result = await syncMcpToolsToRegistry(registry, host, { selectedToolIds: [referenceId(ev, 'echo')] })
    expect(result.evicted).toEqual(['mcp__gone__tool'])
    expect(registry.getAll({ namespace: 'mcp:mem' }).map((e) => e.name)).toEqual(memIds)
    expect(registry.has('web_search')).toBe(true)
  })

  it('a failed listing evicts nothing', async () => {
    const broken = new McpHub({ servers: [{ id: 'broken', name: 'Broken', type: 'stdio', command: '/nonexistent/mcp-server' }], reconnectBackoffMs: 0 })
    try {
      const { registry } = quietRegistry()
      const id = referenceId({ id: 'broken', name: 'Broken' }, 'lookup')
      registry.register(entry(id, { namespace: 'mcp:broken' }))
      const result = await syncMcpToolsToRegistry(registry, catalogHost(broken, referenceId), { selectedToolIds: [id] })
      expect(result.failedServers.map((f) => f.serverId)).toEqual(['broken'])
      expect(result.evicted).toEqual([])
      expect(registry.has(id)).toBe(true)
    } finally {
      await broken.close()
    }
  })

  it('registers repeated descriptors of one tool once', async () => {
    const { registry, warnings } = quietRegistry()
    const result = await syncMcpToolsToRegistry(registry, catalogHost(hub, referenceId, { duplicate: true }), { selectedToolIds: [referenceId(ev, 'echo'), referenceId(mem, 'read_graph')] })
    expect(result.registered.sort()).toEqual([referenceId(ev, 'echo'), referenceId(mem, 'read_graph')].sort())
    expect(warnings).toEqual([])
  })

  it('leaves out both tools when two different tools share one id, with a warning', async () => {
    const { registry, warnings } = quietRegistry()
    const clashing = (server, toolName) => (toolName === 'echo' || toolName === 'read_graph' ? 'host_shared_id' : referenceId(server, toolName))
    const result = await syncMcpToolsToRegistry(registry, catalogHost(hub, clashing), { selectedToolIds: ['host_shared_id', referenceId(ev, 'get-sum')] })
    expect(result.registered).toEqual([referenceId(ev, 'get-sum')])
    expect(registry.has('host_shared_id')).toBe(false)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/"echo" \(server "ev"\) and "read_graph" \(server "mem"\) share the id "host_shared_id"/)
  })

  it('overlapping concurrent syncs with different selections keep both', async () => {
    const { registry } = quietRegistry()
    const host = catalogHost(hub, referenceId)
    const [x, y] = [referenceId(ev, 'echo'), referenceId(mem, 'read_graph')]
    await Promise.all([
      syncMcpToolsToRegistry(registry, host, { selectedToolIds: [x] }),
      syncMcpToolsToRegistry(registry, host, { selectedToolIds: [y] }),
    ])
    expect(registry.has(x) && registry.has(y)).toBe(true)
  })

  it('the McpHub path keeps its own rules: ids from buildMcpToolWireId, nothing synced without a selection', async () => {
    const { registry } = quietRegistry()
    await expect(syncMcpToolsToRegistry(registry, hub)).rejects.toMatchObject({ code: 'TOOLREG_INVALID_ARGUMENT', message: expect.stringContaining('selectedToolIds') })
    expect(await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: [] })).toEqual({ registered: [], evicted: [], listedServers: [], failedServers: [] })
    const echoId = buildMcpToolWireId({ serverId: 'ev', serverName: 'Everything', toolName: 'echo' })
    // The reference id's server segment ("memory") names the Memory server, so it is listed, but
    // only toolreg's own ids match there.
    const result = await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: [echoId, referenceId(mem, 'read_graph')] })
    expect(result.listedServers.sort()).toEqual(['ev', 'mem'])
    expect(result.registered).toEqual([echoId])
  })
})

describe('compat 6: an McpHub keeps a migrating host\'s persisted reference ids (wireIdStyle)', () => {
  // Two long display names sharing their first 37 characters: a reference id cut inside the
  // server part cannot tell them apart, so both are listed; the full id then decides.
  const long = 'Enterprise Knowledge Graph Memory Server Cluster'
  const hub = new McpHub({ servers: [referenceServer('everything', 'ev', 'Everything'), referenceServer('memory', 'kg1', `${long} One`), referenceServer('memory', 'kg2', `${long} Two`)] })
  afterAll(() => hub.close())

  it('lists only the servers a reference id can belong to and registers under the reference ids', async () => {
    const { registry } = quietRegistry()
    const echoId = referenceId({ id: 'ev', name: 'Everything' }, 'echo')
    const result = await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: [echoId], wireIdStyle: 'reference' })
    expect(result.listedServers).toEqual(['ev'])
    expect(result.registered).toEqual([echoId])
    expect(hub.status().filter((s) => s.state !== 'idle').map((s) => s.id)).toEqual(['ev'])
    expect((await registry.getByName(echoId).tool.execute({ message: 'kept id' }, call('r'))).content[0].text).toContain('kept id')
  })

  it('lists every server an id cut short may belong to, and registers only the exact match', async () => {
    const { registry } = quietRegistry()
    const graphId = referenceId({ id: 'kg2', name: `${long} Two` }, 'read_graph')
    expect(graphId).toMatch(/^mcp__enterpriseKnowledgeGraphMemoryServerC_[0-9a-f]{20}$/)
    const result = await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: [graphId], wireIdStyle: 'reference' })
    expect(result.listedServers.sort()).toEqual(['kg1', 'kg2'])
    expect(result.registered).toEqual([graphId])
    expect(registry.getByName(graphId).namespace).toBe('mcp:kg2')
  })

  it('refuses an unknown style', async () => {
    await expect(syncMcpToolsToRegistry(quietRegistry().registry, hub, { selectedToolIds: ['x'], wireIdStyle: 'v1' })).rejects.toThrow(/invalid wireIdStyle/)
  })
})

describe('compat 6: reference wire ids, byte for byte', () => {
  const digest = (serverId, toolName) => createHash('sha256').update(`${serverId}\0${toolName}`).digest('hex').slice(0, 20)
  const ref = (serverId, serverName, toolName) => buildMcpToolWireId({ serverId, serverName, toolName }, { style: 'reference' })

  // Worked out by hand from the algorithm (reference-design §3.9); the digests are sha256.
  const handChecked = [
    ['gh', 'GitHub', 'search_issues', 'mcp__github__searchIssues_0eed967abbddd430293f'],
    // Lowercased before camelCase: a hump without a separator is lost.
    ['server-b', 'My Server', 'executeSql', 'mcp__myServer__executesql_e1d4acfbdad6f43e29e6'],
    ['server-a', 'ocr', '识别身份证', 'mcp__ocr__shiBieShenFenZheng_ed924e71ab30d684010d'],
    ['zh', '天气 Weather', '天气预报', 'mcp__tianQiWeather__tianQiYuBao_e7c3e8342a17bfceef2a'],
    // Non-Han non-ASCII is dropped, but the character after a separator run is still capitalised.
    ['s1', 'Ünïcode', 'café-naïve', 'mcp__NCode__cafNaVe_319dbc29a504942d78cb'],
    ['srv', 'srv', '123tool', 'mcp__srv___123tool_7c00f92591904ee26f21'],
    ['p', '!!!', '...', 'mcp__server__tool_dfc3ab3590c469d6eabc'],
    // Cut to 42 characters, then the trailing "__" stripped.
    ['long', 'x'.repeat(35), 'x', `mcp__${'x'.repeat(35)}_bec4368ff5613658e060`],
    ['db', '数据库'.repeat(40), '123 查询'.repeat(40), 'mcp__shuJuKuShuJuKuShuJuKuShuJuKuShuJuKuSh_6477f9d4273c3e42fc1e'],
  ]
  for (const [serverId, serverName, toolName, expected] of handChecked) {
    it(`${JSON.stringify(serverName.slice(0, 12))} / ${JSON.stringify(toolName.slice(0, 12))} → ${expected.slice(0, 40)}…`, () => {
      expect(ref(serverId, serverName, toolName)).toBe(expected)
    })
  }

  /**
   * The same algorithm written independently for ASCII names without line breaks: a character
   * loop instead of the reference's regular expressions.
   */
  function camelAscii(text) {
    const lower = text.trim().toLowerCase()
    const isWordChar = (c) => (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')
    let out = ''
    let afterSeparator = false
    for (const c of lower) {
      if (isWordChar(c)) {
        out += afterSeparator ? c.toUpperCase() : c
        afterSeparator = false
      } else {
        afterSeparator = true
      }
    }
    return out !== '' && out[0] >= '0' && out[0] <= '9' ? `_${out}` : out
  }
  function independentAsciiId(serverId, serverName, toolName) {
    let body = `mcp__${camelAscii(serverName) || 'server'}__${camelAscii(toolName) || 'tool'}`.slice(0, 42)
    while (body.endsWith('_')) body = body.slice(0, -1)
    return `${body}_${digest(serverId, toolName)}`
  }

  const servers = ['github', 'GitHub', 'my-server', 'MY_SERVER', '  padded  ', 'a.b/c', 'x'.repeat(36), '9lives', 'Brave Search (v2)', '']
  const toolNames = ['search_issues', 'createPullRequest', 'get-file.contents', 'HTTPServer', '__private__', 'v2_list', 'a  b', '123', 'tool-'.repeat(20), '!']

  it('matches an independent implementation on an ASCII corpus (camelCase, punctuation, over-long names)', () => {
    let checked = 0
    for (const serverName of servers) {
      for (const toolName of toolNames) {
        const serverId = `id-${checked}`
        const id = ref(serverId, serverName, toolName)
        expect(id, `${serverName} / ${toolName}`).toBe(independentAsciiId(serverId, serverName, toolName))
        expect(id.length).toBeLessThanOrEqual(63)
        expect(id).toMatch(/^[a-zA-Z_][a-zA-Z0-9_]*$/)
        checked++
      }
    }
    expect(checked).toBe(100)
  })

  it('keeps the reference\'s identity rules: the server id decides, the display name does not', () => {
    expect(ref('server-a', 'mysql', 'executeSql')).not.toBe(ref('server-b', 'mysql', 'executeSql'))
    expect(ref('server-a', 'mysql_报销', 'executeSql')).not.toBe(ref('server-b', 'mysql_电梯', 'executeSql'))
    expect(ref('server-a', 'old-name', 'query').slice(-20)).toBe(ref('server-a', 'new-name', 'query').slice(-20))
  })

  it('is a separate style: the default ids are toolreg\'s own, and an unknown style is refused', () => {
    expect(buildMcpToolWireId({ serverId: 'gh', serverName: 'GitHub', toolName: 'search_issues' })).not.toBe(ref('gh', 'GitHub', 'search_issues'))
    expect(() => buildMcpToolWireId({ serverId: 'gh', toolName: 't' }, { style: 'legacy' })).toThrow(/invalid style/)
  })
})

describe('compat 7: repair through the host\'s own model layer', () => {
  const schema = { type: 'object', properties: { tags: { type: 'array', items: { type: 'string' }, uniqueItems: true } }, required: ['tags'], unevaluatedProperties: false }
  const tools = { tag_note: tool({ description: 'Tag a note', inputSchema: jsonSchema(schema), execute: async (x) => x }) }
  // A wrong property name: no local fix applies without inventing data, so the model is asked.
  const brokenCall = { type: 'tool-call', toolCallId: 'r1', toolName: 'tag_note', input: '{"labels": ["a"]}' }

  async function repairWith(answer) {
    const { InvalidToolInputError } = await import('ai')
    const prompts = []
    const repair = toolreg.createAiRepair({ generate: async (request) => (prompts.push(request), answer) })
    const error = new InvalidToolInputError({ toolName: 'tag_note', toolInput: brokenCall.input, cause: new Error('tags is required') })
    const repaired = await repair({ system: '', messages: [], toolCall: brokenCall, tools, inputSchema: async () => schema, error })
    return { repaired, prompts }
  }

  it('uses the model output when it validates, and the prompt names the tool', async () => {
    const { repaired, prompts } = await repairWith({ tags: ['a', 'b'] })
    expect(JSON.parse(repaired.input)).toEqual({ tags: ['a', 'b'] })
    expect(JSON.stringify(prompts[0])).toContain('tag_note')
  })

  it('rejects model output that breaks 2020-12 keywords (uniqueItems, unevaluatedProperties)', async () => {
    expect((await repairWith({ tags: ['a', 'a'] })).repaired).toBeNull()
    expect((await repairWith({ tags: ['a'], extra: 1 })).repaired).toBeNull()
  })
})

describe('compat: end to end with generateText and a scripted model', () => {
  const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } }
  const step = (content) => ({ content, finishReason: { unified: content[0].type === 'text' ? 'stop' : 'tool-calls', raw: undefined }, usage, warnings: [] })
  const callTool = (id, toolName, input) => step([{ type: 'tool-call', toolCallId: id, toolName, input: JSON.stringify(input) }])

  it('runs a request-scoped tool without inputSchema through tool_invoke, shaped by its synchronous toModelOutput', async () => {
    const { registry } = quietRegistry()
    const clockFor = (timeZone) => ({
      description: `Current time in ${timeZone}`,
      execute: async () => ({ timeZone, time: '12:00' }),
      toModelOutput: ({ output }) => ({ type: 'text', value: `${output.time} (${output.timeZone})` }),
    })
    registry.register({ name: 'clock', namespace: 'util', description: 'Current time', defer: 'always', tool: clockFor('UTC'), buildTool: (scope) => clockFor(scope.timeZone) })
    const active = registry.selectActive({ mcpToolIds: new Set(), timeZone: 'Europe/Oslo' })
    const { tools, systemPrompt } = await applyDeferExposition(Object.fromEntries(active.map((e) => [e.name, e.tool])), registry, 128_000)

    const script = [
      callTool('c1', 'tool_inspect', { name: 'clock' }),
      callTool('c2', 'tool_invoke', { name: 'clock' }),
      step([{ type: 'text', text: 'done' }]),
    ]
    const prompts = []
    const model = new MockLanguageModelV3({ doGenerate: async (options) => (prompts.push(options), script[prompts.length - 1]) })
    const result = await generateText({ model, tools, system: systemPrompt, prompt: 'What time is it?', stopWhen: stepCountIs(5) })

    expect(result.text).toBe('done')
    const toolResult = prompts[2].prompt.flatMap((m) => (m.role === 'tool' ? m.content : [])).find((p) => p.toolCallId === 'c2')
    expect(toolResult.output).toEqual({ type: 'text', value: '12:00 (Europe/Oslo)' })
  })
})

describe('compat: deliberate deviations from the reference, each with its reason', () => {
  it('inspect-first guard: the first tool_invoke of an un-inspected tool returns its signature, the retry runs (models guess parameters they have not seen)', async () => {
    const { registry } = quietRegistry()
    registry.register(entry('web_search'))
    const invoke = createToolInvokeTool(registry, ['web_search'])
    await expect(invoke.execute({ name: 'web_search', params: { query: 'x' } }, call('g1'))).rejects.toMatchObject({
      code: 'TOOLREG_NOT_INSPECTED',
      message: expect.stringContaining('function web_search(params)'),
    })
    expect(await invoke.execute({ name: 'web_search', params: { query: 'x' } }, call('g2'))).toEqual({ echoed: 'x' })
  })

  it('minimum pool of 5: four heavy auto tools stay inline (deferring a few tools saves less than the meta-tools cost)', async () => {
    const heavy = ['a', 'b', 'c', 'd'].map((n) => heavyEntry(n, 8000))
    const decision = await shouldDefer(heavy, 32_000)
    expect(decision.autoTokens).toBeGreaterThan(decision.threshold)
    expect(decision.deferredNames.size).toBe(0)
    expect(decision.reasonCode).toBe('too_few_auto_tools')
  })

  it('three meta-tools, tool_exec only on request (running model-written code is a privilege the host must opt into)', async () => {
    const { registry } = quietRegistry()
    const entries = ['a', 'b', 'c', 'd', 'e'].map((n) => heavyEntry(n, 8000))
    for (const e of entries) registry.register(e)
    const tools = Object.fromEntries(entries.map((e) => [e.name, e.tool]))
    const { tools: exposed } = await applyDeferExposition(tools, registry, 32_000)
    expect(exposed[TOOL_EXEC_TOOL_NAME]).toBeUndefined()
    expect(Object.keys(exposed)).toHaveLength(3)
    if (typeof toolreg.createToolExecTool !== 'function') {
      await expect(applyDeferExposition(tools, registry, 32_000, { exec: true })).rejects.toMatchObject({ code: 'TOOLREG_NOT_AVAILABLE' })
    }
  })

  it('stricter validation: jsonSchema() tools (all MCP tools) are validated before they run (the reference passes them unchecked)', async () => {
    const { registry } = quietRegistry()
    let runs = 0
    registry.register(entry('mcp__s__sum', { namespace: 'mcp:s', tool: tool({ description: 'sum', inputSchema: jsonSchema({ type: 'object', properties: { a: { type: 'number' } }, required: ['a'] }), execute: async () => ++runs }) }))
    const invoke = createToolInvokeTool(registry, ['mcp__s__sum'], new Set(['mcp__s__sum']))
    await expect(invoke.execute({ name: 'mcp__s__sum', params: { a: 'one' } }, call('v'))).rejects.toMatchObject({
      code: 'TOOLREG_INVALID_PARAMS',
      message: expect.stringContaining('Expected signature'),
    })
    expect(runs).toBe(0)
  })

  it('stricter registration: a name no provider accepts or a non-object schema fails at register time, not at request time', () => {
    const { registry } = quietRegistry()
    expect(() => registry.register(entry('has spaces'))).toThrow(TypeError)
    expect(() => registry.register(entry('scalar', { tool: { inputSchema: { type: 'string' } } }))).toThrow(/top-level type must be "object"/)
    expect(registry.size).toBe(0)
  })
})
