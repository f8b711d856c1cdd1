// Does the `<deferred-tools>` section's overhead budget cost decision quality? On the public
// search-quality sets in ../shared/data (TOOLREG_DATA), each whole catalog is registered with
// its natural namespaces and deferred through `applyDeferExposition` (meta-tools strategy); the
// section it returns is parsed for the namespaces it names and the `<more …>` line that counts
// the rest. Every query then goes through the exposed `tool_search` (limit 5, NO namespace), and
// Recall@5 is reported for queries whose relevant tools sit in named namespaces vs unnamed ones.
// The same is done with an unbounded budget (every namespace named): search does not read the
// section, so the top 5 must be identical query by query (asserted).
//   node bench/section-budget.eval.mjs
//   BUDGETS=1200,1000 node bench/section-budget.eval.mjs   (extra budgets, reported alongside)
//
// Sets and relevance as `examples/eval_search.rs` defines them (its loaders, ported):
// - StableToolBench: union of the `api_list` entries of the 6 test files keyed by
//   (tool_name, api_name); namespace = RapidAPI tool_name (811); relevant = `relevant APIs`.
// - LiveMCPBench: the 527 tools of tools.json, namespace `mcp:<server>` labelled
//   `mcp:<display name>` (70); relevant = annotated tool names found in the catalog, matched by
//   name in any server (13 names occur in several servers).
// - MetaTool: 199 plugins, a fixed sample of 2,000 queries (row i·n/2000); the data has no
//   grouping, so eval_search puts every tool in one namespace `plugins`: a control, nothing to cut.
// Recall@5 = |relevant ∩ top 5| / |relevant| per query (relevance keys, each counted once),
// averaged over queries.
import { readFileSync, existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import { jsonSchema, tool } from 'ai'
import { ToolRegistry, applyDeferExposition, countTokens, DEFERRED_OVERHEAD_BUDGET_TOKENS } from '../index.js'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const data = path.resolve(process.env.TOOLREG_DATA ?? path.join(root, '..', 'shared', 'data'))
const K = 5
/** Small enough that every set's whole catalog is deferred (threshold 10% = 800 tokens). */
const CONTEXT_WINDOW = 8_000
const UNBOUNDED = 1_000_000_000
/** Extra overhead budgets to report besides the default and the unbounded one. */
const EXTRA = (process.env.BUDGETS ?? '').split(',').filter(Boolean).map(Number)
if (!EXTRA.every((b) => Number.isInteger(b) && b > 0)) throw new Error(`BUDGETS must be positive whole numbers, got ${process.env.BUDGETS}`)
const RUNS = [['default', undefined], ...EXTRA.map((b) => [`budget ${b}`, b]), ['unbounded', UNBOUNDED]]

// ---------------------------------------------------------------------------------------------
// Loaders (examples/eval_search.rs)

const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'))

/** A wire name the registry accepts (`[A-Za-z0-9_.-]`, ≤ 128), unique in `used`. */
function uniqueName(text, used) {
  const base = text.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 120) || 'tool'
  let name = base
  for (let n = 2; used.has(name); n++) name = `${base}_${n}`
  used.add(name)
  return name
}

const JSON_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'array', 'object'])

function stableToolBench() {
  const files = ['G1_category', 'G1_instruction', 'G1_tool', 'G2_category', 'G2_instruction', 'G3_instruction']
  const paths = files.map((f) => path.join(data, 'stabletoolbench', 'test_instruction', `${f}.json`))
  if (!paths.every((p) => existsSync(p))) return null
  const tools = []
  const byKey = new Set()
  const used = new Set()
  const queries = []
  for (const file of paths) {
    for (const q of readJson(file)) {
      for (const api of q.api_list) {
        const key = `${api.tool_name}\0${api.api_name}`
        if (byKey.has(key)) continue
        byKey.add(key)
        const properties = {}
        const required = []
        for (const kind of ['required_parameters', 'optional_parameters']) {
          for (const p of api[kind] ?? []) {
            if (!p?.name) continue
            const type = String(p.type ?? '').toLowerCase()
            properties[p.name] = { type: JSON_TYPES.has(type) ? type : 'string', description: String(p.description ?? '') }
            if (kind === 'required_parameters') required.push(p.name)
          }
        }
        tools.push({
          name: uniqueName(`${api.tool_name}__${api.api_name}`, used),
          key,
          namespace: api.tool_name,
          label: api.tool_name,
          description: String(api.api_description ?? ''),
          schema: { type: 'object', properties, ...(required.length && { required: [...new Set(required)] }) },
        })
      }
      queries.push({ text: q.query, relevant: q['relevant APIs'].map(([t, a]) => `${t}\0${a}`) })
    }
  }
  return { name: 'StableToolBench', tools, queries }
}

