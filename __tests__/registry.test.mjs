import { describe, it, expect } from 'vitest'
import { execFileSync } from 'node:child_process'
import { tool, jsonSchema } from 'ai'
import { ToolRegistry, registry as singleton, createToolInspectTool } from '../index.js'
import { quietRegistry, entry, simpleTool } from './helpers.mjs'

describe('ToolRegistry: store and look up', () => {
  it('stores, gets and overwrites by name', () => {
    const { registry } = quietRegistry()
    const first = entry('web_search')
    registry.register(first)
    expect(registry.getByName('web_search')).toBe(first)
    expect(registry.has('web_search')).toBe(true)
    const second = entry('web_search', { description: 'replaced' })
    registry.register(second)
    expect(registry.size).toBe(1)
    expect(registry.getByName('web_search')).toBe(second)
  })

  it('deregister returns true once, then false', () => {
    const { registry } = quietRegistry()
    registry.register(entry('a'))
    expect(registry.deregister('a')).toBe(true)
    expect(registry.deregister('a')).toBe(false)
    expect(registry.has('a')).toBe(false)
    expect(registry.size).toBe(0)
  })

  it('exports a module-level singleton', () => {
    expect(singleton).toBeInstanceOf(ToolRegistry)
  })
})

describe('ToolRegistry: getAll and getByNamespace', () => {
  function populated() {
    const { registry } = quietRegistry()
    registry.register(entry('zeta', { namespace: 'kb', description: 'Knowledge lookup' }))
    registry.register(entry('alpha', { namespace: 'web', description: 'Search the WEB' }))
    registry.register(entry('mcp__gmail__send', { namespace: 'mcp:s1', namespaceLabel: 'mcp:Gmail', description: 'Send mail' }))
    return registry
  }

  it('returns everything name-sorted without a filter', () => {
    expect(populated().getAll({}).map((e) => e.name)).toEqual(['alpha', 'mcp__gmail__send', 'zeta'])
    expect(populated().getAll().length).toBe(3)
  })

  it('filters by exact namespace or label', () => {
    const registry = populated()
    expect(registry.getAll({ namespace: 'kb' }).map((e) => e.name)).toEqual(['zeta'])
    expect(registry.getAll({ namespace: 'mcp:Gmail' }).map((e) => e.name)).toEqual(['mcp__gmail__send'])
    expect(registry.getAll({ namespace: 'mcp:s1' }).map((e) => e.name)).toEqual(['mcp__gmail__send'])
    expect(registry.getAll({ namespace: 'mcp' })).toEqual([])
  })

  it('matches the query case-insensitively against name, description and namespace (label)', () => {
    const registry = populated()
    expect(registry.getAll({ query: 'ALP' }).map((e) => e.name)).toEqual(['alpha'])
    expect(registry.getAll({ query: 'web' }).map((e) => e.name)).toEqual(['alpha'])
    expect(registry.getAll({ query: 'knowledge' }).map((e) => e.name)).toEqual(['zeta'])
    expect(registry.getAll({ query: 'gmail' }).map((e) => e.name)).toEqual(['mcp__gmail__send'])
    expect(registry.getAll({ query: 's1' }).map((e) => e.name)).toEqual(['mcp__gmail__send'])
  })

  it('ANDs the filters', () => {
    const registry = populated()
    expect(registry.getAll({ query: 'search', namespace: 'kb' })).toEqual([])
    expect(registry.getAll({ query: 'search', namespace: 'web' }).map((e) => e.name)).toEqual(['alpha'])
  })

  it('groups by namespace, sorts each group and forwards the filter', () => {
    const registry = populated()
    registry.register(entry('beta', { namespace: 'web' }))
    const groups = registry.getByNamespace()
    expect([...groups.keys()].sort()).toEqual(['kb', 'mcp:s1', 'web'])
    expect(groups.get('web').map((e) => e.name)).toEqual(['alpha', 'beta'])
    const filtered = registry.getByNamespace({ namespace: 'kb' })
    expect([...filtered.keys()]).toEqual(['kb'])
  })
})

