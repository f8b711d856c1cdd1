// What the configured tools cost: o200k_base tokens per tool and server (the registry's own
// cost path; exact for OpenAI models, an estimate for others), the defer decision for a context
// window and its reason, and the savings.
import { createRequire } from 'node:module'
import { clientOf } from './discover.mjs'

const require = createRequire(import.meta.url)
const { shouldDefer, FALLBACK_CONTEXT_WINDOW } = require('../index.js')
const { recordCosts, DEFAULT_ENCODING } = require('../js/tokens.js')
const { recordOf, hasApprovalGate } = require('../js/registry.js')

/** o200k_base is what OpenAI models count (and what toolreg prices with); others only approximate. */
export const isOpenAIModel = (model) => model == null || /^(openai\/)?(gpt-|o\d|chatgpt|codex)/i.test(model)

export const REPORT_WINDOWS = [8_000, 32_000, 128_000, 200_000, 1_000_000]

const serverOf = (entry) => entry.namespace.slice('mcp:'.length)

/** What each of `entries` costs in tokens, keyed by name. */
export async function costsOf(entries) {
  const costs = await recordCosts(entries.map(recordOf))
  return new Map(entries.map((e, i) => [e.name, costs[i]]))
}

/** Costs of every registered tool, keyed by name. */
async function toolCosts(registry) {
  const entries = registry.getAll()
  return { entries, cost: await costsOf(entries) }
}

/** The entries a combined total counts: those of a server listed twice (`sameAs`) once. */
function countedEntries(session, entries) {
  const duplicates = new Set(session.servers.filter((s) => s.sameAs).map((s) => s.id))
  return entries.filter((e) => !duplicates.has(serverOf(e)))
}

/** One decision per window, as the report shows them. */
export async function decisionsAt(session, windows = REPORT_WINDOWS) {
  const { entries, cost } = await toolCosts(session.registry)
  const counted = countedEntries(session, entries)
  const out = []
  for (const contextWindow of windows) {
    const { summary: m } = await costOf(counted, cost, contextWindow)
    out.push({ contextWindow, threshold: m.threshold, deferred: m.deferredTools, inlineTokens: m.inlineTokens, savedTokens: m.savedTokens, reasonCode: m.reasonCode, reason: m.reason })
  }
  return out
}

/**
 * What a set of tools costs per request and what deferring them saves at `contextWindow`:
 * `{ decision, summary }`, the summary's fields as in the audit document.
 */
async function costOf(entries, cost, contextWindow) {
  const decision = await shouldDefer(entries, contextWindow)
  const tokens = entries.reduce((sum, e) => sum + cost.get(e.name), 0)
  const deferredTokens = [...decision.deferredNames].reduce((sum, n) => sum + cost.get(n), 0)
  const overheadTokens = decision.deferredNames.size ? decision.overheadTokens : 0
  return {
    decision,
    summary: {
      tools: entries.length,
      tokens,
      share: tokens / contextWindow,
      threshold: decision.threshold,
      deferredTools: decision.deferredNames.size,
      deferredTokens,
      overheadTokens,
      inlineTokens: tokens - deferredTokens + overheadTokens,
      savedTokens: decision.savedTokens,
      reasonCode: decision.reasonCode,
      reason: decision.reason,
    },
  }
}

/**
 * Each config file as its client sees it: the servers it lists (shared ones too, and a server
 * it lists twice under two ids twice), its skipped entries, and what it sends per request.
 */
async function clientViews(session, servers, entries, cost, contextWindow) {
  const views = []
  for (const file of session.configFiles) {
    const own = servers.filter((s) => s.files?.includes(file))
    const ids = new Set(own.map((s) => s.id))
    const { summary } = await costOf(entries.filter((e) => ids.has(serverOf(e))), cost, contextWindow)
    views.push({
      file,
      client: clientOf(file),
      servers: own.map((s) => s.id),
      failedServers: own.filter((s) => s.status === 'failed').length,
      skipped: session.skipped.filter((s) => s.file === file).length,
      summary,
    })
  }
  return views
}

/**
 * The audit document (`--json` prints it as is): servers, tools, summary, and per config file
 * (`clients`) what that client sends. The summary counts every server once: one that a config
 * lists under a second id (`sameAs`) is left out of it.
 * @param {{ contextWindow?: number, model?: string, modelWindow?: number }} opts
 */
export async function audit(session, opts = {}) {
  const contextWindow = opts.contextWindow ?? opts.modelWindow ?? FALLBACK_CONTEXT_WINDOW
  const { registry } = session
  const { entries, cost } = await toolCosts(registry)
  const duplicates = new Map(session.servers.filter((s) => s.sameAs).map((s) => [s.id, s.sameAs]))
  const combined = await costOf(countedEntries(session, entries), cost, contextWindow)
  const d = combined.decision
  const share = (tokens) => tokens / contextWindow
  const reasonFor = (entry) => {
    if (duplicates.has(serverOf(entry))) return `the same server as ${duplicates.get(serverOf(entry))}: counted there`
    if (hasApprovalGate(entry.tool)) return 'approval-gated: never deferred, so approval cannot be bypassed'
    if (entry.defer === 'never') return 'defer: never'
    return d.reason
  }
  // Tool trust's scan of each definition (docs/security.md).
  const findingsOf = new Map(registry.trust().map((t) => [t.name, t.findings]))
  const tools = entries.map((entry) => {
    const tokens = cost.get(entry.name)
    const findings = findingsOf.get(entry.name) ?? []
    return {
      name: entry.name,
      server: serverOf(entry),
      tool: entry.mcp?.toolName ?? null,
      description: entry.description,
      tokens,
      share: share(tokens),
      deferred: d.deferredNames.has(entry.name),
      approvalGated: hasApprovalGate(entry.tool),
      callable: typeof entry.tool.execute === 'function',
      reason: reasonFor(entry),
      ...(findings.length && { findings }),
    }
  })
  const byName = new Map(tools.map((t) => [t.name, t]))
  const servers = session.servers.map((s) => {
    const own = s.tools.map((t) => ({ ...byName.get(t.name), tool: t.tool }))
    for (const t of own) byName.set(t.name, t)
    const tokens = own.reduce((sum, t) => sum + t.tokens, 0)
    const deferredTokens = own.filter((t) => t.deferred).reduce((sum, t) => sum + t.tokens, 0)
    const { tools: _, ...rest } = s
    return { ...rest, toolCount: own.length, tokens, share: share(tokens), deferredTools: own.filter((t) => t.deferred).length, deferredTokens }
  })
  const counted = servers.filter((s) => !s.sameAs)
  return {
    toolreg: 'audit',
    encoding: DEFAULT_ENCODING,
    config: session.configFiles[0] ?? null,
    configFiles: session.configFiles,
    notice: session.source.notice ?? null,
    tokensExact: isOpenAIModel(opts.model),
    catalog: session.catalog,
    skipped: session.skipped,
    contextWindow,
    model: opts.model ?? null,
    servers,
    tools: [...byName.values()],
    clients: await clientViews(session, servers, entries, cost, contextWindow),
    summary: {
      servers: counted.length,
      mcpServers: counted.filter((s) => s.kind === 'mcp').length,
      failedServers: servers.filter((s) => s.status === 'failed').length,
      sharedServers: servers.length - counted.length,
      flaggedTools: tools.filter((t) => t.findings).length,
      ...combined.summary,
    },
  }
}
