// Runs once per fresh context, before the model's code. Receives the native bridge functions
// as arguments so they never become globals, installs the sandbox API, and removes every way
// to compile code at run time or to block the thread.
(function (call, log, names) {
  'use strict'
  const g = globalThis
  const define = Object.defineProperty
  const isArray = Array.isArray
  const all = Promise.all.bind(Promise)
  const allSettled = Promise.allSettled.bind(Promise)
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
  // Atomics.wait would block the worker thread where no interrupt can reach it.
  delete g.Atomics
  delete g.SharedArrayBuffer

  const tools = Object.create(null)
  for (const name of names) define(tools, name, { value: (params) => call(name, params), enumerable: true })
  if (!names.includes('invoke')) define(tools, 'invoke', { value: (name, params) => call(String(name), params) })
  Object.freeze(tools)
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
})
