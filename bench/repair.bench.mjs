// Tool-call repair without a model: latency of the local pass on a typical broken call, and the
// share of the repair corpus (fixtures/repair_corpus.json) each model-free pass fixes.
//
//   npm run build && node bench/repair.bench.mjs
//
// "reference" is the reference registry's model-free pass (notes/reference-design.md §3.7),
// reimplemented here: only for InvalidToolInputError; safeParseJSON (strict JSON); re-parse a
// double-encoded string; unwrap a lone {arguments: {...}}; keep the result if it validates.
// It validates with toolreg's validator, so both passes are judged by the same schema checks.

import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { jsonSchema, tool } from 'ai'

const require = createRequire(import.meta.url)
const { repairToolCallLocally } = require('../index.js')
const { NativeRepairToolset } = require('../binding.js')

const corpus = JSON.parse(readFileSync(new URL('../fixtures/repair_corpus.json', import.meta.url), 'utf8'))
const goal = { p50Micros: 20 }

const natives = {}
const toolsets = {}
for (const [name, entries] of Object.entries(corpus.toolsets)) {
  natives[name] = new NativeRepairToolset(
    entries.map((t) => ({ name: t.name, schemaJson: JSON.stringify(t.inputSchema), needsApproval: t.needsApproval })),
  )
  toolsets[name] = Object.fromEntries(
    entries.map((t) => [t.name, tool({ inputSchema: jsonSchema(t.inputSchema), needsApproval: t.needsApproval || undefined })]),
  )
}

function referencePass(c) {
  const native = natives[c.toolset]
  const known = corpus.toolsets[c.toolset].some((t) => t.name === c.toolName)
  if (!known) return null // NoSuchToolError: the reference goes straight to the model
  let value
  try {
    value = JSON.parse(c.input)
  } catch {
    return null
  }
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value)
    } catch {
      return null
    }
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const keys = Object.keys(value)
    if (keys.length === 1 && keys[0] === 'arguments' && value.arguments && typeof value.arguments === 'object') {
      value = value.arguments
    }
  }
  const input = JSON.stringify(value)
  return native.validate(c.toolName, input) == null ? { toolName: c.toolName, input } : null
}

function toolregPass(c) {
  const outcome = natives[c.toolset].repair(c.toolName, c.input)
  return outcome.inputJson == null ? null : { toolName: outcome.toolName, input: outcome.inputJson }
}

const sameJson = (a, b) => JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b))
function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys)
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]))
  return v
}

function score(pass) {
  let fixed = 0
  let wrong = 0
  let falseRepairs = 0
  for (const c of corpus.cases) {
    const got = pass(c)
    if (c.expected === null) {
      // The reference returns an already-valid input unchanged; that is not a repair.
      if (got && !(c.shape === 'must-not:already-valid' && got.toolName === c.toolName)) falseRepairs++
    } else if (got && got.toolName === c.expected.toolName && sameJson(JSON.parse(got.input), c.expected.input)) fixed++
    else if (got) wrong++
  }
  return { fixed, wrong, falseRepairs }
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

async function time(label, fn, iterations = 20000) {
  for (let i = 0; i < 2000; i++) await fn()
  const samples = new Float64Array(iterations)
  for (let i = 0; i < iterations; i++) {
    const start = process.hrtime.bigint()
    await fn()
    samples[i] = Number(process.hrtime.bigint() - start) / 1000
  }
  samples.sort()
  return { label, p50: percentile(samples, 50), p90: percentile(samples, 90), p99: percentile(samples, 99) }
}

// A typical broken call: fenced, single-quoted, a number sent as a string, a trailing comma,
// against the 35-tool "local" toolset.
const typical = {
  type: 'tool-call',
  toolCallId: 'call-1',
  toolName: 'read_text_file',
  input: "```json\n{'path': '/home/ada/notes/todo.md', 'head': '20',}\n```",
}
const renamed = { ...typical, toolName: 'functions.readTextFile' }
const native = natives.local
const tools = toolsets.local

// Warm every path first, so no row pays for the JIT or first-use schema compilation.
for (let i = 0; i < 5000; i++) {
  native.repair(typical.toolName, typical.input)
  native.repair(renamed.toolName, renamed.input)
  await repairToolCallLocally({ toolCall: typical, tools })
  await repairToolCallLocally({ toolCall: renamed, tools })
}
const rows = [
  await time('native repair, broken arguments', () => native.repair(typical.toolName, typical.input)),
  await time('native repair, broken arguments + name', () => native.repair(renamed.toolName, renamed.input)),
  await time('repairToolCallLocally (JS API), broken arguments', () => repairToolCallLocally({ toolCall: typical, tools })),
  await time('repairToolCallLocally (JS API), broken arguments + name', () => repairToolCallLocally({ toolCall: renamed, tools })),
]

const needed = corpus.cases.filter((c) => c.expected !== null).length
const mustNot = corpus.cases.length - needed
const ours = score(toolregPass)
const reference = score(referencePass)
const pct = (n) => `${((100 * n) / needed).toFixed(1)}%`

console.log(`node ${process.version}, ${process.platform}-${process.arch}; corpus: ${corpus.cases.length} calls (${needed} repairable, ${mustNot} must not be repaired)\n`)
console.log('| local repair latency | p50 µs | p90 µs | p99 µs |')
console.log('|---|---|---|---|')
for (const r of rows) console.log(`| ${r.label} | ${r.p50.toFixed(1)} | ${r.p90.toFixed(1)} | ${r.p99.toFixed(1)} |`)
console.log(`\ngoal: p50 ≤ ${goal.p50Micros} µs for the JS API on a typical broken call: ${rows[2].p50 <= goal.p50Micros ? 'met' : 'NOT met'}\n`)
console.log('| model-free pass | fixed (of repairable) | wrong repair | repaired a must-not case |')
console.log('|---|---|---|---|')
console.log(`| toolreg local pass | ${ours.fixed} (${pct(ours.fixed)}) | ${ours.wrong} | ${ours.falseRepairs} of ${mustNot} |`)
console.log(`| reference 3-step pass | ${reference.fixed} (${pct(reference.fixed)}) | ${reference.wrong} | ${reference.falseRepairs} of ${mustNot} |`)
