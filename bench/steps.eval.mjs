// Step-level agentic search on LiveMCPBench: an agent searches once per step of its plan, so
// each task's annotated steps are queries and the task's tools count as found when they are in
// the union of the steps' top 5. Coverage, per search mode, over the 527 tools of the
// benchmark's 70 servers (some described only in Chinese):
//
//   node bench/steps.eval.mjs [--top 5] [--misses] [--dictionary FILE]
//
// `--dictionary FILE` gives every mode that bilingual dictionary (`@toolreg/dict-zh-en`'s
// zh-en.tsv): the tools described only in Chinese are then found by their English glosses.
// Modes: words (`search`), the built-in static embeddings (`searchAsync`), and each local model
// whose package (or folder, $TOOLREG_MODEL_DIR) is installed. Relevant tools are the names of
// the task's `Annotator Metadata.Tools` that exist in the catalog (a name several servers share
// is found through any of them), as in examples/eval_search.rs. Coverage is reported over all
// mentions (micro) and as the mean of each task's share (macro). Needs ../shared/data
// (or $TOOLREG_DATA); skips with a message without it. Evaluation only: nothing here ships.
import { createRequire } from 'node:module'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { requireData } from './catalog.mjs'

const require = createRequire(import.meta.url)
const { ToolRegistry } = require('../index.js')
const { tool, jsonSchema } = require('ai')

const args = process.argv.slice(2)
const TOP = args.includes('--top') ? Number(args[args.indexOf('--top') + 1]) : 5
const SHOW_MISSES = args.includes('--misses')
const DICTIONARY = args.includes('--dictionary') ? args[args.indexOf('--dictionary') + 1] : false

const dir = join(requireData('steps.eval'), 'livemcpbench')

/** The catalog in eval_search's layout: a tool's own name unless two servers share it. */
function catalog() {
  const raw = []
  for (const server of JSON.parse(readFileSync(join(dir, 'tools.json'), 'utf8'))) {
    for (const [key, entry] of Object.entries(server.tools ?? {})) {
      for (const t of entry.tools ?? []) raw.push({ server: key, display: server.name, t })
    }
  }
  const count = new Map()
  for (const { t } of raw) count.set(t.name, (count.get(t.name) ?? 0) + 1)
  return raw.map(({ server, display, t }) => ({
    name: count.get(t.name) > 1 ? `${server}__${t.name}` : t.name,
    key: t.name,
    namespace: `mcp:${server}`,
    namespaceLabel: `mcp:${display}`,
    description: t.description ?? '',
    inputSchema: t.inputSchema ?? { type: 'object' },
  }))
}

/** "1. name\n2. name" → the names, in order, without repeats. */
function numberedList(text) {
  const names = (text ?? '').split('\n').map((line) => line.trim().replace(/^\d+\.\s*/, '').trim()).filter(Boolean)
  return [...new Set(names)]
}

function tasks(known) {
  return JSON.parse(readFileSync(join(dir, 'all_annotations.json'), 'utf8'))
    .map((task) => ({
      question: task.Question,
      steps: numberedList(task['Annotator Metadata'].Steps),
      relevant: numberedList(task['Annotator Metadata'].Tools).filter((name) => known.has(name)),
    }))
    .filter((task) => task.relevant.length > 0 && task.steps.length > 0)
}

function modelDirs() {
  const found = []
  for (const [label, pkg, folder] of [
    ['MiniLM', '@toolreg/model-minilm-l6-v2', 'model-minilm-l6-v2'],
    ['multilingual-e5-small', '@toolreg/model-multilingual-e5-small', 'model-multilingual-e5-small'],
  ]) {
    let path = join(import.meta.dirname, '..', 'npm-optional', folder, 'model')
    try {
      path = require(pkg).modelDir
    } catch {
      // Not installed: the folder the package builder writes, if any.
    }
    if (existsSync(path)) found.push({ label, path })
  }
  return found
}

async function coverage(label, options, tools, taskList, search) {
  const registry = new ToolRegistry({ logger: { warn() {} }, dictionary: DICTIONARY, ...options })
  registry.registerMany(
    tools.map((t) => ({
      name: t.name,
      namespace: t.namespace,
      namespaceLabel: t.namespaceLabel,
      description: t.description,
      defer: 'always',
      tool: tool({ description: t.description, inputSchema: jsonSchema(t.inputSchema), execute: async () => null }),
    })),
  )
  if (registry.hybrid) await registry.embeddingsReady()
  // The synchronous `search` does not wait for the dictionary registering Chinese-described
  // tools started loading; an asynchronous search does.
  await registry.searchAsync('', { limit: 1 })
  const keyOf = new Map(tools.map((t) => [t.name, t.key]))
  let found = 0
  let mentions = 0
  let shareSum = 0
  const misses = []
  for (const task of taskList) {
    const union = new Set()
    for (const step of task.steps) {
      for (const hit of await search(registry, step)) union.add(keyOf.get(hit.name))
    }
    const hits = task.relevant.filter((name) => union.has(name))
    found += hits.length
    mentions += task.relevant.length
    shareSum += hits.length / task.relevant.length
    for (const name of task.relevant) if (!union.has(name)) misses.push(`${name}  ←  ${task.question.slice(0, 90)}`)
  }
  console.log(`| ${label} | ${(found / mentions).toFixed(3)} | ${(shareSum / taskList.length).toFixed(3)} | ${found}/${mentions} |`)
  if (SHOW_MISSES) for (const miss of misses) console.log(`    missed ${miss}`)
}

const tools = catalog()
const taskList = tasks(new Set(tools.map((t) => t.key)))
console.log(`LiveMCPBench steps: ${tools.length} tools, ${taskList.length} tasks, ${taskList.reduce((n, t) => n + t.steps.length, 0)} step queries, union of each step's top ${TOP}`)
console.log('')
console.log('| mode | coverage (mentions) | coverage (mean per task) | found |')
console.log('|---|---:|---:|---:|')
await coverage('words', {}, tools, taskList, (registry, q) => registry.search(q, { limit: TOP }))
const hybrid = (registry, q) => registry.searchAsync(q, { limit: TOP })
await coverage('built-in hybrid', { builtinEmbeddings: true }, tools, taskList, hybrid)
for (const { label, path } of modelDirs()) {
  await coverage(`${label} hybrid`, { localModel: { path, cacheDir: join(import.meta.dirname, '..', 'target', 'bench-cache') } }, tools, taskList, hybrid)
}
