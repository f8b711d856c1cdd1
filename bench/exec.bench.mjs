// tool_exec benchmarks, three lanes side by side in one run:
//  1. Per-run overhead of `return 1` and of a script making 3 tool calls (a JS tool), p50/p90:
//     (a) tool_exec's execute (this process, Node 20+, pool of 1 sandbox process);
//     (b) a Node worker_threads Worker per run executing the same code with `new Function` and
//         tool calls over postMessage (the reference registry's approach);
//     (c) @ai-sdk/code-mode's runCodeMode (QuickJS/WASM in pooled workers) with the same tool, in a
//         Node 22 child process (code mode needs Node >= 22.13) from the lane folder
//         bench/code-mode/ (its own package.json + lock), which reports its timings as JSON.
//  2. Throughput: 1,000 runs × 3 tool calls on a pool of 1 and of 2 processes (all queued at once);
//     code mode with its worker cap at 1 and 2 and as many runs in flight (it refuses runs past
//     the cap instead of queueing them).
// The lanes take turns in 3 rounds (the code-mode child is started once per round, outside the
// timings), so a change of load on the shared machine hits each of them.
// Run: npm run build && node bench/exec.bench.mjs [--runs N] [--no-code-mode]
import { performance } from 'node:perf_hooks'
import { Worker } from 'node:worker_threads'
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { loadavg } from 'node:os'
import { statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { tool, jsonSchema } from 'ai'
import { median, percentile } from './catalog.mjs'
import { ensureNode22, ensureLaneDeps } from '../scripts/ensure-node22.mjs'

const require = createRequire(import.meta.url)
const { ToolRegistry, createToolExecTool } = require('../index.js')
const here = path.dirname(fileURLToPath(import.meta.url))

const args = process.argv.slice(2)
const RUNS = Number(args[args.indexOf('--runs') + 1] || 2000) || 2000
const WORKER_RUNS = 45
const CODE_MODE_RUNS = Math.min(RUNS, 1200)
// The lanes take turns in rounds, so a change of load on the shared machine hits all of them.
const ROUNDS = 3
const SCRIPTS = {
  trivial: { label: 'return 1', code: 'return 1', expect: 1 },
  threeCalls: {
    label: '3 tool calls',
    code: 'const a = await tools.add({ a: 1, b: 2 })\nconst b = await tools.add({ a, b: 3 })\nreturn await tools.add({ a: b, b: 4 })',
    expect: 10,
  },
}
const add = async ({ a, b }) => a + b

const registry = new ToolRegistry()
registry.register({
  name: 'add',
  namespace: 'math',
  description: 'Adds two numbers',
  defer: 'never',
  tool: tool({
    description: 'Adds two numbers',
    inputSchema: jsonSchema({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }),
    execute: add,
  }),
})
const options = { toolCallId: 'bench', messages: [] }
const fmt = (ms) => (ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(0)} µs`)
const stats = (times) => ({ p50: median(times), p90: percentile(times, 0.9) })
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ')

async function timeRuns(count, run) {
  const times = []
  for (let i = 0; i < count; i++) {
    const t0 = performance.now()
    await run()
    times.push(performance.now() - t0)
  }
  return times
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
let next = 0
const waiting = new Map()
parentPort.on('message', ({ id, result }) => { waiting.get(id)(result); waiting.delete(id) })
const tools = new Proxy({}, { get: (_, name) => (params) => new Promise((resolve) => {
  const id = next++
  waiting.set(id, resolve)
  parentPort.postMessage({ type: 'call', id, name, params })
}) })
const AsyncFunction = (async () => {}).constructor
new AsyncFunction('tools', workerData.code)(tools).then((result) => parentPort.postMessage({ type: 'done', result }))
`

function workerRun(code) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { code } })
    worker.on('message', async (message) => {
      if (message.type === 'call') {
        worker.postMessage({ id: message.id, result: await add(message.params) })
      } else {
        resolve(message.result)
        worker.terminate()
      }
    })
    worker.on('error', reject)
  })
}

// The code-mode lane: a Node 22 child process; null (with the reason printed) when it cannot run.
let codeModeFailed = args.includes('--no-code-mode')
async function codeModeLane({ runs, throughput }) {
  if (codeModeFailed) return null
  try {
    const node22 = ensureNode22()
    const lane = ensureLaneDeps(path.join(here, 'code-mode'))
    const codeModeVersion = require(path.join(lane, 'node_modules/@ai-sdk/code-mode/package.json')).version
    const config = { scripts: SCRIPTS, runs, warmup: 200, throughput, codeModeVersion }
    const { stdout } = await promisify(execFile)(node22, ['--no-warnings', path.join(lane, 'run.mjs'), JSON.stringify(config)], {
      cwd: lane,
      maxBuffer: 64 << 20,
    })
    return JSON.parse(stdout.trim().split('\n').pop())
  } catch (error) {
    console.log(`   code mode: not measured (${error.message.split('\n')[0]})`)
    codeModeFailed = true
    return null
  }
}

