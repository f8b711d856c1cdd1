// The per-request path reuses what does not change between requests (the decision, the deferred
// section, the meta-tools' snapshot). These tests check that reuse never shows a request a
// catalog it did not capture, whatever registers, evicts or syncs in between.
import { createRequire } from 'node:module'
import { describe, it, expect } from 'vitest'
import { tool, jsonSchema } from 'ai'
import { applyDeferExposition, MetaToolName } from '../index.js'
import { quietRegistry, entry, heavyEntry } from './helpers.mjs'

const native = createRequire(import.meta.url)('../binding.js')
const call = { toolCallId: 'outer', messages: [] }

/** Counts how many definitions are tokenized while `fn` runs. */
async function tokenized(fn) {
  const original = native.countTokensBatch
  let count = 0
  native.countTokensBatch = (texts, encoding) => {
    count += texts.length
    return original(texts, encoding)
  }
  try {
    await fn()
  } finally {
    native.countTokensBatch = original
  }
  return count
}

function echoTool(label) {
  return tool({
    description: `echo ${label}`,
    inputSchema: jsonSchema({ type: 'object', properties: { q: { type: 'string' } } }),
    execute: async ({ q }) => ({ from: label, q }),
  })
}

function setup(count = 6) {
  const { registry, warnings } = quietRegistry()
  for (let i = 0; i < count; i++) registry.register(heavyEntry(`heavy_${i}`, 8000))
  registry.register(entry('echo', { tool: echoTool('v1') }))
  const toolsOf = () => Object.fromEntries(registry.selectActive({ mcpToolIds: new Set() }).map((e) => [e.name, e.tool]))
  return { registry, warnings, toolsOf }
}

async function invoke(exposed, name, params) {
  await exposed[MetaToolName.Inspect].execute({ name }, call)
  return exposed[MetaToolName.Invoke].execute({ name, params }, call)
}

