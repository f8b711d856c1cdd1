// registry.rank against ai@7's built-in toolSearch ranking (what `toolSearch()` does without a
// `search`), on public retrieval sets from ../shared/data: which share of each query's relevant
// tools the first `maxResults` (5) names contain, i.e. what a search call makes callable.
//   node bench/rank.bench.mjs
// ai@7's ranking is reproduced from ai 7.0.173 dist/index.js (prepare-tool-search: name terms
// count 2, description terms 1, camelCase split, score > 0, stable sort); the lane checks that
// `toolSearch` still exists, not this copy.
import { readFileSync, existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { jsonSchema, tool } from 'ai'
import { ToolRegistry } from '../index.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const data = process.env.TOOLREG_DATA ?? path.join(root, '..', 'shared', 'data')
const MAX_RESULTS = 5

function sdkTokenize(text) {
  return text.replace(/([a-z\d])([A-Z])/g, '$1 $2').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
}

function sdkRank(query, candidates) {
  const terms = [...new Set(sdkTokenize(query))]
  return candidates
    .map(({ name, description }) => {
      const nameTerms = sdkTokenize(name)
      const descriptionTerms = sdkTokenize(description ?? '')
      return { name, score: terms.reduce((s, t) => s + (nameTerms.includes(t) ? 2 : 0) + (descriptionTerms.includes(t) ? 1 : 0), 0) }
    })
    .filter((m) => m.score > 0)
    .sort((a, b) => b.score - a.score)
    .map((m) => m.name)
}

function wireName(text) {
  return text.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 128)
}

/** LiveMCPBench: 527 real MCP tools of 70 servers, 95 tasks; relevant = tools named in the annotation. */
function liveMcpBench() {
  const servers = JSON.parse(readFileSync(path.join(data, 'livemcpbench', 'tools.json'), 'utf8'))
  const tools = []
  const byOriginal = new Map()
  for (const server of servers) {
    for (const group of Object.values(server.tools ?? {})) {
      for (const t of group.tools ?? []) {
        const name = wireName(`${group.server_name ?? server.name}__${t.name}`)
        if (tools.some((x) => x.name === name)) continue
        tools.push({ name, description: t.description ?? '', namespace: `mcp:${wireName(server.name)}`, schema: t.inputSchema ?? { type: 'object' } })
        if (!byOriginal.has(t.name)) byOriginal.set(t.name, [])
        byOriginal.get(t.name).push(name)
      }
    }
  }
  const tasks = JSON.parse(readFileSync(path.join(data, 'livemcpbench', 'all_annotations.json'), 'utf8'))
  const queries = tasks
    .map((task) => {
      const mentioned = String(task['Annotator Metadata']?.Tools ?? '').split('\n').map((l) => l.replace(/^\s*\d+\.\s*/, '').trim()).filter(Boolean)
      const relevant = new Set(mentioned.flatMap((n) => byOriginal.get(n) ?? []))
      return { query: task.Question, relevant, groups: mentioned.filter((n) => byOriginal.has(n)).map((n) => new Set(byOriginal.get(n))) }
    })
    .filter((q) => q.groups.length > 0)
  return { name: 'LiveMCPBench', tools, queries }
}

/** MetaTool multi-tool queries: 47 plugin tools (name + description), 497 queries with two tools each. */
function metaTool() {
  const descriptions = JSON.parse(readFileSync(path.join(data, 'metatool', 'big_tool_des.json'), 'utf8'))
  const tools = Object.entries(descriptions).map(([name, description]) => ({ name: wireName(name), description, namespace: 'plugins', schema: { type: 'object' } }))
  const golden = JSON.parse(readFileSync(path.join(data, 'metatool', 'multi_tool_query_golden.json'), 'utf8'))
  const queries = golden.map((q) => ({ query: q.query, groups: q.tool.map((n) => new Set([wireName(n)])) }))
  return { name: 'MetaTool multi-tool', tools, queries }
}

/** Share of a query's relevant tools (a tool named in several servers counts once) found in the first 5. */
function recall(ranked, groups) {
  const top = new Set(ranked.slice(0, MAX_RESULTS))
  return groups.filter((g) => [...g].some((n) => top.has(n))).length / groups.length
}

async function evaluate(set) {
  const candidates = set.tools.map(({ name, description }) => ({ name, description }))
  const registries = {
    'toolreg rank (words)': new ToolRegistry({ logger: { warn() {} } }),
    'toolreg rank (built-in embeddings)': new ToolRegistry({ logger: { warn() {} }, builtinEmbeddings: true }),
  }
  for (const registry of Object.values(registries)) {
    registry.registerMany(set.tools.map((t) => ({ name: t.name, namespace: t.namespace, description: t.description, defer: 'auto', tool: tool({ description: t.description, inputSchema: jsonSchema(t.schema) }) })))
    await registry.embeddingsReady()
  }
  const unregistered = new ToolRegistry({ logger: { warn() {} } })
  const rankers = {
    'ai@7 toolSearch default': async (q) => sdkRank(q, candidates),
    'toolreg rank, unregistered (name + description)': (q) => unregistered.rank(q, candidates),
    ...Object.fromEntries(Object.entries(registries).map(([label, registry]) => [label, (q) => registry.rank(q, candidates)])),
  }
  const rows = []
  for (const [label, rank] of Object.entries(rankers)) {
    let sum = 0
    let none = 0
    for (const q of set.queries) {
      const ranked = await rank(q.query)
      sum += recall(ranked, q.groups)
      if (ranked.length === 0) none++
    }
    rows.push({ ranker: label, [`recall@${MAX_RESULTS}`]: (sum / set.queries.length).toFixed(3), 'no result': none })
  }
  console.log(`\n${set.name}: ${set.tools.length} tools, ${set.queries.length} queries`)
  console.table(rows)
}

if (!existsSync(path.join(data, 'livemcpbench'))) {
  console.log(`skipped: ${data} has no livemcpbench/ (set TOOLREG_DATA to the shared data folder)`)
} else {
  for (const set of [liveMcpBench(), metaTool()]) await evaluate(set)
}
