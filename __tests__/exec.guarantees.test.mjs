// tool_exec's guarantees, attacked by class with several variants each: runs that never end
// (built-ins that do not check in), limits the code tries to catch, approval bypasses, prototype
// keys across the bridge, and what is left behind (CPU, the pool's capacity). Every bound here
// is loose on purpose (a loaded CI machine); the measured grace is in bench/exec.guarantees.mjs.
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { describe, it, expect } from 'vitest'
import { createToolExecTool } from '../index.js'
import { quietRegistry, registerTool } from './helpers.mjs'
import { soak, sandboxProcesses, SCRIPTS } from '../bench/exec.soak.mjs'

const MiB = 1 << 20
const { registry } = quietRegistry()
const ran = []

const register = (name, execute, extra) => registerTool(registry, name, execute, extra)

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

register('echo', async (input, { toolCallId }) => {
  ran.push({ tool: 'echo', input, toolCallId })
  return input
})
register('gated', async (input) => {
  ran.push({ tool: 'gated', input })
  return 'gated ran'
}, { needsApproval: true })
register('remove', async (input) => {
  ran.push({ tool: 'remove', input })
  return 'removed'
}, {
  // Approval depends on a field whose default is the dangerous value.
  schema: { type: 'object', properties: { path: { type: 'string' }, mode: { type: 'string', enum: ['trash', 'delete'], default: 'delete' } }, required: ['path'] },
  needsApproval: async ({ mode }) => mode === 'delete',
})
register('naiveMerge', async (input) => {
  // What a careless host tool does with its params.
  const merge = (target, source) => {
    for (const key of Object.keys(source)) {
      if (source[key] && typeof source[key] === 'object') merge((target[key] ??= {}), source[key])
      else target[key] = source[key]
    }
    return target
  }
  ran.push({ tool: 'naiveMerge', input })
  return Object.keys(merge({}, input))
})
register('bigText', async ({ value }) => 'x'.repeat(value))

const ALLOWED = ['echo', 'gated', 'remove', 'naiveMerge', 'bigText']
const options = (toolCallId = 'outer', signal) => ({ toolCallId, messages: [], abortSignal: signal })

function execTool(rest = {}) {
  return createToolExecTool(registry, { allowedNames: ALLOWED, poolSize: 2, ...rest })
}

/** Runs code, returning the output and how long it took to resolve. */
async function timed(code, rest = {}, toolCallId = 'outer', signal) {
  const started = performance.now()
  const output = await execTool(rest).execute({ code }, options(toolCallId, signal))
  return { output, ms: performance.now() - started }
}

const limitOf = (output) => (output.errorCode === 'TOOLREG_EXEC_LIMIT' ? output.error.split(' ')[0] : `${output.errorCode}: ${output.error}`)

/** CPU time (ms) used so far by this process's sandbox processes (Linux /proc). */
function sandboxCpuMs() {
  let ticks = 0
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue
    let stat
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    } catch {
      continue
    }
    // After "pid (comm) ": state ppid … utime (14th field) stime (15th).
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    if (Number(fields[1]) === process.pid && stat.includes('(toolreg-exec')) ticks += Number(fields[11]) + Number(fields[12])
  }
  return ticks * 10
}

/** Nothing burns CPU after runs resolved: neither the sandboxes nor this process. */
async function expectQuietSecond() {
  const sandboxes = sandboxCpuMs()
  const own = process.cpuUsage()
  await sleep(1000)
  expect(sandboxCpuMs() - sandboxes).toBeLessThan(100)
  const used = process.cpuUsage(own)
  expect((used.user + used.system) / 1000).toBeLessThan(300)
}

async function expectResponsive() {
  const { output, ms } = await timed('return 1')
  expect(output).toEqual({ result: 1 })
  expect(ms).toBeLessThan(1000)
}

const TIMEOUT = 300
/** Loose on purpose: the grace measured on an idle machine is in docs/benchmarks.md. */
const SLACK = 1500

