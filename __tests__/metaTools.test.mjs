import { describe, it, expect } from 'vitest'
import { tool, jsonSchema } from 'ai'
import { z } from 'zod'
import { createToolSearchTool, createToolInspectTool, createToolInvokeTool, schemaToJSDoc } from '../index.js'
import { quietRegistry, entry, mcpTool } from './helpers.mjs'

const opts = (toolCallId = 'outer-1') => ({ toolCallId, messages: [] })

function catalog() {
  const { registry } = quietRegistry()
  registry.register(entry('mcp__s1__t', {
    namespace: 'mcp:s1',
    namespaceLabel: 'mcp:server-one',
    description: 'Look up records by query',
    tool: mcpTool({ type: 'object', properties: { query: { type: 'string', description: 'Search text' } }, required: ['query'] }),
  }))
  registry.register(entry('mcp__s2__mail', { namespace: 'mcp:s2', description: 'Send an email to a recipient' }))
  registry.register(entry('web_search', {
    description: 'Search the web',
    tool: tool({
      description: 'Search the web',
      inputSchema: z.object({ query: z.string(), limit: z.number().int().default(10) }),
      execute: async (input) => input,
    }),
  }))
  registry.register(entry('inline_tool', { description: 'An inline records tool' }))
  return registry
}

describe('tool_search', () => {
  const deferred = ['mcp__s1__t', 'mcp__s2__mail', 'web_search']

  it('is named as tool discovery, not web search', () => {
    const search = createToolSearchTool(catalog(), deferred)
    expect(search.description).toContain('NOT web search')
    expect(search.inputExamples.length).toBeGreaterThan(0)
  })

  it('returns ranked results grouped by namespace label', async () => {
    const search = createToolSearchTool(catalog(), deferred)
    const out = await search.execute({ query: 'records' }, opts())
    expect(out.matchedNamespaces).toEqual([
      { namespace: 'mcp:server-one', tools: [{ name: 'mcp__s1__t', description: 'Look up records by query' }] },
    ])
  })

  it('never surfaces inline or non-deferred entries', async () => {
    const search = createToolSearchTool(catalog(), deferred)
    const out = await search.execute({ query: 'inline records tool' }, opts())
    const names = out.matchedNamespaces.flatMap((g) => g.tools.map((t) => t.name))
    expect(names).not.toContain('inline_tool')
  })

  it("finds a namespace by its id ('s2' finds mcp:s2) and filters by namespace", async () => {
    const search = createToolSearchTool(catalog(), deferred)
    const out = await search.execute({ query: 's2' }, opts())
    expect(out.matchedNamespaces[0].namespace).toBe('mcp:s2')
    const filtered = await search.execute({ query: 'search email records', namespace: 'web' }, opts())
    expect(filtered.matchedNamespaces.map((g) => g.namespace)).toEqual(['web'])
  })

  it('browses with an empty query: every namespace with its count', async () => {
    const search = createToolSearchTool(catalog(), deferred)
    const out = await search.execute({}, opts())
    expect(out.matchedNamespaces.map((g) => [g.namespace, g.total])).toEqual([
      ['mcp:s2', 1],
      ['mcp:server-one', 1],
      ['web', 1],
    ])
  })

  it('limits results (default 5)', async () => {
    const { registry } = quietRegistry()
    const names = []
    for (let i = 0; i < 12; i++) {
      registry.register(entry(`calendar_tool_${i}`, { description: `Calendar event helper ${i}` }))
      names.push(`calendar_tool_${i}`)
    }
    const search = createToolSearchTool(registry, names)
    const count = async (input) => (await search.execute(input, opts())).matchedNamespaces.flatMap((g) => g.tools).length
    expect(await count({ query: 'calendar event' })).toBe(5)
    expect(await count({ query: 'calendar event', limit: 8 })).toBe(8)
  })

  it('select: returns exact names', async () => {
    const search = createToolSearchTool(catalog(), deferred)
    const out = await search.execute({ query: 'select:web_search,mcp__s2__mail' }, opts())
    expect(out.matchedNamespaces.flatMap((g) => g.tools.map((t) => t.name)).sort()).toEqual(['mcp__s2__mail', 'web_search'])
  })

  it('omits inputSchema by default; verbose includes it and counts as inspection', async () => {
    const registry = catalog()
    const inspected = new Set()
    const search = createToolSearchTool(registry, deferred, inspected)
    const plain = await search.execute({ query: 'records' }, opts())
    expect(plain.matchedNamespaces[0].tools[0].inputSchema).toBeUndefined()
    expect(inspected.size).toBe(0)
    const verbose = await search.execute({ query: 'records', verbose: true }, opts())
    expect(verbose.matchedNamespaces[0].tools[0].inputSchema).toMatchObject({ properties: { query: { type: 'string' } } })
    expect(inspected.has('mcp__s1__t')).toBe(true)
  })

  it('has a compact text model output, and a hint when nothing matched', async () => {
    const search = createToolSearchTool(catalog(), deferred)
    const out = await search.execute({ query: 'records' }, opts())
    const text = search.toModelOutput({ toolCallId: 'x', input: {}, output: out })
    expect(text).toEqual({ type: 'text', value: 'mcp:server-one\n  - mcp__s1__t — Look up records by query' })
    const none = await search.execute({ query: 'zzzzqqq' }, opts())
    expect(search.toModelOutput({ toolCallId: 'x', input: {}, output: none }).value).toMatch(/^No tools matched/)
  })
})

