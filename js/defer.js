'use strict'

const native = require('../binding.js')
const { invalidArgument } = require('./errors')
const { internals, labelOf, recordOf, ToolRecord } = require('./registry')
const { recordCosts, encodingOf, countTokens } = require('./tokens')
const { definitionText } = require('./schema')
const { MetaToolName, Lookup, DeferredView, createLookup } = require('./meta/shared')
const { createToolSearchTool } = require('./meta/search')
const { createToolInspectTool } = require('./meta/inspect')
const { createToolInvokeTool } = require('./meta/invoke')
const { createToolExecTool } = require('./meta/exec')
const { providerTarget, safeToolOf } = require('./provider')

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
  return sectionOf(deferredEntries.map(labelOf))
}

/** The section for the namespace labels of the deferred tools (one label per tool). */
function sectionOf(labels) {
  const counts = new Map()
  for (const label of labels) counts.set(label, (counts.get(label) ?? 0) + 1)
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
  return overheadOf(buildDeferredToolsSection(deferredEntries), encoding)
}

function overheadOf(section, encoding) {
  if (!definitionsTokens.has(encoding)) {
    definitionsTokens.set(encoding, metaToolDefinitions().reduce((sum, text) => sum + countTokens(text, { encoding }), 0))
  }
  return definitionsTokens.get(encoding) + countSectionTokens(section, encoding)
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
  return (await decide(entries.map(recordOf), contextWindow, opts)).decision
}