describe('runs that never end', () => {
  // Each spends its time inside one native built-in that does not poll the interrupt handler
  // (or polls it too rarely). Some also allocate; then memory may be the limit they meet.
  const cases = [
    ['indexOf with a long needle', "const h = 'a'.repeat(2e6), n = 'a'.repeat(1e6) + 'b'; return h.indexOf(n)"],
    ['includes with a long needle', "const h = 'a'.repeat(2e6), n = 'a'.repeat(1e6) + 'b'; return h.includes(n)"],
    ['lastIndexOf with a long needle', "const h = 'a'.repeat(2e6), n = 'a'.repeat(1e6) + 'b'; return h.lastIndexOf(n)"],
    ['split with a long separator', "const h = 'a'.repeat(2e6), n = 'a'.repeat(1e6) + 'b'; return h.split(n).length"],
    ['reverse of a huge array-like', 'return Array.prototype.reverse.call({ length: 2 ** 32 - 2 })'],
    ['copyWithin of a huge array-like', 'return Array.prototype.copyWithin.call({ length: 2 ** 53 - 1 }, 0, 1)'],
    ['indexOf of a huge array-like', 'return Array.prototype.indexOf.call({ length: 2 ** 53 - 1 }, 1)'],
    ['includes of a huge array-like', 'return Array.prototype.includes.call({ length: 2 ** 53 - 1 }, 1)'],
    ['sorting a large typed array in a loop', 'const a = new Float64Array(2e6).map(Math.random); for (;;) a.sort()'],
    ['sorting an array with a slow native comparison in a loop', 'const a = Array.from({ length: 3e5 }, (_, i) => String(i)); for (;;) a.sort().reverse()'],
    ['catastrophic regex backtracking', "return /^(a+)+\\1$/.test('a'.repeat(40) + 'b')"],
    ['nested quantifiers with a back-reference', "return /(a|aa)*\\1c/.test('a'.repeat(60))"],
    ['JSON.stringify of a DAG with shared leaves', 'let o = 1; for (let i = 0; i < 40; i++) o = [o, o]; return JSON.stringify(o).length', ['memoryLimitBytes']],
    ['flat of a DAG', 'let o = [1]; for (let i = 0; i < 40; i++) o = [o, o]; return o.flat(Infinity).length', ['memoryLimitBytes']],
  ]

  for (const [name, code, alsoAllowed = []] of cases) {
    it(`${name}: resolves within timeoutMs + grace, with its limit`, async () => {
      const { output, ms } = await timed(code, { limits: { timeoutMs: TIMEOUT } })
      expect(['timeoutMs', ...alsoAllowed]).toContain(limitOf(output))
      expect(ms).toBeLessThan(TIMEOUT + SLACK)
      await expectResponsive()
    }, 20_000)
  }

  it('leaves nothing burning after they resolved', async () => {
    await expectQuietSecond()
  })

  it('an abort resolves a never-ending run within the grace, in every phase', async () => {
    for (const code of ['for (;;) {}', cases[0][1], 'const a = new Float64Array(2e6).map(Math.random); for (;;) a.sort()']) {
      const controller = new AbortController()
      const running = timed(code, { limits: { timeoutMs: 60_000 } }, 'outer', controller.signal)
      await sleep(100)
      const aborted = performance.now()
      controller.abort()
      const { output } = await running
      expect(output.errorCode).toBe('TOOLREG_EXEC_ABORTED')
      expect(performance.now() - aborted).toBeLessThan(SLACK)
    }
    await expectResponsive()
  }, 20_000)

  it('as many as the pool has places, then 100 ordinary runs all succeed', async () => {
    const pool = { poolSize: 3, limits: { timeoutMs: 500 } }
    const hostile = [cases[0][1], cases[4][1], cases[8][1]].map((code) => timed(code, pool))
    const ordinary = Array.from({ length: 100 }, (_, i) => timed(`return ${i} * 2`, { poolSize: 3 }))
    const results = await Promise.all(ordinary)
    expect(results.map((r) => r.output.result)).toEqual(Array.from({ length: 100 }, (_, i) => i * 2))
    for (const { output } of await Promise.all(hostile)) expect(limitOf(output)).toBe('timeoutMs')
  }, 30_000)
})

