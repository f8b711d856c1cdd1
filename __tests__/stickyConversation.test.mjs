// Cache-stable conversations: over a scripted 20-turn conversation whose tool pool flaps around
// the defer threshold (one tool of seven comes and goes, as an MCP server reconnecting does, and
// four tools join at turn 14), count the requests whose tools array differs from the previous
// request's, as the model received it. Without `conversation` the decision flips every turn.
import { describe, it, expect } from 'vitest'
import { generateText } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { applyDeferExposition, shouldDefer } from '../index.js'
import { quietRegistry, heavyEntry } from './helpers.mjs'

const TURNS = 20
const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
}

async function conversation({ strategy, provider, sticky }) {
  const { registry } = quietRegistry()
  const base = Array.from({ length: 6 }, (_, i) => heavyEntry(`base_${i}`, 1500))
  const flapping = heavyEntry('flapping', 1500)
  const late = Array.from({ length: 4 }, (_, i) => heavyEntry(`late_${i}`, 1500))
  for (const e of [...base, flapping, ...late]) registry.register(e)
  // The context window puts the threshold between the 6-tool and the 7-tool pool.
  const without = (await shouldDefer(base, undefined)).autoTokens
  const withFlapping = (await shouldDefer([...base, flapping], undefined)).autoTokens
  const contextWindow = Math.round((without + withFlapping) / 2 / 0.1)

  const state = {}
  const messages = []
  const requests = []
  const decisions = []
  const model = new MockLanguageModelV3({
    provider: provider ?? 'mock',
    doGenerate: async (options) => {
      requests.push(options)
      return { content: [{ type: 'text', text: `answer ${requests.length}` }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] }
    },
  })
  for (let turn = 0; turn < TURNS; turn++) {
    const entries = [...base, ...(turn % 2 === 0 ? [flapping] : []), ...(turn >= 14 ? late : [])]
    const tools = Object.fromEntries(entries.map((e) => [e.name, e.tool]))
    messages.push({ role: 'user', content: `question ${turn}` })
    const exposed = await applyDeferExposition(tools, registry, contextWindow, {
      strategy, provider, messages, ...(sticky && { conversation: state }),
    })
    decisions.push(exposed.deferredEntries.length > 0)
    const result = await generateText({ model, tools: exposed.tools, system: exposed.systemPrompt, messages })
    messages.push(...result.response.messages)
  }
  const changes = (key) => requests.slice(1).filter((r, i) => key(r) !== key(requests[i])).length
  const toolsJson = (r) => JSON.stringify(r.tools)
  const eagerJson = (r) => JSON.stringify(r.tools.filter((t) => t.providerOptions?.anthropic?.deferLoading !== true))
  const systemJson = (r) => JSON.stringify(r.prompt.filter((m) => m.role === 'system'))
  return { tools: changes(toolsJson), eager: changes(eagerJson), system: changes(systemJson), decisions, state }
}

describe('sticky defer decision over a 20-turn conversation', () => {
  it('meta-tools: the tools array changes at most once with `conversation`, every turn without', async () => {
    const flipping = await conversation({ strategy: 'meta-tools' })
    const sticky = await conversation({ strategy: 'meta-tools', sticky: true })
    console.log(`meta-tools, ${TURNS} turns: tools array changed in ${flipping.tools} requests without conversation state, ${sticky.tools} with it (system prompt changed in ${flipping.system} / ${sticky.system})`)
    // Turns 1-14 cross the threshold each time; from turn 14 the pool is above it either way.
    expect(flipping.tools).toBeGreaterThanOrEqual(12)
    expect(sticky.tools).toBeLessThanOrEqual(1)
    // The <deferred-tools> section stays the same while the deferred namespaces do.
    expect(sticky.system).toBeLessThanOrEqual(1)
    expect(sticky.decisions.every(Boolean)).toBe(true)
    // The state is plain JSON: a host can store it with the chat.
    expect(JSON.parse(JSON.stringify(sticky.state))).toEqual(sticky.state)
    expect(sticky.state.toolreg.deferAuto).toBe(true)
  })

  it('anthropic-native: the eager tools (the cached prefix) change at most once with `conversation`', async () => {
    const flipping = await conversation({ strategy: 'native', provider: 'anthropic.messages' })
    const sticky = await conversation({ strategy: 'native', provider: 'anthropic.messages', sticky: true })
    console.log(`anthropic-native, ${TURNS} turns: tools array changed in ${flipping.tools} / ${sticky.tools} requests (without / with conversation state), eager tools in ${flipping.eager} / ${sticky.eager}`)
    expect(flipping.eager).toBeGreaterThanOrEqual(12)
    expect(sticky.eager).toBeLessThanOrEqual(1)
    expect(sticky.system).toBe(0)
  })

  it('a pool change beyond the margin decides afresh', async () => {
    const { registry } = quietRegistry()
    const pool = Array.from({ length: 6 }, (_, i) => heavyEntry(`t_${i}`, 1500))
    for (const e of pool) registry.register(e)
    const tools = Object.fromEntries(pool.map((e) => [e.name, e.tool]))
    // The threshold between the 5-tool and the 6-tool pool.
    const fiveTokens = (await shouldDefer(pool.slice(0, 5), undefined)).autoTokens
    const sixTokens = (await shouldDefer(pool, undefined)).autoTokens
    const window = Math.round((fiveTokens + sixTokens) / 2 / 0.1)
    const state = {}
    const first = await applyDeferExposition(tools, registry, window, { conversation: state })
    expect(first.deferredEntries).toHaveLength(6)
    // One tool of six gone (17% < 20%): still deferred although 5 alone would not be.
    expect((await applyDeferExposition(Object.fromEntries(Object.entries(tools).slice(0, 5)), registry, window)).deferredEntries).toEqual([])
    const { t_5: _gone, ...five } = tools
    const kept = await applyDeferExposition(five, registry, window, { conversation: state })
    expect(kept.decision.reasonCode).toBe('sticky')
    expect(kept.deferredEntries).toHaveLength(5)
    // Two of six gone (33%): decided afresh.
    const { t_4: _also, ...four } = five
    const fresh = await applyDeferExposition(four, registry, window, { conversation: state })
    expect(fresh.decision.reasonCode).toBe('below_threshold')
    expect(fresh.tools).toBe(four)
    await expect(applyDeferExposition(tools, registry, window, { conversation: 'chat-1' })).rejects.toThrow(/conversation/)
    await expect(applyDeferExposition(tools, registry, window, { conversation: {}, stickyMargin: 2 })).rejects.toThrow(/stickyMargin/)
  })
})
