import { describe, it, expect } from 'vitest'
import { readFileSync } from 'node:fs'
import { jsonSchema, tool, NoSuchToolError, InvalidToolInputError, APICallError } from 'ai'
import { z } from 'zod'
import { repairToolCallLocally, createAiRepair } from '../index.js'

const corpus = JSON.parse(readFileSync(new URL('../fixtures/repair_corpus.json', import.meta.url), 'utf8'))

function toolSet(entries) {
  return Object.fromEntries(
    entries.map((t) => [
      t.name,
      tool({ inputSchema: jsonSchema(t.inputSchema), needsApproval: t.needsApproval || undefined, execute: async () => 'ok' }),
    ]),
  )
}

function errorFor(toolCall, tools) {
  return tools[toolCall.toolName]
    ? new InvalidToolInputError({ toolName: toolCall.toolName, toolInput: toolCall.input, cause: new Error('invalid input') })
    : new NoSuchToolError({ toolName: toolCall.toolName, availableTools: Object.keys(tools) })
}

const call = (toolName, input, id = 'call-1') => ({ type: 'tool-call', toolCallId: id, toolName, input })

describe('repairToolCallLocally over the corpus', () => {
  const toolsets = Object.fromEntries(Object.entries(corpus.toolsets).map(([name, entries]) => [name, toolSet(entries)]))

  it(`repairs each of the ${corpus.cases.length} corpus calls as expected, or not at all`, async () => {
    const failures = []
    const reports = []
    for (const c of corpus.cases) {
      const tools = toolsets[c.toolset]
      const toolCall = call(c.toolName, c.input, c.id)
      const got = await repairToolCallLocally({ toolCall, tools, error: errorFor(toolCall, tools), onRepair: (r) => reports.push(r) })
      if (c.expected === null) {
        if (got !== null) failures.push(`${c.id}: must not be repaired, got ${got.toolName} ${got.input}`)
      } else if (got === null) {
        failures.push(`${c.id}: expected a repair, got null`)
      } else {
        if (got.toolCallId !== c.id || got.type !== 'tool-call') failures.push(`${c.id}: lost the call's other fields`)
        if (got.toolName !== c.expected.toolName) failures.push(`${c.id}: tool ${got.toolName}, expected ${c.expected.toolName}`)
        expect.soft(JSON.parse(got.input), c.id).toEqual(c.expected.input)
      }
    }
    expect(failures).toEqual([])
    expect(corpus.cases.length).toBeGreaterThanOrEqual(300)
    expect(reports.length).toBe(corpus.cases.filter((c) => c.expected !== null).length)
    expect(reports.every((r) => r.how === 'local' && r.steps.length > 0)).toBe(true)
  })
})