/** `shouldDefer` over records; also returns the `<deferred-tools>` section it measured. */
async function decide(records, contextWindow, opts) {
  const model = checkModel(opts.model)
  const encoding = encodingOf(opts)
  const auto = []
  const always = []
  for (const record of records) {
    if (record.defer === 'never' || record.gated) continue
    if (record.defer === 'always') always.push(record)
    else if (record.defer === 'auto') auto.push(record)
  }
  const canUseTools = model.functionCalling || model.promptToolUse
  const costs = canUseTools ? await recordCosts(auto, encoding) : []
  const autoTokens = costs.reduce((sum, c) => sum + c, 0)
  const alwaysTokens = canUseTools && always.length ? (await recordCosts(always, encoding)).reduce((s, c) => s + c, 0) : 0
  const candidates = always.length === 0 ? auto : [...always, ...auto]
  const section = canUseTools ? sectionOf(candidates.map((r) => r.label)) : undefined
  const overheadTokens = opts.metaToolsOverheadTokens ?? (canUseTools ? overheadOf(section, encoding) : 0)
  const verdict = native.decideDefer({
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
  const deferred = verdict.deferAlways && verdict.deferAuto ? candidates : verdict.deferAuto ? auto : verdict.deferAlways ? always : []
  const decision = {
    deferredNames: new Set(deferred.map((r) => r.name)),
    threshold: verdict.threshold,
    autoTokens: verdict.autoTokens,
    overheadTokens: verdict.overheadTokens,
    savedTokens: verdict.savedTokens,
    reason: `${verdict.reasonCode}: ${verdict.reason}`,
    reasonCode: verdict.reasonCode,
  }
  // The section describes what is deferred; `candidates` is all of it in the common case.
  const deferredSection = deferred.length === 0 ? undefined : deferred === candidates ? section : sectionOf(deferred.map((r) => r.label))
  return { decision, deferredSection }
}

/**
 * The options that change a request's plan, as one string. Requests with an equal key over the
 * very same records get the same plan.
 */
function planKey(contextWindow, opts, encoding, extraNames) {
  const model = opts.model === undefined ? '' : `${opts.model?.functionCalling},${opts.model?.promptToolUse}`
  return `${contextWindow}|${encoding}|${model}|${opts.thresholdPct}|${opts.fallbackContextWindow}|${opts.minAutoDeferCount}|${opts.metaToolsOverheadTokens}|${opts.provider}|${opts.strict === true}|${extraNames.join('\0')}`
}

/**
 * What a request's exposition needs beyond its own meta-tool state: the decision, the deferred
 * entries and section, which names stay inline, and the snapshot the meta-tools read. Built once
 * for a given tool set and reused while the same names map to the same records.
 */
async function buildPlan(registry, names, records, extraNames, contextWindow, opts) {
  const known = records.filter((r) => r !== undefined)
  // The extra names' entries are captured now, with the others, not after the await below.
  const extra = extraNames.map((name) => [name, registry.getByName(name)])
  const { decision, deferredSection } = await decide(known, contextWindow, opts)
  const { deferredNames } = decision
  if (deferredNames.size === 0) return { decision, deferred: null }
  const inlineNames = names.filter((name) => !deferredNames.has(name))
  const deferredRecords = known.filter((r) => deferredNames.has(r.name))
  const snapshot = new Map()
  for (const record of known) snapshot.set(record.name, record.entry)
  const allowed = new Set(names)
  for (const [name, entry] of extra) {
    allowed.add(name)
    if (entry && !snapshot.has(name)) snapshot.set(name, entry)
  }
  return {
    decision,
    inlineNames,
    deferredEntries: deferredRecords.map((r) => r.entry),
    systemPrompt: deferredSection,
    lookup: new Lookup(registry, allowed, snapshot),
    deferred: new DeferredView(new Map(deferredRecords.map((r) => [r.name, r.entry]))),
  }
}

/**
 * The records a request works on: the registered ones, except where the request carries a tool
 * of its own under a registered name (`buildTool`, or a host's wrapper) — costs, approval and
 * execution follow the tool the request carries.
 */
function requestRecords(records, values) {
  return records.map((record, i) => {
    if (record === undefined) return record
    const tool = values[i]
    if (tool === record.tool || tool === null || typeof tool !== 'object') return record
    return new ToolRecord({ ...record.entry, tool })
  })
}

/** The last plans of each registry, a few per option key (requests alternate between assistants). */
const plansByRegistry = new WeakMap()
const PLANS_KEPT = 8

function cachedPlan(registry, key, names, values, records, generation) {
  const plans = plansByRegistry.get(registry)
  const cached = plans?.find((p) => p.key === key && p.names.length === names.length)
  if (!cached) return undefined
  const { names: cachedNames, values: cachedValues, records: cachedRecords } = cached
  for (let i = 0; i < names.length; i++) if (names[i] !== cachedNames[i] || values[i] !== cachedValues[i]) return undefined
  if (cached.generation !== generation) {
    // Something was registered or evicted since: still valid if these names kept their records.
    const now = records()
    for (let i = 0; i < now.length; i++) if (now[i] !== cachedRecords[i]) return undefined
    cached.generation = generation
  }
  return cached.plan
}

function storePlan(registry, entry) {
  let plans = plansByRegistry.get(registry)
  if (!plans) plansByRegistry.set(registry, (plans = []))
  const same = plans.findIndex((p) => p.key === entry.key)
  if (same !== -1) plans.splice(same, 1)
  else if (plans.length >= PLANS_KEPT) plans.shift()
  plans.push(entry)
}

/** A decision of a cached plan, handed out per request: its Set is copied only when read. */
function requestDecision(decision) {
  let names
  return {
    get deferredNames() {
      return (names ??= new Set(decision.deferredNames))
    },
    threshold: decision.threshold,
    autoTokens: decision.autoTokens,
    overheadTokens: decision.overheadTokens,
    savedTokens: decision.savedTokens,
    reason: decision.reason,
    reasonCode: decision.reasonCode,
  }
}

/**
 * Adds `tool_exec` over every allowed tool (`allowedNames`: this request's `Lookup`, which also
 * iterates the allowed names); `opts.exec` may be `true` or its options.
 */
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
  if (tools == null) return { tools, deferredEntries: [], systemPrompt: undefined }
  const names = Object.keys(tools)
  if (names.length === 0) return { tools, deferredEntries: [], systemPrompt: undefined }
  // Read by key rather than with Object.values: a large ToolSet is a dictionary-mode object,
  // whose values V8 enumerates several times slower than it looks keys up.
  const values = new Array(names.length)
  for (let i = 0; i < names.length; i++) values[i] = tools[names[i]]
  const extraNames = opts.extraAllowedNames === undefined ? [] : [...opts.extraAllowedNames]
  const key = planKey(contextWindow, opts, encodingOf(opts), extraNames)
  const view = registry[internals]
  // The records a plan depends on: the tool set's, and the extra allowed names' (the key holds those names).
  const planNames = extraNames.length === 0 ? names : names.concat(extraNames)
  const records = () => view.recordsOf(planNames)
  let plan = cachedPlan(registry, key, names, values, records, view.generation)
  if (!plan) {
    const current = records()
    plan = await buildPlan(registry, names, requestRecords(current.slice(0, names.length), values), extraNames, contextWindow, opts)
    storePlan(registry, { key, names, values, records: current, generation: view.generation, plan })
  }
  const decision = requestDecision(plan.decision)
  const target = providerTarget(opts)
  if (!plan.deferred) {
    if (!opts.exec) return { tools: target ? await providerSafe(tools, names, target) : tools, deferredEntries: [], systemPrompt: undefined, decision }
    const withExec = withExecTool({ ...tools }, registry, createLookup(registry, planNames), opts)
    return { tools: target ? await providerSafe(withExec, Object.keys(withExec), target) : withExec, deferredEntries: [], systemPrompt: undefined, decision }
  }
  const exposed = {}
  for (const name of plan.inlineNames) exposed[name] = tools[name]
  const inspectedNames = new Set()
  const metaOpts = target && { provider: target.provider }
  exposed[MetaToolName.Search] = createToolSearchTool(registry, plan.deferred, inspectedNames, undefined, metaOpts)
  exposed[MetaToolName.Inspect] = createToolInspectTool(registry, plan.lookup, inspectedNames, undefined, metaOpts)
  exposed[MetaToolName.Invoke] = createToolInvokeTool(registry, plan.lookup, inspectedNames, undefined, metaOpts)
  if (opts.exec) withExecTool(exposed, registry, plan.lookup, opts)
  return {
    tools: target ? await providerSafe(exposed, Object.keys(exposed), target) : exposed,
    deferredEntries: plan.deferredEntries.slice(),
    systemPrompt: plan.systemPrompt,
    decision,
  }
}

/**
 * The exposed tools with input schemas the request's provider accepts (converted once per
 * schema and provider). The meta-tools are never strict: `tool_invoke`'s `params` is open.
 */
async function providerSafe(tools, names, target) {
  const safe = {}
  const metaTarget = { provider: target.provider, strict: false }
  for (const name of names) {
    const tool = tools[name]
    if (tool === null || typeof tool !== 'object') safe[name] = tool
    else safe[name] = await safeToolOf(tool, isMetaTool(name) ? metaTarget : target)
  }
  return safe
}

const META_TOOL_NAMES = new Set(Object.values(MetaToolName))
function isMetaTool(name) {
  return META_TOOL_NAMES.has(name)
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