describe('tool_inspect', () => {
  it('returns the JSDoc stub and records the name', async () => {
    const inspected = new Set()
    const inspect = createToolInspectTool(catalog(), ['mcp__s1__t'], inspected)
    const stub = await inspect.execute({ name: 'mcp__s1__t' }, opts())
    expect(stub).toContain('function mcp__s1__t(params)')
    expect(stub).toContain('@param {string} params.query')
    expect(stub).toContain('Look up records by query')
    expect(inspected.has('mcp__s1__t')).toBe(true)
    expect(inspect.toModelOutput({ toolCallId: 'x', input: {}, output: stub })).toEqual({ type: 'text', value: stub })
    expect(inspect.inputExamples.length).toBeGreaterThan(0)
  })

  it('refuses a name outside the allow-list without recording it', async () => {
    const inspected = new Set()
    const inspect = createToolInspectTool(catalog(), ['mcp__s1__t'], inspected)
    await expect(inspect.execute({ name: 'web_search' }, opts())).rejects.toThrow('Tool not available in this request: web_search')
    expect(inspected.size).toBe(0)
  })

  it('reports an unknown tool', async () => {
    const inspect = createToolInspectTool(catalog(), ['ghost'])
    await expect(inspect.execute({ name: 'ghost' }, opts())).rejects.toThrow('Tool not found: ghost')
  })
})

