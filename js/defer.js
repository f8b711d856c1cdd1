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
const { chooseStrategy, anthropicExposition, openaiExposition, sdkExposition, discoveredIn } = require('./strategy')
const { appendExposition } = require('./append')
const { guardedTools } = require('./guard')

const defaults = native.deferDefaults()
const DEFER_THRESHOLD_PCT = defaults.deferThresholdPct
const FALLBACK_CONTEXT_WINDOW = defaults.fallbackContextWindow
const MIN_AUTO_DEFER_COUNT = defaults.minAutoDeferCount
/** Default `stickyMargin`: a conversation keeps its decision while under 20% of its auto pool changes. */
const STICKY_MARGIN = 0.2
/** Internal option: the conversation's previous decision for the auto pool, kept by `decide`. */
const STICKY = Symbol('toolreg.stickyDeferAuto')

function escapeAttribute(value) {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;')
}

/**
 * Default budget of what deferring adds to a request, the meta-tools' definitions plus the
 * `<deferred-tools>` section, in tokens: constant at any catalog size.
 */
const DEFERRED_OVERHEAD_BUDGET_TOKENS = 2000

/**
 * The `<deferred-tools>` system-prompt section: how to use the meta-tools and how many tools
 * each namespace holds. Counts only; listing names would cost what deferring saved.
 * `opts.overheadBudgetTokens` (default 2,000) bounds it together with the meta-tools'
 * definitions, in `opts.encoding`.
 */
function buildDeferredToolsSection(deferredEntries, opts = {}) {
  return sectionOf(deferredEntries.map(labelOf), opts)
}

const USAGE = [
  '<usage>',
  '1. `tool_search({ query?, namespace?, limit?, verbose? })` — ranked tool discovery (NOT web search), grouped by namespace (e.g. `web`, `kb`, `mcp:<server>`); omit `query` to browse; `verbose: true` adds full input schemas.',
  '2. `tool_inspect({ name })` — the tool\'s signature as JSDoc; inspecting (or a verbose search) first saves a round-trip.',
  '3. `tool_invoke({ name, params })` — an un-inspected tool or mismatching params returns the signature; read it and call again.',
  '</usage>',
]

/** The section listing these `[label, count]` namespaces (sorted), and a line for the rest. */
function sectionText(listed, rest) {
  const lines = ['<deferred-tools>', 'Some tools are not loaded inline. Discover and call them through the meta-tools below.', ...USAGE, '<namespaces>']
  for (const [label, count] of listed) lines.push(`  <namespace name="${escapeAttribute(label)}" count="${count}"/>`)
  if (rest.namespaces > 0) {
    lines.push(`  <more namespaces="${rest.namespaces}" tools="${rest.tools}">The largest namespaces are listed; tool_search searches all of them, and browses them when called without a query.</more>`)
  }
  lines.push('</namespaces>', '</deferred-tools>')
  return lines.join('\n')
}

/**
 * The section for the namespace labels of the deferred tools (one label per tool). Every
 * namespace while it fits the budget; past it, the namespaces with the most tools that fit,
 * and a count of the others. Namespaces are listed by name either way, so the text changes
 * only when the catalog does (prompt caches depend on it).
 */