describe('ToolRegistry: selectActive', () => {
  it('treats a missing applies as active and filters by applies with the scope', () => {
    const { registry } = quietRegistry()
    registry.register(entry('always_on'))
    registry.register(entry('mcp_a', { applies: (scope) => scope.mcpToolIds.has('a') }))
    registry.register(entry('mcp_b', { applies: (scope) => scope.mcpToolIds.has('b') }))
    const active = registry.selectActive({ mcpToolIds: new Set(['a']) })
    expect(active.map((e) => e.name)).toEqual(['always_on', 'mcp_a'])
  })

  it('makes a throwing applies inactive with one warning naming the tool', () => {
    const { registry, warnings } = quietRegistry()
    registry.register(entry('broken', { applies: () => { throw new Error('boom') } }))
    registry.register(entry('fine'))
    const scope = { mcpToolIds: new Set() }
    expect(registry.selectActive(scope).map((e) => e.name)).toEqual(['fine'])
    expect(registry.selectActive(scope).map((e) => e.name)).toEqual(['fine'])
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('"broken"')
    expect(warnings[0]).toContain('boom')
  })

  it('hands out entries of one object shape, whatever the shape of the host\'s objects', () => {
    // Host objects of many shapes (V8 can give each `{ ...entry, applies }` copy a map of its
    // own; here the key order differs) make every host loop over them slow; selectActive's
    // entries must share one map. Checked with V8's own %HaveSameMap in a child process (the
    // natives syntax flag is per process).
    const script = `
      const { ToolRegistry } = require(${JSON.stringify(new URL('../index.js', import.meta.url).pathname)})
      const { tool, jsonSchema } = require('ai')
      const registry = new ToolRegistry({ logger: { warn() {} } })
      const hostEntries = []
      for (let i = 0; i < 50; i++) {
        const name = 'tool_' + i
        const applies = (scope) => scope.ids.has(name)
        const fields = [['name', name], ['namespace', 'mcp:s'], ['description', 'd'], ['defer', 'auto'], ['tool', tool({ inputSchema: jsonSchema({ type: 'object' }) })], ['applies', applies]]
        const hostEntry = {}
        for (let k = 0; k < fields.length; k++) hostEntry[fields[(k + i) % fields.length][0]] = fields[(k + i) % fields.length][1]
        if (i === 7) hostEntry.serverId = 's1'
        hostEntries.push(hostEntry)
        registry.register(hostEntry)
      }
      const active = registry.selectActive({ ids: new Set(hostEntries.map((e) => e.name)) })
      const plain = active.filter((e) => e.name !== 'tool_7')
      console.log(JSON.stringify({
        hostShared: %HaveSameMap(hostEntries[1], hostEntries[2]),
        shared: plain.every((e) => %HaveSameMap(e, plain[0])),
        fast: %HasFastProperties(plain[0]),
        extra: active.find((e) => e.name === 'tool_7').serverId,
        same: active.every((e, i) => e.tool === registry.getByName(e.name).tool && e.applies === registry.getByName(e.name).applies),
        identity: registry.getByName('tool_3') === hostEntries[3],
        again: registry.selectActive({ ids: new Set(['tool_3']) })[0] === active.find((e) => e.name === 'tool_3'),
      }))`
    const out = execFileSync(process.execPath, ['--allow-natives-syntax', '-e', script], { encoding: 'utf8', cwd: new URL('..', import.meta.url).pathname })
    const result = JSON.parse(out)
    expect(result.hostShared).toBe(false) // the V8 behaviour this guards against, still there
    expect(result).toMatchObject({ shared: true, fast: true, extra: 's1', same: true, identity: true, again: true })
  })

  it('keeps name order whatever the registration history (cache-stable)', () => {
    const { registry } = quietRegistry()
    for (const name of ['c', 'a', 'b']) registry.register(entry(name))
    registry.deregister('a')
    registry.register(entry('a'))
    expect(registry.selectActive({ mcpToolIds: new Set() }).map((e) => e.name)).toEqual(['a', 'b', 'c'])
  })

  it('selectActiveTools gives the same tools as a ToolSet, in name order, with the same warning rule', () => {
    const { registry, warnings } = quietRegistry()
    const entries = [
      entry('zeta'),
      { ...entry('alpha'), applies: (scope) => scope.mcpToolIds.has('alpha') },
      entry('mid', { applies: (scope) => scope.mcpToolIds.has('nope') }),
      entry('broken', { applies: () => { throw new Error('boom') } }),
    ]
    for (const e of entries) registry.register(e)
    const scope = { mcpToolIds: new Set(['alpha']) }
    const tools = registry.selectActiveTools(scope)
    expect(Object.keys(tools)).toEqual(['alpha', 'zeta'])
    expect(tools.alpha).toBe(entries[1].tool)
    expect(Object.keys(tools)).toEqual(registry.selectActive(scope).map((e) => e.name))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toContain('"broken"')
    const built = simpleTool('built for this request')
    registry.register(entry('scoped', { buildTool: () => built }))
    expect(registry.selectActiveTools(scope).scoped).toBe(built)
  })

  it('reads an entry when it is registered: a later change to the entry object needs a new register', () => {
    const { registry } = quietRegistry()
    const e = entry('late', { applies: () => true })
    registry.register(e)
    e.applies = () => false
    expect(registry.selectActive({ mcpToolIds: new Set() }).map((x) => x.name)).toEqual(['late'])
    registry.register(e)
    expect(registry.selectActive({ mcpToolIds: new Set() })).toEqual([])
  })
})