describe('limits the code tries to catch end the run', () => {
  const memory = { memoryLimitBytes: 16 * MiB }
  it.each([
    ['a growing array, caught', "try { const keep = []; for (;;) keep.push('x'.repeat(1e5 + keep.length)) } catch (e) { return 'caught' }"],
    ['one huge buffer, caught', "try { new ArrayBuffer(1 << 30) } catch { return 'caught' }"],
    ['a huge string, caught and retried', "for (let i = 0; i < 5; i++) { try { 'x'.repeat(2 ** 28) } catch {} } return 'survived'"],
    ['caught in a finally that keeps going', "try { const a = []; for (;;) a.push(new Array(1e5).fill(0)) } finally { return 'finally' }"],
    ['caught in a promise', "return await new Promise((r) => r(new Uint8Array(1 << 30))).catch(() => 'caught')"],
    // Near 2 GiB no allocation exists at all, so it fails before the memory grows: every
    // failed allocation ends the run, whatever its size (these were catchable, then a tool was
    // called and a result returned).
    ['a 2 GiB buffer, caught, then a call', "try { new ArrayBuffer(2 ** 31 - 1) } catch {} return await tools.echo({ after: 'caught' })"],
    ['a 2 GiB typed array, caught', "try { new Uint16Array(2 ** 30 - 1) } catch { return 'caught' }"],
    ['a 2 GiB two-byte string, caught', "try { return ('\u1234'.repeat(2 ** 29) + '\u1234'.repeat(2 ** 29 - 1)).length } catch { return 'caught' }"],
    ['a resizable buffer grown to 2 GiB, caught', "const b = new ArrayBuffer(8, { maxByteLength: 2 ** 31 - 1 }); try { b.resize(2 ** 31 - 1) } catch { return 'caught' }"],
    ['a buffer transferred to 2 GiB, caught', "try { new ArrayBuffer(8).transfer(2 ** 31 - 1) } catch { return 'caught' }"],
  ])('memory: %s', async (_, code) => {
    const { output } = await timed(code, { limits: memory })
    expect(output).toEqual({ isError: true, errorCode: 'TOOLREG_EXEC_LIMIT', error: `memoryLimitBytes exceeded (${16 * MiB}): the code allocated more than ${16 * MiB} bytes` })
  })

  it.each([
    ['recursion, caught', "const f = () => f(); try { f() } catch { return 'caught' }"],
    ['recursion, caught at every level', "const f = (n) => { try { return f(n + 1) } catch { return n } }; return f(0)"],
    ['deep JSON.parse, caught', "try { JSON.parse('['.repeat(1e6)) } catch { return 'caught' }"],
    ['deep JSON.stringify, caught', "let a = []; for (let i = 0; i < 1e5; i++) a = [a]; try { JSON.stringify(a) } catch { return 'caught' }"],
    ['a getter that recurses, caught', "const o = { get x() { return this.x } }; try { o.x } catch { return 'caught' }"],
  ])('stack: %s', async (_, code) => {
    const { output } = await timed(code)
    expect(output).toEqual({ isError: true, errorCode: 'TOOLREG_EXEC_LIMIT', error: 'maxStackSizeBytes exceeded (2097152): the code recursed too deep' })
  })

  it('bounds what a sandbox holds, not only what it asked for: fragmenting runs stay near the cap', async () => {
    // The cap is the engine's memory size, so the process's resident peak stays under it plus
    // the fixed base (wasmtime, the compiled engine, the untouched stack region), whatever the
    // pattern of allocations. (The counting allocator of the native engine let such a script
    // reach 131 MiB resident under a 64 MiB cap.)
    const before = new Set(sandboxProcesses())
    const tool = execTool({ poolSize: 1, limits: { memoryLimitBytes: 32 * MiB } })
    const fragmenting = [
      // Many small blocks freed in a checkerboard, then larger ones that fit no hole.
      'let keep = []; for (let round = 0; ; round++) { const a = []; for (let i = 0; i < 2e4; i++) a.push(new Uint8Array(64 + (i % 7) * 16)); keep.push(a.filter((_, i) => i % 2)); keep.push(new Uint8Array(1e5 + round * 4096)) }',
      'const keep = []; for (let i = 0; ; i++) { keep.push("x".repeat(1000 + (i % 100) * 37)); if (i % 3 === 0) keep[i >> 1] = null }',
      'const m = new Map(); for (let i = 0; ; i++) { m.set(i, { i, s: String(i).repeat(i % 50) }); if (i % 2) m.delete(i - 1) }',
    ]
    for (const code of fragmenting) {
      const output = await tool.execute({ code }, options())
      expect(limitOf(output)).toBe('memoryLimitBytes')
    }
    const ours = sandboxProcesses().filter((pid) => !before.has(pid))
    expect(ours.length).toBeGreaterThan(0)
    for (const pid of ours) {
      const peakKiB = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1])
      expect(peakKiB * 1024).toBeLessThan(32 * MiB + 32 * MiB)
    }
  })

  it('holds no tool answer outside the memory cap while the code computes', async () => {
    // Thirty 3 MB answers come back while the code computes and never awaits them. They wait
    // at the host until the engine asks (it never does), so the process stays within its cap
    // plus the fixed base; holding them in the process took 262 MiB resident under 64 MiB.
    const tool = execTool({ poolSize: 1, limits: { memoryLimitBytes: 16 * MiB, timeoutMs: 10_000 } })
    await tool.execute({ code: 'return 1' }, options())
    // Each process's peak counts from here (Linux: writing 5 to clear_refs resets VmHWM).
    const ours = sandboxProcesses()
    for (const pid of ours) writeFileSync(`/proc/${pid}/clear_refs`, '5')
    const code = 'const first = tools.echo({}); const calls = []; for (let i = 0; i < 30; i++) calls.push(tools.bigText({ value: 3e6 })); await first; const end = Date.now() + 1500; while (Date.now() < end) {} return 1'
    const output = await tool.execute({ code }, options())
    expect(output.errorCode, output.error).toBe('TOOLREG_EXEC_PENDING_CALLS')
    expect(output.error).toMatch(/30 tool call\(s\) were still pending .*; 30 had already run and their results were dropped; await/)
    expect(ours.length).toBeGreaterThan(0)
    for (const pid of ours) {
      const peakKiB = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1])
      expect(peakKiB * 1024).toBeLessThan(16 * MiB + 32 * MiB)
    }
    // Awaited one by one, the same answers pass, each counted in the engine's memory.
    const awaited = await tool.execute({ code: 'let n = 0; for (let i = 0; i < 30; i++) n += (await tools.bigText({ value: 3e6 })).length; return n' }, options())
    expect(awaited).toEqual({ result: 9e7 })
  })

  it('reports what only looks like a limit as what it is', async () => {
    const cases = [
      ['throw null', 'uncaught null'],
      ["throw new Error('out of memory')", 'uncaught Error: out of memory'],
      ["throw new RangeError('Maximum call stack size exceeded')", 'uncaught RangeError: Maximum call stack size exceeded'],
      ["throw new Error('interrupted')", 'uncaught Error: interrupted'],
    ]
    for (const [code, error] of cases) expect((await timed(code)).output).toEqual({ isError: true, errorCode: 'TOOLREG_EXEC_UNCAUGHT', error })
  })

  it('passes a multi-megabyte tool output whole, several times in a row', async () => {
    // Larger than a pipe's buffer: the frame goes partly straight in, partly through the writer.
    const { output } = await timed('const a = await tools.bigText({ value: 3e6 }); const b = await tools.bigText({ value: 2e6 + 1 }); return [a.length, b.length, a === "x".repeat(3e6)]')
    expect(output).toEqual({ result: [3e6, 2e6 + 1, true] })
  })

  it('names the memory limit when a tool output does not fit while it is parsed', async () => {
    const { output } = await timed('return (await tools.bigText({ value: 3e6 })).length', { limits: { memoryLimitBytes: 4 * MiB } })
    expect(limitOf(output)).toBe('memoryLimitBytes')
  })

  it('caps error text like results, whatever the code throws', async () => {
    for (const code of ["throw new Error('x'.repeat(5e7))", "throw 'y'.repeat(5e7)", "throw { message: 'z'.repeat(5e7) }", "const e = new Error('a'); e.name = 'N'.repeat(5e7); throw e"]) {
      const { output } = await timed(code, { limits: { memoryLimitBytes: 256 * MiB } })
      expect(output.errorCode).toBe('TOOLREG_EXEC_UNCAUGHT')
      // The whole sentence, name, message and code together, within 16 KiB (maxResultBytes when lower).
      expect(Buffer.byteLength(output.error)).toBeLessThanOrEqual(16 * 1024)
      expect(output.error).toContain('…(cut)')
    }
    const { output } = await timed("throw new Error('x'.repeat(500))", { limits: { maxResultBytes: 100 } })
    expect(output.error).toBe(`uncaught Error: ${'x'.repeat(75)} …(cut)`)
    expect(Buffer.byteLength(output.error)).toBe(100)
  }, 30_000)

  it('logs a lone surrogate as a replacement character instead of failing', async () => {
    const { output } = await timed("console.log('a\\ud800b', { s: '\\udc00' }); return 'ok'")
    expect(output).toEqual({ result: 'ok', logs: ['a\ufffdb {"s":"\\udc00"}'] })
  })

  it('bounds the time in the queue with its own limit, and resolves an aborted queued run at once', async () => {
    const busy = [1, 2].map(() => timed('for (;;) {}', { poolSize: 4, limits: { timeoutMs: 1500 } }))
    busy.push(...[3, 4].map(() => timed('for (;;) {}', { poolSize: 4, limits: { timeoutMs: 1500 } })))
    await sleep(200)
    const queued = await timed('return 1', { poolSize: 4, limits: { queueTimeoutMs: 100 } })
    expect(queued.output).toEqual({
      isError: true,
      errorCode: 'TOOLREG_EXEC_LIMIT',
      error: 'queueTimeoutMs exceeded (100): no sandbox was free within 100 ms (4 runs execute at once; raise poolSize or queueTimeoutMs)',
    })
    expect(queued.ms).toBeLessThan(100 + SLACK)
    const controller = new AbortController()
    const waiting = timed('return 1', { poolSize: 4 }, 'outer', controller.signal)
    await sleep(50)
    const aborted = performance.now()
    controller.abort()
    expect((await waiting).output.errorCode).toBe('TOOLREG_EXEC_ABORTED')
    expect(performance.now() - aborted).toBeLessThan(SLACK)
    await Promise.all(busy)
  }, 20_000)
})

