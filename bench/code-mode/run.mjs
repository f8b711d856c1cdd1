// Code-mode lane of bench/exec.bench.mjs: runs the same scripts through @ai-sdk/code-mode's
// runCodeMode (QuickJS/WASM in pooled workers) under Node 22 and prints the timings as one JSON
// line on stdout. Started by exec.bench.mjs as a child process; not meant to be run by hand.
//   node22 bench/code-mode/run.mjs '{"runs":2000,"warmup":300,"throughput":1000}'
import { performance } from 'node:perf_hooks'
import { experimental_runCodeMode as runCodeMode, experimental_setMaxWorkers as setMaxWorkers } from '@ai-sdk/code-mode'
import { tool, jsonSchema } from 'ai'

const config = JSON.parse(process.argv[2] ?? '{}')
const { scripts, runs = 2000, warmup = 300, throughput = 1000 } = config

const tools = {
  add: tool({
    description: 'Adds two numbers',
    inputSchema: jsonSchema({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }),
    execute: async ({ a, b }) => a + b,
  }),
}
let n = 0
const run = (js) => runCodeMode({ js, tools, toolExecutionOptions: { toolCallId: `bench-${n++}`, messages: [] } })

async function times(count, js) {
  const out = []
  for (let i = 0; i < count; i++) {
    const t0 = performance.now()
    await run(js)
    out.push(performance.now() - t0)
  }
  return out
}

const report = { node: process.version, codeMode: config.codeModeVersion, perRun: {}, throughput: {} }
for (const [label, { code, expect }] of Object.entries(scripts)) {
  const check = await run(code)
  if (check !== expect) throw new Error(`code mode returned ${JSON.stringify(check)} for ${label}, expected ${expect}`)
}
await times(warmup, scripts.trivial.code)
for (const [label, { code }] of Object.entries(scripts)) report.perRun[label] = await times(runs, code)

// Code mode refuses runs past its worker cap (CodeModeConcurrencyError) instead of queueing, so
// its throughput lane keeps `workers` runs in flight at a time, with the cap set to `workers`.
for (const workers of [1, 2]) {
  if (!throughput) break
  setMaxWorkers(workers)
  const lane = async (count) => {
    for (let i = 0; i < count; i++) if ((await run(scripts.threeCalls.code)) !== scripts.threeCalls.expect) throw new Error('a code-mode run failed')
  }
  await Promise.all(Array.from({ length: workers }, () => lane(50)))
  const t0 = performance.now()
  await Promise.all(Array.from({ length: workers }, () => lane(throughput / workers)))
  report.throughput[workers] = performance.now() - t0
}
process.stdout.write(`${JSON.stringify(report)}\n`)
