// Per-request work over 1,000 registered real MCP tools (Toucan): selectActive +
// shouldDefer + applyDeferExposition, warm (token costs cached), from JS through the addon.
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

const registry = new ToolRegistry()
const selectedIds = new Set()
let start = performance.now()
catalog.forEach((t, i) => {
  const name = wireName(t, i)
  if (i % 2 === 0) selectedIds.add(name)
  registry.register({
    name,
    namespace: `mcp:${t.server}`,
    namespaceLabel: `mcp:${t.serverName}`,
    description: firstLine(t.description),
    defer: 'auto',
    tool: tool({ description: t.description, inputSchema: jsonSchema(t.inputSchema), execute: async () => null }),
    // Half of the catalog is selected for this assistant, as the MCP sync would scope it.
    applies: (scope) => scope.mcpToolIds.has(name),
  })
})
const registerMs = performance.now() - start
const scope = { mcpToolIds: selectedIds }

async function request() {
  const active = registry.selectActive(scope)
  const tools = {}
  for (const entry of active) tools[entry.name] = entry.tool
  return applyDeferExposition(tools, registry, 128_000)
}

start = performance.now()
const cold = await request()
const coldMs = performance.now() - start
for (let i = 0; i < 200; i++) await request()

const times = []
for (let i = 0; i < ITERATIONS; i++) {
  const t0 = performance.now()
  await request()
  times.push(performance.now() - t0)
}
const shouldDeferTimes = []
const active = registry.selectActive(scope)
for (let i = 0; i < ITERATIONS; i++) {
  const t0 = performance.now()
  await shouldDefer(active, 128_000)
  shouldDeferTimes.push(performance.now() - t0)
}

console.log(`catalog: ${catalog.length} real Toucan MCP tools registered in ${registerMs.toFixed(1)} ms; ${active.length} active per request`)
console.log(`decision: ${cold.decision?.reason}`)
console.log(`cold request (tokenizes every active definition once): ${coldMs.toFixed(1)} ms`)
console.log('\n| per-request step (warm) | p50 | p90 | p99 |')
console.log('|---|---:|---:|---:|')
const fmt = (ms) => `${(ms * 1000).toFixed(0)} µs`
console.log(`| selectActive + shouldDefer + applyDeferExposition | ${fmt(median(times))} | ${fmt(percentile(times, 0.9))} | ${fmt(percentile(times, 0.99))} |`)
console.log(`| shouldDefer alone | ${fmt(median(shouldDeferTimes))} | ${fmt(percentile(shouldDeferTimes, 0.9))} | ${fmt(percentile(shouldDeferTimes, 0.99))} |`)