function liveMcpBench() {
  const toolsPath = path.join(data, 'livemcpbench', 'tools.json')
  const annPath = path.join(data, 'livemcpbench', 'all_annotations.json')
  if (!existsSync(toolsPath) || !existsSync(annPath)) return null
  const raw = []
  for (const server of readJson(toolsPath)) {
    for (const [key, group] of Object.entries(server.tools ?? {})) {
      for (const t of group.tools ?? []) raw.push({ server: key, display: server.name, t })
    }
  }
  const count = new Map()
  for (const { t } of raw) count.set(t.name, (count.get(t.name) ?? 0) + 1)
  const used = new Set()
  const tools = raw.map(({ server, display, t }) => ({
    name: uniqueName(count.get(t.name) > 1 ? `${server}__${t.name}` : t.name, used),
    key: t.name,
    namespace: `mcp:${server}`,
    label: `mcp:${display}`,
    description: String(t.description ?? ''),
    schema: t.inputSchema && typeof t.inputSchema === 'object' ? t.inputSchema : { type: 'object' },
  }))
  const known = new Set(tools.map((t) => t.key))
  const queries = []
  for (const task of readJson(annPath)) {
    const relevant = []
    for (const line of String(task['Annotator Metadata']?.Tools ?? '').split('\n')) {
      const name = line.trim().replace(/^\d+/, '').replace(/^\.+/, '').trim()
      if (known.has(name) && !relevant.includes(name)) relevant.push(name)
    }
    if (relevant.length > 0) queries.push({ text: String(task.Question), relevant })
  }
  return { name: 'LiveMCPBench', tools, queries }
}

/** RFC 4180 rows (quoted fields, doubled quotes, newlines inside quotes). */
function parseCsv(text) {
  const rows = []
  let row = []
  let field = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      } else if (c === '"') quoted = false
      else field += c
    } else if (c === '"') quoted = true
    else if (c === ',') {
      row.push(field)
      field = ''
    } else if (c === '\n') {
      row.push(field)
      rows.push(row)
      row = []
      field = ''
    } else if (c !== '\r') field += c
  }
  if (field !== '' || row.length > 0) {
    row.push(field)
    rows.push(row)
  }
  return rows
}

function metaTool() {
  const des = path.join(data, 'metatool', 'plugin_des.json')
  const csv = path.join(data, 'metatool', 'all_clean_data.csv')
  if (!existsSync(des) || !existsSync(csv)) return null
  const used = new Set()
  const tools = Object.entries(readJson(des)).map(([name, description]) => ({
    name: uniqueName(name, used),
    key: name,
    namespace: 'plugins',
    label: 'plugins',
    description: String(description),
    schema: { type: 'object', properties: {} },
  }))
  const rows = parseCsv(readFileSync(csv, 'utf8'))
    .slice(1)
    .filter((r) => r.length >= 2)
  const sample = Math.min(2000, rows.length)
  const queries = Array.from({ length: sample }, (_, i) => rows[Math.floor((i * rows.length) / sample)]).map((r) => ({ text: r[0], relevant: [r[1]] }))
  return { name: 'MetaTool', tools, queries, note: 'no natural namespaces (eval_search: one namespace `plugins`): control only' }
}

// ---------------------------------------------------------------------------------------------
// Section parsing

const unescape = (s) => s.replace(/&lt;/g, '<').replace(/&quot;/g, '"').replace(/&amp;/g, '&')

function parseSection(section) {
  const named = new Map([...section.matchAll(/<namespace name="([^"]*)" count="(\d+)"\/>/g)].map((m) => [unescape(m[1]), Number(m[2])]))
  const more = /<more namespaces="(\d+)" tools="(\d+)">/.exec(section)
  return { named, more: more ? { namespaces: Number(more[1]), tools: Number(more[2]) } : { namespaces: 0, tools: 0 } }
}

// ---------------------------------------------------------------------------------------------
// One set

const fmt = (x) => (Number.isNaN(x) ? '—' : x.toFixed(3))
const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN)

