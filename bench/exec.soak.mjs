// tool_exec soak: 10,000 runs (trivial, tool calls, console output, thrown errors, memory bombs,
// timeouts) and the process's RSS before and after. Not part of `npm test`.
// Run: node --expose-gc bench/exec.soak.mjs [runs]
import { createRequire } from 'node:module'
import { loadavg } from 'node:os'
import { statSync } from 'node:fs'
import { tool, jsonSchema } from 'ai'

const require = createRequire(import.meta.url)
const { ToolRegistry, createToolExecTool } = require('../index.js')

if (typeof global.gc !== 'function') {
  console.log('exec.soak: run with node --expose-gc')
  process.exit(1)
}
const runs = Number(process.argv[2] ?? 10_000)
const addon = process.env.NAPI_RS_NATIVE_LIBRARY_PATH || require.resolve('../toolreg.linux-x64-gnu.node')
console.log(`addon ${addon} (${(statSync(addon).size / 2 ** 20).toFixed(1)} MiB), load average at the start: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
const registry = new ToolRegistry()
registry.register({
  name: 'echo',
  namespace: 'util',
  description: 'Echoes its input',
  defer: 'never',
  tool: tool({ description: 'Echoes its input', inputSchema: jsonSchema({ type: 'object' }), execute: async (input) => input }),
})
const exec = createToolExecTool(registry, { allowedNames: ['echo'], limits: { timeoutMs: 50, memoryLimitBytes: 8 << 20 } })
const scripts = [
  'return 1',
  'const r = await parallel(tools.echo({ i: 1 }), tools.echo({ i: 2 }), tools.echo({ i: 3 })); return r.length',
  "for (let i = 0; i < 50; i++) console.log('line', i); return 'logged'",
  "throw new Error('boom')",
  "const keep = []; for (let i = 0; ; i++) keep.push('x'.repeat(100000 + i))",
  'const a = []; for (let i = 0; i < 20000; i++) a.push({ i, s: String(i) }); return a.length',
  "Object.prototype.x = 1; globalThis.leak = 'y'.repeat(1000); return 1",
]
const options = { toolCallId: 'soak', messages: [] }
const mib = (bytes) => (bytes / (1 << 20)).toFixed(1)

async function batch(count) {
  const failures = {}
  // Failures by code and script index, to tell the expected ones (throw, memory bomb) from load.
  for (let i = 0; i < count; i++) {
    const output = await exec.execute({ code: scripts[i % scripts.length] }, options)
    if (output.errorCode) {
      const key = `${output.errorCode}#${i % scripts.length}`
      failures[key] = (failures[key] ?? 0) + 1
    }
  }
  return failures
}

async function settledRss() {
  for (let i = 0; i < 3; i++) {
    global.gc()
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return process.memoryUsage().rss
}

await batch(500)
const before = await settledRss()
const t0 = Date.now()
const failures = await batch(runs)
const after = await settledRss()
console.log(`${runs} runs in ${((Date.now() - t0) / 1000).toFixed(1)} s (failures by code#script: ${JSON.stringify(failures)})`)
console.log(`RSS after warm-up ${mib(before)} MiB, after the soak ${mib(after)} MiB: growth ${mib(after - before)} MiB`)
console.log(`load average at the end (1/5/15 min): ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)
