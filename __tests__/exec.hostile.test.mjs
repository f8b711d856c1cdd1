// Hostile code against tool_exec: each script must stay contained and fail with its exact
// error (or, where catching is allowed, return exactly what the code could see).
import { describe, it, expect, beforeAll } from 'vitest'
import { createToolExecTool } from '../index.js'
import { quietRegistry, registerTool } from './helpers.mjs'

const MiB = 1 << 20
const calls = []
const { registry } = quietRegistry()

const register = (name, execute, extra) => registerTool(registry, name, execute, extra)

const sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => {
      clearTimeout(timer)
      reject(signal.reason)
    })
  })

register('echo', async (input, { toolCallId }) => {
  calls.push({ tool: 'echo', input, toolCallId })
  return input
})
register('slow', async ({ value = 50 }, { abortSignal, toolCallId }) => {
  const call = { tool: 'slow', toolCallId, aborted: false }
  calls.push(call)
  abortSignal?.addEventListener('abort', () => (call.aborted = true))
  await sleep(value, abortSignal)
  return { slept: value }
})
register('add', async ({ a, b }) => a + b, {
  schema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'], additionalProperties: false },
})
register('gated', async (input, { toolCallId }) => {
  calls.push({ tool: 'gated', input, toolCallId })
  return 'gated ran'
}, { needsApproval: true })
register('big', async ({ value }) => 'x'.repeat(value))
register('secret', async () => {
  calls.push({ tool: 'secret' })
  return 'leaked'
})

const ALLOWED = ['echo', 'slow', 'add', 'gated', 'big']

async function exec(code, { limits, allowedNames = ALLOWED, signal, toolCallId = 'outer', ...rest } = {}) {
  const execTool = createToolExecTool(registry, { allowedNames, limits, poolSize: 2, ...rest })
  return execTool.execute({ code }, { toolCallId, messages: [], abortSignal: signal })
}

const fast = { timeoutMs: 200 }
const small = { memoryLimitBytes: 16 * MiB }
const timeout = (ms = 200) => ({ errorCode: 'TOOLREG_EXEC_LIMIT', error: `timeoutMs exceeded (${ms}): the run took longer than ${ms} ms` })
const memory = (bytes = 16 * MiB) => ({ errorCode: 'TOOLREG_EXEC_LIMIT', error: `memoryLimitBytes exceeded (${bytes}): the code allocated more than ${bytes} bytes` })
const stack = { errorCode: 'TOOLREG_EXEC_LIMIT', error: 'maxStackSizeBytes exceeded (2097152): the code recursed too deep' }
const uncaught = (error) => ({ errorCode: 'TOOLREG_EXEC_UNCAUGHT', error: `uncaught ${error}` })
const noCompile = uncaught('TypeError: Compiling code at run time (Function, eval) is not available in tool_exec')
const failed = (expected) => (output) => {
  expect(output.result).toBeUndefined()
  expect(output.isError).toBe(true)
  expect({ errorCode: output.errorCode, error: output.error }).toEqual(expected)
}
const returns = (value) => (output) => expect(output).toEqual({ result: value })