/** Exposes the whole catalog deferred at this budget; returns the section and the tool_search tool. */
async function expose(registry, toolSet, budget) {
  const opts = { ...(budget !== undefined && { overheadBudgetTokens: budget }) }
  const exposition = await applyDeferExposition(toolSet, registry, CONTEXT_WINDOW, opts)
  if (exposition.strategy !== 'meta-tools' || exposition.deferredEntries.length !== Object.keys(toolSet).length) {
    throw new Error(`expected the whole catalog deferred, got ${exposition.strategy} with ${exposition.deferredEntries.length} deferred (${exposition.decision?.reason})`)
  }
  return { section: exposition.systemPrompt, overhead: exposition.decision.overheadTokens, search: exposition.tools.tool_search }
}

async function topNames(searchTool, query) {
  const out = await searchTool.execute({ query, limit: K }, { toolCallId: 'eval', messages: [] })
  return out.matchedNamespaces.flatMap((g) => g.tools.map((t) => t.name))
}

async function evaluate(set) {
  const started = performance.now()
  const registry = new ToolRegistry({ logger: { warn() {} } })
  const entries = set.tools.map((t) => ({
    name: t.name,
    namespace: t.namespace,
    ...(t.label !== t.namespace && { namespaceLabel: t.label }),
    description: t.description,
    defer: 'auto',
    tool: tool({ description: t.description, inputSchema: jsonSchema(t.schema) }),
  }))
  registry.registerMany(entries)
  const toolSet = Object.fromEntries(entries.map((e) => [e.name, e.tool]))
  const byName = new Map(set.tools.map((t) => [t.name, t]))
  const labels = new Map()
  for (const t of set.tools) labels.set(t.label, (labels.get(t.label) ?? 0) + 1)

  const runs = {}
  for (const [run, budget] of RUNS) {
    const { section, overhead, search } = await expose(registry, toolSet, budget)
    const parsed = parseSection(section)
    // The parse must account for every namespace and tool of the catalog.
    const namedTools = [...parsed.named.values()].reduce((a, b) => a + b, 0)
    for (const [label, count] of parsed.named) {
      if (labels.get(label) !== count) throw new Error(`${set.name}/${run}: section names ${label} with ${count} tools, catalog has ${labels.get(label)}`)
    }
    if (parsed.named.size + parsed.more.namespaces !== labels.size || namedTools + parsed.more.tools !== set.tools.length) {
      throw new Error(`${set.name}/${run}: section accounts for ${parsed.named.size}+${parsed.more.namespaces} namespaces / ${namedTools}+${parsed.more.tools} tools, catalog has ${labels.size} / ${set.tools.length}`)
    }
    const tops = []
    for (const q of set.queries) tops.push(await topNames(search, q.text))
    runs[run] = { section, overhead, tokens: countTokens(section), parsed, namedTools, tops }
  }

  // Search does not read the section: the top 5 must not change with the budget.
  const differing = set.queries.filter((_, i) => RUNS.some(([run]) => runs[run].tops[i].join('\n') !== runs.unbounded.tops[i].join('\n'))).length
  // And tool_search ranks like registry.search over the whole catalog (the other benches' call).
  const registryDiffers = set.queries.filter((q, i) => {
    const direct = registry.search(q.text, { limit: K }).map((h) => h.name).sort()
    return direct.join('\n') !== [...runs.default.tops[i]].sort().join('\n')
  }).length

  const result = { set, runs, differing, registryDiffers, seconds: 0, split: {} }
  for (const [run] of RUNS) {
    const { parsed, tops } = runs[run]
    // A relevance key is named when one of its tools' namespaces is named (LiveMCPBench: a name
    // in several servers counts as named if any of them is).
    const keyLabels = new Map()
    for (const t of set.tools) {
      if (!keyLabels.has(t.key)) keyLabels.set(t.key, [])
      keyLabels.get(t.key).push(t.label)
    }
    const keyNamed = (key) => keyLabels.get(key).some((l) => parsed.named.has(l))
    const straddling = [...keyLabels.values()].filter((ls) => ls.some((l) => parsed.named.has(l)) && ls.some((l) => !parsed.named.has(l))).length
    const buckets = { named: [], unnamed: [], mixed: [], all: [] }
    const targets = { named: [0, 0], unnamed: [0, 0] }
    set.queries.forEach((q, i) => {
      const top = new Set(tops[i].map((n) => byName.get(n).key))
      const found = q.relevant.filter((r) => top.has(r)).length
      const r = found / q.relevant.length
      const named = q.relevant.map(keyNamed)
      const bucket = named.every(Boolean) ? 'named' : named.some(Boolean) ? 'mixed' : 'unnamed'
      buckets[bucket].push(r)
      buckets.all.push(r)
      q.relevant.forEach((key, j) => {
        const t = targets[named[j] ? 'named' : 'unnamed']
        t[1]++
        if (top.has(key)) t[0]++
      })
    })
    result.split[run] = { buckets, targets, straddling }
  }
  result.seconds = (performance.now() - started) / 1000
  return result
}

