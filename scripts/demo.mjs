#!/usr/bin/env node
// A tour of toolreg over a real catalog: the MCP reference servers' tools (committed fixtures),
// plus the large Toucan + Docker catalogs when ../shared/data is present. Shows each server's
// token cost, the defer decision for a few context windows, and ranked tool search.
import { readFileSync, existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'
import { loadCatalog, dataDir, wireName, firstLine } from '../bench/catalog.mjs'

const require = createRequire(import.meta.url)
const { ToolRegistry, applyDeferExposition, shouldDefer } = require('../index.js')
const { tool, jsonSchema } = require('ai')

const fixtures = ['everything', 'filesystem', 'memory', 'github'].flatMap((server) => {
  const capture = JSON.parse(readFileSync(new URL(`../fixtures/${server}.tools_list.json`, import.meta.url), 'utf8'))
  return capture.tools.map((t) => ({ server, serverName: server, name: t.name, description: t.description ?? '', inputSchema: t.inputSchema }))
})
const haveData = existsSync(`${dataDir()}/toucan-mcp-servers/servers_with_tools.jsonl`)
const catalog = haveData ? [...fixtures, ...loadCatalog()] : fixtures
console.log(
  haveData
    ? `Catalog: ${fixtures.length} reference-server tools + ${catalog.length - fixtures.length} real MCP tools from ${dataDir()}`
    : `Catalog: ${fixtures.length} reference-server tools (set TOOLREG_DATA or add ../shared/data for the 11k-tool catalog)`,
)

const registry = new ToolRegistry({ logger: { warn() {} } })
let start = performance.now()
catalog.forEach((t, i) => {
  registry.register({
    name: wireName(t, i),
    namespace: `mcp:${t.server}`,
    namespaceLabel: `mcp:${t.serverName}`,
    description: firstLine(t.description),
    defer: 'auto',
    tool: tool({ description: t.description, inputSchema: jsonSchema(t.inputSchema), execute: async (input) => ({ called: t.name, input }) }),
  })
})
console.log(`Registered ${registry.size} tools in ${(performance.now() - start).toFixed(0)} ms\n`)

const reference = registry.getAll().filter((e) => ['mcp:everything', 'mcp:filesystem', 'mcp:memory', 'mcp:github'].includes(e.namespace))
const perServer = new Map()
for (const e of reference) {
  const { autoTokens } = await shouldDefer([e], 1_000_000, { minAutoDeferCount: 1 })
  const row = perServer.get(e.namespace) ?? { tools: 0, tokens: 0 }
  row.tools += 1
  row.tokens += autoTokens
  perServer.set(e.namespace, row)
}
console.log('Token cost of the reference servers (exact, o200k_base):')
for (const [ns, row] of perServer) console.log(`  ${ns.padEnd(16)} ${String(row.tools).padStart(3)} tools  ${String(row.tokens).padStart(6)} tokens`)

const tools = Object.fromEntries(reference.map((e) => [e.name, e.tool]))
console.log('\nDefer decision for these 62 tools:')
for (const window of [8_000, 32_000, 200_000, 1_000_000]) {
  const { decision } = await applyDeferExposition(tools, registry, window)
  console.log(`  ${String(window).padStart(9)}-token window: ${decision.reason}`)
}

start = performance.now()
const all = registry.getAll()
const everything = Object.fromEntries(all.map((e) => [e.name, e.tool]))
// The largest of these windows at which the whole catalog is deferred: 200k for the 11k-tool
// catalog, smaller for the reference servers alone (they fit a 200k window inline).
let window
let exposition
for (window of [200_000, 128_000, 32_000, 8_000]) {
  exposition = await applyDeferExposition(everything, registry, window)
  if (exposition.tools.tool_search) break
}
const { tools: exposed, decision } = exposition
console.log(`\nWhole catalog (${all.length} tools) for a ${window / 1000}k window: ${decision.reason}`)
console.log(`  (first request, tokenizing every definition: ${(performance.now() - start).toFixed(0)} ms)`)
if (!exposed.tool_search) throw new Error(`the catalog is not deferred even at a ${window}-token window`)

for (const query of ['create a github issue', 'read a text file from disk', 'current weather forecast for a city', '查询天气']) {
  const t0 = performance.now()
  const out = await exposed.tool_search.execute({ query }, { toolCallId: 'demo', messages: [] })
  const ms = performance.now() - t0
  console.log(`\ntool_search ${JSON.stringify(query)} (${ms.toFixed(2)} ms):`)
  console.log(exposed.tool_search.toModelOutput({ toolCallId: 'demo', input: { query }, output: out }).value.replace(/^/gm, '  '))
}

// Hybrid search with the built-in static embeddings: no embedding model, no network.
start = performance.now()
const semantic = new ToolRegistry({ builtinEmbeddings: true, logger: { warn() {} } })
semantic.registerMany(all)
await semantic.embeddingsReady()
console.log(`\nWords alone vs built-in embeddings (${all.length} tools embedded in ${(performance.now() - start).toFixed(0)} ms, off the JS thread):`)
for (const query of ['how is bitcoin trading today', 'summarize this youtube video', 'who won the football match yesterday']) {
  const words = registry.search(query, { limit: 3 }).map((h) => h.name)
  const hybrid = (await semantic.searchAsync(query, { limit: 3 })).map((h) => h.name)
  console.log(`  ${JSON.stringify(query)}\n    words:    ${words.join(', ') || '(nothing)'}\n    built-in: ${hybrid.join(', ') || '(nothing)'}`)
}