describe('repairToolCallLocally', () => {
  const tools = {
    read_text_file: tool({
      inputSchema: z.object({ path: z.string(), head: z.number().optional() }),
      execute: async () => '',
    }),
    delete_file: tool({
      inputSchema: z.object({ path: z.string() }),
      needsApproval: async () => true,
      execute: async () => '',
    }),
  }

  it('reports what it did', async () => {
    const reports = []
    const repaired = await repairToolCallLocally({
      toolCall: call('readTextFile', "{'path': '/a', head: '2'}"),
      tools,
      error: new NoSuchToolError({ toolName: 'readTextFile' }),
      onRepair: (r) => reports.push(r),
    })
    expect(repaired).toEqual(call('read_text_file', '{"head":2,"path":"/a"}'))
    expect(reports).toHaveLength(1)
    expect(reports[0]).toMatchObject({
      toolName: 'read_text_file',
      how: 'local',
      from: { toolName: 'readTextFile', input: "{'path': '/a', head: '2'}" },
      to: { toolName: 'read_text_file', input: '{"head":2,"path":"/a"}' },
    })
    expect(reports[0].steps).toEqual(
      expect.arrayContaining(['name:case-or-separator readTextFile -> read_text_file', 'json:single-quotes', 'coerce:string-to-number at $.head']),
    )
  })

  it('treats a needsApproval function as gated: near names never reach it', async () => {
    const args = { tools, error: new NoSuchToolError({ toolName: 'x' }) }
    expect(await repairToolCallLocally({ ...args, toolCall: call('deleteFile', '{"path": "/a"}') })).toBeNull()
    expect(await repairToolCallLocally({ ...args, toolCall: call('functions.delete_file', '{"path": "/a"}') })).toBeNull()
    // Its exact name with broken arguments is fine: approval still happens after parsing.
    const repaired = await repairToolCallLocally({ ...args, toolCall: call('delete_file', '{"path": "/a",}') })
    expect(repaired).toEqual(call('delete_file', '{"path":"/a"}'))
  })

  it('leaves errors other than a bad name or bad input alone', async () => {
    const error = new APICallError({ message: 'boom', url: 'http://x', requestBodyValues: {} })
    expect(await repairToolCallLocally({ toolCall: call('read_text_file', '{"path": "/a",}'), tools, error })).toBeNull()
  })

  it('rebuilds its view of the tools when the ToolSet changes', async () => {
    const set = { a_tool: tool({ inputSchema: z.object({ n: z.number() }), execute: async () => '' }) }
    const first = await repairToolCallLocally({ toolCall: call('a_tool', '{"n": "1"}'), tools: set })
    expect(first.input).toBe('{"n":1}')
    set.a_tool = tool({ inputSchema: z.object({ n: z.string() }), execute: async () => '' })
    const second = await repairToolCallLocally({ toolCall: call('a_tool', '{"n": 1,}'), tools: set })
    expect(second.input).toBe('{"n":"1"}')
  })

  it('rejects calls it cannot read with a TypeError and a code', async () => {
    await expect(repairToolCallLocally({ toolCall: { toolName: 'x' }, tools })).rejects.toMatchObject({
      name: 'TypeError',
      code: 'TOOLREG_INVALID_ARGUMENT',
    })
    await expect(repairToolCallLocally({ toolCall: call('x', '{}') })).rejects.toMatchObject({ code: 'TOOLREG_INVALID_ARGUMENT' })
    expect(() => createAiRepair({ maxAttempts: 0 })).toThrow(/maxAttempts/)
    expect(() => createAiRepair({ generate: 'no' })).toThrow(/generate/)
  })

  it('createAiRepair without a model is the local pass', async () => {
    const repair = createAiRepair()
    const toolCall = call('read_text_file', '{"head": 3}')
    expect(await repair({ toolCall, tools, error: errorFor(toolCall, tools) })).toBeNull()
    const fixable = call('read_text_file', '```\n{"path": "/a"}\n```')
    expect(await repair({ toolCall: fixable, tools, error: errorFor(fixable, tools) })).toEqual(call('read_text_file', '{"path":"/a"}'))
  })
})

