'use strict'

const native = require('../binding.js')
const { invalidArgument } = require('./errors')
const { labelOf } = require('./registry')
const { entryCosts, encodingOf, countTokens } = require('./tokens')
const { definitionText } = require('./schema')
const { MetaToolName, isApprovalGated } = require('./meta/shared')
const { createToolSearchTool } = require('./meta/search')
const { createToolInspectTool } = require('./meta/inspect')
const { createToolInvokeTool } = require('./meta/invoke')
const { createToolExecTool } = require('./meta/exec')

const defaults = native.deferDefaults()
const DEFER_THRESHOLD_PCT = defaults.deferThresholdPct
const FALLBACK_CONTEXT_WINDOW = defaults.fallbackContextWindow
const MIN_AUTO_DEFER_COUNT = defaults.minAutoDeferCount

function escapeAttribute(value) {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')
}

/**
 * The `<deferred-tools>` system-prompt section: how to use the meta-tools and how many tools
 * each namespace holds. Counts only; listing names would cost what deferring saved.
 */
function buildDeferredToolsSection(deferredEntries) {
  const counts = new Map()
  for (const entry of deferredEntries) {
    const label = labelOf(entry)
    counts.set(label, (counts.get(label) ?? 0) + 1)
  }
  const namespaces = [...counts]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([label, count]) => `  <namespace name="${escapeAttribute(label)}" count="${count}"/>`)
  return [
    '<deferred-tools>',
    'Some tools are not loaded inline. Discover and call them through the meta-tools below.',
    '<usage>',
    '1. `tool_search({ query?, namespace?, limit?, verbose? })` — ranked tool discovery (NOT web search), grouped by namespace (e.g. `web`, `kb`, `mcp:<server>`); omit `query` to browse; `verbose: true` adds full input schemas.',
    '2. `tool_inspect({ name })` — the tool\'s signature as JSDoc; inspecting (or a verbose search) first saves a round-trip.',
    '3. `tool_invoke({ name, params })` — an un-inspected tool or mismatching params returns the signature; read it and call again.',
    '</usage>',
    '<namespaces>',
    ...namespaces,
    '</namespaces>',
    '</deferred-tools>',
  ].join('\n')
}

/** The meta-tools as a provider receives them, built over an empty registry. */
let metaDefinitionsCache
function metaToolDefinitions() {
  if (!metaDefinitionsCache) {
    const { ToolRegistry } = require('./registry')
    const empty = new ToolRegistry()
    metaDefinitionsCache = [
      [MetaToolName.Search, createToolSearchTool(empty, [])],
      [MetaToolName.Inspect, createToolInspectTool(empty)],
      [MetaToolName.Invoke, createToolInvokeTool(empty)],
    ].map(([name, t]) => definitionText(name, t, t.inputSchema.jsonSchema))
  }
  return metaDefinitionsCache
}

const definitionsTokens = new Map()
/** Recent sections' token counts: consecutive requests usually defer the same namespaces. */
const sectionTokens = new Map()
const SECTION_CACHE_SIZE = 32

function countSectionTokens(section, encoding) {
  const key = `${encoding}\0${section}`
  let tokens = sectionTokens.get(key)
  if (tokens === undefined) {
    tokens = countTokens(section, { encoding })
    if (sectionTokens.size >= SECTION_CACHE_SIZE) sectionTokens.delete(sectionTokens.keys().next().value)
    sectionTokens.set(key, tokens)
  }
  return tokens
}

/**
 * Measured cost of deferring: the meta-tools' definitions plus the `<deferred-tools>` section
 * for these deferred entries.
 */
function metaToolsOverhead(deferredEntries, encoding = 'o200k_base') {
  if (!definitionsTokens.has(encoding)) {
    definitionsTokens.set(encoding, metaToolDefinitions().reduce((sum, text) => sum + countTokens(text, { encoding }), 0))
  }
  return definitionsTokens.get(encoding) + countSectionTokens(buildDeferredToolsSection(deferredEntries), encoding)
}

/**
 * Token cost of the three meta-tools' definitions plus a one-namespace `<deferred-tools>`
 * section, in o200k_base, as measured by `metaToolsOverhead`. A literal so importing the
 * package does not build a tokenizer on the JS thread; a test recomputes it and fails when a
 * meta-tool's definition changes. `shouldDefer` measures the exact figure per request.
 */
const META_TOOLS_OVERHEAD_TOKENS = 573

function checkModel(model) {
  if (model === undefined) return { functionCalling: true, promptToolUse: false }
  if (model === null || typeof model !== 'object' || typeof model.functionCalling !== 'boolean') {
    throw invalidArgument('opts.model', 'expected { functionCalling: boolean, promptToolUse?: boolean }')
  }
  return { functionCalling: model.functionCalling, promptToolUse: model.promptToolUse === true }
}