/** [name, code, options, check] */
const cases = [
  // Infinite loops: wall clock, uncatchable.
  ['sync loop', 'while (true) {}', { limits: fast }, failed(timeout())],
  ['loop inside try/catch', 'try { for (;;) {} } catch (e) { return "caught" }', { limits: fast }, failed(timeout())],
  ['loop with finally', 'try { for (;;) {} } finally { return "finally" }', { limits: fast }, failed(timeout())],
  ['catching the interrupt in a loop', 'for (;;) { try { for (;;) {} } catch (e) {} }', { limits: fast }, failed(timeout())],
  ['async spin on await null', 'for (;;) await null', { limits: fast }, failed(timeout())],
  ['async spin on resolved promises', 'for (;;) await Promise.resolve(1)', { limits: fast }, failed(timeout())],
  // The chain also allocates (~400 MB/s here): room enough that time is the limit it meets.
  ['endless then chain', 'const spin = () => Promise.resolve().then(spin); spin(); await new Promise(() => {})', { limits: { ...fast, memoryLimitBytes: 1 << 30 } }, failed(timeout())],
  ['loop in a getter', 'const o = { get x() { for (;;) {} } }; return o.x', { limits: fast }, failed(timeout())],
  ['loop in toJSON of the result', 'return { toJSON() { for (;;) {} } }', { limits: fast }, failed(timeout())],
  ['loop in toString reached from the result', 'return { toJSON() { return String(this.inner) }, inner: { toString() { for (;;) {} } } }', { limits: fast }, failed(timeout())],
  ['catastrophic regex', "return /^(a+)+$/.test('a'.repeat(40) + 'b')", { limits: fast }, failed(timeout())],
  ['loop in a sort comparator', '[3, 2, 1].sort(() => { for (;;) {} })', { limits: fast }, failed(timeout())],
  ['endless generator', 'function* g() { for (;;) yield 1 } for (const x of g()) {}', { limits: fast }, failed(timeout())],
  ['loop in toJSON of tool params', 'await tools.echo({ toJSON() { for (;;) {} } })', { limits: fast }, failed(timeout())],
  ['loop in toJSON of a console argument', 'console.log({ toJSON() { for (;;) {} } })', { limits: fast }, failed(timeout())],
  ['loop while a tool call is in flight', 'tools.slow({ value: 50 }); for (;;) {}', { limits: fast }, failed(timeout())],
  ['awaiting a tool that outlives the clock', 'await tools.slow({ value: 5000 })', { limits: fast }, failed(timeout())],

  // Memory bombs.
  ['string doubling (ropes hit the length cap first)', "let s = 'x'; for (;;) s += s", { limits: small }, failed(uncaught('InternalError: string too long'))],
  ['flat strings', "const keep = []; for (let i = 0; ; i++) keep.push('x'.repeat(100000 + i))", { limits: small }, failed(memory())],
  ['huge repeat', "return 'x'.repeat(2 ** 29).length", { limits: small }, failed(memory())],
  ['array of objects', 'const a = []; for (;;) a.push({ i: a.length })', { limits: small }, failed(memory())],
  ['dense array fill', 'return new Array(1e8).fill(0).length', { limits: small }, failed(memory())],
  ['one huge typed array', 'return new Uint8Array(2 ** 30).length', { limits: small }, failed(memory())],
  ['many typed arrays', 'const a = []; for (;;) a.push(new Float64Array(1 << 17))', { limits: small }, failed(memory())],
  ['object with endless keys', "const o = {}; for (let i = 0; ; i++) o['k' + i] = i", { limits: small }, failed(memory())],
  ['closures', 'const fs = []; for (let i = 0; ; i++) fs.push(() => i)', { limits: small }, failed(memory())],
  ['map growth', 'const m = new Map(); for (let i = 0; ; i++) m.set(i, [i])', { limits: small }, failed(memory())],
  ['100 MB result', "return 'x'.repeat(100 * 2 ** 20)", {}, failed(memory(64 * MiB))],
  ['memory bomb in toJSON of the result', 'return { toJSON() { const a = []; for (;;) a.push([a.length]) } }', { limits: small }, failed(memory())],

  // Deep recursion.
  ['direct recursion', 'const f = () => f(); f()', {}, failed(stack)],
  ['recursion through a getter', 'const o = { get x() { return this.x } }; return o.x', {}, failed(stack)],
  ['deeply nested result', 'let o = {}; for (let i = 0; i < 1e5; i++) o = { o }; return o', {}, failed(stack)],
  ['recursion inside an async function', 'const f = async (n) => f(n + 1); await f(0)', {}, failed(stack)],

  // Compiling code at run time, modules, host globals.
  ['Function', "return Function('return 1')()", {}, failed(noCompile)],
  ['new Function', "return new Function('return 1')()", {}, failed(noCompile)],
  ['arrow constructor', "return (() => {}).constructor('return 1')()", {}, failed(noCompile)],
  ['async function constructor', "return (async function () {}).constructor('return 1')", {}, failed(noCompile)],
  ['generator constructor', "return (function* () {}).constructor('return 1')", {}, failed(noCompile)],
  ['async generator constructor', "return (async function* () {}).constructor('return 1')", {}, failed(noCompile)],
  ['constructor.constructor of the host API', "return tools.echo.constructor.constructor('return 1')()", {}, failed(noCompile)],
  ['Reflect.construct(Function)', "return Reflect.construct(Function, ['return 1'])", {}, failed(noCompile)],
  ['constructor found by getPrototypeOf', "return Object.getPrototypeOf(async () => {}).constructor('return 1')", {}, failed(noCompile)],
  ['the poisoned constructor cannot be deleted', 'delete Object.getPrototypeOf(function () {}).constructor', {}, failed(uncaught('TypeError: could not delete property'))],
  ['eval', "return eval('1')", {}, failed(uncaught('ReferenceError: eval is not defined'))],
  ['indirect eval', "return globalThis['ev' + 'al']('1')", {}, failed(uncaught('TypeError: not a function'))],
  ['dynamic import', "return await import('fs')", {}, failed(uncaught("ReferenceError: could not load module 'fs'"))],
  ['static import', "import fs from 'fs'", {}, (o) => expect([o.errorCode, o.error.startsWith('the code does not parse:')]).toEqual(['TOOLREG_EXEC_SYNTAX', true])],
  ['require', "return require('fs')", {}, failed(uncaught('ReferenceError: require is not defined'))],
  ['process', 'process.exit(1)', {}, failed(uncaught('ReferenceError: process is not defined'))],
  ['timers', 'setTimeout(() => {}, 1)', {}, failed(uncaught('ReferenceError: setTimeout is not defined'))],
  ['WebAssembly', 'return WebAssembly.Module', {}, failed(uncaught('ReferenceError: WebAssembly is not defined'))],
  ['fetch', "return fetch('http://127.0.0.1/')", {}, failed(uncaught('ReferenceError: fetch is not defined'))],
  ['Atomics.wait', 'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0)', {}, failed(uncaught('ReferenceError: Atomics is not defined'))],
  ['what the global object holds', 'return Object.getOwnPropertyNames(globalThis).filter((n) => /^[a-z]/.test(n)).sort()', {}, returns(['console', 'decodeURI', 'decodeURIComponent', 'encodeURI', 'encodeURIComponent', 'escape', 'globalThis', 'isFinite', 'isNaN', 'parallel', 'parseFloat', 'parseInt', 'queueMicrotask', 'settle', 'tools', 'undefined', 'unescape'])],

  // The host API cannot be rewired.
  ['overwriting a tool function (the code runs in strict mode)', "tools.echo = () => 'forged'", {}, failed(uncaught("TypeError: 'echo' is read-only"))],
  ['a failed overwrite leaves the tool working', "try { tools.echo = () => 'forged' } catch {} return await tools.echo({ value: 1 })", {}, returns({ value: 1 })],
  ['redefining tools', "Object.defineProperty(globalThis, 'tools', { value: {} })", {}, failed(uncaught('TypeError: property is not configurable'))],
  ['adding a tool', 'tools.secret = () => 1', {}, failed(uncaught('TypeError: object is not extensible'))],
  ['forging JSON.stringify', "JSON.stringify = () => '{\"value\":\"forged\"}'; return await tools.echo({ value: 1 })", {}, returns({ value: 1 })],
  ['forging Promise.all behind parallel', "Promise.all = () => 'forged'; return await parallel(tools.echo({ value: 1 }))", {}, returns([{ value: 1 }])],
  ['then on Object.prototype only fools this run', "Object.prototype.then = function (resolve) { delete Object.prototype.then; resolve('hijacked') }; return await tools.echo({ value: 1 })", {}, returns('hijacked')],
  ['tools has no prototype', "return [Object.getPrototypeOf(tools), 'constructor' in tools]", {}, returns([null, false])],

  // Forged and refused calls.
  ['a tool outside the allow-list', "return await tools.invoke('secret', {})", {}, failed(uncaught('TypeError [TOOLREG_UNKNOWN_TOOL]: tools.invoke("secret") is not a tool available to this code. Tools here: echo, slow, add, gated, big.'))],
  ['invoke with a forged this', "return await tools.invoke.call({ allowed: true }, 'secret')", {}, failed(uncaught('TypeError [TOOLREG_UNKNOWN_TOOL]: tools.invoke("secret") is not a tool available to this code. Tools here: echo, slow, add, gated, big.'))],
  ['a name that stringifies to a forbidden tool', "return await tools.invoke({ toString() { return 'secret' } })", {}, failed(uncaught('TypeError [TOOLREG_UNKNOWN_TOOL]: tools.invoke("secret") is not a tool available to this code. Tools here: echo, slow, add, gated, big.'))],
  ['a typo through invoke', "return await tools.invoke('ehco', {})", {}, failed(uncaught('TypeError [TOOLREG_UNKNOWN_TOOL]: tools.invoke("ehco") is not a tool available to this code. Did you mean echo?'))],
  ['a forbidden tool as a property', 'return await tools.secret({})', {}, failed(uncaught('TypeError [TOOLREG_UNKNOWN_TOOL]: tools.secret is not a tool available to this code. Tools here: echo, slow, add, gated, big.'))],
  ['a mistyped tool name', 'return await tools.ehco({})', {}, failed(uncaught('TypeError [TOOLREG_UNKNOWN_TOOL]: tools.ehco is not a tool available to this code. Did you mean echo?'))],
  ['a name with a NUL byte', "return await tools.invoke('echo\\u0000', {})", {}, failed(uncaught('TypeError [TOOLREG_UNKNOWN_TOOL]: tools.invoke("echo\\u0000") is not a tool available to this code. Did you mean echo?'))],
  ['invalid params are caught by validation', "try { await tools.add({ a: 'x' }) } catch (e) { return [e.code, e.message.split('\\n')[0]] }", {}, returns(['TOOLREG_INVALID_PARAMS', 'Invalid params for "add":'])],
  ['params that are not JSON', 'const a = {}; a.a = a; await tools.echo(a)', {}, failed(uncaught('TypeError: circular reference'))],

  // Limits on sizes and counts.
  ['100k console lines', "for (let i = 0; i < 100000; i++) console.log('line', i)", {}, failed({ errorCode: 'TOOLREG_EXEC_LIMIT', error: 'maxConsoleOutputBytes exceeded (65536): the code logged too much' })],
  // Each line costs what it adds to the logs the host receives (prefix, quotes, escapes, separator).
  ['65,536 empty warnings inside 64 KiB', "for (let i = 0; i < 65536; i++) console.warn('')", {}, failed({ errorCode: 'TOOLREG_EXEC_LIMIT', error: 'maxConsoleOutputBytes exceeded (65536): the code logged too much' })],
  ['a line of control characters, six bytes each once escaped', "console.log('\\u0001'.repeat(20000))", {}, failed({ errorCode: 'TOOLREG_EXEC_LIMIT', error: 'maxConsoleOutputBytes exceeded (65536): the code logged too much' })],
  ['logs that fit arrive within the limit as the host holds them', "for (let i = 0; i < 3000; i++) console.error('e' + i); return 'done'", {}, (output) => {
    expect(output.result).toBe('done')
    expect(output.logs[0]).toBe('[error] e0')
    expect(Buffer.byteLength(JSON.stringify(output.logs))).toBeLessThanOrEqual(65536 + 1)
  }],
  ['catching the console limit', "try { for (;;) console.log('0123456789') } catch (e) { return 'caught' }", {}, failed({ errorCode: 'TOOLREG_EXEC_LIMIT', error: 'maxConsoleOutputBytes exceeded (65536): the code logged too much' })],
  ['2 MiB result', "return 'x'.repeat(2 * 2 ** 20)", {}, failed({ errorCode: 'TOOLREG_EXEC_LIMIT', error: 'maxResultBytes exceeded (1048576): the result is more than 1048576 bytes of JSON' })],
  // A raw NUL character in the source: the engine reads C strings, so the addon writes it as \u0000.
  ['a raw NUL inside a string literal', "return ['a\u0000b'.length, `x\u0000`.charCodeAt(1), /\u0000/.test('\u0000')]", {}, returns([3, 0, true])],
  ['a raw NUL outside any literal', 'return 1 \u0000', {}, (output) => {
    expect(output.errorCode).toBe('TOOLREG_EXEC_SYNTAX')
    expect(output.error).toMatch(/^the code does not parse: /)
  }],
  // The error text is bounded as a whole: name, message and code share maxResultBytes (16 KiB at most).
  ['an error whose name, message and code are each huge', "const e = new Error('m'.repeat(1e5)); e.name = 'N'.repeat(1e5); e.code = 'C'.repeat(1e5); throw e", { limits: { maxResultBytes: 1000 } }, (output) => {
    expect(output.errorCode).toBe('TOOLREG_EXEC_UNCAUGHT')
    expect(Buffer.byteLength(output.error)).toBeLessThanOrEqual(1000)
    expect(output.error).toMatch(/^uncaught N+ …\(cut\) \[C+ …\(cut\)\]: m+ …\(cut\)$/)
  }],
  ['a huge multi-byte error message at the default limit', "throw new Error('€'.repeat(1e5))", {}, (output) => {
    expect(Buffer.byteLength(output.error)).toBeLessThanOrEqual(16 * 1024)
    expect(output.error).toMatch(/^uncaught Error: €+ …\(cut\)$/)
  }],
  // Results nest at most as deep as params: deeper, JSON.stringify and the providers' request builders fail later.
  ['a result 15,000 levels deep', 'let v = 1; for (let i = 0; i < 15000; i++) v = [v]; return v', {}, failed({ errorCode: 'TOOLREG_EXEC_LIMIT', error: 'maxResultDepth exceeded (128): the result nests more than 128 levels deep; return flatter data' })],
  ['a result 129 objects deep', 'let v = {}; for (let i = 0; i < 129; i++) v = { v }; return v', {}, failed({ errorCode: 'TOOLREG_EXEC_LIMIT', error: 'maxResultDepth exceeded (128): the result nests more than 128 levels deep; return flatter data' })],
  ['a result 128 levels deep, with brackets in its strings', "let v = '[[[{{{'; for (let i = 0; i < 128; i++) v = [v]; return JSON.stringify(v).length > 0 && v", {}, (output) => {
    expect(output.isError).toBeUndefined()
    expect(JSON.stringify(output.result).startsWith('[[[')).toBe(true)
  }],
  ['10k tool calls at the default limit', 'for (let i = 0; i < 10000; i++) await tools.echo({ value: i })', {}, failed({ errorCode: 'TOOLREG_EXEC_LIMIT', error: 'maxBridgeRequests exceeded (256): too many tool calls in one run' })],
  ['1,000 concurrent calls at the default limit', 'await parallel(Array.from({ length: 1000 }, (_, i) => tools.echo({ value: i })))', {}, failed({ errorCode: 'TOOLREG_EXEC_LIMIT', error: 'maxInFlightBridgeRequests exceeded (32): too many tool calls awaiting an answer at once' })],
  ['oversized params', "await tools.echo({ value: 'x'.repeat(2 ** 20) })", {}, failed({ errorCode: 'TOOLREG_EXEC_LIMIT', error: 'maxToolInputBytes exceeded (1048576): params of echo are more than 1048576 bytes of JSON' })],
  ['oversized tool output', 'await tools.big({ value: 5 * 2 ** 20 })', {}, failed({ errorCode: 'TOOLREG_EXEC_LIMIT', error: 'maxToolOutputBytes exceeded (4194304): big returned 5242882 bytes' })],
  ['oversized source', `return 1${' '.repeat(256 * 1024)}`, {}, failed({ errorCode: 'TOOLREG_EXEC_LIMIT', error: 'maxSourceBytes exceeded (262144): the code is 262152 bytes' })],

  // Ending badly.
  ['unresolved promise at the end', 'await new Promise(() => {})', {}, failed({ errorCode: 'TOOLREG_EXEC_UNSETTLED', error: 'the code is waiting on a promise that can never settle (no tool call is pending); do not await promises nothing resolves' })],
  ['a tool call left pending', 'tools.slow({ value: 300 }); return 1', {}, failed({ errorCode: 'TOOLREG_EXEC_PENDING_CALLS', error: 'the code finished while 1 tool call(s) were still pending (slow); 1 never started; await every tool call before returning' })],
  ['BigInt result', 'return 10n', {}, failed({ errorCode: 'TOOLREG_EXEC_RESULT_NOT_JSON', error: 'the result is not JSON-serialisable: TypeError: BigInt are forbidden in JSON.stringify' })],
  ['cyclic result', 'const a = {}; a.a = a; return a', {}, failed({ errorCode: 'TOOLREG_EXEC_RESULT_NOT_JSON', error: 'the result is not JSON-serialisable: TypeError: circular reference' })],
  ['syntax error', 'return (', {}, (o) => expect([o.errorCode, o.error]).toEqual(['TOOLREG_EXEC_SYNTAX', 'the code does not parse: unexpected token in expression: \'}\''])],
  ['a thrown string', "throw 'plain'", {}, failed(uncaught('"plain"'))],
]

