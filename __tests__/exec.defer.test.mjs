// tool_exec and the defer decision: with `exec`, tool_exec is exposed whether or not the pool is
// deferred, with the same definition, so it is not part of the overhead deferring must beat.
import { describe, it, expect } from 'vitest'
import { applyDeferExposition, MetaToolName } from '../index.js'
import { quietRegistry, entry, heavyEntry } from './helpers.mjs'

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

describe('tool_exec and the defer decision', () => {
  it('decides the same with and without exec, and exposes the same tool_exec either way', async () => {
    const results = {}
    for (const [label, window] of [['deferred', 1000], ['inline', 10_000_000]]) {
      const { registry, tools } = setup(pool(2000))
      const plain = await applyDeferExposition(tools, registry, window)
      const withExec = await applyDeferExposition(tools, registry, window, { exec: true })
      expect(withExec.decision).toEqual(plain.decision)
      expect(withExec.deferredEntries.map((e) => e.name)).toEqual(plain.deferredEntries.map((e) => e.name))
      results[label] = withExec
    }
    expect(results.deferred.decision.reasonCode).toBe('auto_pool_deferred')
    expect(results.inline.deferredEntries).toEqual([])
    const { deferred, inline } = results
    expect(deferred.tools[MetaToolName.Exec].description).toBe(inline.tools[MetaToolName.Exec].description)
    expect(inline.tools[MetaToolName.Exec].description).toContain('tools.heavy_0(')
  })
})
