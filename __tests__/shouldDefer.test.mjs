import { describe, it, expect } from 'vitest'
import {
  shouldDefer,
  countTokens,
  buildDeferredToolsSection,
  MIN_AUTO_DEFER_COUNT,
  META_TOOLS_OVERHEAD_TOKENS,
  DEFER_THRESHOLD_PCT,
  FALLBACK_CONTEXT_WINDOW,
  DEFERRED_OVERHEAD_BUDGET_TOKENS,
} from '../index.js'
import { metaToolsOverhead } from '../js/defer.js'
import { entry, heavyEntry, simpleTool } from './helpers.mjs'

const fiveHeavy = () => Array.from({ length: 5 }, (_, i) => heavyEntry(`heavy_${i}`, 8000))

describe('shouldDefer constants', () => {
  it('exports the reference thresholds', () => {
    expect(DEFER_THRESHOLD_PCT).toBe(10)
    expect(FALLBACK_CONTEXT_WINDOW).toBe(32_000)
    expect(MIN_AUTO_DEFER_COUNT).toBe(5)
  })

  it('measures the meta-tools overhead instead of estimating it', async () => {
    const section = buildDeferredToolsSection([{ name: 't', namespace: 'mcp:server' }])
    expect(META_TOOLS_OVERHEAD_TOKENS).toBe(metaToolsOverhead([{ name: 't', namespace: 'mcp:server' }]))
    expect(META_TOOLS_OVERHEAD_TOKENS).toBeGreaterThan(countTokens(section))
    const { overheadTokens } = await shouldDefer(fiveHeavy(), 32_000)
    expect(overheadTokens).toBe(META_TOOLS_OVERHEAD_TOKENS - countTokens(section) + countTokens(buildDeferredToolsSection(fiveHeavy())))
  })
})

describe('shouldDefer', () => {
  it('defers nothing when nothing is deferrable', async () => {
    const result = await shouldDefer([entry('a', { defer: 'never' }), heavyEntry('b', 50_000, { defer: 'never' })], 32_000)
    expect(result.deferredNames.size).toBe(0)
    expect(result.reasonCode).toBe('nothing_deferrable')
    expect(result.savedTokens).toBe(0)
  })

  it('defers always entries regardless of cost', async () => {
    const result = await shouldDefer([entry('tiny', { defer: 'always' }), entry('inline', { defer: 'never' })], 1_000_000)
    expect([...result.deferredNames]).toEqual(['tiny'])
    expect(result.reasonCode).toBe('always_only')
  })

  it('keeps a tiny auto entry inline (threshold 3200 at 32k and for the fallback window)', async () => {
    for (const window of [32_000, undefined, 0, -1]) {
      const result = await shouldDefer([entry('tiny')], window)
      expect(result.threshold).toBe(3200)
      expect(result.deferredNames.size).toBe(0)
      expect(result.reasonCode).toBe('below_threshold')
    }
  })

  it('keeps one huge auto entry inline: the pool is smaller than MIN_AUTO_DEFER_COUNT', async () => {
    const result = await shouldDefer([heavyEntry('huge', 60_000)], 32_000)
    expect(result.autoTokens).toBeGreaterThan(result.threshold)
    expect(result.deferredNames.size).toBe(0)
    expect(result.reasonCode).toBe('too_few_auto_tools')
  })

  it('defers the whole pool of five 8000-char tools', async () => {
    const pool = fiveHeavy()
    const result = await shouldDefer(pool, 32_000)
    expect(result.autoTokens).toBeGreaterThan(8_000)
    expect([...result.deferredNames].sort()).toEqual(pool.map((e) => e.name))
    expect(result.reasonCode).toBe('auto_pool_deferred')
    expect(result.reason).toMatch(/^auto_pool_deferred: /)
    expect(result.savedTokens).toBe(result.autoTokens - result.overheadTokens)
  })

  it('handles mixed policies', async () => {
    const entries = [...fiveHeavy(), entry('pinned', { defer: 'never' }), entry('hidden', { defer: 'always' })]
    const result = await shouldDefer(entries, 32_000)
    expect(result.deferredNames.has('pinned')).toBe(false)
    expect(result.deferredNames.has('hidden')).toBe(true)
    expect(result.deferredNames.size).toBe(6)
  })

  it('small window: a pool over the threshold but under the overhead stays inline', async () => {
    // 4k window → threshold 400. Five tools of ~100 tokens each clear it but not the overhead.
    const pool = Array.from({ length: 5 }, (_, i) => heavyEntry(`small_${i}`, 150))
    const result = await shouldDefer(pool, 4_000)
    expect(result.threshold).toBe(400)
    expect(result.autoTokens).toBeGreaterThan(400)
    expect(result.autoTokens).toBeLessThanOrEqual(result.overheadTokens)
    expect(result.deferredNames.size).toBe(0)
    expect(result.reasonCode).toBe('saving_below_overhead')
  })

  it('never defers approval-gated tools', async () => {
    const gated = fiveHeavy().map((e, i) => ({
      ...e,
      tool: { ...e.tool, needsApproval: i % 2 ? true : async () => true },
    }))
    const result = await shouldDefer([...gated, entry('gated_always', { defer: 'always', tool: simpleTool('x', { needsApproval: true }) })], 32_000)
    expect(result.deferredNames.size).toBe(0)
  })

  it('model-capability gate: no function calling and no prompt tool use means no defer path', async () => {
    const entries = [...fiveHeavy(), entry('hidden', { defer: 'always' })]
    const blocked = await shouldDefer(entries, 32_000, { model: { functionCalling: false } })
    expect(blocked.deferredNames.size).toBe(0)
    expect(blocked.reasonCode).toBe('model_cannot_use_tools')
    const prompted = await shouldDefer(entries, 32_000, { model: { functionCalling: false, promptToolUse: true } })
    expect(prompted.deferredNames.size).toBe(6)
    await expect(shouldDefer(entries, 32_000, { model: { functionCalling: 'yes' } })).rejects.toThrow(/invalid opts\.model/)
  })

  it('takes per-call overrides of every gate', async () => {
    const pool = [heavyEntry('a', 4000), heavyEntry('b', 4000)]
    const result = await shouldDefer(pool, undefined, { fallbackContextWindow: 10_000, thresholdPct: 5, minAutoDeferCount: 2, metaToolsOverheadTokens: 10 })
    expect(result.threshold).toBe(500)
    expect(result.overheadTokens).toBe(10)
    expect(result.deferredNames.size).toBe(2)
  })

  it('prices with the requested encoding', async () => {
    const text = '北京天气怎么样？请查询今天的天气预报。'.repeat(20)
    const pool = [entry('cjk', { tool: simpleTool(text) })]
    const o200k = await shouldDefer(pool, 32_000)
    const cl100k = await shouldDefer(pool, 32_000, { encoding: 'cl100k_base' })
    expect(o200k.autoTokens).not.toBe(cl100k.autoTokens)
  })
})