describe('tool_exec against hostile code', () => {
  beforeAll(() => {
    expect(cases.length).toBeGreaterThanOrEqual(60)
    // The first tool's description loads the tokenizer (seconds in a debug build on a busy
    // machine); that start-up is not what the cases time.
    createToolExecTool(registry, { allowedNames: ALLOWED })
  }, 120_000)

  it.each(cases)('%s', async (_name, code, options, check) => {
    const started = Date.now()
    const output = await exec(code, options)
    check(output)
    // Every failure is prompt: nothing waits out a default 30 s limit.
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it('refuses an approval-gated tool without onApprovalRequest, and never runs it', async () => {
    calls.length = 0
    const output = await exec("try { await tools.gated({}) } catch (e) { return [e.code, e.message] }")
    expect(output.result).toEqual(['TOOLREG_APPROVAL_REQUIRED', 'Tool "gated" requires user approval, which code cannot ask for here; call it directly instead of from tool_exec.'])
    expect(calls).toEqual([])
  })

  it('asks onApprovalRequest, and the wait does not count against timeoutMs', async () => {
    calls.length = 0
    const requests = []
    const onApprovalRequest = async (request) => {
      requests.push(request)
      await sleep(400)
      return true
    }
    const output = await exec('return await tools.gated({ value: 1 })', { limits: fast, onApprovalRequest, toolCallId: 'req' })
    expect(output).toEqual({ result: 'gated ran' })
    expect(requests).toEqual([{ toolName: 'gated', input: { value: 1 }, toolCallId: 'req::exec::1', abortSignal: expect.any(AbortSignal) }])
    expect(calls).toEqual([{ tool: 'gated', input: { value: 1 }, toolCallId: 'req::exec::1' }])
  })

  it('turns a denial or a late answer into errors the code can catch', async () => {
    calls.length = 0
    const denied = await exec("try { await tools.gated({}) } catch (e) { return [e.code, e.message] }", { onApprovalRequest: async () => false })
    expect(denied.result).toEqual(['TOOLREG_APPROVAL_DENIED', 'The user denied the call to "gated".'])
    const late = await exec("try { await tools.gated({}) } catch (e) { return [e.code, e.message] }", {
      onApprovalRequest: () => new Promise(() => {}),
      approvalTimeoutMs: 50,
    })
    expect(late.result).toEqual(['TOOLREG_APPROVAL_TIMEOUT', 'No approval answer for "gated" within 50 ms'])
    expect(calls).toEqual([])
  })

  it('leaks nothing between runs', async () => {
    await exec("Object.prototype.polluted = 1; Array.prototype.map = null; globalThis.leak = 1; tools.echo.marker = 1")
    const output = await exec('return [({}).polluted, typeof globalThis.leak, typeof [].map, tools.echo.marker]')
    expect(output).toEqual({ result: [null, 'undefined', 'function', null] })
  })

  it('runs 10k sequential tool calls when the limit allows them', async () => {
    const output = await exec('let sum = 0; for (let i = 0; i < 10000; i++) sum += await tools.add({ a: i, b: 1 }); return sum', {
      limits: { maxBridgeRequests: 10_000 },
    })
    expect(output).toEqual({ result: 50_005_000 })
  })

  it('runs 1,000 concurrent tool calls when the limit allows them', async () => {
    const output = await exec('const r = await parallel(Array.from({ length: 1000 }, (_, i) => tools.add({ a: i, b: 0 }))); return r.reduce((s, x) => s + x, 0)', {
      limits: { maxBridgeRequests: 1000, maxInFlightBridgeRequests: 1000 },
    })
    expect(output).toEqual({ result: 499_500 })
  })

  it('cancels the calls a finished run left pending', async () => {
    calls.length = 0
    // The awaited echo keeps the run going until the slow call has started at the host.
    await exec('tools.slow({ value: 5000 }); await tools.echo({}); return 1')
    await sleep(20)
    expect(calls.filter((c) => c.tool === 'slow')).toEqual([{ tool: 'slow', toolCallId: 'outer::exec::1', aborted: true }])
  })

  it('aborts a run mid-call and cancels its in-flight call', async () => {
    calls.length = 0
    const controller = new AbortController()
    const running = exec('await tools.slow({ value: 5000 }); return "finished"', { signal: controller.signal })
    while (calls.length === 0) await sleep(5)
    const started = Date.now()
    controller.abort()
    const output = await running
    expect({ errorCode: output.errorCode, error: output.error }).toEqual({ errorCode: 'TOOLREG_EXEC_ABORTED', error: 'the run was aborted' })
    expect(Date.now() - started).toBeLessThan(1000)
    expect(calls[0].aborted).toBe(true)
  })

  it('still answers after the suite', async () => {
    const output = await exec('const [a, b] = await parallel(tools.add({ a: 1, b: 2 }), tools.echo({ value: "ok" })); console.log("done"); return { a, b }')
    expect(output).toEqual({ result: { a: 3, b: { value: 'ok' } }, logs: ['done'] })
  })
})
