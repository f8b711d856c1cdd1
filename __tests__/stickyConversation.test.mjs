// Cache-stable conversations: the scripted 20-turn conversation of nativeFixtures.mjs, whose tool
// pool flaps around the defer threshold, with and without `conversation` state. The ai@7 lane
// runs it for the SDK's tool search.
import { describe, it, expect } from 'vitest'
import { generateText, tool } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { z } from 'zod'
import { ToolRegistry, applyDeferExposition, shouldDefer } from '../index.js'
import { scriptedConversation, TURNS } from './nativeFixtures.mjs'
import { quietRegistry, heavyEntry } from './helpers.mjs'

const deps = { tool, z, ToolRegistry, applyDeferExposition, shouldDefer, generateText, MockModel: MockLanguageModelV3 }
const conversation = (opts) => scriptedConversation(deps, opts)

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
    expect(Object.keys(fresh.tools)).toEqual(Object.keys(four))
    await expect(applyDeferExposition(tools, registry, window, { conversation: 'chat-1' })).rejects.toThrow(/conversation/)
    await expect(applyDeferExposition(tools, registry, window, { conversation: {}, stickyMargin: 2 })).rejects.toThrow(/stickyMargin/)
  })
})