describe('buildDeferredToolsSection', () => {
  it('lists usage and one count per namespace label, sorted, without tool names', () => {
    const section = buildDeferredToolsSection([
      entry('mcp__g__a', { namespace: 'mcp:s1', namespaceLabel: 'mcp:gmail' }),
      entry('mcp__g__b', { namespace: 'mcp:s1', namespaceLabel: 'mcp:gmail' }),
      entry('web_fetch', { namespace: 'web' }),
    ])
    expect(section.startsWith('<deferred-tools>')).toBe(true)
    expect(section.endsWith('</deferred-tools>')).toBe(true)
    expect(section).toContain('NOT web search')
    expect(section).toContain('<namespace name="mcp:gmail" count="2"/>\n  <namespace name="web" count="1"/>')
    expect(section).not.toContain('mcp__g__a')
  })
})

describe('the deferred-tools section at catalog scale', () => {
  /** 3,470 tools in 388 namespaces of uneven sizes, the shape of a large MCP catalog. */
  function bigCatalog() {
    const sizes = Array.from({ length: 388 }, (_, n) => 1 + Math.floor(400 / (n + 1)) + (n % 5))
    sizes[0] -= sizes.reduce((sum, size) => sum + size, 0) - 3470
    return sizes.flatMap((size, n) => Array.from({ length: size }, (_, i) => ({ name: `t${n}_${i}`, namespace: `mcp:server-${String(n).padStart(3, '0')}` })))
  }
  const namespacesIn = (section) => [...section.matchAll(/<namespace name="([^"]+)" count="(\d+)"\/>/g)].map((m) => [m[1], Number(m[2])])

  it('stays within the overhead budget with the meta-tools, naming the largest namespaces and counting the rest', () => {
    const entries = bigCatalog()
    expect([entries.length, new Set(entries.map((e) => e.namespace)).size]).toEqual([3470, 388])
    const labels = new Set(entries.map((e) => e.namespace))
    const section = buildDeferredToolsSection(entries)
    expect(metaToolsOverhead(entries)).toBeLessThanOrEqual(DEFERRED_OVERHEAD_BUDGET_TOKENS)
    // Everything listed costs several times the budget: the cut is real.
    expect(metaToolsOverhead(entries, 'o200k_base', { overheadBudgetTokens: 1e9 })).toBeGreaterThan(3 * DEFERRED_OVERHEAD_BUDGET_TOKENS)
    const listed = namespacesIn(section)
    const more = /<more namespaces="(\d+)" tools="(\d+)">/.exec(section)
    expect(Number(more[1])).toBe(labels.size - listed.length)
    expect(Number(more[2]) + listed.reduce((sum, [, count]) => sum + count, 0)).toBe(entries.length)
    // The largest namespaces are the ones listed, shown by name.
    const smallestListed = Math.min(...listed.map(([, count]) => count))
    const counts = new Map()
    for (const e of entries) counts.set(e.namespace, (counts.get(e.namespace) ?? 0) + 1)
    const unlisted = [...counts].filter(([label]) => !listed.some(([l]) => l === label))
    expect(Math.max(...unlisted.map(([, count]) => count))).toBeLessThanOrEqual(smallestListed)
    expect(listed.map(([label]) => label)).toEqual(listed.map(([label]) => label).sort())
    // The same catalog in another order gives the very same text (prompt caches rely on it).
    expect(buildDeferredToolsSection([...entries].reverse())).toBe(section)
  })

  it('lists every namespace while they fit, and takes a budget of its own', () => {
    const entries = bigCatalog().filter((e) => e.name.endsWith('_0')).slice(0, 40)
    expect(buildDeferredToolsSection(entries)).not.toContain('<more ')
    const tight = buildDeferredToolsSection(entries, { overheadBudgetTokens: META_TOOLS_OVERHEAD_TOKENS + 20 })
    expect(tight).toContain('<more ')
    expect(() => buildDeferredToolsSection(entries, { overheadBudgetTokens: 0 })).toThrow(/overheadBudgetTokens/)
  })

  it('makes the defer decision with the budgeted overhead', async () => {
    const entries = bigCatalog().map((e) => entry(e.name, { namespace: e.namespace }))
    const decision = await shouldDefer(entries, 32_000)
    expect(decision.overheadTokens).toBeLessThanOrEqual(DEFERRED_OVERHEAD_BUDGET_TOKENS)
    expect(decision.deferredNames.size).toBe(entries.length)
  })
})
