// No path runs an invalid call (ai@6): the SDK's direct calls in every strategy carry toolreg's
// check as their schema's `validate`, the meta-tools and tool_exec run it themselves; a deferred
// tool the model calls before a search loaded it is refused. The ai@7 lane runs the same
// scenario with openai-append and ai@7's own tool search.
import { describe, it, expect } from 'vitest'
import { generateText, jsonSchema, stepCountIs, tool } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { ToolRegistry, applyDeferExposition } from '../index.js'
import { invalidCallScenario, transferRegistry } from './callPathFixtures.mjs'

const deps = { tool, jsonSchema, ToolRegistry, applyDeferExposition, generateText, stepCountIs, MockModel: MockLanguageModelV3 }

describe('every call path checks the params', () => {
  it('inline: a plain JSON Schema tool the SDK calls directly', async () => {
    await invalidCallScenario(deps, expect, { strategy: 'inline' })
  })

  it('meta-tools: tool_invoke', async () => {
    await invalidCallScenario(deps, expect, { strategy: 'meta-tools' })
  })

  it('anthropic-native', async () => {
    await invalidCallScenario(deps, expect, { strategy: 'native', provider: 'anthropic.messages', expectStrategy: 'anthropic-native' })
  })

  it('openai-native', async () => {
    await invalidCallScenario(deps, expect, { strategy: 'native', provider: 'openai.responses', expectStrategy: 'openai-native' })
  })

  it('anthropic-append', async () => {
    await invalidCallScenario(deps, expect, { strategy: 'append', provider: 'anthropic.messages', modelId: 'claude-opus-4-8', expectStrategy: 'anthropic-append' })
  })

  it('tool_exec: the code calling the tool', async () => {
    const { registry, tools, ran } = transferRegistry(deps)
    const exposed = await applyDeferExposition(tools, registry, 128_000, { exec: true })
    const run = (code) => exposed.tools.tool_exec.execute({ code }, { toolCallId: 'x', messages: [] })
    const refused = await run(`try { await tools.transfer({ amount: 'lots', to: 'XYZ1' }); return 'ran' } catch (e) { return e.message }`)
    expect(JSON.stringify(refused)).toMatch(/Invalid params for \\"transfer\\"/)
    await run(`return await tools.transfer({ amount: 5, to: 'EUR' })`)
    expect(ran).toEqual([{ amount: 5, to: 'EUR', memo: 'none' }])
  })

  it('a tool handed out keeps its approval gate, execute and output shaping', async () => {
    const { registry, tools } = transferRegistry(deps, { inline: true })
    const gated = { ...tools.transfer, needsApproval: true, toModelOutput: () => ({ type: 'text', value: 'x' }) }
    registry.register({ name: 'transfer', namespace: 'mcp:bank', description: 'Transfer money', defer: 'never', tool: gated })
    const exposed = await applyDeferExposition({ ...tools, transfer: gated }, registry, 128_000)
    expect(exposed.tools.transfer.needsApproval).toBe(true)
    expect(exposed.tools.transfer.toModelOutput).toBe(gated.toModelOutput)
    expect(exposed.tools.transfer.execute).toBe(gated.execute)
    // The provider is sent the schema as the host wrote it.
    expect(await exposed.tools.transfer.inputSchema.jsonSchema).toEqual(tools.transfer.inputSchema.jsonSchema)
    // The same wrapper every request: the provider-safe and token caches keyed on it hold.
    const again = await applyDeferExposition({ ...tools, transfer: gated }, registry, 128_000)
    expect(again.tools.transfer).toBe(exposed.tools.transfer)
  })
})
