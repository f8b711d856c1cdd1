'use strict'

const native = require('../binding.js')
const { callNative, invalidArgument } = require('./errors')
const { resolveJsonSchema, definitionText } = require('./schema')

const ENCODINGS = ['o200k_base', 'cl100k_base']
const DEFAULT_ENCODING = 'o200k_base'

function encodingOf(opts) {
  const encoding = opts?.encoding ?? DEFAULT_ENCODING
  if (!ENCODINGS.includes(encoding)) {
    throw invalidArgument('encoding', `${JSON.stringify(encoding)} is not one of ${ENCODINGS.join(', ')}`)
  }
  return encoding
}

/**
 * Exact token count, equal to OpenAI's tiktoken. A string is counted synchronously; an array
 * is counted in parallel off the JS thread and resolves to one count per string.
 */
function countTokens(text, opts) {
  const encoding = encodingOf(opts)
  if (Array.isArray(text)) {
    const bad = text.findIndex((t) => typeof t !== 'string')
    if (bad !== -1) {
      return Promise.reject(invalidArgument(`text[${bad}]`, `expected a string, got ${typeof text[bad]}`))
    }
    return callNative(() => native.countTokensBatch(text, encoding))
  }
  if (typeof text !== 'string') {
    throw invalidArgument('text', `expected a string or an array of strings, got ${typeof text}`)
  }
  return callNative(() => native.countTokens(text, encoding))
}

/**
 * tool → { name, description, costs: { [encoding]: tokens } }. Keyed by the Tool object so a
 * re-registered entry with a new tool is priced again, and an unchanged one never is.
 */
const costCache = new WeakMap()

function cachedCost(name, tool, encoding) {
  const cached = costCache.get(tool)
  if (cached && cached.name === name && cached.description === tool.description) {
    return cached.costs[encoding]
  }
  return undefined
}

function storeCost(name, tool, encoding, tokens) {
  let cached = costCache.get(tool)
  if (!cached || cached.name !== name || cached.description !== tool.description) {
    cached = { name, description: tool.description, costs: {} }
    costCache.set(tool, cached)
  }
  cached.costs[encoding] = tokens
}

/**
 * Recent definitions' costs by text (`encoding\0text`): a request-scoped tool (`buildTool`) is a
 * new object per request, usually with the definition of the last one, and is not tokenized
 * again. Bounded by the characters it holds, oldest out first.
 */
const costByText = new Map()
const COST_BY_TEXT_MAX_CHARS = 4_000_000
let costByTextChars = 0

function rememberCost(key, tokens) {
  if (costByText.has(key)) return
  costByText.set(key, tokens)
  costByTextChars += key.length
  for (const oldest of costByText.keys()) {
    if (costByTextChars <= COST_BY_TEXT_MAX_CHARS) break
    costByText.delete(oldest)
    costByTextChars -= oldest.length
  }
}

/**
 * Token cost of each record's definition (see `ToolRecord` in ./registry). A record keeps its
 * counts; a tool registered again under a new record is found in the per-tool cache, and a new
 * tool object with a known definition in the per-text cache, so only definitions never seen are
 * tokenized.
 */
async function recordCosts(records, encoding = DEFAULT_ENCODING) {
  const slot = ENCODINGS.indexOf(encoding)
  const costs = new Array(records.length)
  let missing
  for (let i = 0; i < records.length; i++) {
    const record = records[i]
    let cost = record.costs[slot]
    if (cost === undefined) {
      cost = cachedCost(record.name, record.tool, encoding)
      if (cost === undefined) (missing ??= []).push(i)
      else record.costs[slot] = cost
    }
    costs[i] = cost
  }
  if (!missing) return costs
  const keys = await Promise.all(
    missing.map(async (i) => {
      const { name, tool } = records[i]
      return `${encoding}\0${definitionText(name, tool, await resolveJsonSchema(tool))}`
    }),
  )
  // Read before counting: remembering the new counts may evict known ones.
  const tokensOf = new Map()
  for (const key of keys) if (costByText.has(key)) tokensOf.set(key, costByText.get(key))
  const uncounted = [...new Set(keys.filter((key) => !tokensOf.has(key)))]
  if (uncounted.length > 0) {
    const counted = await countTokens(uncounted.map((key) => key.slice(encoding.length + 1)), { encoding })
    uncounted.forEach((key, k) => {
      tokensOf.set(key, counted[k])
      rememberCost(key, counted[k])
    })
  }
  missing.forEach((recordIndex, k) => {
    const record = records[recordIndex]
    const tokens = tokensOf.get(keys[k])
    costs[recordIndex] = tokens
    record.costs[slot] = tokens
    storeCost(record.name, record.tool, encoding, tokens)
  })
  return costs
}

module.exports = { countTokens, recordCosts, encodingOf, ENCODINGS, DEFAULT_ENCODING }