// The loader takes NAPI_RS_NATIVE_LIBRARY_PATH first (how a release build is benched beside a debug one).
const addon = process.env.NAPI_RS_NATIVE_LIBRARY_PATH || require.resolve('../toolreg.linux-x64-gnu.node')
const helper = require('../js/native').execHelperPath()
console.log(`tool_exec bench — Node ${process.version}, addon ${path.relative(process.cwd(), addon)} (${(statSync(addon).size / 2 ** 20).toFixed(1)} MiB), sandbox ${path.relative(process.cwd(), helper)} (${(statSync(helper).size / 2 ** 20).toFixed(1)} MiB)`)
console.log(`load average at start: ${load()}`)

// 1. Per-run overhead.
const exec = createToolExecTool(registry, { allowedNames: ['add'], poolSize: 1 })
for (const { code, expect } of Object.values(SCRIPTS)) {
  const check = await exec.execute({ code }, options)
  if (check.result !== expect || (await workerRun(code)) !== expect) throw new Error(`unexpected result ${JSON.stringify(check)}`)
}
await timeRuns(300, () => exec.execute({ code: SCRIPTS.trivial.code }, options))
const samples = Object.fromEntries(Object.keys(SCRIPTS).map((key) => [key, { ours: [], worker: [], codeMode: [] }]))
let codeMode
for (let round = 1; round <= ROUNDS; round++) {
  for (const [key, { code }] of Object.entries(SCRIPTS)) {
    samples[key].ours.push(...(await timeRuns(Math.ceil(RUNS / ROUNDS), () => exec.execute({ code }, options))))
    samples[key].worker.push(...(await timeRuns(Math.ceil(WORKER_RUNS / ROUNDS), () => workerRun(code))))
  }
  const report = await codeModeLane({ runs: Math.ceil(CODE_MODE_RUNS / ROUNDS), throughput: round === ROUNDS ? 1000 : 0 })
  if (report) {
    for (const key of Object.keys(SCRIPTS)) samples[key].codeMode.push(...report.perRun[key])
    codeMode = report
  }
  console.log(`load average after round ${round} of ${ROUNDS}: ${load()}`)
}
const rows = Object.fromEntries(
  Object.entries(samples).map(([key, s]) => [key, { ours: stats(s.ours), worker: stats(s.worker), codeMode: s.codeMode.length ? stats(s.codeMode) : undefined }]),
)
if (codeMode) console.log(`code mode: @ai-sdk/code-mode ${codeMode.codeMode} under Node ${codeMode.node}`)

const count = (key) => Object.fromEntries(Object.entries(samples[key]).map(([lane, times]) => [lane, times.length]))
console.log(`\n1. Per-run overhead (sequential runs in ${ROUNDS} rounds; per row: ${JSON.stringify(count('trivial'))})`)
const cell = (s) => (s ? `${fmt(s.p50)} / ${fmt(s.p90)}` : '—').padEnd(21)
const ratio = (s, ours) => (s ? `${(s.p50 / ours.p50).toFixed(0)}×` : '—')
console.log(`   ${'script'.padEnd(14)} | ${'tool_exec p50 / p90'.padEnd(21)} | ${'Worker p50 / p90'.padEnd(21)} | ${'code mode p50 / p90'.padEnd(21)} | vs Worker | vs code mode`)
for (const [key, { ours, worker, codeMode: cm }] of Object.entries(rows)) {
  console.log(`   ${SCRIPTS[key].label.padEnd(14)} | ${cell(ours)} | ${cell(worker)} | ${cell(cm)} | ${ratio(worker, ours).padEnd(9)} | ${ratio(cm, ours)}`)
}
const trivial = rows.trivial
const verdict = (ok) => (ok ? 'met' : 'NOT met')
console.log(`   goals (return 1): p50 ≤ 0.5 ms ${verdict(trivial.ours.p50 <= 0.5)}; ≥ 50× Worker ${verdict(trivial.worker.p50 / trivial.ours.p50 >= 50)}; ` +
  `≥ 10× code mode ${trivial.codeMode ? verdict(trivial.codeMode.p50 / trivial.ours.p50 >= 10) : 'not measured'}`)

// 2. Throughput.
console.log('\n2. Throughput: 1,000 runs × 3 tool calls')
for (const poolSize of [1, 2]) {
  const pooled = createToolExecTool(registry, { allowedNames: ['add'], poolSize })
  await Promise.all(Array.from({ length: 100 }, () => pooled.execute({ code: SCRIPTS.threeCalls.code }, options)))
  const t0 = performance.now()
  const outputs = await Promise.all(Array.from({ length: 1000 }, () => pooled.execute({ code: SCRIPTS.threeCalls.code }, options)))
  const ms = performance.now() - t0
  if (outputs.some((o) => o.result !== 10)) throw new Error('a run failed')
  const cm = codeMode?.throughput[poolSize]
  console.log(`   pool of ${poolSize}: tool_exec ${ms.toFixed(0)} ms (${((1000 / ms) * 1000).toFixed(0)} runs/s)` +
    (cm ? `; code mode, ${poolSize} worker(s): ${cm.toFixed(0)} ms (${((1000 / cm) * 1000).toFixed(0)} runs/s), ${(cm / ms).toFixed(1)}×` : ''))
}
console.log(`load average at the end: ${load()}`)
