// tool_search speed over the ~11k real MCP tools of Toucan + Docker, from JS through the addon,
// side by side with MiniSearch (defaults: fields name + description, `search(q)`, first 5) on
// the same catalog and the same natural-language queries (every StableToolBench test query).
//
// Run: npm run build && node --expose-gc bench/search.bench.mjs
// Env: MINI_QUERIES (MiniSearch query sample, default 300), CHURN (register/deregister
// rounds, default 2000), DESCRIPTIONS (`first-line`, the default: each tool's first description
// line; `400`: its whole description cut to 400 characters, as hosts register built-in tools;
// both engines index the same text).
import { performance } from 'node:perf_hooks'
import { createRequire } from 'node:module'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import MiniSearch from 'minisearch'
import { loadCatalog, requireData, wireName, firstLine, median, percentile } from './catalog.mjs'

const require = createRequire(import.meta.url)
const { ToolRegistry } = require('../index.js')
const { tool, jsonSchema } = require('ai')

const dir = requireData('search.bench')
const MINI_QUERIES = Number(process.env.MINI_QUERIES ?? 300)
const CHURN = Number(process.env.CHURN ?? 2000)
const DESCRIPTIONS = process.env.DESCRIPTIONS ?? 'first-line'
if (DESCRIPTIONS !== 'first-line' && DESCRIPTIONS !== '400') {
  throw new Error(`DESCRIPTIONS must be first-line or 400, not ${DESCRIPTIONS}`)
}
const describe = (text) =>
  DESCRIPTIONS === '400' ? String(text ?? '').trim().replace(/\s+/g, ' ').slice(0, 400) : firstLine(text)
const gc = globalThis.gc ?? (() => {})

// --- catalog and queries (host-side work, not timed) -----------------------------------------
const catalog = loadCatalog()
const entries = catalog.map((t, i) => ({
  name: wireName(t, i),
  namespace: `mcp:${t.server}`,
  namespaceLabel: `mcp:${t.serverName}`,
  description: describe(t.description),
  defer: 'always',
  tool: tool({ description: t.description, inputSchema: jsonSchema(t.inputSchema), execute: async () => null }),
}))
const queryDir = join(dir, 'stabletoolbench', 'test_instruction')
const queries = readdirSync(queryDir)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .flatMap((f) => JSON.parse(readFileSync(join(queryDir, f), 'utf8')).map((q) => q.query))
  .filter((q) => typeof q === 'string' && q.trim() !== '')
const step = Math.max(1, Math.floor(queries.length / MINI_QUERIES))
const sample = queries.filter((_, i) => i % step === 0).slice(0, MINI_QUERIES)
const avgWords = queries.reduce((n, q) => n + q.split(/\s+/).length, 0) / queries.length
const avgDescription = entries.reduce((n, e) => n + e.description.length, 0) / entries.length

const mem = () => {
  gc()
  gc()
  const m = process.memoryUsage()
  return { rss: m.rss, heap: m.heapUsed, external: m.external + m.arrayBuffers }
}
const mb = (bytes) => `${(bytes / 2 ** 20).toFixed(1)} MB`
const us = (ms) => `${(ms * 1000).toFixed(0)} µs`
const msf = (ms) => `${ms.toFixed(1)} ms`

// --- toolreg: index build --------------------------------------------------------------------
// Warm the addon and the AI SDK schema conversion once on a throwaway registry, so the timed
// builds measure indexing, not first-call JIT and library loading.
{
  const warm = new ToolRegistry()
  for (const e of entries.slice(0, 500)) warm.register(e)
  if (warm.registerMany) warm.registerMany(entries.slice(0, 500))
}
// Memory: one registry built from scratch and kept (the one queried below), measured before
// any other registry exists, so freed memory of discarded builds does not count.
const before = mem()
const registry = new ToolRegistry()
let t0 = performance.now()
for (const e of entries) registry.register(e)
const firstBuild = performance.now() - t0
const after = mem()
const builds = []
for (let round = 0; round < 5; round++) {
  const r = new ToolRegistry()
  const start = performance.now()
  for (const e of entries) r.register(e)
  builds.push(performance.now() - start)
}
gc()
const manyBuilds = []
if (registry.registerMany) {
  for (let round = 0; round < 5; round++) {
    const r = new ToolRegistry()
    const t0 = performance.now()
    r.registerMany(entries)
    manyBuilds.push(performance.now() - t0)
  }
}
gc()

// --- toolreg: queries ------------------------------------------------------------------------
for (const q of queries.slice(0, 200)) registry.search(q, { limit: 5 })
const ours = []
let oursHits = 0
for (const q of queries) {
  const t0 = performance.now()
  const hits = registry.search(q, { limit: 5 })
  ours.push(performance.now() - t0)
  oursHits += hits.length
}
const oursSample = []
for (const q of sample) {
  const t0 = performance.now()
  registry.search(q, { limit: 5 })
  oursSample.push(performance.now() - t0)
}

// The same queries straight through the addon (no JS wrapper): where the time goes.
const { internals } = require('../js/registry.js')
const direct = registry[internals].native
const nativeTimes = []
for (const q of sample) {
  const start = performance.now()
  direct.search(q, { limit: 5 }, undefined)
  nativeTimes.push(performance.now() - start)
}

// --- toolreg: one register / deregister in the full catalog ----------------------------------
const reg = []
const dereg = []
for (let i = 0; i < CHURN; i++) {
  const e = entries[(i * 7919) % entries.length]
  t0 = performance.now()
  registry.deregister(e.name)
  dereg.push(performance.now() - t0)
  t0 = performance.now()
  registry.register(e)
  reg.push(performance.now() - t0)
}

