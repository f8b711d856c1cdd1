// tool_exec benchmarks, side by side in one run:
//  1. Per-run overhead of `return 1` and of a script making 3 tool calls (a JS tool): p50/p90 of
//     tool_exec's execute, against a Node worker_threads Worker per run running the same code
//     with `new Function` and tool calls over postMessage (the reference registry's approach).
//  2. Throughput: 1,000 runs × 3 tool calls, all queued at once, on a pool of 1 and of 2 threads.
// Run: npm run build && node bench/exec.bench.mjs
import { performance } from 'node:perf_hooks'
import { Worker } from 'node:worker_threads'
import { createRequire } from 'node:module'
import { tool, jsonSchema } from 'ai'
import { median, percentile } from './catalog.mjs'

const require = createRequire(import.meta.url)
const { ToolRegistry, createToolExecTool } = require('../index.js')

const TRIVIAL = 'return 1'
const THREE_CALLS = 'const a = await tools.add({ a: 1, b: 2 })\nconst b = await tools.add({ a, b: 3 })\nreturn await tools.add({ a: b, b: 4 })'
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

async function timeRuns(count, run) {
  const times = []
  for (let i = 0; i < count; i++) {
    const t0 = performance.now()
    await run()
    times.push(performance.now() - t0)
  }
  return { p50: median(times), p90: percentile(times, 0.9) }
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

// 1. Per-run overhead.
const exec = createToolExecTool(registry, { allowedNames: ['add'], poolSize: 1 })
for (const code of [TRIVIAL, THREE_CALLS]) {
  const check = await exec.execute({ code }, options)
  if (check.result !== (code === TRIVIAL ? 1 : 10) || (await workerRun(code)) !== check.result) throw new Error(`unexpected result ${JSON.stringify(check)}`)
}
await timeRuns(300, () => exec.execute({ code: TRIVIAL }, options))
const rows = []
for (const [label, code] of [['return 1', TRIVIAL], ['3 tool calls', THREE_CALLS]]) {
  const ours = await timeRuns(2000, () => exec.execute({ code }, options))
  const worker = await timeRuns(40, () => workerRun(code))
  rows.push({ label, ours, worker })
}
console.log('1. Per-run overhead (sequential runs; tool_exec pool of 1 thread)')
console.log('   script         | tool_exec p50 / p90   | Worker per run p50 / p90 | ratio (p50)')
for (const { label, ours, worker } of rows) {
  console.log(`   ${label.padEnd(14)} | ${fmt(ours.p50)} / ${fmt(ours.p90)}`.padEnd(41) + `| ${fmt(worker.p50)} / ${fmt(worker.p90)}`.padEnd(27) + `| ${(worker.p50 / ours.p50).toFixed(0)}×`)
}

// 2. Throughput.
console.log('\n2. Throughput: 1,000 runs × 3 tool calls, queued at once')
for (const poolSize of [1, 2]) {
  const pooled = createToolExecTool(registry, { allowedNames: ['add'], poolSize })
  await Promise.all(Array.from({ length: 100 }, () => pooled.execute({ code: THREE_CALLS }, options)))
  const t0 = performance.now()
  const outputs = await Promise.all(Array.from({ length: 1000 }, () => pooled.execute({ code: THREE_CALLS }, options)))
  const ms = performance.now() - t0
  if (outputs.some((o) => o.result !== 10)) throw new Error('a run failed')
  console.log(`   pool of ${poolSize}: ${ms.toFixed(0)} ms, ${((1000 / ms) * 1000).toFixed(0)} runs/s`)
}