describe('approval cannot be bypassed', () => {
  /** An onApprovalRequest that records each request and answers with `answer()`. */
  function approver(answer = async () => true) {
    const asked = []
    return {
      asked,
      onApprovalRequest: (request) => {
        asked.push(request)
        return answer(request)
      },
    }
  }

  it('a gated call left pending at return never runs, even when approved', async () => {
    for (const code of ['tools.gated({ value: 1 }); return 1', 'tools.gated({}); tools.gated({}); return 1', "void tools.invoke('gated', {}); return 'x'"]) {
      ran.length = 0
      const { asked, onApprovalRequest } = approver()
      const { output } = await timed(code, { onApprovalRequest })
      expect(output.errorCode).toBe('TOOLREG_EXEC_PENDING_CALLS')
      await sleep(100)
      expect(ran).toEqual([])
      // If the prompt raced the run's end, it was told the run ended.
      for (const request of asked) expect(request.abortSignal.aborted).toBe(true)
    }
  })

  it('an abort while the prompt is open: a later approval runs nothing', async () => {
    ran.length = 0
    let approve
    const { asked, onApprovalRequest } = approver(() => new Promise((resolve) => (approve = resolve)))
    const controller = new AbortController()
    const running = timed('return await tools.gated({ value: 2 })', { onApprovalRequest }, 'outer', controller.signal)
    while (asked.length === 0) await sleep(5)
    controller.abort()
    expect((await running).output.errorCode).toBe('TOOLREG_EXEC_ABORTED')
    expect(asked[0].abortSignal.aborted).toBe(true)
    approve(true)
    await sleep(100)
    expect(ran).toEqual([])
  })

  it('a timeout while the prompt is open: a later approval runs nothing', async () => {
    ran.length = 0
    let approve
    const { asked, onApprovalRequest } = approver(() => new Promise((resolve) => (approve = resolve)))
    // The code keeps working while the prompt is open, so the clock runs.
    const running = timed('const p = tools.gated({}); await tools.echo({}); for (;;) {}', { onApprovalRequest, limits: { timeoutMs: 300 } })
    while (asked.length === 0) await sleep(5)
    expect(limitOf((await running).output)).toBe('timeoutMs')
    approve(true)
    await sleep(100)
    expect(ran.filter((call) => call.tool === 'gated')).toEqual([])
  })

  it('a tool called from a toJSON of the returned value neither runs nor asks', async () => {
    for (const code of [
      'return { toJSON() { tools.gated({}); return 1 } }',
      'return { toJSON() { tools.echo({ v: 1 }); return 1 } }',
      "return [{ toJSON: () => tools.invoke('gated', {}) }]",
      'return { a: { toJSON() { return tools.echo({}) } } }',
    ]) {
      ran.length = 0
      const { asked, onApprovalRequest } = approver()
      const { output } = await timed(code, { onApprovalRequest })
      expect(output.errorCode).toBe('TOOLREG_EXEC_RESULT_NOT_JSON')
      expect(output.error).toContain('was called while the returned value was serialised')
      await sleep(50)
      expect({ ran, asked }).toEqual({ ran: [], asked: [] })
    }
  })

  it('is decided on the params that execute, defaults applied', async () => {
    ran.length = 0
    const { asked, onApprovalRequest } = approver(async () => false)
    const { output } = await timed("try { await tools.remove({ path: '/tmp/x' }) } catch (e) { return e.code }", { onApprovalRequest })
    expect(output).toEqual({ result: 'TOOLREG_APPROVAL_DENIED' })
    expect(asked.map((r) => r.input)).toEqual([{ path: '/tmp/x', mode: 'delete' }])
    const trash = await timed("return await tools.remove({ path: '/tmp/x', mode: 'trash' })", { onApprovalRequest })
    expect(trash.output).toEqual({ result: 'removed' })
    expect(ran).toEqual([{ tool: 'remove', input: { path: '/tmp/x', mode: 'trash' } }])
    // Without onApprovalRequest, the defaulted call is refused, not run.
    const refused = await timed("try { await tools.remove({ path: '/tmp/y' }) } catch (e) { return e.code }")
    expect(refused.output).toEqual({ result: 'TOOLREG_APPROVAL_REQUIRED' })
    expect(ran).toHaveLength(1)
  })
})