describe('tool_invoke', () => {
  function invoker(registry = catalog(), allowed = ['mcp__s1__t', 'web_search', 'mcp__s2__mail'], inspected = new Set(allowed)) {
    return createToolInvokeTool(registry, allowed, inspected)
  }

  it('forwards params with a nested toolCallId', async () => {
    const { registry } = quietRegistry()
    let seen
    registry.register(entry('mcp__s1__t', {
      tool: mcpTool({ type: 'object', properties: { q: { type: 'string' } } }, async (input, options) => {
        seen = { input, toolCallId: options.toolCallId }
        return 'done'
      }),
    }))
    const invoke = invoker(registry, ['mcp__s1__t'])
    await expect(invoke.execute({ name: 'mcp__s1__t', params: { q: 'x' } }, opts('outer-1'))).resolves.toBe('done')
    expect(seen).toEqual({ input: { q: 'x' }, toolCallId: 'outer-1::mcp__s1__t' })
    await invoke.execute({ name: 'mcp__s1__t' }, opts('outer-2'))
    expect(seen.input).toEqual({})
  })

  it('reports unknown tools, tools without execute and names outside the allow-list', async () => {
    const registry = catalog()
    registry.register(entry('no_exec', { tool: tool({ inputSchema: jsonSchema({ type: 'object' }) }) }))
    const invoke = invoker(registry, ['ghost', 'no_exec', 'web_search'])
    await expect(invoke.execute({ name: 'ghost', params: {} }, opts())).rejects.toThrow('Tool not found: ghost')
    await expect(invoke.execute({ name: 'no_exec', params: {} }, opts())).rejects.toThrow('Tool no_exec has no execute handler')
    await expect(invoke.execute({ name: 'mcp__s2__mail', params: {} }, opts())).rejects.toThrow('Tool not available in this request: mcp__s2__mail')
  })

  it('refuses approval-gated tools without executing them', async () => {
    const { registry } = quietRegistry()
    let ran = false
    const gated = (needsApproval) => tool({ inputSchema: jsonSchema({ type: 'object' }), needsApproval, execute: async () => { ran = true } })
    registry.register(entry('gated_true', { tool: gated(true) }))
    registry.register(entry('gated_fn', { tool: gated(async () => true) }))
    registry.register(entry('gated_throws', { tool: gated(async () => { throw new Error('x') }) }))
    registry.register(entry('gated_false', { tool: gated(async () => false) }))
    const invoke = invoker(registry, ['gated_true', 'gated_fn', 'gated_throws', 'gated_false'])
    for (const name of ['gated_true', 'gated_fn', 'gated_throws']) {
      await expect(invoke.execute({ name, params: {} }, opts())).rejects.toThrow(`Tool "${name}" requires user approval; call it directly instead of via tool_invoke.`)
    }
    expect(ran).toBe(false)
    await invoke.execute({ name: 'gated_false', params: {} }, opts())
    expect(ran).toBe(true)
  })

  it('Guard A: the first call to an un-inspected tool returns its signature, the retry runs', async () => {
    const inspected = new Set()
    const invoke = createToolInvokeTool(catalog(), ['mcp__s1__t'], inspected)
    const first = invoke.execute({ name: 'mcp__s1__t', params: { query: 'x' } }, opts())
    await expect(first).rejects.toThrow(/hasn't been inspected yet[\s\S]*function mcp__s1__t\(params\)/)
    expect(inspected.has('mcp__s1__t')).toBe(true)
    await expect(invoke.execute({ name: 'mcp__s1__t', params: { query: 'x' } }, opts())).resolves.toMatchObject({ ok: true })
  })

  it('Guard B: invalid params give the JSON path and the signature, also for jsonSchema() tools', async () => {
    const invoke = invoker()
    const zodError = invoke.execute({ name: 'web_search', params: { query: 5 } }, opts())
    await expect(zodError).rejects.toThrow(/Invalid params for "web_search"[\s\S]*\$\.query[\s\S]*Expected signature:[\s\S]*function web_search/)
    const mcpError = invoke.execute({ name: 'mcp__s1__t', params: { query: ['a'] } }, opts())
    await expect(mcpError).rejects.toThrow(/Invalid params for "mcp__s1__t"[\s\S]*\$\.query/)
    const missing = invoke.execute({ name: 'mcp__s1__t', params: {} }, opts())
    await expect(missing).rejects.toThrow(/query/)
  })

  it('passes the parsed value with defaults to execute', async () => {
    const invoke = invoker()
    await expect(invoke.execute({ name: 'web_search', params: { query: 'rust' } }, opts())).resolves.toEqual({ query: 'rust', limit: 10 })
  })

  it("delegates toModelOutput to the inner tool with toolCallId::name, else JSON", async () => {
    const { registry } = quietRegistry()
    let seen
    registry.register(entry('shaped', {
      tool: tool({
        inputSchema: jsonSchema({ type: 'object', properties: { n: { type: 'integer', default: 3 } } }),
        execute: async ({ n }) => n * 2,
        toModelOutput: (options) => {
          seen = options
          return { type: 'text', value: `result ${options.output}` }
        },
      }),
    }))
    registry.register(entry('plain', { tool: mcpTool({ type: 'object' }) }))
    const invoke = invoker(registry, ['shaped', 'plain'])
    const output = await invoke.execute({ name: 'shaped', params: {} }, opts('call-9'))
    const shaped = await invoke.toModelOutput({ toolCallId: 'call-9', input: { name: 'shaped', params: {} }, output })
    expect(shaped).toEqual({ type: 'text', value: 'result 6' })
    expect(seen).toMatchObject({ toolCallId: 'call-9::shaped', input: { n: 3 }, output: 6 })
    const plain = await invoke.toModelOutput({ toolCallId: 'c', input: { name: 'plain' }, output: { a: 1 } })
    expect(plain).toEqual({ type: 'json', value: { a: 1 } })
    const disallowed = await invoke.toModelOutput({ toolCallId: 'c', input: { name: 'ghost' }, output: 'x' })
    expect(disallowed).toEqual({ type: 'json', value: 'x' })
    expect(invoke.inputExamples.length).toBeGreaterThan(0)
  })
})

describe('schemaToJSDoc', () => {
  it('renders types, required/optional, enums, defaults, nested objects and array items', () => {
    const doc = schemaToJSDoc('create_event', 'Create a calendar event', {
      type: 'object',
      properties: {
        title: { type: 'string', description: 'Event title\nsecond line is dropped' },
        mode: { type: 'string', enum: ['a', 'b'] },
        limit: { type: 'integer', default: 10 },
        where: { type: 'object', properties: { room: { type: 'string' } }, required: ['room'] },
        attendees: { type: 'array', items: { type: 'object', properties: { email: { type: 'string' } } } },
      },
      required: ['title', 'mode'],
    })
    expect(doc).toContain('Create a calendar event')
    expect(doc).toContain('@param {string} params.title - Event title (required)')
    expect(doc).not.toContain('second line')
    expect(doc).toContain('@param {"a"|"b"} params.mode')
    expect(doc).toMatch(/@param \{number\} \[params\.limit=10\]/)
    expect(doc).toContain('params.where.room')
    expect(doc).toContain('params.attendees[].email')
    expect(doc).toContain('function create_event(params) {}')
    expect(() => schemaToJSDoc('x', 'y', null)).toThrow(TypeError)
  })
})
