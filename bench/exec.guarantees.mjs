// What tool_exec's guarantees cost: how long past its timeoutMs a run resolves, for a JS loop
// and for built-ins that never return to JavaScript (both are pre-empted inside the engine);
// how fast an abort resolves, and a `return 1` right after it; how long a run that trips the
// memory or stack cap takes; what a fresh sandbox process costs; and the resident memory of the
// host and its sandboxes, sampled while 16 runs each allocate close to their cap. Numbers go
// into docs/exec-sandbox.md.
// Run: npm run build && node bench/exec.guarantees.mjs [--runs N]
import { createRequire } from 'node:module'
import { loadavg } from 'node:os'
import { tool, jsonSchema } from 'ai'
import { readFileSync } from 'node:fs'
import { median, percentile } from './catalog.mjs'
import { sandboxProcesses } from './exec.soak.mjs'

const require = createRequire(import.meta.url)
const { ToolRegistry, createToolExecTool } = require('../index.js')

const args = process.argv.slice(2)
const RUNS = Number(args[args.indexOf('--runs') + 1] || 50) || 50
const TIMEOUT_MS = 100
const registry = new ToolRegistry({ logger: { warn() {} } })
registry.register({
  name: 'echo',
  namespace: 'util',
  description: 'Echoes',
  defer: 'never',
  tool: tool({ description: 'Echoes', inputSchema: jsonSchema({ type: 'object' }), execute: async (input) => input }),
})
const options = { toolCallId: 'bench', messages: [] }
const fmt = (ms) => `${ms.toFixed(1)} ms`
const row = (label, times) => console.log(`| ${label} | ${fmt(median(times))} | ${fmt(percentile(times, 0.9))} | ${fmt(Math.max(...times))} |`)

async function time(code, opts = {}, signal) {
  const exec = createToolExecTool(registry, { allowedNames: ['echo'], poolSize: 2, ...opts })
  const t0 = performance.now()
  const output = await exec.execute({ code }, { ...options, abortSignal: signal })
  return { ms: performance.now() - t0, output }
}

async function overshoot(code, expectLimit) {
  const times = []
  for (let i = 0; i < RUNS; i++) {
    const { ms, output } = await time(code, { limits: { timeoutMs: TIMEOUT_MS } })
    if (!output.error?.startsWith(expectLimit)) throw new Error(`unexpected outcome: ${JSON.stringify(output).slice(0, 200)}`)
    times.push(ms - TIMEOUT_MS)
  }
  return times
}

console.log(`load average at the start: ${loadavg().map((l) => l.toFixed(2)).join(' ')}; ${RUNS} runs per row, pool of 2`)
await time('return 1')
// Resident memory (Linux /proc): this process and its sandboxes, sampled every 5 ms while 16
// runs allocate close to a 64 MiB cap, two at a time (the pool's size). Measured first, while
// the pool of 2 is this process's only one (the rows below start pools of other sizes).
const residentKiB = (pid) => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1])
  } catch {
    return 0
  }
}
if (process.platform === 'linux') {
  const cap = 64 << 20
  const exec = createToolExecTool(registry, { allowedNames: ['echo'], poolSize: 2, limits: { memoryLimitBytes: cap } })
  const hostBefore = residentKiB(process.pid)
  let sandboxPeak = 0
  let hostPeak = 0
  const sampler = setInterval(() => {
    sandboxPeak = Math.max(sandboxPeak, sandboxProcesses().reduce((sum, pid) => sum + residentKiB(pid), 0))
    hostPeak = Math.max(hostPeak, residentKiB(process.pid))
  }, 5)
  // Fragmenting: blocks of many sizes, every other one dropped, until about 56 MiB are held.
  const nearCap = 'const keep = []; let held = 0; for (let i = 0; held < 56e6; i++) { const n = 64 + (i % 97) * 600; keep.push(new Uint8Array(n)); held += n; if (i % 2) { held -= keep[i - 1].length; keep[i - 1] = null } } return keep.length'
  const outcomes = await Promise.all(Array.from({ length: 16 }, () => exec.execute({ code: nearCap }, options)))
  clearInterval(sampler)
  const failed = outcomes.filter((o) => o.isError)
  const mib = (kib) => `${(kib / 1024).toFixed(1)} MiB`
  console.log(`\n16 near-cap runs (64 MiB cap, pool of 2): ${16 - failed.length} returned${failed.length ? `, ${failed.length} failed: ${failed[0].error}` : ''}`)
  console.log(`peak resident memory: the sandboxes together ${mib(sandboxPeak)}; this Node process ${mib(hostBefore)} before, ${mib(hostPeak)} at most (sandboxes + Node's growth: ${mib(sandboxPeak + hostPeak - hostBefore)}; bound 2 × 64 + 64 = 192 MiB)`)
}
console.log('\n| what | p50 | p90 | max |\n|---|---:|---:|---:|')
row(`past timeoutMs, a JS loop (stops when asked)`, await overshoot('for (;;) {}', 'timeoutMs'))
const killed = "const h = 'a'.repeat(1e6); return h.indexOf('a'.repeat(5e5) + 'b')"
row(`past timeoutMs, a long indexOf`, await overshoot(killed, 'timeoutMs'))
row(`past timeoutMs, sorting typed arrays in a loop`, await overshoot('const a = new Float64Array(2e6).map(Math.random); for (;;) a.sort()', 'timeoutMs'))

const abortTimes = []
const afterKill = []
for (let i = 0; i < RUNS; i++) {
  const controller = new AbortController()
  const running = time(killed, { limits: { timeoutMs: 60_000 } }, controller.signal)
  await new Promise((resolve) => setTimeout(resolve, 20))
  const t0 = performance.now()
  controller.abort()
  await running
  abortTimes.push(performance.now() - t0)
  afterKill.push((await time('return 1')).ms)
}
row('abort to resolution, a long indexOf', abortTimes)
row('`return 1` right after that abort', afterKill)

const memory = []
const stack = []
for (let i = 0; i < RUNS; i++) {
  memory.push((await time("try { const a = []; for (;;) a.push('x'.repeat(1e5)) } catch { return 1 }", { limits: { memoryLimitBytes: 16 << 20 } })).ms)
  stack.push((await time('const f = () => f(); try { f() } catch { return 1 }')).ms)
}
row('a run that passes memoryLimitBytes (16 MiB), start to resolution', memory)
row('a run that passes maxStackSizeBytes (2 MiB), start to resolution', stack)

const fresh = []
for (let size = 3; size < 3 + Math.min(RUNS, 20); size++) fresh.push((await time('return 1', { poolSize: size })).ms)
row('first `return 1` on a new pool (starts a sandbox process)', fresh)
console.log(`\nload average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
process.exit(0)
