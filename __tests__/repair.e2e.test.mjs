import { describe, it, expect } from 'vitest'
import { generateText, stepCountIs, tool } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { z } from 'zod'
import { createAiRepair } from '../index.js'

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
}
const toolCalls = (...calls) => ({
  content: calls.map(([toolCallId, toolName, input]) => ({ type: 'tool-call', toolCallId, toolName, input })),
  finishReason: { unified: 'tool-calls', raw: undefined },
  usage,
  warnings: [],
})
const text = (value) => ({ content: [{ type: 'text', text: value }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] })

function scripted(replies) {
  const prompts = []
  const model = new MockLanguageModelV3({
    doGenerate: async (options) => {
      prompts.push(options)
      return replies[prompts.length - 1]
    },
  })
  return { model, prompts }
}

describe('tool-call repair end to end with generateText', () => {
  it('repairs a broken call and an unknown name locally; the right tools run with the repaired input', async () => {
    const executed = []
    const tools = {
      get_weather: tool({
        description: 'Weather forecast for a city',
        inputSchema: z.object({ city: z.string(), days: z.number().int().min(1).max(7), unit: z.enum(['c', 'f']).optional() }),
        execute: async (input) => {
          executed.push(['get_weather', input])
          return { city: input.city, forecast: 'sunny' }
        },
      }),
      mcp__docs__search_docs: tool({
        description: 'Search the documentation',
        inputSchema: z.object({ query: z.string(), limit: z.number().optional() }),
        execute: async (input) => {
          executed.push(['mcp__docs__search_docs', input])
          return ['install.md']
        },
      }),
      delete_docs: tool({
        description: 'Delete documentation pages',
        inputSchema: z.object({ query: z.string() }),
        needsApproval: true,
        execute: async (input) => {
          executed.push(['delete_docs', input])
          return 'deleted'
        },
      }),
    }
    const { model, prompts } = scripted([
      toolCalls(
        ['call-1', 'get_weather', "```json\n{'city': 'Paris', 'days': '3', unit: 'C',}\n```"],
        ['call-2', 'functions.search_docs', '{"query": "install", "limit": "5"'],
      ),
      text('Sunny in Paris; see install.md.'),
    ])
    const reports = []
    const result = await generateText({
      model,
      tools,
      prompt: 'Weather in Paris for 3 days, and how do I install?',
      stopWhen: stepCountIs(3),
      experimental_repairToolCall: createAiRepair({ onRepair: (r) => reports.push(r) }),
    })

    expect(result.text).toBe('Sunny in Paris; see install.md.')
    expect(executed).toEqual([
      ['get_weather', { city: 'Paris', days: 3, unit: 'c' }],
      ['mcp__docs__search_docs', { query: 'install', limit: 5 }],
    ])
    const first = result.steps[0]
    expect(first.toolCalls.map((c) => [c.toolCallId, c.toolName, c.invalid ?? false])).toEqual([
      ['call-1', 'get_weather', false],
      ['call-2', 'mcp__docs__search_docs', false],
    ])
    expect(first.toolResults.map((r) => r.output)).toEqual([{ city: 'Paris', forecast: 'sunny' }, ['install.md']])
    // The second model call saw both results under the repaired names.
    expect(JSON.stringify(prompts[1].prompt)).toContain('mcp__docs__search_docs')

    // The SDK repairs the calls of a step concurrently: order the reports by call.
    reports.sort((a, b) => a.from.toolName.localeCompare(b.from.toolName))
    expect(reports.map((r) => [r.from.toolName, r.toolName, r.how])).toEqual([
      ['functions.search_docs', 'mcp__docs__search_docs', 'local'],
      ['get_weather', 'get_weather', 'local'],
    ])
    expect(reports[1].steps).toEqual(
      expect.arrayContaining(['json:code-fence', 'json:single-quotes', 'coerce:string-to-number at $.days', 'coerce:enum-case at $.unit']),
    )
    expect(reports[0].steps).toEqual(
      expect.arrayContaining(['name:prefix functions.search_docs -> mcp__docs__search_docs', 'json:truncated', 'coerce:string-to-number at $.limit']),
    )
  })

  it('never renames a call onto an approval-gated tool: the call stays invalid and nothing runs', async () => {
    const executed = []
    const tools = {
      delete_docs: tool({
        inputSchema: z.object({ query: z.string() }),
        needsApproval: true,
        execute: async (input) => executed.push(input),
      }),
    }
    const { model } = scripted([toolCalls(['call-1', 'deleteDocs', '{"query": "all"}']), text('done')])
    const reports = []
    const result = await generateText({
      model,
      tools,
      prompt: 'clean up',
      stopWhen: stepCountIs(3),
      experimental_repairToolCall: createAiRepair({ onRepair: (r) => reports.push(r) }),
    })
    expect(executed).toEqual([])
    expect(reports).toEqual([])
    expect(result.steps[0].toolCalls[0]).toMatchObject({ toolName: 'deleteDocs', invalid: true })
  })

  it('falls back to one structured-output call to a model when the local pass cannot repair', async () => {
    const executed = []
    const tools = {
      create_event: tool({
        description: 'Create a calendar event',
        inputSchema: z.object({ title: z.string(), date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/) }),
        execute: async (input) => {
          executed.push(input)
          return 'created'
        },
      }),
    }
    const chat = scripted([toolCalls(['call-1', 'createEvent', '{"title": "Standup", "date": "tomorrow"}']), text('Created.')])
    const repairer = scripted([text('{"title": "Standup", "date": "2026-12-02"}')])
    const reports = []
    const result = await generateText({
      model: chat.model,
      tools,
      prompt: 'Add a standup tomorrow',
      stopWhen: stepCountIs(3),
      experimental_repairToolCall: createAiRepair({ model: repairer.model, onRepair: (r) => reports.push(r) }),
    })

    expect(result.text).toBe('Created.')
    expect(executed).toEqual([{ title: 'Standup', date: '2026-12-02' }])
    expect(repairer.prompts).toHaveLength(1)
    const request = repairer.prompts[0]
    expect(request.responseFormat).toMatchObject({ type: 'json', schema: { properties: { date: { type: 'string' } } } })
    const prompt = JSON.stringify(request.prompt)
    expect(prompt).toContain('Tool: create_event')
    expect(prompt).toContain('Original arguments: {\\"title\\": \\"Standup\\", \\"date\\": \\"tomorrow\\"}')
    expect(prompt).toContain('Validation error:')
    expect(reports).toEqual([
      expect.objectContaining({
        toolName: 'create_event',
        how: 'model',
        from: { toolName: 'createEvent', input: '{"title": "Standup", "date": "tomorrow"}' },
        to: { toolName: 'create_event', input: '{"title":"Standup","date":"2026-12-02"}' },
        steps: ['name:case-or-separator createEvent -> create_event', 'model:attempt 1'],
      }),
    ])
  })

  it('returns no repair when the model output does not validate', async () => {
    const executed = []
    const tools = {
      create_event: tool({
        inputSchema: z.object({ title: z.string(), date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/) }),
        execute: async (input) => executed.push(input),
      }),
    }
    const chat = scripted([toolCalls(['call-1', 'create_event', '{"title": "Standup", "date": "tomorrow"}']), text('Sorry.')])
    const repairer = scripted([text('{"title": "Standup", "date": "soon"}')])
    const result = await generateText({
      model: chat.model,
      tools,
      prompt: 'Add a standup tomorrow',
      stopWhen: stepCountIs(3),
      experimental_repairToolCall: createAiRepair({ model: repairer.model }),
    })
    expect(executed).toEqual([])
    expect(result.steps[0].toolCalls[0]).toMatchObject({ toolName: 'create_event', invalid: true })
  })
})