describe('per-request plans', () => {
  it('a repeated request over unchanged tools tokenizes nothing and decides the same', async () => {
    const { registry, toolsOf } = setup()
    const first = await applyDeferExposition(toolsOf(), registry, 32_000)
    let second
    expect(await tokenized(async () => (second = await applyDeferExposition(toolsOf(), registry, 32_000)))).toBe(0)
    expect(second.decision.reason).toBe(first.decision.reason)
    expect([...second.decision.deferredNames]).toEqual([...first.decision.deferredNames])
    expect(second.systemPrompt).toBe(first.systemPrompt)
    expect(second.deferredEntries).toEqual(first.deferredEntries)
    // Each request gets its own meta-tools (their inspected set is per request).
    expect(second.tools[MetaToolName.Invoke]).not.toBe(first.tools[MetaToolName.Invoke])
  })

  it("one request's state never leaks into the next: decision sets, entry lists, inspected names", async () => {
    const { registry, toolsOf } = setup()
    const first = await applyDeferExposition(toolsOf(), registry, 32_000)
    first.decision.deferredNames.clear()
    first.deferredEntries.length = 0
    await first.tools[MetaToolName.Inspect].execute({ name: 'echo' }, call)
    const second = await applyDeferExposition(toolsOf(), registry, 32_000)
    expect(second.decision.deferredNames.has('echo')).toBe(true)
    expect(second.deferredEntries.map((e) => e.name)).toContain('echo')
    // Not inspected in this request: the first call returns the signature instead of running.
    await expect(second.tools[MetaToolName.Invoke].execute({ name: 'echo', params: { q: 'x' } }, call)).rejects.toMatchObject({ code: 'TOOLREG_NOT_INSPECTED' })
  })

  it('a re-registered tool is what the next request runs; the earlier request keeps its snapshot', async () => {
    const { registry, toolsOf } = setup()
    const before = await applyDeferExposition(toolsOf(), registry, 32_000)
    registry.register(entry('echo', { tool: echoTool('v2') }))
    const after = await applyDeferExposition(toolsOf(), registry, 32_000)
    expect(await invoke(after.tools, 'echo', { q: 'a' })).toEqual({ from: 'v2', q: 'a' })
    expect(await invoke(before.tools, 'echo', { q: 'b' })).toEqual({ from: 'v1', q: 'b' })
  })

  it('an entry that changes its defer setting changes the next decision', async () => {
    const { registry, toolsOf } = setup()
    const before = await applyDeferExposition(toolsOf(), registry, 32_000)
    expect(before.decision.deferredNames.has('echo')).toBe(true)
    registry.register(entry('echo', { tool: echoTool('v1'), defer: 'never' }))
    const after = await applyDeferExposition(toolsOf(), registry, 32_000)
    expect(after.decision.deferredNames.has('echo')).toBe(false)
    expect(after.tools.echo).toBeDefined()
  })

  it('an evicted entry leaves the next request; the same names with an eviction in between are not reused', async () => {
    const { registry, toolsOf } = setup()
    const tools = toolsOf()
    await applyDeferExposition(tools, registry, 32_000)
    registry.deregister('echo')
    // The host still passes the same tool set (its list is a step behind): echo has no entry now.
    const after = await applyDeferExposition(tools, registry, 32_000)
    expect(after.tools.echo).toBe(tools.echo)
    expect(after.deferredEntries.map((e) => e.name)).not.toContain('echo')
    const found = await after.tools[MetaToolName.Search].execute({ query: 'echo' }, call)
    expect(found.matchedNamespaces.flatMap((g) => g.tools.map((t) => t.name))).not.toContain('echo')
  })

  it('registrations of other tools keep the plan (nothing tokenized again) and the plan stays right', async () => {
    const { registry, toolsOf } = setup()
    const tools = toolsOf()
    const first = await applyDeferExposition(tools, registry, 32_000)
    registry.register(entry('unrelated'))
    registry.deregister('unrelated')
    let second
    expect(await tokenized(async () => (second = await applyDeferExposition(tools, registry, 32_000)))).toBe(0)
    expect([...second.decision.deferredNames]).toEqual([...first.decision.deferredNames])
  })

  it('different windows and options are decided separately', async () => {
    const { registry, toolsOf } = setup()
    const small = await applyDeferExposition(toolsOf(), registry, 32_000)
    const large = await applyDeferExposition(toolsOf(), registry, 1_000_000)
    const noTools = await applyDeferExposition(toolsOf(), registry, 32_000, { model: { functionCalling: false } })
    expect(small.decision.reasonCode).toBe('auto_pool_deferred')
    expect(large.decision.deferredNames.size).toBe(0)
    expect(noTools.decision.deferredNames.size).toBe(0)
    const again = await applyDeferExposition(toolsOf(), registry, 32_000)
    expect(again.decision.reasonCode).toBe('auto_pool_deferred')
  })

  it('extraAllowedNames is part of the plan: a request without it cannot reach the extra tool', async () => {
    const { registry, toolsOf } = setup()
    registry.register(entry('extra', { tool: echoTool('extra'), applies: () => false }))
    const widened = await applyDeferExposition(toolsOf(), registry, 32_000, { extraAllowedNames: ['extra'] })
    expect(await invoke(widened.tools, 'extra', { q: 'x' })).toEqual({ from: 'extra', q: 'x' })
    const plain = await applyDeferExposition(toolsOf(), registry, 32_000)
    await expect(plain.tools[MetaToolName.Inspect].execute({ name: 'extra' }, call)).rejects.toMatchObject({ code: 'TOOLREG_NOT_ALLOWED' })
  })

  it('a sync racing a request: the request decided over one catalog, the next one over the new catalog', async () => {
    const { registry, toolsOf } = setup()
    const tools = toolsOf()
    // Start a request, and while it awaits its token counts, replace and evict entries.
    const pending = applyDeferExposition(tools, registry, 32_000)
    registry.register(entry('echo', { tool: echoTool('v2') }))
    registry.deregister('heavy_0')
    const racing = await pending
    expect(await invoke(racing.tools, 'echo', { q: 'r' })).toEqual({ from: 'v1', q: 'r' })
    expect(racing.deferredEntries.map((e) => e.name)).toContain('heavy_0')
    const next = await applyDeferExposition(toolsOf(), registry, 32_000)
    expect(await invoke(next.tools, 'echo', { q: 'n' })).toEqual({ from: 'v2', q: 'n' })
    expect(next.deferredEntries.map((e) => e.name)).not.toContain('heavy_0')
  })

  it('an entry re-registered while a plan is being built (same tool object) is seen by the next request', async () => {
    const { registry, toolsOf } = setup()
    const tools = toolsOf()
    const pending = applyDeferExposition(tools, registry, 32_000)
    // Same tool object, new record: the ToolSet alone cannot tell the catalog changed.
    registry.register(entry('echo', { tool: tools.echo, defer: 'never' }))
    expect((await pending).decision.deferredNames.has('echo')).toBe(true)
    const next = await applyDeferExposition(tools, registry, 32_000)
    expect(next.decision.deferredNames.has('echo')).toBe(false)
    expect(next.tools.echo.execute).toBe(tools.echo.execute)
  })

  it('a request carrying its own tool under a registered name runs that tool, plan reuse or not', async () => {
    const { registry, toolsOf } = setup()
    const plain = await applyDeferExposition(toolsOf(), registry, 32_000)
    expect(await invoke(plain.tools, 'echo', { q: 'a' })).toEqual({ from: 'v1', q: 'a' })
    for (const label of ['built-1', 'built-2']) {
      const tools = { ...toolsOf(), echo: echoTool(label) }
      const scoped = await applyDeferExposition(tools, registry, 32_000)
      expect(await invoke(scoped.tools, 'echo', { q: 'b' })).toEqual({ from: label, q: 'b' })
    }
    const again = await applyDeferExposition(toolsOf(), registry, 32_000)
    expect(await invoke(again.tools, 'echo', { q: 'c' })).toEqual({ from: 'v1', q: 'c' })
  })

  it('entries handed in as spread copies behave exactly like literals', async () => {
    const { registry } = quietRegistry()
    const literal = quietRegistry().registry
    for (let i = 0; i < 6; i++) {
      const e = heavyEntry(`heavy_${i}`, 8000)
      literal.register(e)
      registry.register({ ...e, applies: () => true })
    }
    const tools = Object.fromEntries(registry.selectActive({ mcpToolIds: new Set() }).map((e) => [e.name, e.tool]))
    const a = await applyDeferExposition(tools, registry, 32_000)
    const b = await applyDeferExposition(tools, literal, 32_000)
    expect(a.decision.reason).toBe(b.decision.reason)
    expect(a.systemPrompt).toBe(b.systemPrompt)
  })
})
