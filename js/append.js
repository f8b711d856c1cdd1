'use strict'

const ai = require('ai')
const { MetaToolName } = require('./meta/shared')
const {
  SEARCH_DESCRIPTION,
  searchParameters,
  candidatesOf,
  rankDeferred,
  maxResultsOf,
  cacheControlOf,
  withMovedBreakpoint,
  CACHE_CONTROL_KEYS,
} = require('./strategy')

/**
 * Append-only tool loading. The request's `tools` holds only what is loaded from the start (the
 * eager tools and `tool_search`); the tools a search finds are added by value at the point of
 * the conversation where they were found, and stay callable from there on:
 * - Anthropic: a system message with `toolChanges` (`tool_addition` by value) right before the
 *   next assistant turn; a tool the host withdrew later gets a `tool_removal`.
 * - OpenAI Responses: `additionalTools` on the search's tool result.
 * The deferred tools stay in the ToolSet the SDK receives, so the SDK still validates, asks for
 * approval and executes their calls; a language-model middleware takes them out of the request
 * and writes the additions into the prompt. The additions follow from the messages alone (and
 * the definitions pinned in `conversation`), so a replayed conversation never changes a byte
 * before its end and the provider's prompt cache holds across steps and turns.
 */
function appendExposition({ tools, names, deferredNames, deferredEntries, registry, opts, strategy, conversation }) {
  const family = strategy === 'anthropic-append' ? 'anthropic' : 'openai'
  const exposed = {}
  for (const name of names) exposed[name] = tools[name]
  const candidates = candidatesOf(deferredEntries)
  const maxResults = maxResultsOf(opts)
  const search = ai.tool({
    description: SEARCH_DESCRIPTION,
    inputSchema: ai.jsonSchema(searchParameters),
    execute: async ({ query }) => {
      const found = await rankDeferred(registry, query, candidates, maxResults)
      return found.length > 0 ? { tools: found } : { tools: found, message: 'No tools matched. Try other words.' }
    },
  })
  if (family === 'anthropic') {
    // A host breakpoint on a deferred tool left the request with it: it moves to the search tool.
    const cacheKeys = ['anthropic']
    const movedCache = names.filter((name) => deferredNames.has(name)).map((name) => cacheControlOf(tools[name], cacheKeys)).find((c) => c !== undefined)
    exposed[MetaToolName.Search] = withMovedBreakpoint(search, movedCache, { tools, names, deferredNames, cacheKeys })
  } else {
    exposed[MetaToolName.Search] = search
  }
  const middleware = appendMiddleware({ family, deferredNames, state: conversation && appendState(conversation) })
  return {
    tools: exposed,
    middleware,
    prepareStep: ({ model }) => ({ model: ai.wrapLanguageModel({ model, middleware }) }),
    warnings: [],
  }
}

/**
 * What a conversation keeps for append-only loading (plain JSON in `conversation.toolreg`): the
 * definitions as first added, so a later change of a tool's schema or its withdrawal does not
 * rewrite an earlier addition; where each withdrawn tool was removed; where each changed one
 * was added again with its new definition.
 */
function appendState(conversation) {
  const toolreg = (conversation.toolreg ??= {})
  const state = (toolreg.append ??= {})
  state.definitions ??= {}
  state.removals ??= []
  state.changes ??= []
  return state
}

const SPECIFICATION_VERSION = Number(require('ai/package.json').version.split('.')[0]) >= 7 ? 'v4' : 'v3'

/**
 * The betas Anthropic's tool changes need (a system message of removals alone asks for the
 * by-reference one), sent from the first request on: the provider adds each only once such a
 * change is in the prompt, and a beta set that changes mid-conversation is what Anthropic's
 * threads refuse and may split a cache. In the order the provider adds them.
 */
const ANTHROPIC_BETAS = ['mid-conversation-system-2026-04-07', 'inline-tools-2026-09-15', 'mid-conversation-tool-changes-2026-07-01']

/**
 * The language-model middleware: the found tools into the prompt, the deferred ones out of the
 * request's `tools`. OpenAI's keep their place there with `omitFromRequestTools`: from
 * `@ai-sdk/openai` 4.0.119 an `additionalTools` entry only selects a tool registered in the
 * request, whose definition the provider then sends, and the option (since 4.0.96) keeps such a
 * tool out of the `tools` array the API receives.
 */
function appendMiddleware({ family, deferredNames, state }) {
  return {
    specificationVersion: SPECIFICATION_VERSION,
    transformParams: async ({ params }) => {
      const deferred = new Map()
      const requestTools = []
      for (const tool of params.tools ?? []) {
        const isDeferred = tool.type === 'function' && deferredNames.has(tool.name)
        if (isDeferred) deferred.set(tool.name, tool)
        if (!isDeferred) requestTools.push(tool)
        else if (family === 'openai') requestTools.push(omittedFromRequest(tool))
      }
      const carried = new Set((params.tools ?? []).map((tool) => tool.name))
      // A tool the host withdrew stays registered as it was shown, so its earlier addition is
      // still sent (the SDK answers a call of it as an unknown tool).
      if (family === 'openai' && state) {
        for (const [name, definition] of Object.entries(state.definitions)) if (!carried.has(name)) requestTools.push(omittedFromRequest(definition))
      }
      const prompt = withToolChanges(params.prompt, family, { deferred, carried, state })
      return { ...params, tools: requestTools, prompt, ...(family === 'anthropic' && { providerOptions: withAnthropicBetas(params.providerOptions) }) }
    },
  }
}