// --- toolreg with the built-in static embeddings (opt-in hybrid search) ---------------------
// registerMany returns at once; the tools are embedded on the worker pool afterwards.
const builtinBefore = mem()
const builtin = new ToolRegistry({ builtinEmbeddings: true })
builtin.registerMany(entries)
await builtin.embeddingsReady()
const builtinAfter = mem()
const builtinBuilds = []
const builtinReady = []
for (let round = 0; round < 3; round++) {
  const r = new ToolRegistry({ builtinEmbeddings: true })
  const start = performance.now()
  r.registerMany(entries)
  builtinBuilds.push(performance.now() - start)
  await r.embeddingsReady()
  builtinReady.push(performance.now() - start)
}
gc()
for (const q of sample.slice(0, 20)) await builtin.searchAsync(q, { limit: 5 })
const builtinAsync = []
for (const q of sample) {
  const start = performance.now()
  await builtin.searchAsync(q, { limit: 5 })
  builtinAsync.push(performance.now() - start)
}

// --- MiniSearch ------------------------------------------------------------------------------
const docs = entries.map((e, id) => ({ id, name: e.name, description: e.description }))
const miniBefore = mem()
const mini = new MiniSearch({ fields: ['name', 'description'] })
mini.addAll(docs)
const miniAfter = mem()
const miniBuilds = []
for (let round = 0; round < 3; round++) {
  const m = new MiniSearch({ fields: ['name', 'description'] })
  const start = performance.now()
  m.addAll(docs)
  miniBuilds.push(performance.now() - start)
}
gc()
for (const q of sample.slice(0, 20)) mini.search(q)
const miniTimes = []
for (const q of sample) {
  const t0 = performance.now()
  mini.search(q).slice(0, 5)
  miniTimes.push(performance.now() - t0)
}

// --- report ----------------------------------------------------------------------------------
const per10k = (bytes) => mb((bytes * 10_000) / entries.length)
const oursP50 = median(oursSample)
const miniP50 = median(miniTimes)
console.log(
  `catalog: ${entries.length} real MCP tools (Toucan + Docker); queries: ${queries.length} StableToolBench test queries (avg ${avgWords.toFixed(0)} words); MiniSearch on an evenly spaced sample of ${sample.length}`,
)
console.log(`descriptions: ${DESCRIPTIONS} (avg ${avgDescription.toFixed(0)} characters)`)
console.log(`node ${process.version}; gc ${globalThis.gc ? 'exposed' : 'NOT exposed (run with --expose-gc for memory numbers)'}`)
console.log('\n| measure | toolreg | MiniSearch 7.2 (defaults) | ratio |')
console.log('|---|---:|---:|---:|')
console.log(`| index build, ${entries.length} tools, register() one by one, first build in the process | ${msf(firstBuild)} | | |`)
console.log(`| index build, ${entries.length} tools, register() one by one (median of 5) | ${msf(median(builds))} | ${msf(median(miniBuilds))} (addAll) | ${(median(miniBuilds) / median(builds)).toFixed(1)}× |`)
if (manyBuilds.length) {
  console.log(`| index build, registerMany() (median of 5) | ${msf(median(manyBuilds))} | | ${(median(miniBuilds) / median(manyBuilds)).toFixed(1)}× |`)
}
console.log(`| top-5 query p50 (same ${sample.length} queries) | ${us(oursP50)} | ${us(miniP50)} | ${(miniP50 / oursP50).toFixed(0)}× faster |`)
console.log(`| top-5 query p90 (same ${sample.length} queries) | ${us(percentile(oursSample, 0.9))} | ${us(percentile(miniTimes, 0.9))} | ${(percentile(miniTimes, 0.9) / percentile(oursSample, 0.9)).toFixed(0)}× faster |`)
console.log(`| top-5 query p50 / p90, addon call alone (no JS wrapper), same ${sample.length} | ${us(median(nativeTimes))} / ${us(percentile(nativeTimes, 0.9))} | | |`)
console.log(`| top-5 query p50 / p90, all ${queries.length} queries | ${us(median(ours))} / ${us(percentile(ours, 0.9))} | | |`)
console.log(`| register one tool into ${entries.length} (p50 / p90) | ${us(median(reg))} / ${us(percentile(reg, 0.9))} | | |`)
console.log(`| deregister one tool from ${entries.length} (p50 / p90) | ${us(median(dereg))} / ${us(percentile(dereg, 0.9))} | | |`)
console.log(`| with \`builtinEmbeddings: true\`: registerMany() returns / every tool embedded (median of 3) | ${msf(median(builtinBuilds))} / ${msf(median(builtinReady))} | | |`)
console.log(`| with \`builtinEmbeddings: true\`: hybrid top-5 \`await searchAsync\` p50 / p90 (query embedded + fused on the worker pool) | ${us(median(builtinAsync))} / ${us(percentile(builtinAsync, 0.9))} | | |`)
console.log(`| with \`builtinEmbeddings: true\`: memory per 10k tools (Δ RSS) | ${per10k(builtinAfter.rss - builtinBefore.rss)} | | |`)
console.log(
  `| memory per 10k tools: Δ RSS (Δ JS heap) after building | ${per10k(after.rss - before.rss)} (${per10k(after.heap - before.heap)}) | ${per10k(miniAfter.rss - miniBefore.rss)} (${per10k(miniAfter.heap - miniBefore.heap)}) | |`,
)
console.log(`\n(avg hits per query: ${(oursHits / queries.length).toFixed(2)}; memory: process.memoryUsage() after two gc() calls, before and after building the first index of each engine (kept alive), scaled to 10k tools; toolreg's Δ RSS includes the JS-side entry map, MiniSearch's includes its documents)`)