describe('createAiRepair with a host generate function', () => {
  const tools = {
    create_event: tool({
      inputSchema: jsonSchema({
        type: 'object',
        properties: {
          title: { type: 'string' },
          date: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
          tags: { type: 'array', items: { type: 'string' }, uniqueItems: true, contains: { const: 'work' } },
        },
        required: ['title', 'date'],
        unevaluatedProperties: false,
      }),
      execute: async () => 'ok',
    }),
    send_email: tool({ inputSchema: z.object({ to: z.string() }), execute: async () => 'ok' }),
  }
  const broken = call('create_event', '{"title": "Standup", "date": "tomorrow"}')
  const error = errorFor(broken, tools)

  it('asks once with the schema, the original arguments and the error, and validates the answer', async () => {
    const asked = []
    const reports = []
    const repair = createAiRepair({
      generate: async (request) => {
        asked.push(request)
        return { title: 'Standup', date: '2026-12-02', tags: ['work'] }
      },
      onRepair: (r) => reports.push(r),
    })
    const repaired = await repair({ toolCall: broken, tools, error })
    expect(repaired).toEqual({ ...broken, input: '{"title":"Standup","date":"2026-12-02","tags":["work"]}' })
    expect(asked).toHaveLength(1)
    expect(asked[0].toolName).toBe('create_event')
    expect(asked[0].schema.properties.date.pattern).toBe('^\\d{4}-\\d{2}-\\d{2}$')
    expect(asked[0].prompt).toContain('Tool: create_event')
    expect(asked[0].prompt).toContain('Original arguments: {"title": "Standup", "date": "tomorrow"}')
    expect(asked[0].prompt).toMatch(/Validation error: .*date/s)
    expect(reports).toEqual([
      expect.objectContaining({ toolName: 'create_event', how: 'model', steps: ['model:attempt 1'] }),
    ])
  })

  it('refuses model output that breaks 2020-12 keywords, and retries up to maxAttempts', async () => {
    const answers = [
      { title: 'Standup', date: '2026-12-02', tags: ['work', 'work'] }, // uniqueItems
      { title: 'Standup', date: '2026-12-02', tags: ['home'] }, // contains
      { title: 'Standup', date: '2026-12-02', room: 'A' }, // unevaluatedProperties
      { title: 'Standup', date: '2026-12-02' },
    ]
    const prompts = []
    const generate = async ({ prompt }) => {
      prompts.push(prompt)
      return answers[prompts.length - 1]
    }
    expect(await createAiRepair({ generate })({ toolCall: broken, tools, error })).toBeNull()
    expect(prompts).toHaveLength(1)
    prompts.length = 0
    const repaired = await createAiRepair({ generate, maxAttempts: 4 })({ toolCall: broken, tools, error })
    expect(JSON.parse(repaired.input)).toEqual(answers[3])
    expect(prompts).toHaveLength(4)
    expect(prompts[1]).toMatch(/unique/i)
    expect(prompts[3]).toMatch(/room/)
  })

  it('unwraps a model answer sent as { arguments: {...} }, as the local pass does for a call', async () => {
    const reports = []
    const repair = createAiRepair({
      generate: async () => ({ arguments: { title: 'Standup', date: '2026-12-02' } }),
      onRepair: (r) => reports.push(r),
    })
    const repaired = await repair({ toolCall: broken, tools, error })
    expect(JSON.parse(repaired.input)).toEqual({ title: 'Standup', date: '2026-12-02' })
    expect(reports[0].how).toBe('model')
    expect(reports[0].steps).toEqual(['model:attempt 1', expect.stringMatching(/^unwrap:envelope arguments/)])
  })

  it('only unwraps a model answer: one that still breaks the schema is refused, not coerced', async () => {
    const tools = { search: tool({ inputSchema: z.object({ query: z.string() }), execute: async () => 'ok' }) }
    const broken = call('search', '{"q": "cats"}')
    const answers = [{ query: 42 }, { arguments: { query: 42 } }, JSON.stringify({ query: 'cats' })]
    const repairs = await Promise.all(answers.map((answer) => createAiRepair({ generate: async () => answer })({ toolCall: broken, tools, error: errorFor(broken, tools) })))
    expect(repairs.map((r) => r?.input ?? null)).toEqual([null, null, '{"query":"cats"}'])
  })

  it('after a NoSuchToolError the local pass resolves the name; the model repairs the arguments for that tool', async () => {
    const misnamed = call('functions.create_event', '{"title": "Standup", "date": "tomorrow"}')
    const asked = []
    const repaired = await createAiRepair({ generate: async (request) => (asked.push(request.toolName), { title: 'Standup', date: '2026-12-02' }) })({ toolCall: misnamed, tools, error: errorFor(misnamed, tools) })
    expect(repaired).toEqual({ ...misnamed, toolName: 'create_event', input: '{"title":"Standup","date":"2026-12-02"}' })
    expect(asked).toEqual(['create_event'])
  })

  it('never asks the model to pick a tool, and survives a failing generate', async () => {
    let asked = 0
    const generate = async () => {
      asked++
      throw new Error('provider down')
    }
    const unknown = call('book_flight', '{"to": "Paris"}')
    expect(await createAiRepair({ generate })({ toolCall: unknown, tools, error: errorFor(unknown, tools) })).toBeNull()
    expect(asked).toBe(0)
    expect(await createAiRepair({ generate })({ toolCall: broken, tools, error })).toBeNull()
    expect(asked).toBe(1)
  })
})
