'use strict'

const ai = require('ai')
const { invalidArgument } = require('./errors')
const { MetaToolName } = require('./meta/shared')
const { appendStrategyFor } = require('./appendSupport')
const { checkTested } = require('./versions')

const STRATEGIES = ['meta-tools', 'native', 'append', 'auto']
const DEFAULT_MAX_RESULTS = 5

/**
 * How a request's deferred tools reach the model, from `opts.strategy` and `opts.provider`:
 * `anthropic-append` / `openai-append` (found tools added by value mid-conversation; see
 * append.js), `anthropic-native` (`defer_loading` + `tool_reference` results), `openai-native`
 * (`defer_loading` + a client-executed `tool_search`), `sdk-tool-search` (ai@7's core
 * `deferLoading` + `toolSearch`), or our `meta-tools`. `warnings` say why a requested
 * strategy fell back.
 */
function chooseStrategy(opts) {
  const strategy = opts.strategy ?? 'meta-tools'
  if (!STRATEGIES.includes(strategy)) {
    throw invalidArgument('opts.strategy', `${JSON.stringify(strategy)} is not one of 'meta-tools', 'native', 'append', 'auto'`)
  }
  if (strategy === 'meta-tools') return { strategy: 'meta-tools', warnings: [] }
  const warnings = []
  const fallback = (why) => {
    // `auto` picks the best it can without complaint; `native` or `append` was asked for, so say why not.
    if (strategy !== 'auto') warnings.push(`strategy '${strategy}' fell back to 'meta-tools': ${why}`)
    return { strategy: 'meta-tools', warnings }
  }
  if (opts.model?.functionCalling === false) return fallback('the model has no native function calling')
  checkTested('ai')
  if (strategy !== 'native') {
    // `auto` appends only on models the SDK documents it for; `append` trusts the host's model.
    const append = appendStrategyFor(opts, { documentedModelsOnly: strategy === 'auto' })
    if (append.strategy) return { strategy: append.strategy, warnings }
    if (strategy === 'append') warnings.push(`strategy 'append' fell back to native deferral: ${append.reason}`)
  }
  const provider = opts.provider
  if (isAnthropic(provider)) {
    checkTested('@ai-sdk/anthropic')
    return { strategy: 'anthropic-native', warnings }
  }
  if (isOpenAIResponses(provider)) {
    const openai = openaiToolSearchFactory()
    if (openai) return { strategy: 'openai-native', warnings, openai }
    if (!sdkToolSearch()) return fallback('@ai-sdk/openai >= 3.0.46 (with openai.tools.toolSearch) is not installed')
    warnings.push('@ai-sdk/openai >= 3.0.46 is not installed; using the AI SDK\'s own tool search instead of OpenAI\'s')
  }
  if (sdkToolSearch()) return { strategy: 'sdk-tool-search', warnings }
  return fallback(`${provider === undefined ? 'no opts.provider given' : `provider ${JSON.stringify(provider)} has no native deferral`} and this AI SDK (< 7) has no toolSearch`)
}

function isAnthropic(provider) {
  return typeof provider === 'string' && provider.startsWith('anthropic.')
}

function isOpenAIResponses(provider) {
  return provider === 'openai.responses'
}

/** ai@7's `toolSearch`, or undefined on ai@6 (which has no such export). */
function sdkToolSearch() {
  return typeof ai.toolSearch === 'function' ? ai.toolSearch : undefined
}

/**
 * `openai.tools.toolSearch` from the optional `@ai-sdk/openai` peer, when installed and recent
 * enough, and the package's major version (4 declares `strict: false` on every function tool;
 * 3 leaves `strict` out unless the tool sets it).
 */
let openaiPackage
function openaiToolSearchFactory() {
  if (openaiPackage === undefined) {
    try {
      const factory = require('@ai-sdk/openai').openai?.tools?.toolSearch
      const major = Number(checkTested('@ai-sdk/openai').split('.')[0])
      openaiPackage = typeof factory === 'function' ? { factory, major } : null
    } catch {
      openaiPackage = null
    }
  }
  return openaiPackage ?? undefined
}

function maxResultsOf(opts) {
  const max = opts.maxResults ?? DEFAULT_MAX_RESULTS
  if (!Number.isInteger(max) || max < 1) throw invalidArgument('opts.maxResults', 'expected a positive integer')
  return max
}

