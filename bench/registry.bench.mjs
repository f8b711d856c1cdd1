// Per-request work over 1,000 registered real MCP tools (Toucan): selectActive + ToolSet +
// shouldDefer + applyDeferExposition, warm (token costs cached), from JS through the addon.
// Two ways a host hands in the very same entries — the object literal itself, and a spread copy
// (`register({ ...entry, applies })`, a common host pattern) — with 500 and 1,000 active tools,
// all in one process, rows interleaved so machine noise hits every row alike. A third row has
// the registry build the ToolSet itself (`selectActiveTools`) from the spread copies.
// Run: npm run build && node bench/registry.bench.mjs
import { performance } from 'node:perf_hooks'
import { createRequire } from 'node:module'
import { loadCatalog, requireData, wireName, firstLine, median, percentile } from './catalog.mjs'

const require = createRequire(import.meta.url)
const { ToolRegistry, applyDeferExposition, shouldDefer } = require('../index.js')
const { tool, jsonSchema } = require('ai')

requireData('registry.bench')
const COUNT = Number(process.env.TOOLS ?? 1000)
const ITERATIONS = Number(process.env.ITERATIONS ?? 2000)
const catalog = loadCatalog({ sources: ['toucan'] }).slice(0, COUNT)

/** One registry per (pattern, active share); `applies` selects every `activeEvery`-th tool. */
function buildRegistry(pattern, activeEvery) {
  const registry = new ToolRegistry()
  const selectedIds = new Set()
  const start = performance.now()
  catalog.forEach((t, i) => {
    const name = wireName(t, i)
    if (i % activeEvery === 0) selectedIds.add(name)
    const applies = (scope) => scope.mcpToolIds.has(name)
    const namespace = `mcp:${t.server}`
    const namespaceLabel = `mcp:${t.serverName}`
    const description = firstLine(t.description)
    const made = tool({ description: t.description, inputSchema: jsonSchema(t.inputSchema), execute: async () => null })
    if (pattern === 'literal') {
      registry.register({ name, namespace, namespaceLabel, description, defer: 'auto', tool: made, applies })
    } else {
      const entry = { name, namespace, namespaceLabel, description, defer: 'auto', tool: made }
      registry.register({ ...entry, applies })
    }
  })
  return { registry, scope: { mcpToolIds: selectedIds }, registerMs: performance.now() - start }
}

/** One request, timed by part: the registry's selectActive, the host's ToolSet loop, the exposition. */
async function request(c) {
  const t0 = performance.now()
  let tools
  let t1
  if (c.pattern === 'selectActiveTools') {
    tools = c.registry.selectActiveTools(c.scope)
    t1 = performance.now()
  } else {
    const active = c.registry.selectActive(c.scope)
    t1 = performance.now()
    tools = {}
    for (const entry of active) tools[entry.name] = entry.tool
  }
  const t2 = performance.now()
  const result = await applyDeferExposition(tools, c.registry, 128_000)
  const t3 = performance.now()
  c.parts?.select.push(t1 - t0)
  c.parts?.toolSet.push(t2 - t1)
  c.parts?.expose.push(t3 - t2)
  c.times?.push(t3 - t0)
  return result
}

const cases = []
for (const activeEvery of [2, 1]) {
  for (const pattern of ['literal', 'spread', 'selectActiveTools']) {
    const built = buildRegistry(pattern, activeEvery)
    const t0 = performance.now()
    const cold = await request(built)
    cases.push({ ...built, pattern, active: built.registry.selectActive(built.scope).length, coldMs: performance.now() - t0, decision: cold.decision })
  }
}
for (const c of cases) for (let i = 0; i < 200; i++) await request(c)
for (const c of cases) {
  c.times = []
  c.parts = { select: [], toolSet: [], expose: [] }
}
for (let i = 0; i < ITERATIONS; i++) for (const c of cases) await request(c)

const one = cases.find((c) => c.pattern === 'literal' && c.active === Math.max(...cases.map((k) => k.active)))
const activeEntries = one.registry.selectActive(one.scope)
const shouldDeferTimes = []
for (let i = 0; i < ITERATIONS; i++) {
  const t0 = performance.now()
  await shouldDefer(activeEntries, 128_000)
  shouldDeferTimes.push(performance.now() - t0)
}

console.log(`catalog: ${catalog.length} real Toucan MCP tools, registered in ${cases.map((c) => c.registerMs.toFixed(0)).join(' / ')} ms`)
console.log(`decision: ${one.decision?.reason}`)
console.log(`cold request (tokenizes every active definition once): ${cases.map((c) => c.coldMs.toFixed(0)).join(' / ')} ms`)
const fmt = (ms) => `${(ms * 1000).toFixed(0)} µs`
console.log('\n| host registers | active tools | p50 | p90 | p99 | p50 per active tool | selectActive p50 | host ToolSet loop p50 | applyDeferExposition p50 |')
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|')
for (const c of cases) {
  const p50 = median(c.times)
  const { select, toolSet, expose } = c.parts
  console.log(`| ${{ literal: 'the entry literal', spread: 'a spread copy', selectActiveTools: 'a spread copy; ToolSet from selectActiveTools' }[c.pattern]} | ${c.active} | ${fmt(p50)} | ${fmt(percentile(c.times, 0.9))} | ${fmt(percentile(c.times, 0.99))} | ${((p50 * 1000) / c.active).toFixed(2)} µs | ${fmt(median(select))} | ${fmt(median(toolSet))} | ${fmt(median(expose))} |`)
}
console.log(`\nshouldDefer alone over ${activeEntries.length} entries: p50 ${fmt(median(shouldDeferTimes))}, p90 ${fmt(percentile(shouldDeferTimes, 0.9))}`)
for (const active of new Set(cases.map((c) => c.active))) {
  const p50 = (pattern) => median(cases.find((c) => c.pattern === pattern && c.active === active).times)
  console.log(`at ${active} active, vs the entry literal: spread copy ${(p50('spread') / p50('literal')).toFixed(2)}×, spread copy with selectActiveTools ${(p50('selectActiveTools') / p50('literal')).toFixed(2)}×`)
}