describe('the bridge passes plain JSON data only', () => {
  it.each([
    ['__proto__ at the top', `JSON.parse('{"__proto__": {"polluted": 1}}')`, 'params.__proto__'],
    ['__proto__ nested', `JSON.parse('{"a": {"b": {"__proto__": {"polluted": 1}}}}')`, 'params.a.b.__proto__'],
    ['__proto__ in an array', `JSON.parse('{"list": [1, {"__proto__": {"polluted": 1}}]}')`, 'params.list[1].__proto__'],
    ['constructor.prototype', `({ constructor: { prototype: { polluted: 1 } } })`, 'params.constructor'],
    ['prototype', `({ x: { prototype: { polluted: 1 } } })`, 'params.x.prototype'],
    ['a key made by defineProperty', `(() => { const o = {}; Object.defineProperty(o, '__proto__', { value: { polluted: 1 }, enumerable: true }); return o })()`, 'params.__proto__'],
  ])('refuses %s, naming the path, and the host stays clean', async (_, params, path) => {
    ran.length = 0
    const { output } = await timed(`try { await tools.naiveMerge(${params}) } catch (e) { return [e.code, e.message] }`)
    expect(output.result).toEqual([
      'TOOLREG_EXEC_FORBIDDEN_KEY',
      `params of naiveMerge have a key ${path}: the keys __proto__, constructor and prototype cannot be passed to host tools`,
    ])
    expect(ran).toEqual([])
    expect({}.polluted).toBeUndefined()
  })

  it('passes keys that only resemble them', async () => {
    const { output } = await timed("return await tools.naiveMerge({ proto: 1, __proto: 2, constructors: 3, prototypes: { x: 1 } })")
    expect(output.result.sort()).toEqual(['__proto', 'constructors', 'proto', 'prototypes'])
  })
})