/** `tool` with `extra` merged into `providerOptions[key]`; `strip` names keys removed from every listed options object. */
function withProviderOptions(tool, key, extra, strip = [], stripFrom = []) {
  const providerOptions = { ...tool.providerOptions }
  for (const from of new Set([key, ...stripFrom])) {
    if (providerOptions[from] === undefined) continue
    const own = { ...providerOptions[from] }
    for (const field of strip) delete own[field]
    providerOptions[from] = own
  }
  providerOptions[key] = { ...providerOptions[key], ...extra }
  return { ...tool, providerOptions }
}

const CACHE_CONTROL_KEYS = ['cacheControl', 'cache_control']

function cacheControlOf(tool, keys) {
  for (const key of keys) {
    const options = tool?.providerOptions?.[key]
    const value = options?.cacheControl ?? options?.cache_control
    if (value !== undefined) return value
  }
  return undefined
}

const SEARCH_DESCRIPTION =
  'Search the tools that are not loaded yet (tool discovery, NOT web search). Describe the task; ' +
  'the best-matching tools become callable.'

const searchParameters = {
  type: 'object',
  properties: { query: { type: 'string', description: 'Words describing the task or the tool you need' } },
  required: ['query'],
  additionalProperties: false,
}

/** The deferred tools as ranking candidates: name and the registered description. */
function candidatesOf(deferredEntries) {
  return deferredEntries.map((entry) => ({ name: entry.name, description: entry.description }))
}

async function rankDeferred(registry, query, candidates, maxResults) {
  if (typeof query !== 'string' || query.trim() === '') return []
  return (await registry.rank(query, candidates)).slice(0, maxResults)
}

/**
 * Anthropic: deferred tools carry `providerOptions.anthropic.deferLoading` (and lose any
 * `cacheControl`, which Anthropic rejects next to `defer_loading`); an eager client
 * `tool_search` ranks with the registry and answers with `tool_reference` blocks, which load
 * the definitions inline without touching the cached prefix.
 */
function anthropicExposition({ tools, names, deferredNames, deferredEntries, registry, opts }) {
  const warnings = []
  const maxResults = maxResultsOf(opts)
  const providerKey = opts.provider.split('.')[0]
  const cacheKeys = [...new Set(['anthropic', providerKey])]
  const exposed = {}
  let movedCache
  for (const name of names) {
    const tool = tools[name]
    if (!deferredNames.has(name)) {
      exposed[name] = tool
      continue
    }
    const cache = cacheControlOf(tool, cacheKeys)
    if (cache !== undefined) {
      movedCache ??= cache
      warnings.push(`removed cacheControl from deferred tool ${JSON.stringify(name)} (Anthropic rejects it with defer_loading)`)
    }
    exposed[name] = withProviderOptions(tool, 'anthropic', { deferLoading: true }, CACHE_CONTROL_KEYS, cacheKeys)
  }
  const candidates = candidatesOf(deferredEntries)
  const search = ai.tool({
    description: SEARCH_DESCRIPTION,
    inputSchema: ai.jsonSchema(searchParameters),
    execute: async ({ query }) => ({ tools: await rankDeferred(registry, query, candidates, maxResults) }),
    toModelOutput: ({ output }) => anthropicSearchOutput(output),
  })
  exposed[MetaToolName.Search] = withMovedBreakpoint(search, movedCache, { tools, names, deferredNames, cacheKeys })
  return { tools: exposed, warnings }
}

/**
 * The search tool, last in the array, carrying the breakpoint that sat on a deferred tool
 * (`movedCache`) unless an eager tool has one: the eager tools stay cached as the host intended.
 */
function withMovedBreakpoint(search, movedCache, { tools, names, deferredNames, cacheKeys }) {
  const eagerCached = names.some((name) => !deferredNames.has(name) && cacheControlOf(tools[name], cacheKeys) !== undefined)
  return movedCache !== undefined && !eagerCached ? withProviderOptions(search, 'anthropic', { cacheControl: movedCache }) : search
}

/** The search result as `tool_reference` blocks (the provider's `custom` parts); text when nothing matched. */
function anthropicSearchOutput(output) {
  const found = Array.isArray(output?.tools) ? output.tools : []
  if (found.length === 0) return { type: 'text', value: 'No tools matched. Try other words.' }
  return {
    type: 'content',
    value: found.map((toolName) => ({ type: 'custom', providerOptions: { anthropic: { type: 'tool-reference', toolName } } })),
  }
}

/**
 * OpenAI Responses: deferred tools carry `providerOptions.openai.deferLoading`; OpenAI's
 * `tool_search` runs on the client, ranks with the registry and returns the found definitions
 * in the wire shape (`tool_search_output.tools` is sent as given).
 */