function sectionOf(labels, { overheadBudgetTokens = DEFERRED_OVERHEAD_BUDGET_TOKENS, encoding = 'o200k_base' } = {}) {
  if (!(Number.isInteger(overheadBudgetTokens) && overheadBudgetTokens > 0)) {
    throw invalidArgument('opts.overheadBudgetTokens', `expected a positive whole number of tokens, got ${String(overheadBudgetTokens)}`)
  }
  const counts = new Map()
  for (const label of labels) counts.set(label, (counts.get(label) ?? 0) + 1)
  const byName = ([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)
  const all = [...counts].sort(byName)
  const none = { namespaces: 0, tools: 0 }
  const full = sectionText(all, none)
  const budget = overheadBudgetTokens - definitionsTokensOf(encoding)
  if (countSectionTokens(full, encoding) <= budget) return full
  const bySize = [...all].sort((a, b) => b[1] - a[1] || byName(a, b))
  const keeping = (k) => {
    const kept = bySize.slice(0, k)
    const rest = { namespaces: all.length - k, tools: bySize.slice(k).reduce((sum, [, count]) => sum + count, 0) }
    return sectionText(kept.sort(byName), rest)
  }
  // The largest k whose section fits: token counts grow with k.
  let low = 0
  let high = all.length - 1
  while (low < high) {
    const mid = Math.ceil((low + high) / 2)
    if (countSectionTokens(keeping(mid), encoding) <= budget) low = mid
    else high = mid - 1
  }
  return keeping(low)
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
function metaToolsOverhead(deferredEntries, encoding = 'o200k_base', opts = {}) {
  return overheadOf(buildDeferredToolsSection(deferredEntries, { ...opts, encoding }), encoding)
}

function definitionsTokensOf(encoding) {
  if (!definitionsTokens.has(encoding)) {
    definitionsTokens.set(encoding, metaToolDefinitions().reduce((sum, text) => sum + countTokens(text, { encoding }), 0))
  }
  return definitionsTokens.get(encoding)
}

function overheadOf(section, encoding) {
  return definitionsTokensOf(encoding) + countSectionTokens(section, encoding)
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
  const sectionOpts = { overheadBudgetTokens: opts.overheadBudgetTokens, encoding }
  const section = canUseTools ? sectionOf(candidates.map((r) => r.label), sectionOpts) : undefined
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
  const sticky = opts[STICKY]
  let stickyKept = false
  if (sticky !== undefined && canUseTools && auto.length > 0 && sticky !== verdict.deferAuto) {
    verdict.deferAuto = sticky
    // Deferring the auto pool brings the search tool in anyway: the always entries go with it.
    if (sticky) verdict.deferAlways = always.length > 0
    stickyKept = true
  }
  const deferred = verdict.deferAlways && verdict.deferAuto ? candidates : verdict.deferAuto ? auto : verdict.deferAlways ? always : []
  const decision = {
    deferredNames: new Set(deferred.map((r) => r.name)),
    threshold: verdict.threshold,
    autoTokens: verdict.autoTokens,
    overheadTokens: verdict.overheadTokens,
    savedTokens: verdict.savedTokens,
    reason: stickyKept
      ? `sticky: kept the conversation's previous decision (${sticky ? 'deferred' : 'inline'}) while its tool pool changed less than the margin; alone it would be ${verdict.reasonCode}`
      : `${verdict.reasonCode}: ${verdict.reason}`,
    reasonCode: stickyKept ? 'sticky' : verdict.reasonCode,
  }
  // The section describes what is deferred; `candidates` is all of it in the common case.
  const deferredSection = deferred.length === 0 ? undefined : deferred === candidates ? section : sectionOf(deferred.map((r) => r.label), sectionOpts)
  return { decision, deferredSection }
}

/**
 * The options that change a request's plan, as one string. Requests with an equal key over the
 * very same records get the same plan.
 */
function planKey(contextWindow, opts, encoding, extraNames) {
  const model = opts.model === undefined ? '' : `${opts.model?.functionCalling},${opts.model?.promptToolUse}`
  return `${contextWindow}|${opts[STICKY]}|${encoding}|${model}|${opts.thresholdPct}|${opts.fallbackContextWindow}|${opts.minAutoDeferCount}|${opts.metaToolsOverheadTokens}|${opts.overheadBudgetTokens}|${opts.provider}|${opts.strict === true}|${extraNames.join('\0')}`
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
function withExecTool(exposed, registry, allowedNames, opts, usage) {
  const execOptions = typeof opts.exec === 'object' ? opts.exec : {}
  exposed[MetaToolName.Exec] = createToolExecTool(registry, { ...execOptions, allowedNames, ...(usage && { usage }) })
  return exposed
}

/**
 * Applies the defer decision to a request's ToolSet, exposing the deferred tools the way
 * `opts.strategy` asks: our meta-tools (the default; the `<deferred-tools>` section is returned
 * for the system prompt) or the provider's own deferral (`native`, `auto`; see strategy.js).
 * Every registered tool handed out carries toolreg's input check (guard.js), so a call the
 * SDK makes directly is validated as `tool_invoke` validates it.
 */
async function applyDeferExposition(tools, registry, contextWindow, opts = {}) {
  const chosen = chooseStrategy(opts)
  // AI SDK models carry no context window, so `model.contextWindow` is undefined: say that the
  // fallback was used rather than deciding on it silently.
  if (!(typeof contextWindow === 'number' && contextWindow > 0)) {
    chosen.warnings.push(`no contextWindow given (got ${contextWindow}); decided for the fallback of ${opts.fallbackContextWindow ?? FALLBACK_CONTEXT_WINDOW} tokens`)
  }
  if (tools == null) return { tools, deferredEntries: [], systemPrompt: undefined, strategy: 'inline', warnings: chosen.warnings }
  const names = Object.keys(tools)
  if (names.length === 0) return { tools, deferredEntries: [], systemPrompt: undefined, strategy: 'inline', warnings: chosen.warnings }
  // Read by key rather than with Object.values: a large ToolSet is a dictionary-mode object,
  // whose values V8 enumerates several times slower than it looks keys up.
  const values = new Array(names.length)
  for (let i = 0; i < names.length; i++) values[i] = tools[names[i]]
  const extraNames = opts.extraAllowedNames === undefined ? [] : [...opts.extraAllowedNames]
  const view = registry[internals]
  const conversation = conversationOf(opts)
  const sticky = conversation && stickyDecision(conversation, names, view.recordsOf(names), contextWindow, opts)
  const planOpts = sticky?.keep === undefined ? opts : { ...opts, [STICKY]: sticky.keep }
  const key = planKey(contextWindow, planOpts, encodingOf(opts), extraNames)
  // The records a plan depends on: the tool set's, and the extra allowed names' (the key holds those names).
  const planNames = extraNames.length === 0 ? names : names.concat(extraNames)
  const records = () => view.recordsOf(planNames)
  // Read before the plan is built: a registration during its await must make the next request re-check.
  const generation = view.generation
  let plan = cachedPlan(registry, key, names, values, records, generation)
  // The catalog this request decides over is read above, before its first await: a sync that
  // lands while the pins or the plan are computed is for the next request.
  const current = plan ? null : records()
  const pinned = await pinsOf(registry, conversation, opts, chosen.warnings)
  if (!plan) {
    plan = await buildPlan(registry, names, requestRecords(current.slice(0, names.length), values), extraNames, contextWindow, planOpts)
    storePlan(registry, { key, names, values, records: current, generation, plan })
  }
  if (conversation) remember(conversation, sticky, plan.decision, contextWindow)
  const decision = requestDecision(plan.decision)
  const target = providerTarget(opts)
  const { warnings } = chosen
  const usage = registry.learnsPins ? usageOf(opts) : undefined
  if (!plan.deferred) {
    // The handed-out set is shared by requests with the same tools: tool_exec goes into a copy.
    const handed = guarded(tools, registry, usage)
    const inline = opts.exec ? withExecTool({ ...handed }, registry, createLookup(registry, planNames), opts, usage) : handed
    const safe = target ? await providerSafe(inline, Object.keys(inline), target) : inline
    return { tools: safe, deferredEntries: [], systemPrompt: undefined, decision, strategy: 'inline', warnings, pinned: [] }
  }
  // Pinned tools are loaded up front, as the host's own tool (its approval gate included).
  const pins = pinned.filter((name) => plan.decision.deferredNames.has(name))
  const pinnedSet = new Set(pins)
  const deferredEntries = pins.length === 0 ? plan.deferredEntries : plan.deferredEntries.filter((entry) => !pinnedSet.has(entry.name))
  const { discovered, inspected } = discoveredIn(opts.messages)
  if (chosen.strategy !== 'meta-tools') {
    let deferredNames = plan.decision.deferredNames
    // ai@7 forgets discoveries between calls: what the conversation found stays exposed.
    const loaded = chosen.strategy === 'sdk-tool-search' ? [...discovered, ...pins] : pins
    if (loaded.length > 0) {
      const keep = new Set(loaded)
      deferredNames = new Set([...deferredNames].filter((n) => !keep.has(n)))
    }
    // The provider loads a deferred definition when a search finds it: a call of one no search
    // found names a tool the model never saw (ai@7's own tool search refuses those itself).
    const loadedOnly = chosen.strategy === 'sdk-tool-search' ? undefined : deferredNames
    const checked = guarded(tools, registry, usage, loadedOnly)
    const safe = target ? await providerSafe(checked, names, target) : checked
    const build = { tools: safe, names, deferredNames, deferredEntries, registry, opts, openai: chosen.openai, strategy: chosen.strategy, conversation }
    const exposition = await expositionFor(chosen.strategy, build)
    if (opts.exec) withExecTool(exposition.tools, registry, plan.lookup, opts, usage)
    return {
      tools: exposition.tools,
      deferredEntries: deferredEntries.slice(),
      systemPrompt: undefined,
      decision,
      strategy: chosen.strategy,
      warnings: warnings.concat(exposition.warnings),
      pinned: pins,
      ...(exposition.middleware && { middleware: exposition.middleware, prepareStep: exposition.prepareStep }),
    }
  }
  const inlineTools = {}
  if (pins.length === 0) for (const name of plan.inlineNames) inlineTools[name] = tools[name]
  else for (const name of names) if (pinnedSet.has(name) || !plan.decision.deferredNames.has(name)) inlineTools[name] = tools[name]
  const exposed = guarded(inlineTools, registry, usage)
  // Signatures the model read earlier in the conversation stay read: no second inspect round-trip.
  // A host that rebuilds the exposition mid-conversation (a gateway whose servers change) keeps
  // one set, so a rebuild does not ask the model to inspect again.
  if (opts.inspectedNames !== undefined && !(opts.inspectedNames instanceof Set)) throw invalidArgument('opts.inspectedNames', 'expected a Set of tool names')
  const inspectedNames = opts.inspectedNames ?? new Set()
  for (const name of inspected) if (plan.lookup.allows(name)) inspectedNames.add(name)
  const metaOpts = { ...(target && { provider: target.provider }), shownNames: opts.shownNames, usage }
  exposed[MetaToolName.Search] = createToolSearchTool(registry, searchViewOf(plan, pins), inspectedNames, undefined, metaOpts)
  exposed[MetaToolName.Inspect] = createToolInspectTool(registry, plan.lookup, inspectedNames, undefined, metaOpts)
  exposed[MetaToolName.Invoke] = createToolInvokeTool(registry, plan.lookup, inspectedNames, undefined, metaOpts)
  if (opts.exec) withExecTool(exposed, registry, plan.lookup, opts, usage)
  const safe = target ? await providerSafe(exposed, Object.keys(exposed), target) : exposed
  return {
    tools: safe,
    deferredEntries: deferredEntries.slice(),
    systemPrompt: conversation ? stickySection(conversation, plan) : plan.systemPrompt,
    decision,
    strategy: 'meta-tools',
    warnings,
    pinned: pins,
  }
}

/**
 * What `tool_search` ranks: the plan's deferred tools less the pinned ones, which are loaded
 * already (kept per plan and pin set: conversations of one user share them).
 */
function searchViewOf(plan, pins) {
  if (pins.length === 0) return plan.deferred
  const key = pins.join('\0')
  plan.searchViews ??= new Map()
  let view = plan.searchViews.get(key)
  if (!view) {
    const pinned = new Set(pins)
    view = new DeferredView(new Map([...plan.deferred.entries].filter(([name]) => !pinned.has(name))))
    if (plan.searchViews.size >= PLANS_KEPT) plan.searchViews.delete(plan.searchViews.keys().next().value)
    plan.searchViews.set(key, view)
  }
  return view
}

/** Who a request's tool calls are recorded for: `opts.userId` and `opts.assistantId`. */
function usageOf(opts) {
  for (const key of ['userId', 'assistantId']) {
    if (opts[key] !== undefined && typeof opts[key] !== 'string') throw invalidArgument(`opts.${key}`, 'expected a string')
  }
  return { userId: opts.userId, assistantId: opts.assistantId }
}

/**
 * The conversation's pins: computed from the host's usage store on its first request and kept
 * in `conversation.toolreg.pins`, so they never change mid-conversation (a changing `tools`
 * list would break the provider's prompt cache). `opts.pins: false` turns them off; an array
 * of names is the host's own frozen set. Without a conversation, only the host's array pins.
 * An unreadable store is a warning: the conversation goes on without pins.
 */
async function pinsOf(registry, conversation, opts, warnings) {
  const asked = opts.pins
  if (asked === false) return []
  if (Array.isArray(asked)) {
    if (!asked.every((name) => typeof name === 'string')) throw invalidArgument('opts.pins', 'expected false or an array of tool names')
    return asked
  }
  if (asked !== undefined) throw invalidArgument('opts.pins', 'expected false or an array of tool names')
  if (!conversation || !registry.learnsPins) return []
  const kept = conversation.toolreg?.pins
  if (Array.isArray(kept)) return kept
  let pins = []
  try {
    const explained = await registry.pins({ ...usageOf(opts), encoding: encodingOf(opts) })
    pins = explained.map((pin) => pin.name)
  } catch (error) {
    if (error?.code === 'TOOLREG_INVALID_ARGUMENT') throw error
    const message = `no pins for this conversation: ${error?.message ?? error}`
    warnings.push(message)
    registry[internals].logger.warn(`toolreg: ${message}`)
  }
  conversation.toolreg = { ...conversation.toolreg, pins }
  return pins
}

/**
 * The registered tools of `tools` with toolreg's input check, and with `usage` their uses
 * recorded; with `loadedOnly`, those deferred tools refuse a call no search loaded (guard.js).
 */
function guarded(tools, registry, usage, loadedOnly) {
  const view = registry[internals]
  return guardedTools(tools, registry, { native: view.native, usage, loadedOnly, isMetaTool, generation: view.generation })
}

/** The exposition of a strategy other than meta-tools. */
async function expositionFor(strategy, build) {
  switch (strategy) {
    case 'anthropic-append':
    case 'openai-append':
      return appendExposition(build)
    case 'anthropic-native':
      return anthropicExposition(build)
    case 'openai-native':
      return openaiExposition(build)
    default:
      return sdkExposition(build)
  }
}

function conversationOf(opts) {
  const { conversation } = opts
  if (conversation === undefined) return undefined
  if (conversation === null || typeof conversation !== 'object') {
    throw invalidArgument('opts.conversation', 'expected an object kept per conversation (start with {})')
  }
  const margin = opts.stickyMargin ?? STICKY_MARGIN
  if (typeof margin !== 'number' || !(margin >= 0 && margin <= 1)) throw invalidArgument('opts.stickyMargin', 'expected a number from 0 to 1')
  return conversation
}

/**
 * The auto pool of this request (registered, `defer: 'auto'`, not approval-gated) and, when the
 * conversation decided before for the same context window and the pool changed by less than
 * the margin (names added plus removed, over the previous pool's size), that decision.
 */
function stickyDecision(conversation, names, records, contextWindow, opts) {
  const pool = []
  for (let i = 0; i < names.length; i++) {
    const record = records[i]
    if (record && record.defer === 'auto' && !record.gated) pool.push(names[i])
  }
  const previous = conversation.toolreg
  if (!previous || !Array.isArray(previous.pool) || typeof previous.deferAuto !== 'boolean' || previous.contextWindow !== (contextWindow ?? null)) {
    return { pool, keep: undefined }
  }
  const before = new Set(previous.pool)
  const now = new Set(pool)
  let changed = 0
  for (const name of now) if (!before.has(name)) changed++
  for (const name of before) if (!now.has(name)) changed++
  const ratio = changed / Math.max(before.size, 1)
  return { pool, keep: ratio < (opts.stickyMargin ?? STICKY_MARGIN) ? previous.deferAuto : undefined }
}

/**
 * The conversation's previous `<deferred-tools>` section while the deferred namespaces are the
 * same: a tool more or less in one would change its count, and with it the cached system prompt.
 */
function stickySection(conversation, plan) {
  const labels = [...new Set(plan.deferredEntries.map(labelOf))].sort()
  const previous = conversation.toolreg.section
  if (previous && previous.labels.join('\0') === labels.join('\0')) return previous.text
  conversation.toolreg.section = { labels, text: plan.systemPrompt }
  return plan.systemPrompt
}

/** Stores the decision in the conversation (plain JSON, so hosts can persist it with the chat). */
function remember(conversation, sticky, decision, contextWindow) {
  const deferAuto = sticky.pool.some((name) => decision.deferredNames.has(name))
  // A kept decision keeps its reference pool, so slow drift still adds up to the margin.
  const pool = sticky.keep === undefined ? sticky.pool : conversation.toolreg.pool
  const { section, append, pins } = conversation.toolreg ?? {}
  conversation.toolreg = { pool, deferAuto, contextWindow: contextWindow ?? null, section, append, pins }
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
  STICKY_MARGIN,
  shouldDefer,
  applyDeferExposition,
  buildDeferredToolsSection,
  DEFERRED_OVERHEAD_BUDGET_TOKENS,
  metaToolsOverhead,
  DEFER_THRESHOLD_PCT,
  FALLBACK_CONTEXT_WINDOW,
  MIN_AUTO_DEFER_COUNT,
  META_TOOLS_OVERHEAD_TOKENS,
}
