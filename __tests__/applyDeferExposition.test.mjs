import { describe, it, expect } from 'vitest'
import { applyDeferExposition, MetaToolName } from '../index.js'
import { quietRegistry, entry, heavyEntry, simpleTool, expectHandedOut } from './helpers.mjs'

function setup(entries) {
  const { registry } = quietRegistry()
  const tools = {}
  for (const e of entries) {
    registry.register(e)
    tools[e.name] = e.tool
  }
  return { registry, tools }
}

const heavyPool = () => Array.from({ length: 5 }, (_, i) => heavyEntry(`heavy_${i}`, 8000))

describe('applyDeferExposition', () => {
  it('hands out the same tools, each with the input check, when nothing is deferred', async () => {
    const { registry, tools } = setup([entry('a'), entry('b')])
    const result = await applyDeferExposition(tools, registry, 128_000)
    expect(Object.keys(result.tools)).toEqual(['a', 'b'])
    for (const name of ['a', 'b']) expectHandedOut(expect, result.tools[name], tools[name])
    expect(result.deferredEntries).toEqual([])
    expect(result.systemPrompt).toBeUndefined()
  })

  it('hands the same set out again while the tools and the registry are unchanged; tool_exec goes into a copy', async () => {
    const { registry, tools } = setup([entry('a'), entry('b')])
    const first = await applyDeferExposition(tools, registry, 128_000)
    expect((await applyDeferExposition(tools, registry, 128_000)).tools).toBe(first.tools)
    const withExec = await applyDeferExposition(tools, registry, 128_000, { exec: true })
    expect(withExec.tools[MetaToolName.Exec]).toBeDefined()
    expect(first.tools[MetaToolName.Exec]).toBeUndefined()
    // A registration since (even of another tool) makes a fresh set.
    registry.register(entry('c'))
    const after = await applyDeferExposition(tools, registry, 128_000)
    expect(after.tools).not.toBe(first.tools)
    expectHandedOut(expect, after.tools.a, tools.a)
    // A tool the host swapped under the same name is handed out, not the old one.
    const swapped = { ...tools.a, description: 'swapped' }
    tools.a = swapped
    expect((await applyDeferExposition(tools, registry, 128_000)).tools.a.description).toBe('swapped')
  })

  it('passes undefined and {} through', async () => {
    const { registry } = quietRegistry()
    expect((await applyDeferExposition(undefined, registry, 1000)).tools).toBeUndefined()
    const empty = {}
    const result = await applyDeferExposition(empty, registry, 1000)
    expect(result.tools).toBe(empty)
    expect(result.deferredEntries).toEqual([])
  })

  it('leaves tools without a registry entry inline', async () => {
    const { registry, tools } = setup([entry('hidden', { defer: 'always' })])
    const unregistered = simpleTool('not in the registry')
    const result = await applyDeferExposition({ ...tools, stray: unregistered }, registry, 1000)
    expect(result.tools.stray).toBe(unregistered)
    expect(result.tools.hidden).toBeUndefined()
  })

  it('strips always entries and injects the three meta-tools', async () => {
    const { registry, tools } = setup([entry('hidden', { defer: 'always' }), entry('inline', { defer: 'never' })])
    const result = await applyDeferExposition(tools, registry, 1000)
    expect(Object.keys(result.tools).sort()).toEqual(['inline', MetaToolName.Inspect, MetaToolName.Invoke, MetaToolName.Search].sort())
    expect(result.deferredEntries.map((e) => e.name)).toEqual(['hidden'])
    expect(result.systemPrompt).toContain('<namespace name="web" count="1"/>')
    expect(result.tools[MetaToolName.Exec]).toBeUndefined()
  })

  it('strips a heavy auto pool', async () => {
    const pool = heavyPool()
    const { registry, tools } = setup([...pool, entry('pinned', { defer: 'never' })])
    const result = await applyDeferExposition(tools, registry, 32_000)
    for (const e of pool) expect(result.tools[e.name]).toBeUndefined()
    expectHandedOut(expect, result.tools.pinned, tools.pinned)
    expect(result.deferredEntries).toHaveLength(5)
    expect(result.decision.reasonCode).toBe('auto_pool_deferred')
  })

  it('keeps one fat auto entry inline with no meta-tools', async () => {
    const { registry, tools } = setup([heavyEntry('fat', 80_000)])
    const result = await applyDeferExposition(tools, registry, 32_000)
    expectHandedOut(expect, result.tools.fat, tools.fat)
    expect(result.tools[MetaToolName.Search]).toBeUndefined()
  })

  it('never defers approval-gated tools, and adds no meta-tools when all deferrable tools are gated', async () => {
    const gated = heavyPool().map((e) => ({ ...e, tool: simpleTool(e.tool.description, { needsApproval: true }) }))
    const { registry, tools } = setup(gated)
    const result = await applyDeferExposition(tools, registry, 32_000)
    expect(Object.keys(result.tools)).toEqual(Object.keys(tools))
    for (const name of Object.keys(tools)) expectHandedOut(expect, result.tools[name], tools[name])
    const mixed = setup([...heavyPool(), entry('danger', { defer: 'always', tool: simpleTool('x', { needsApproval: async () => true }) })])
    const mixedResult = await applyDeferExposition(mixed.tools, mixed.registry, 32_000)
    expectHandedOut(expect, mixedResult.tools.danger, mixed.tools.danger)
    expect(mixedResult.deferredEntries.map((e) => e.name)).not.toContain('danger')
  })

  it('injects tool_exec over every allowed tool when opts.exec is set', async () => {
    const { registry, tools } = setup([entry('hidden', { defer: 'always' }), entry('inline', { defer: 'never' })])
    const result = await applyDeferExposition(tools, registry, 1000, { exec: { limits: { timeoutMs: 5000 } } })
    const exec = result.tools[MetaToolName.Exec]
    expect(exec.description).toContain('tools.hidden(')
    expect(exec.description).toContain('tools.inline(')
    expect(exec.description).toContain('5 s,')
    const output = await exec.execute({ code: 'return typeof tools.hidden' }, { toolCallId: 'x', messages: [] })
    expect(output).toEqual({ result: 'function' })
    const inlineOnly = setup([entry('a'), entry('b')])
    const plain = await applyDeferExposition(inlineOnly.tools, inlineOnly.registry, 128_000, { exec: true })
    expect(Object.keys(plain.tools).sort()).toEqual(['a', 'b', MetaToolName.Exec])
    expect(inlineOnly.tools[MetaToolName.Exec]).toBeUndefined()
  })

  it('injects an inspect-gated tool_invoke; the injected tool_inspect unlocks it (one ledger)', async () => {
    const { registry, tools } = setup([entry('browser_open', { defer: 'always' })])
    const { tools: exposed } = await applyDeferExposition(tools, registry, 1000)
    const call = (params) => exposed.tool_invoke.execute({ name: 'browser_open', params }, { toolCallId: 'browser-1', messages: [] })
    await expect(call({ query: 'x' })).rejects.toThrow(/hasn't been inspected yet/)
    const fresh = await applyDeferExposition(tools, registry, 1000)
    await fresh.tools.tool_inspect.execute({ name: 'browser_open' }, { toolCallId: 'i-1', messages: [] })
    await expect(fresh.tools.tool_invoke.execute({ name: 'browser_open', params: { query: 'x' } }, { toolCallId: 'browser-1', messages: [] })).resolves.toEqual({ echoed: 'x' })
  })

  it('searches, inspects and invokes a deferred tool end to end with a nested toolCallId', async () => {
    let seenCallId
    const browser = entry('browser_open', {
      defer: 'always',
      description: 'Open a web page in the browser',
      tool: simpleTool('Open a page', {
        execute: async ({ query }, options) => {
          seenCallId = options.toolCallId
          return { opened: query }
        },
      }),
    })
    const { registry, tools } = setup([browser, entry('other_tool', { defer: 'always', description: 'Unrelated tool' })])
    const { tools: exposed } = await applyDeferExposition(tools, registry, 1000)
    const opts = { toolCallId: 'browser-1', messages: [] }
    const found = await exposed.tool_search.execute({ query: 'open web page' }, opts)
    expect(found.matchedNamespaces[0].tools[0].name).toBe('browser_open')
    await exposed.tool_inspect.execute({ name: 'browser_open' }, opts)
    const output = await exposed.tool_invoke.execute({ name: 'browser_open', params: { query: 'https://example.com' } }, opts)
    expect(output).toEqual({ opened: 'https://example.com' })
    expect(seenCallId).toBe('browser-1::browser_open')
  })

  it('extraAllowedNames widens the allow-list', async () => {
    const { registry, tools } = setup([entry('hidden', { defer: 'always' })])
    registry.register(entry('outside'))
    const narrow = await applyDeferExposition(tools, registry, 1000)
    await expect(narrow.tools.tool_inspect.execute({ name: 'outside' }, {})).rejects.toThrow(/not available in this request: outside/)
    const wide = await applyDeferExposition(tools, registry, 1000, { extraAllowedNames: ['outside'] })
    await expect(wide.tools.tool_inspect.execute({ name: 'outside' }, {})).resolves.toContain('function outside(params)')
  })

  it('warns when no context window is given (AI SDK models carry none) and uses the fallback', async () => {
    const { registry, tools } = setup([entry('a')])
    const missing = await applyDeferExposition(tools, registry, undefined)
    expect(missing.warnings).toEqual([expect.stringMatching(/no contextWindow given \(got undefined\); decided for the fallback of 32000 tokens/)])
    expect((await applyDeferExposition(tools, registry, 128_000)).warnings).toEqual([])
  })
})
