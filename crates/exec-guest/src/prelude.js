// Runs once per fresh context, before the model's code. Receives the native bridge functions
// as arguments so they never become globals, installs the sandbox API, removes every way to
// compile code at run time or to block the thread, and returns `clip` to the host.
// `aliasPairs` is [alias, name, alias, name, …]: other names (`server/tool`) for some tools;
// `seed` is four 32-bit numbers for Math.random.
(function (call, log, names, aliasPairs, seed) {
  'use strict'
  const g = globalThis
  const define = Object.defineProperty
  const isArray = Array.isArray
  const all = Promise.all.bind(Promise)
  const allSettled = Promise.allSettled.bind(Promise)
  const reject = Promise.reject.bind(Promise)
  // Bound now, before the code can replace String.prototype.slice or Function.prototype.call.
  const slice = Function.prototype.call.bind(String.prototype.slice)
  const wellFormed = Function.prototype.call.bind(String.prototype.toWellFormed)
  const fixed = (value) => ({ value, writable: false, enumerable: false, configurable: false })

  // The Function constructor family: reachable as `Function` and as `.constructor` of every
  // kind of function's prototype. All of them now throw.
  const unavailable = function () {
    throw new TypeError('Compiling code at run time (Function, eval) is not available in tool_exec')
  }
  define(unavailable, 'prototype', { value: Function.prototype })
  for (const f of [function () {}, async function () {}, function* () {}, async function* () {}]) {
    define(Object.getPrototypeOf(f), 'constructor', fixed(unavailable))
  }
  define(g, 'Function', fixed(unavailable))
  delete g.eval
  // Atomics.wait would block the engine thread where no interrupt can reach it.
  delete g.Atomics
  delete g.SharedArrayBuffer

  // Math.random from the run's seed (xoshiro128**): prepared engines are copies of one, so the
  // engine's own generator, seeded when it was made, would give every run the same numbers.
  const imul = Math.imul
  let [s0, s1, s2, s3] = seed
  if ((s0 | s1 | s2 | s3) === 0) s3 = 1
  const rotl = (x, k) => (x << k) | (x >>> (32 - k))
  const next = () => {
    const result = imul(rotl(imul(s1, 5), 7), 9) >>> 0
    const t = s1 << 9
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = rotl(s3, 11)
    return result
  }
  define(Math, 'random', {
    value: function random() {
      return ((next() >>> 5) * 67108864 + (next() >>> 6)) / 9007199254740992
    },
    writable: true,
    configurable: true,
  })

  // Levenshtein distance, for "did you mean" on a mistyped tool name.
  const distance = (a, b) => {
    let row = Array.from({ length: b.length + 1 }, (_, i) => i)
    for (let i = 1; i <= a.length; i++) {
      const next = [i]
      for (let j = 1; j <= b.length; j++) {
        next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
      }
      row = next
    }
    return row[b.length]
  }
  const aliases = Object.create(null)
  for (let i = 0; i + 1 < aliasPairs.length; i += 2) aliases[aliasPairs[i]] = aliasPairs[i + 1]
  const known = [...names, ...Object.keys(aliases)]
  const isName = Object.create(null)
  for (const name of names) isName[name] = true
  const quote = JSON.stringify
  const unknownTool = (name, shown = `tools.${name}`) => {
    const close = known
      .map((n) => [distance(name, n), n])
      .filter(([d, n]) => d <= Math.max(2, Math.floor(n.length / 3)))
      .sort((a, b) => a[0] - b[0])
      .slice(0, 3)
      .map(([, n]) => n)
    const hint = close.length > 0 ? `Did you mean ${close.join(', ')}?` : `Tools here: ${names.slice(0, 20).join(', ')}${names.length > 20 ? ', …' : ''}.`
    const error = new TypeError(`${shown} is not a tool available to this code. ${hint}`)
    error.code = 'TOOLREG_UNKNOWN_TOOL'
    return error
  }

  const table = Object.create(null)
  for (const name of names) define(table, name, { value: (params) => call(name, params), enumerable: true })
  for (const alias of Object.keys(aliases)) {
    if (!(alias in table)) define(table, alias, { value: (params) => call(aliases[alias], params) })
  }
  if (!names.includes('invoke')) {
    define(table, 'invoke', {
      value: (name, params) => {
        const text = String(name)
        const target = aliases[text] ?? text
        // Rejected like a call, so `await tools.invoke(...)` and `.catch` both see it.
        if (isName[target] !== true) return reject(unknownTool(text, `tools.invoke(${quote(text)})`))
        return call(target, params)
      },
    })
  }
  Object.freeze(table)
  // Reading a name that is not a tool throws at once, naming it, instead of a bare
  // "not a function" at the call.
  const tools = new Proxy(table, {
    get(target, key) {
      if (typeof key === 'string' && !(key in target) && key !== 'then' && key !== 'toJSON') throw unknownTool(key)
      return target[key]
    },
  })
  define(g, 'tools', fixed(tools))

  const spread = (args) => (args.length === 1 && isArray(args[0]) ? args[0] : args)
  define(g, 'parallel', fixed((...promises) => all(spread(promises))))
  define(g, 'settle', fixed((...promises) => allSettled(spread(promises))))

  const console = Object.create(null)
  for (const level of ['log', 'info', 'warn', 'error', 'debug']) {
    define(console, level, { value: (...args) => log(level, ...args), enumerable: true })
  }
  Object.freeze(console)
  define(g, 'console', fixed(console))

  // `clip`: text of at most `max` UTF-16 units, lone surrogates (also those a cut makes)
  // replaced by U+FFFD, so what leaves the engine is always valid Unicode.
  return (value, max) => {
    const text = typeof value === 'string' ? value : String(value)
    return wellFormed(text.length > max ? slice(text, 0, max) : text)
  }
})