function omittedFromRequest(tool) {
  const options = tool.providerOptions ?? {}
  return { ...tool, providerOptions: { ...options, openai: { ...options.openai, omitFromRequestTools: true } } }
}

/**
 * The prompt with every tool a `tool_search` result found added once, by value, where it was
 * found. The model is always shown the definition the SDK validates and runs:
 * - Anthropic: each addition as first made (pinned in `state`); a tool whose definition has
 *   changed since is added again with the new one at the end (an addition under a known name
 *   replaces the definition from there on), and a tool the request no longer carries is
 *   removed there; both stay at that place on later requests, so no earlier byte changes.
 * - OpenAI: each addition with the request's definition (what `@ai-sdk/openai` ≥ 4.0.119 sends
 *   whatever the entry says), so a definition that changed mid-conversation changes the input
 *   from its first addition on; OpenAI has no removal.
 */
function withToolChanges(prompt, family, { deferred, carried, state }) {
  const pinned = family === 'anthropic' ? state : undefined
  const live = new Map()
  const out = []
  let assistantTurns = 0
  let pending = []
  // Anthropic takes tool changes in a system message right before an assistant message or at the end.
  const flush = () => {
    for (const { name, beforeAssistantTurn } of pinned?.removals ?? []) {
      if (beforeAssistantTurn === assistantTurns && live.delete(name)) pending.push({ type: 'tool_removal', toolName: name })
    }
    for (const { name, beforeAssistantTurn, definition } of pinned?.changes ?? []) {
      if (beforeAssistantTurn !== assistantTurns || !live.has(name)) continue
      live.set(name, definition)
      pending.push({ type: 'tool_addition', tool: definition })
    }
    if (pending.length > 0) out.push({ role: 'system', content: '', providerOptions: { anthropic: { toolChanges: pending } } })
    pending = []
  }
  for (const message of prompt) {
    if (message.role === 'assistant') {
      if (family === 'anthropic') flush()
      assistantTurns++
    }
    if (message.role !== 'tool') {
      out.push(message)
      continue
    }
    const content = message.content.map((part) => {
      const added = []
      for (const name of foundBy(part)) {
        const definition = live.has(name) ? undefined : definitionOf(name, family, deferred, state)
        if (definition === undefined) continue
        live.set(name, definition)
        added.push(definition)
      }
      if (added.length === 0) return part
      if (family === 'anthropic') {
        pending.push(...added.map((tool) => ({ type: 'tool_addition', tool })))
        return part
      }
      const options = part.providerOptions ?? {}
      const additionalTools = [...(options.openai?.additionalTools ?? []), ...added.map(openaiDefinition)]
      return { ...part, providerOptions: { ...options, openai: { ...options.openai, additionalTools } } }
    })
    out.push({ ...message, content })
  }
  if (family === 'anthropic') {
    if (pinned) {
      for (const [name, shown] of live) {
        if (!carried.has(name)) pinned.removals.push({ name, beforeAssistantTurn: assistantTurns })
        else if (deferred.has(name) && changed(shown, withoutCacheControl(deferred.get(name)))) {
          pinned.changes.push({ name, beforeAssistantTurn: assistantTurns, definition: withoutCacheControl(deferred.get(name)) })
        }
      }
    }
    flush()
  }
  return out
}

/** Whether a definition differs from the one the model was shown (pinned ones went through JSON). */
function changed(shown, current) {
  return JSON.stringify(shown) !== JSON.stringify(current)
}

function withAnthropicBetas(providerOptions = {}) {
  const anthropic = providerOptions.anthropic ?? {}
  const anthropicBeta = [...new Set([...(anthropic.anthropicBeta ?? []), ...ANTHROPIC_BETAS])]
  return { ...providerOptions, anthropic: { ...anthropic, anthropicBeta } }
}

/** Names a `tool_search` result found (our `{ tools: string[] }` output). */
function foundBy(part) {
  if (part.type !== 'tool-result' || part.toolName !== MetaToolName.Search) return []
  const found = part.output?.type === 'json' ? part.output.value?.tools : undefined
  return Array.isArray(found) ? found.filter((name) => typeof name === 'string') : []
}

/**
 * A found tool's definition as the SDK hands it to the provider (`{ type: 'function', name,
 * description, inputSchema, … }`). Anthropic: as first added (pinned in `state`). OpenAI: the
 * request's, kept in `state` as last shown for when the host withdraws the tool. No cache
 * breakpoint: inside the messages it would move the cached prefix.
 */
function definitionOf(name, family, deferred, state) {
  const pinned = state?.definitions[name]
  const tool = deferred.get(name)
  if (tool === undefined || (family === 'anthropic' && pinned !== undefined)) return pinned
  const definition = withoutCacheControl(tool)
  if (state) state.definitions[name] = definition
  return definition
}

function withoutCacheControl(tool) {
  const anthropic = tool.providerOptions?.anthropic
  if (anthropic === undefined || cacheControlOf(tool, ['anthropic']) === undefined) return tool
  const own = { ...anthropic }
  for (const key of CACHE_CONTROL_KEYS) delete own[key]
  return { ...tool, providerOptions: { ...tool.providerOptions, anthropic: own } }
}

/** A function tool in the Responses wire shape `additionalTools` takes (`strict` as @ai-sdk/openai 4 declares it). */
function openaiDefinition(tool) {
  return {
    type: 'function',
    name: tool.name,
    ...(tool.description !== undefined && { description: tool.description }),
    parameters: tool.inputSchema,
    strict: tool.strict ?? false,
  }
}

module.exports = { appendExposition }
