// The ai@6 side of `npm run lanes:latest` (scripts/lanes-latest.mjs), which runs it in a scratch
// lane with the newest published ai 6, @ai-sdk/anthropic 3 and @ai-sdk/openai 3 and toolreg
// installed as an app has it: the main suite's strategy and wire scenarios (its __tests__ run
// them on the pinned versions), on the real provider packages with a scripted fetch.
import { describe, it, expect } from 'vitest'
import { generateText, jsonSchema, stepCountIs, tool } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAI } from '@ai-sdk/openai'
import { z } from 'zod'
import { ToolRegistry, applyDeferExposition, shouldDefer } from 'toolreg'
import { anthropicWireScenario, openaiWireScenario, scriptedConversation, TURNS } from '../../__tests__/nativeFixtures.mjs'
import { anthropicAppendScenario, anthropicChangeScenario } from '../../__tests__/appendFixtures.mjs'
import { invalidCallScenario } from '../../__tests__/callPathFixtures.mjs'

const deps = { tool, jsonSchema, z, ToolRegistry, applyDeferExposition, shouldDefer, generateText, stepCountIs, createAnthropic, createOpenAI, MockModel: MockLanguageModelV3 }

describe('ai@6 lane (newest published packages)', () => {
  it('Anthropic native deferral on the wire', async () => {
    await anthropicWireScenario(deps, expect)
  })

  it('OpenAI Responses native deferral on the wire', async () => {
    await openaiWireScenario(deps, expect)
  })

  it('Anthropic append-only on the wire', async () => {
    await anthropicAppendScenario(deps, expect)
  })

  it('Anthropic append-only: a changed definition is added again at the end', async () => {
    await anthropicChangeScenario(deps, expect)
  })

  describe('every call path checks the params', () => {
    for (const [strategy, provider, expected] of [
      ['append', 'anthropic.messages', 'anthropic-append'],
      ['native', 'openai.responses', 'openai-native'],
      ['native', 'anthropic.messages', 'anthropic-native'],
      ['meta-tools', undefined, 'meta-tools'],
      ['inline', undefined, 'inline'],
    ]) {
      it(expected, async () => {
        await invalidCallScenario(deps, expect, { strategy, provider, expectStrategy: expected })
      })
    }
  })

  it(`sticky decision over ${TURNS} turns`, async () => {
    for (const [strategy, provider, key] of [['native', 'anthropic.messages', 'eager'], ['meta-tools', undefined, 'tools']]) {
      const sticky = await scriptedConversation(deps, { strategy, provider, sticky: true })
      expect(sticky[key]).toBeLessThanOrEqual(1)
    }
  })
})