describe('a short soak of mixed hostile and ordinary runs', () => {
  it('gives each run its outcome, none late, and leaves no process beyond the pools', async () => {
    const { wrong, late } = await soak(SCRIPTS.length * 20, SLACK)
    expect(wrong).toEqual({})
    expect(late).toEqual([])
    // Replacements for the killed processes start in the background.
    await sleep(500)
    // This file's pools: sizes 1, 2, 3 and 4.
    expect(sandboxProcesses().length).toBeLessThanOrEqual(1 + 2 + 3 + 4)
  }, 120_000)
})

describe('the sandbox process', () => {
  it('a missing sandbox executable fails the run with an error that names it', async () => {
    process.env.TOOLREG_EXEC_HELPER = '/nonexistent/toolreg-exec'
    try {
      // A pool size no other test uses, so this pool is made with the path above.
      const { output } = await timed('return 1', { poolSize: 7 })
      expect(output.errorCode).toBe('TOOLREG_EXEC_ENGINE')
      expect(output.error).toContain('cannot start the tool_exec sandbox process /nonexistent/toolreg-exec')
    } finally {
      delete process.env.TOOLREG_EXEC_HELPER
    }
  })

  it.skipIf(process.platform !== 'linux')('no sandbox process outlives a host that is killed mid-run', async () => {
    // A host process whose sandbox runs an endless loop is killed (SIGKILL: no exit handler
    // runs); the sandbox sees its pipe close and ends, mid-run.
    const script = `
      const { ToolRegistry, createToolExecTool } = require(${JSON.stringify(new URL('../index.js', import.meta.url).pathname)})
      const registry = new ToolRegistry({ logger: { warn() {} } })
      const exec = createToolExecTool(registry, { allowedNames: [], poolSize: 2, limits: { timeoutMs: 60000 } })
      exec.execute({ code: 'for (;;) {}' }, { toolCallId: 'endless', messages: [] })
      setTimeout(() => console.log('running'), 500)
    `
    const host = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] })
    await new Promise((resolve, reject) => {
      host.stdout.on('data', (chunk) => String(chunk).includes('running') && resolve())
      host.on('exit', (code) => reject(new Error(`the host exited early (${code})`)))
    })
    const alive = (pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
        return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z'
      } catch {
        return false
      }
    }
    const sandboxes = readdirSync('/proc').filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
        return stat.includes('(toolreg-exec') && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === host.pid
      } catch {
        return false
      }
    })
    // The process running the loop (the pool starts a spare when it is needed).
    expect(sandboxes.length).toBeGreaterThan(0)
    host.kill('SIGKILL')
    for (let i = 0; i < 40 && sandboxes.some(alive); i++) await sleep(50)
    expect(sandboxes.filter(alive)).toEqual([])
  })

  const filters = (status) => Number(/^Seccomp_filters:\s+(\d+)$/m.exec(status)?.[1] ?? 0)
  it.skipIf(process.platform !== 'linux' || !['x64', 'arm64'].includes(process.arch))(
    'runs under a seccomp filter of its own, with an empty environment',
    async () => {
      expect((await timed('return 1')).output).toEqual({ result: 1 })
      // Replacements for processes killed by earlier tests may still be starting.
      await sleep(500)
      const own = readFileSync('/proc/self/status', 'utf8')
      const sandboxes = sandboxProcesses()
      expect(sandboxes.length).toBeGreaterThan(0)
      for (const pid of sandboxes) {
        const status = readFileSync(`/proc/${pid}/status`, 'utf8')
        expect(status).toMatch(/^Seccomp:\s+2$/m)
        if (/^Seccomp_filters:/m.test(own)) expect(filters(status)).toBe(filters(own) + 1)
        expect(readFileSync(`/proc/${pid}/environ`, 'utf8')).toBe('')
      }
    },
  )
})