describe('ToolRegistry: bad input', () => {
  const cases = [
    ['missing name', { name: undefined }, /invalid name/],
    ['empty name', { name: '' }, /invalid name: must not be empty/],
    ['a name no provider accepts', { name: 'has spaces/and slashes' }, /invalid name: .*contains ' '/],
    ['a name that is too long', { name: 'x'.repeat(129) }, /invalid name: .*at most 128/],
    ['unknown defer', { defer: 'sometimes' }, /invalid defer: "sometimes"/],
    ['an inputSchema that is not a schema', { tool: { description: 'x', inputSchema: 42, execute: async () => 1 } }, /invalid tool\.inputSchema/],
    ['missing namespace', { namespace: '' }, /invalid namespace/],
    ['non-function applies', { applies: true }, /invalid applies/],
  ]
  for (const [label, override, message] of cases) {
    it(`rejects ${label} with a TypeError and keeps the registry as it was`, () => {
      const { registry } = quietRegistry()
      const kept = entry('kept')
      registry.register(kept)
      const bad = { ...entry('bad'), ...override }
      let thrown
      try {
        registry.register(bad)
      } catch (error) {
        thrown = error
      }
      expect(thrown).toBeInstanceOf(TypeError)
      expect(thrown.message).toMatch(message)
      expect(thrown.code).toBe('TOOLREG_INVALID_ARGUMENT')
      expect(registry.size).toBe(1)
      expect(registry.getByName('kept')).toBe(kept)
      expect(registry.search('bad')).toEqual([])
    })
  }

  it('rejects a non-object top-level schema', () => {
    const { registry } = quietRegistry()
    const bad = entry('scalar', { tool: tool({ inputSchema: jsonSchema({ type: 'string' }), execute: async () => 1 }) })
    expect(() => registry.register(bad)).toThrow(/top-level type must be "object"/)
    expect(registry.size).toBe(0)
  })
})

describe('ToolRegistry: namespace clashes', () => {
  it('warns loudly when a built-in name is registered from another namespace', () => {
    const { registry, warnings } = quietRegistry()
    registry.register(entry('web_search', { namespace: 'web' }))
    registry.register(entry('web_search', { namespace: 'kb' }))
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/"web_search".*"kb".*"web".*programming error/)
  })

  it('stays quiet for an MCP resync of the same name', () => {
    const { registry, warnings } = quietRegistry()
    registry.register(entry('mcp__s__t', { namespace: 'mcp:s' }))
    registry.register(entry('mcp__s__t', { namespace: 'mcp:s' }))
    expect(warnings).toEqual([])
  })
})