/**
 * Decides which entries to defer. `always` entries are deferred; `never` and approval-gated
 * entries never are; the `auto` pool is deferred all together when its cost exceeds the
 * threshold, it has enough entries, and the saving beats the meta-tools' own cost.
 */
async function shouldDefer(entries, contextWindow, opts = {}) {
  if (!Array.isArray(entries)) throw invalidArgument('entries', 'expected an array of ToolEntry')
  const model = checkModel(opts.model)
  const encoding = encodingOf(opts)
  const auto = []
  const always = []
  for (const entry of entries) {
    if (entry.defer === 'never' || isApprovalGated(entry.tool)) continue
    if (entry.defer === 'always') always.push(entry)
    else if (entry.defer === 'auto') auto.push(entry)
  }
  const canUseTools = model.functionCalling || model.promptToolUse
  const costs = canUseTools ? await entryCosts(auto, encoding) : []
  const autoTokens = costs.reduce((sum, c) => sum + c, 0)
  const alwaysTokens = canUseTools && always.length ? (await entryCosts(always, encoding)).reduce((s, c) => s + c, 0) : 0
  const overheadTokens =
    opts.metaToolsOverheadTokens ?? (canUseTools ? metaToolsOverhead([...always, ...auto], encoding) : 0)
  const decision = native.decideDefer({
    autoCount: auto.length,
    autoTokens,
    alwaysCount: always.length,
    alwaysTokens,
    contextWindow: typeof contextWindow === 'number' ? contextWindow : undefined,
    functionCalling: model.functionCalling,
    promptToolUse: model.promptToolUse,
    overheadTokens,
    thresholdPct: opts.thresholdPct,
    fallbackContextWindow: opts.fallbackContextWindow,
    minAutoDeferCount: opts.minAutoDeferCount,
  })
  const deferredNames = new Set()
  if (decision.deferAlways) for (const e of always) deferredNames.add(e.name)
  if (decision.deferAuto) for (const e of auto) deferredNames.add(e.name)
  return {
    deferredNames,
    threshold: decision.threshold,
    autoTokens: decision.autoTokens,
    overheadTokens: decision.overheadTokens,
    savedTokens: decision.savedTokens,
    reason: `${decision.reasonCode}: ${decision.reason}`,
    reasonCode: decision.reasonCode,
  }
}

/** Adds `tool_exec` over every allowed tool; `opts.exec` may be `true` or its options. */
function withExecTool(exposed, registry, allowedNames, opts) {
  const execOptions = typeof opts.exec === 'object' ? opts.exec : {}
  exposed[MetaToolName.Exec] = createToolExecTool(registry, { ...execOptions, allowedNames })
  return exposed
}

/**
 * Applies the defer decision to a request's ToolSet: deferred tools leave `tools`, the
 * meta-tools come in, and the `<deferred-tools>` section is returned for the system prompt.
 * When nothing is deferred, the very same `tools` object comes back.
 */
async function applyDeferExposition(tools, registry, contextWindow, opts = {}) {
  if (tools == null || Object.keys(tools).length === 0) {
    return { tools, deferredEntries: [], systemPrompt: undefined }
  }
  const names = Object.keys(tools)
  const candidates = []
  for (const name of names) {
    const entry = registry.getByName(name)
    if (entry) candidates.push(entry)
  }
  const decision = await shouldDefer(candidates, contextWindow, opts)
  const { deferredNames } = decision
  const allowedNames = new Set(names)
  for (const name of opts.extraAllowedNames ?? []) allowedNames.add(name)
  if (deferredNames.size === 0) {
    if (opts.exec) return { tools: withExecTool({ ...tools }, registry, allowedNames, opts), deferredEntries: [], systemPrompt: undefined, decision }
    return { tools, deferredEntries: [], systemPrompt: undefined, decision }
  }
  const inspectedNames = new Set()
  const exposed = {}
  for (const name of names) if (!deferredNames.has(name)) exposed[name] = tools[name]
  exposed[MetaToolName.Search] = createToolSearchTool(registry, deferredNames, inspectedNames)
  exposed[MetaToolName.Inspect] = createToolInspectTool(registry, allowedNames, inspectedNames)
  exposed[MetaToolName.Invoke] = createToolInvokeTool(registry, allowedNames, inspectedNames)
  if (opts.exec) withExecTool(exposed, registry, allowedNames, opts)
  const deferredEntries = candidates.filter((e) => deferredNames.has(e.name))
  return { tools: exposed, deferredEntries, systemPrompt: buildDeferredToolsSection(deferredEntries), decision }
}

module.exports = {
  shouldDefer,
  applyDeferExposition,
  buildDeferredToolsSection,
  metaToolsOverhead,
  DEFER_THRESHOLD_PCT,
  FALLBACK_CONTEXT_WINDOW,
  MIN_AUTO_DEFER_COUNT,
  META_TOOLS_OVERHEAD_TOKENS,
}
