// What the configured tools cost: o200k_base tokens per tool and server (the registry's own
// cost path; exact for OpenAI models, an estimate for others), the defer decision for a context
// window and its reason, and the savings.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { shouldDefer, FALLBACK_CONTEXT_WINDOW } = require('../index.js')
const { recordCosts, DEFAULT_ENCODING } = require('../js/tokens.js')
const { recordOf, hasApprovalGate } = require('../js/registry.js')

/** o200k_base is what OpenAI models count (and what toolreg prices with); others only approximate. */
export const isOpenAIModel = (model) => model == null || /^(openai\/)?(gpt-|o\d|chatgpt|codex)/i.test(model)

export const REPORT_WINDOWS = [8_000, 32_000, 128_000, 200_000, 1_000_000]

/** Costs of every registered tool, keyed by name. */
async function toolCosts(registry) {
  const entries = registry.getAll()
  const costs = await recordCosts(entries.map(recordOf))
  return { entries, cost: new Map(entries.map((e, i) => [e.name, costs[i]])) }
}

/** One decision per window, as the report shows them. */
export async function decisionsAt(registry, windows = REPORT_WINDOWS) {
  const { entries, cost } = await toolCosts(registry)
  const total = [...cost.values()].reduce((a, b) => a + b, 0)
  const out = []
  for (const contextWindow of windows) {
    const d = await shouldDefer(entries, contextWindow)
    const deferredTokens = [...d.deferredNames].reduce((sum, n) => sum + cost.get(n), 0)
    out.push({
      contextWindow,
      threshold: d.threshold,
      deferred: d.deferredNames.size,
      inlineTokens: total - deferredTokens + (d.deferredNames.size ? d.overheadTokens : 0),
      savedTokens: d.savedTokens,
      reasonCode: d.reasonCode,
      reason: d.reason,
    })
  }
  return out
}

/**
 * The audit document (`--json` prints it as is): servers, tools, summary.
 * @param {{ contextWindow?: number, model?: string, modelWindow?: number }} opts
 */
export async function audit(session, opts = {}) {
  const contextWindow = opts.contextWindow ?? opts.modelWindow ?? FALLBACK_CONTEXT_WINDOW
  const { registry } = session
  const { entries, cost } = await toolCosts(registry)
  const d = await shouldDefer(entries, contextWindow)
  const share = (tokens) => tokens / contextWindow
  const reasonFor = (entry) => {
    if (hasApprovalGate(entry.tool)) return 'approval-gated: never deferred, so approval cannot be bypassed'
    if (entry.defer === 'never') return 'defer: never'
    return d.reason
  }
  const tools = entries.map((entry) => {
    const tokens = cost.get(entry.name)
    return {
      name: entry.name,
      server: entry.namespace.slice('mcp:'.length),
      tool: entry.mcp?.toolName ?? null,
      description: entry.description,
      tokens,
      share: share(tokens),
      deferred: d.deferredNames.has(entry.name),
      approvalGated: hasApprovalGate(entry.tool),
      callable: typeof entry.tool.execute === 'function',
      reason: reasonFor(entry),
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
  const totalTokens = tools.reduce((sum, t) => sum + t.tokens, 0)
  const deferredTokens = tools.filter((t) => t.deferred).reduce((sum, t) => sum + t.tokens, 0)
  const anyDeferred = d.deferredNames.size > 0
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
    summary: {
      servers: servers.length,
      mcpServers: servers.filter((s) => s.kind === 'mcp').length,
      failedServers: servers.filter((s) => s.status === 'failed').length,
      tools: tools.length,
      tokens: totalTokens,
      share: share(totalTokens),
      threshold: d.threshold,
      deferredTools: d.deferredNames.size,
      deferredTokens,
      overheadTokens: anyDeferred ? d.overheadTokens : 0,
      inlineTokens: totalTokens - deferredTokens + (anyDeferred ? d.overheadTokens : 0),
      savedTokens: d.savedTokens,
      reasonCode: d.reasonCode,
      reason: d.reason,
    },
  }
}