function print({ set, runs, differing, registryDiffers, seconds, split }) {
  const nsCount = new Set(set.tools.map((t) => t.label)).size
  console.log(`\n## ${set.name}: ${set.tools.length} tools in ${nsCount} namespaces, ${set.queries.length} queries (${seconds.toFixed(1)} s)${set.note ? ` — ${set.note}` : ''}`)
  const rows = {}
  for (const [run] of RUNS) {
    const { parsed, namedTools, tokens, overhead } = runs[run]
    const { buckets, targets, straddling } = split[run]
    const cell = (b) => `${fmt(mean(buckets[b]))} (${buckets[b].length})`
    const hit = ([found, total]) => (total ? `${fmt(found / total)} (${found}/${total})` : '—')
    rows[run === 'default' ? `default ${DEFERRED_OVERHEAD_BUDGET_TOKENS}` : run] = {
      'named ns/tools': `${parsed.named.size}/${namedTools}`,
      'unnamed ns/tools': `${parsed.more.namespaces}/${parsed.more.tools}`,
      'section tok': tokens,
      'overhead tok': overhead,
      'R@5 all': cell('all'),
      'R@5 named': cell('named'),
      'R@5 unnamed': cell('unnamed'),
      'R@5 mixed': cell('mixed'),
      'tgt named': hit(targets.named),
      'tgt unnamed': hit(targets.unnamed),
      ...(straddling > 0 && { 'keys both': straddling }),
    }
  }
  console.table(rows)
  const same = differing === 0
  const recalls = RUNS.map(([run]) => mean(split[run].buckets.all))
  console.log(`top-${K} identical in every run: ${same ? 'yes' : `NO (${differing} queries differ)`}; Recall@5 ${recalls.map(fmt).join(' / ')} (${RUNS.map(([run]) => run).join(' / ')}); tool_search = registry.search top ${K}: ${registryDiffers === 0 ? 'yes' : `no (${registryDiffers} queries differ)`}`)
  if (!same || recalls.some((r) => r !== recalls[0])) {
    process.exitCode = 1
    console.log('ASSERTION FAILED: the section budget changed what tool_search returns')
  }
}

if (!existsSync(data)) {
  console.log(`section-budget.eval: skipped — the shared data set is not at ${data} (set TOOLREG_DATA to its path).`)
  process.exit(0)
}
const t0 = performance.now()
console.log(`<deferred-tools> section budget vs Recall@${K} (tool_search, no namespace in the query); window ${CONTEXT_WINDOW}, o200k_base; data ${data}`)
console.log('named = the section names the namespace; unnamed = counted in <more …>. R@5 per query bucket (queries): where its relevant tools are, mixed = some of each;')
console.log('tgt = relevant tools found in the top 5 / relevant tools, by where each tool is; overhead = meta-tools + section (decision.overheadTokens)')
for (const [name, load] of [['StableToolBench', stableToolBench], ['LiveMCPBench', liveMcpBench], ['MetaTool', metaTool]]) {
  const set = load()
  if (!set) {
    console.log(`\n## ${name}: skipped — its files are not under ${data}`)
    continue
  }
  print(await evaluate(set))
}
console.log(`\ntotal ${((performance.now() - t0) / 1000).toFixed(1)} s`)