async function openaiExposition({ tools, names, deferredNames, deferredEntries, registry, opts, openai }) {
  const maxResults = maxResultsOf(opts)
  const exposed = {}
  const definitions = new Map()
  for (const name of names) {
    const tool = tools[name]
    if (!deferredNames.has(name)) {
      exposed[name] = tool
      continue
    }
    exposed[name] = withProviderOptions(tool, 'openai', { deferLoading: true })
    definitions.set(name, tool)
  }
  const candidates = candidatesOf(deferredEntries)
  exposed[MetaToolName.Search] = openai.factory({
    execution: 'client',
    description: SEARCH_DESCRIPTION,
    parameters: searchParameters,
    execute: async ({ arguments: raw }) => {
      const args = typeof raw === 'string' ? safeParse(raw) : raw
      const found = await rankDeferred(registry, args?.query, candidates, maxResults)
      return { tools: await Promise.all(found.map((name) => openaiDefinition(name, definitions.get(name), openai.major))) }
    },
  })
  return { tools: exposed, warnings: [] }
}

/** A function tool as `@ai-sdk/openai` of that major version declares the deferred tool. */
async function openaiDefinition(name, tool, major) {
  const schema = await ai.asSchema(tool.inputSchema).jsonSchema
  const strict = major >= 4 ? (tool.strict ?? false) : tool.strict
  return {
    type: 'function',
    name,
    description: tool.description,
    parameters: schema,
    ...(strict != null && { strict }),
    defer_loading: true,
  }
}

/**
 * ai@7 with any other provider: core `deferLoading` plus `toolSearch({ search })` ranked by the
 * registry. The SDK forgets discoveries between calls, so tools found earlier in `messages`
 * stay exposed (the caller leaves them out of `deferredNames`).
 */
function sdkExposition({ tools, names, deferredNames, registry, opts }) {
  const exposed = {}
  for (const name of names) exposed[name] = deferredNames.has(name) ? { ...tools[name], deferLoading: true } : tools[name]
  exposed[MetaToolName.Search] = sdkToolSearch()({
    search: ({ query, tools: candidates }) => registry.rank(query, candidates),
    maxResults: maxResultsOf(opts),
  })
  return { tools: exposed, warnings: [] }
}

/**
 * Names the model already discovered through a search tool in `messages` (ai@7's and OpenAI's
 * `{ tools: [{ name } | name] }` results, our Anthropic `tool_reference` parts) and names it
 * inspected or called through the meta-tools.
 */
function discoveredIn(messages) {
  const discovered = new Set()
  const inspected = new Set()
  if (!Array.isArray(messages)) return { discovered, inspected }
  const calls = new Map()
  for (const message of messages) {
    if (!Array.isArray(message?.content)) continue
    for (const part of message.content) {
      if (part?.type === 'tool-call') calls.set(part.toolCallId, part)
      if (part?.type !== 'tool-result') continue
      const call = calls.get(part.toolCallId)
      const input = typeof call?.input === 'string' ? safeParse(call.input) : call?.input
      const output = part.output
      if (output?.type === 'error-text' || output?.type === 'error-json' || output?.type === 'execution-denied') continue
      if (part.toolName === MetaToolName.Inspect && typeof input?.name === 'string') inspected.add(input.name)
      if (part.toolName === MetaToolName.Invoke && typeof input?.name === 'string') inspected.add(input.name)
      if (part.toolName !== MetaToolName.Search) continue
      if (output?.type === 'json' && Array.isArray(output.value?.tools)) {
        for (const t of output.value.tools) {
          const name = typeof t === 'string' ? t : t?.name
          if (typeof name === 'string') discovered.add(name)
        }
      }
      if (output?.type === 'content' && Array.isArray(output.value)) {
        for (const p of output.value) {
          const name = p?.providerOptions?.anthropic?.toolName
          if (p?.type === 'custom' && typeof name === 'string') discovered.add(name)
        }
      }
    }
  }
  return { discovered, inspected }
}

function safeParse(text) {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

module.exports = {
  chooseStrategy,
  anthropicExposition,
  openaiExposition,
  sdkExposition,
  discoveredIn,
  // Shared with the append-only exposition (append.js).
  SEARCH_DESCRIPTION,
  searchParameters,
  candidatesOf,
  rankDeferred,
  maxResultsOf,
  cacheControlOf,
  withMovedBreakpoint,
  CACHE_CONTROL_KEYS,
}
