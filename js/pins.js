'use strict'

const { readFile, appendFile, mkdir, open } = require('node:fs/promises')
const { dirname } = require('node:path')
const native = require('../binding.js')
const { callNative, invalidArgument, ToolregError } = require('./errors')
const { recordCosts } = require('./tokens')

const defaults = native.pinDefaults()
/** Default half-life of a use (two weeks), tokens of pinned definitions (2,000) and minimum score (1.5). */
const PIN_HALF_LIFE_MS = defaults.halfLifeMs
const PIN_BUDGET_TOKENS = defaults.budgetTokens
const PIN_MIN_SCORE = defaults.minScore
/** Candidates whose definitions are counted per pin computation: the budget fills long before. */
const MAX_COUNTED = 256

/**
 * The host's usage store: what toolreg learns pins from. It exists only when the host gives
 * one (`new ToolRegistry({ usageStore })`), so nothing is written without the host's consent:
 * - a file path: JSON Lines, one use a line, appended as tools run;
 * - `{ load(), record(use) }`: `load` resolves to the uses (an array or JSON Lines text),
 *   `record` keeps one.
 * A use is `{ tool, namespace, at (ms), user?, assistant? }`: never arguments or results.
 */
function usageStoreOf(option) {
  if (option === undefined || option === null || option === false) return null
  if (typeof option === 'string') {
    if (option === '') throw invalidArgument('usageStore', 'expected a file path, got an empty string')
    return fileStore(option)
  }
  if (typeof option === 'object' && typeof option.load === 'function' && typeof option.record === 'function') {
    return callbackStore(option)
  }
  throw invalidArgument('usageStore', 'expected a file path or { load(): uses | Promise<uses>, record(use): void | Promise<void> }')
}

function storeError(where, reason, cause) {
  return new ToolregError(`toolreg: the usage store ${where} ${reason}`, 'TOOLREG_USAGE_STORE_INVALID', cause && { cause })
}

/** Writes go one after another, so lines never interleave and a read after them sees them all. */
function fileStore(path) {
  let writes = Promise.resolve()
  let madeDir = false
  return {
    describe: path,
    record(use) {
      const line = `${JSON.stringify(use)}\n`
      writes = writes.then(async () => {
        let text = line
        if (!madeDir) {
          await mkdir(dirname(path), { recursive: true })
          madeDir = true
          // A file the host wrote without a final newline must not glue our first use onto its last line.
          if (!(await endsWithNewline(path))) text = `\n${line}`
        }
        await appendFile(path, text, 'utf8')
      })
      return writes
    },
    async settled() {
      await writes.catch(() => {})
    },
    async loadText() {
      try {
        return await readFile(path, 'utf8')
      } catch (error) {
        // No file yet: nothing learned so far.
        if (error?.code === 'ENOENT') return ''
        throw storeError(path, `cannot be read (${error?.code ?? error?.message})`, error)
      }
    },
  }
}

/** Whether the file is absent, empty or ends with a newline. */
async function endsWithNewline(path) {
  let handle
  try {
    handle = await open(path, 'r')
    const { size } = await handle.stat()
    if (size === 0) return true
    const { buffer } = await handle.read(Buffer.alloc(1), 0, 1, size - 1)
    return buffer[0] === 0x0a
  } catch (error) {
    if (error?.code === 'ENOENT') return true
    throw error
  } finally {
    await handle?.close()
  }
}

function callbackStore(store) {
  let writes = Promise.resolve()
  return {
    describe: 'callback',
    record(use) {
      writes = writes.then(() => store.record(use))
      return writes
    },
    async settled() {
      await writes.catch(() => {})
    },
    async loadText() {
      let uses
      try {
        uses = await store.load()
      } catch (error) {
        throw storeError('callback', `load() failed: ${error?.message ?? error}`, error)
      }
      if (uses == null) return ''
      if (typeof uses === 'string') return uses
      if (!Array.isArray(uses)) throw storeError('callback', `load() must resolve to an array of uses or JSON Lines text, got ${typeof uses}`)
      return uses.map((use) => JSON.stringify(use)).join('\n')
    },
  }
}

/** `opts.pins` of the registry: half-life, budget, count and minimum score, checked once. */
function pinOptionsOf(options = {}) {
  if (options === null || typeof options !== 'object') throw invalidArgument('pins', 'expected { halfLifeMs?, budgetTokens?, maxPins?, minScore? }')
  const { halfLifeMs = PIN_HALF_LIFE_MS, budgetTokens = PIN_BUDGET_TOKENS, maxPins = 64, minScore = PIN_MIN_SCORE } = options
  if (!(typeof halfLifeMs === 'number' && Number.isFinite(halfLifeMs) && halfLifeMs > 0)) throw invalidArgument('pins.halfLifeMs', 'expected a positive number of milliseconds')
  if (!(Number.isInteger(budgetTokens) && budgetTokens >= 0)) throw invalidArgument('pins.budgetTokens', 'expected a whole number of tokens')
  if (!(Number.isInteger(maxPins) && maxPins >= 0)) throw invalidArgument('pins.maxPins', 'expected a whole number')
  if (!(typeof minScore === 'number' && Number.isFinite(minScore) && minScore >= 0)) throw invalidArgument('pins.minScore', 'expected a non-negative number')
  return { halfLifeMs, budgetTokens, maxPins, minScore }
}

const SCOPE_WORDS = { 'user+assistant': 'this user with this assistant', user: 'this user', assistant: 'this assistant', everyone: 'all users' }

/**
 * The pins for a user and assistant, explained: the store's tools scored (Rust: decay and
 * scope), kept to registered tools a request could defer (`eligible(record)`), and filled
 * into the token budget best first, each definition counted as the provider receives it.
 */
async function computePins(store, options, recordOf, eligible, { userId, assistantId, now = Date.now(), encoding = 'o200k_base' } = {}) {
  if (userId !== undefined && typeof userId !== 'string') throw invalidArgument('userId', 'expected a string')
  if (assistantId !== undefined && typeof assistantId !== 'string') throw invalidArgument('assistantId', 'expected a string')
  if (!Number.isFinite(now)) throw invalidArgument('now', 'expected a time in ms')
  await store.settled()
  const text = await store.loadText()
  const scored = callNative(() => native.scorePins(text, { now, halfLifeMs: options.halfLifeMs, userId, assistantId }))
  const candidates = []
  const records = []
  for (const tool of scored) {
    if (tool.score < options.minScore || candidates.length >= MAX_COUNTED) break
    const record = recordOf(tool.name)
    if (record === undefined || !eligible(record)) continue
    candidates.push(tool)
    records.push(record)
  }
  const costs = await recordCosts(records, encoding)
  const chosen = callNative(() => native.fitPins(candidates.map((c) => c.score), costs, options.budgetTokens, options.maxPins, options.minScore))
  let used = 0
  return chosen.map((i) => {
    const { name, score, uses, lastUsed, scope } = candidates[i]
    used += costs[i]
    const last = new Date(lastUsed).toISOString()
    return {
      name,
      namespace: records[i].namespace,
      score,
      uses,
      lastUsed,
      scope,
      tokens: costs[i],
      why: `used ${uses} time${uses === 1 ? '' : 's'} (last ${last}), mostly by ${SCOPE_WORDS[scope]}; score ${score.toFixed(2)} ≥ ${options.minScore}; ${costs[i]} tokens, ${used} of ${options.budgetTokens} pinned so far`,
    }
  })
}

module.exports = { usageStoreOf, pinOptionsOf, computePins, PIN_HALF_LIFE_MS, PIN_BUDGET_TOKENS, PIN_MIN_SCORE }