describe('ToolRegistry: search', () => {
  it('ranks by name, namespace, description and parameters', () => {
    const { registry } = quietRegistry()
    registry.register(entry('get_weather', { description: 'Current weather for a city' }))
    registry.register(entry('send_email', { namespace: 'mcp:gmail', description: 'Send an email message' }))
    registry.register(entry('create_issue', { namespace: 'mcp:github', description: 'Open a new issue' }))
    const hits = registry.search('weather in paris')
    expect(hits[0]).toMatchObject({ name: 'get_weather', namespace: 'web', description: 'Current weather for a city' })
    expect(hits[0].score).toBeGreaterThan(0)
    expect(registry.search('github issue')[0].name).toBe('create_issue')
    expect(registry.search('email', { namespace: 'mcp:github' })).toEqual([])
    expect(registry.search('email', { names: ['get_weather'] })).toEqual([])
    expect(registry.search('nothing matches this', {})).toEqual([])
  })

  it('finds parameters of a zod schema', () => {
    const { registry } = quietRegistry()
    registry.register(entry('lookup', { description: 'Generic lookup' }))
    registry.register(entry('other', { description: 'Unrelated', tool: tool({ inputSchema: jsonSchema({ type: 'object', properties: { flag: { type: 'boolean' } } }) }) }))
    expect(registry.search('query').map((h) => h.name)).toContain('lookup')
  })

  it('has a regex mode and rejects over-long patterns with a clear error', () => {
    const { registry } = quietRegistry()
    registry.register(entry('github_create_issue'))
    registry.register(entry('github_list_issues'))
    registry.register(entry('slack_post'))
    const names = registry.search('^github_.*issue', { mode: 'regex', limit: 10 }).map((h) => h.name).sort()
    expect(names).toEqual(['github_create_issue', 'github_list_issues'])
    expect(() => registry.search('a'.repeat(500), { mode: 'regex' })).toThrow(/regex|pattern/i)
    expect(() => registry.search('x', { mode: 'fuzzy' })).toThrow(TypeError)
  })

  it('follows deregistration and re-registration', () => {
    const { registry } = quietRegistry()
    registry.register(entry('alpha_tool', { description: 'Translate text between languages' }))
    expect(registry.search('translate')[0].name).toBe('alpha_tool')
    registry.register(entry('alpha_tool', { description: 'Convert currencies' }))
    expect(registry.search('translate')).toEqual([])
    expect(registry.search('currencies')[0].name).toBe('alpha_tool')
    registry.deregister('alpha_tool')
    expect(registry.search('currencies')).toEqual([])
  })

  it('registerMany keeps non-ASCII strings intact', async () => {
    const { registry } = quietRegistry()
    const tricky = [
      entry('emoji_tool', { namespace: 'mcp:☕', namespaceLabel: 'mcp:Café 𝄞', description: 'Brew 𝄞 coffee ☕ quickly' }),
      entry('cjk_tool', { namespace: 'mcp:中文', description: '搜索天气 weather' }),
      entry('lone_tool', { description: 'broken \uD800 surrogate then zebra' }),
      entry('plain_tool', { namespaceLabel: '', description: 'ascii only' }),
      entry('late_tool', { tool: tool({ inputSchema: jsonSchema(async () => ({ type: 'object' })), execute: async () => 1 }) }),
    ]
    registry.registerMany(tricky)
    expect(registry.size).toBe(5)
    expect(registry.search('coffee')[0]).toMatchObject({ name: 'emoji_tool', namespace: 'mcp:☕' })
    expect(registry.search('天气')[0].name).toBe('cjk_tool')
    expect(registry.search('zebra')[0].name).toBe('lone_tool')
    expect(registry.search('ascii')[0].name).toBe('plain_tool')
    expect(registry.search('caf', { namespace: 'mcp:Café 𝄞' }).map((h) => h.name)).toEqual(['emoji_tool'])
    const inspect = createToolInspectTool(registry, ['emoji_tool'])
    const signature = await inspect.execute({ name: 'emoji_tool' }, { toolCallId: 'x', messages: [] })
    expect(signature).toContain('Brew 𝄞 coffee ☕ quickly')
    expect(signature).toContain('params.query')
  })

  it('indexes a lazily resolved schema once it arrives', async () => {
    const { registry } = quietRegistry()
    const lazy = tool({
      inputSchema: jsonSchema(async () => ({ type: 'object', properties: { recipient: { type: 'string' } } })),
      execute: async () => 1,
    })
    registry.register(entry('notify', { description: 'Notify someone', tool: lazy }))
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(registry.search('recipient').map((h) => h.name)).toEqual(['notify'])
  })
})

describe('ToolRegistry: consistency under concurrent sync', () => {
  it('a request keeps the entries it captured while another sync replaces and evicts', async () => {
    const { registry } = quietRegistry()
    for (let i = 0; i < 20; i++) registry.register(entry(`mcp__s__t${i}`, { namespace: 'mcp:s' }))
    const captured = registry.selectActive({ mcpToolIds: new Set() })
    const churn = (async () => {
      for (let i = 0; i < 20; i++) {
        await Promise.resolve()
        if (i % 2) registry.deregister(`mcp__s__t${i}`)
        else registry.register(entry(`mcp__s__t${i}`, { namespace: 'mcp:s', description: 'resynced' }))
      }
    })()
    await churn
    expect(captured).toHaveLength(20)
    expect(captured.every((e) => e.description.endsWith('tool'))).toBe(true)
    expect(registry.size).toBe(10)
  })
})
