// tool_exec in the defer decision: with `exec`, tool_exec's definition (which lists the callable
// tools) is part of the meta-tools' overhead, measured on the definition the provider receives.
import { describe, it, expect } from 'vitest'
import { applyDeferExposition, shouldDefer, countTokens, createToolExecTool, MetaToolName } from '../index.js'
import { quietRegistry, entry, heavyEntry } from './helpers.mjs'

const definitionTokens = (name, t) =>
  countTokens(JSON.stringify({ name, description: t.description, input_schema: t.inputSchema.jsonSchema }))

function setup(entries) {
  const { registry } = quietRegistry()
  const tools = {}
  for (const e of entries) {
    registry.register(e)
    tools[e.name] = e.tool
  }
  return { registry, tools }
}

const pool = (chars) => [...Array.from({ length: 5 }, (_, i) => heavyEntry(`heavy_${i}`, chars)), entry('pinned', { defer: 'never' })]

describe('tool_exec in the defer overhead', () => {
  it('shouldDefer adds the exact tokens of the tool_exec definition over the same entries', async () => {
    const entries = pool(8000)
    const { registry } = setup(entries)
    const plain = await shouldDefer(entries, 32_000)
    const withExec = await shouldDefer(entries, 32_000, { exec: { limits: { timeoutMs: 5000 } } })
    const exec = createToolExecTool(registry, { allowedNames: entries.map((e) => e.name), limits: { timeoutMs: 5000 } })
    expect(exec.description).toContain('tools.pinned(')
    expect(withExec.overheadTokens - plain.overheadTokens).toBe(definitionTokens(MetaToolName.Exec, exec))
    expect(withExec.savedTokens).toBe(plain.savedTokens - definitionTokens(MetaToolName.Exec, exec))
    // The tool budget bounds the description, and so the overhead.
    const small = await shouldDefer(entries, 32_000, { exec: { signatureTokenBudget: 20 } })
    expect(small.overheadTokens).toBeLessThan(withExec.overheadTokens)
  })

  it('applyDeferExposition counts the tool_exec it exposes, extra allowed names included', async () => {
    const entries = pool(8000)
    const extra = entry('extra_tool', { defer: 'never' })
    const { registry, tools } = setup([...entries, extra])
    delete tools.extra_tool
    const plain = await applyDeferExposition(tools, registry, 32_000, { extraAllowedNames: ['extra_tool'] })
    const result = await applyDeferExposition(tools, registry, 32_000, { exec: true, extraAllowedNames: ['extra_tool'] })
    const exposed = result.tools[MetaToolName.Exec]
    expect(exposed.description).toContain('tools.extra_tool(')
    expect(result.decision.reasonCode).toBe('auto_pool_deferred')
    expect(result.decision.overheadTokens - plain.decision.overheadTokens).toBe(definitionTokens(MetaToolName.Exec, exposed))
    // An explicit overhead still overrides the measure.
    const fixed = await applyDeferExposition(tools, registry, 32_000, { exec: true, metaToolsOverheadTokens: 7 })
    expect(fixed.decision.overheadTokens).toBe(7)
  })

  it('keeps a pool inline when its saving beats the meta-tools alone but not with tool_exec', async () => {
    // Pools of growing size until one's cost lands between the two overheads.
    let found
    for (let chars = 100; chars <= 3000 && !found; chars += 25) {
      const entries = pool(chars)
      const plain = await shouldDefer(entries, 1000)
      const withExec = await shouldDefer(entries, 1000, { exec: true })
      if (plain.reasonCode === 'auto_pool_deferred' && withExec.autoTokens <= withExec.overheadTokens) found = { entries, plain, withExec }
    }
    expect(found).toBeDefined()
    expect(found.withExec.reasonCode).toBe('saving_below_overhead')
    expect(found.withExec.deferredNames.size).toBe(0)
    // The same tools through applyDeferExposition, one request after the other: the plan
    // cached for the request without exec is not reused for the one with it.
    const { registry, tools } = setup(found.entries)
    const deferred = await applyDeferExposition(tools, registry, 1000)
    expect(deferred.deferredEntries).toHaveLength(5)
    const inline = await applyDeferExposition(tools, registry, 1000, { exec: true })
    expect(inline.deferredEntries).toEqual([])
    expect(inline.decision.reasonCode).toBe('saving_below_overhead')
    expect(Object.keys(inline.tools).sort()).toEqual([...Object.keys(tools), MetaToolName.Exec].sort())
  })
})
