import { describe, it, expect } from 'vitest'
import { readFileSync } from 'node:fs'
import { generateText, jsonSchema, tool } from 'ai'
import { createGoogleGenerativeAI } from '@ai-sdk/google'
import { createOpenAI } from '@ai-sdk/openai'
import { z } from 'zod'
import { ToolRegistry, applyDeferExposition, providerSchema } from '../index.js'

/** A FastMCP (pydantic) style schema: models under `$defs`, optional fields as `anyOf` with null. */
const refSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: {
    issue: { $ref: '#/$defs/Issue' },
    labels: { type: 'array', items: { $ref: '#/$defs/Label' }, default: [] },
  },
  required: ['issue'],
  additionalProperties: false,
  $defs: {
    Issue: {
      type: 'object',
      properties: {
        title: { type: 'string', minLength: 1 },
        body: { anyOf: [{ type: 'string' }, { type: 'null' }], default: null },
        url: { type: 'string', format: 'uri' },
      },
      required: ['title'],
    },
    Label: { type: 'object', properties: { name: { type: 'string' }, parent: { $ref: '#/$defs/Label' } }, required: ['name'] },
  },
}

/** A real MCP tool whose `items` hold an `anyOf` (github server's create_pull_request_review). */
const githubTools = JSON.parse(readFileSync(new URL('../fixtures/github.tools_list.json', import.meta.url), 'utf8')).tools
const reviewTool = githubTools.find((t) => t.name === 'create_pull_request_review')

function mcpTool(schema) {
  return tool({ description: 'an MCP tool', inputSchema: jsonSchema(schema), execute: async (input) => ({ ok: true, input }) })
}

/** Every subschema of a JSON Schema-ish value with its path and whether it sits under `items`. */
function* subschemas(schema, path = '', underItems = false) {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) return
  yield { schema, path, underItems }
  for (const [name, child] of Object.entries(schema.properties ?? {})) yield* subschemas(child, `${path}/properties/${name}`, underItems)
  if (schema.items) yield* subschemas(schema.items, `${path}/items`, true)
  for (const key of ['anyOf', 'oneOf', 'allOf']) {
    for (const [i, child] of (schema[key] ?? []).entries()) yield* subschemas(child, `${path}/${key}/${i}`, underItems)
  }
}

const GEMINI_FORMATS = { string: ['enum', 'date-time'], number: ['float', 'double'], integer: ['int32', 'int64'] }

/** What Gemini rejects (issue 16: `$ref`/`$defs`, `anyOf` in `items`, `additionalProperties`, `default`, undocumented formats). */
function geminiRejected(schema) {
  const found = []
  for (const { schema: s, path, underItems } of subschemas(schema)) {
    for (const key of ['$ref', '$defs', 'definitions', 'additionalProperties', 'default', '$schema']) if (key in s) found.push(`${path} ${key}`)
    if (underItems && 'anyOf' in s) found.push(`${path} anyOf under items`)
    if (s.format && !(GEMINI_FORMATS[s.type] ?? []).includes(s.format)) found.push(`${path} format ${s.format}`)
  }
  return found
}

/** What OpenAI strict mode rejects: open objects, optional properties, unsupported keywords. */
function strictRejected(schema) {
  const found = []
  for (const { schema: s, path } of subschemas(schema)) {
    const types = [s.type].flat()
    if (types.includes('object')) {
      if (s.additionalProperties !== false) found.push(`${path} open object`)
      for (const name of Object.keys(s.properties ?? {})) if (!(s.required ?? []).includes(name)) found.push(`${path}/${name} optional`)
    }
    for (const key of ['default', 'minLength', 'maxLength', 'oneOf', 'allOf', '$schema']) if (key in s) found.push(`${path} ${key}`)
    if (s.format === 'uri') found.push(`${path} format uri`)
    if (!('type' in s) && !('anyOf' in s) && !('enum' in s) && !('const' in s)) found.push(`${path} bare schema`)
  }
  return found
}

function scriptedFetch(reply) {
  const bodies = []
  const fetch = async (url, init) => {
    bodies.push(JSON.parse(init.body))
    return new Response(JSON.stringify(reply), { status: 200, headers: { 'content-type': 'application/json' } })
  }
  return { fetch, bodies }
}

const geminiReply = {
  candidates: [{ content: { role: 'model', parts: [{ text: 'ok' }] }, finishReason: 'STOP', index: 0 }],
  usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
}

const openaiReply = {
  id: 'resp_1',
  object: 'response',
  created_at: 1,
  model: 'gpt-4.1',
  status: 'completed',
  output: [{ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'ok', annotations: [] }] }],
  usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
}

function registryWith(tools) {
  const registry = new ToolRegistry({ logger: { warn() {} } })
  for (const [name, t] of Object.entries(tools)) registry.register({ name, namespace: 'mcp:test', description: 'an MCP tool', defer: 'never', tool: t })
  return registry
}

describe('providerSchema', () => {
  it('inlines $refs and drops what Gemini rejects; pass-through for other providers', () => {
    const safe = providerSchema(refSchema, 'google.generative-ai')
    expect(geminiRejected(safe)).toEqual([])
    expect(safe.properties.issue.properties.body).toMatchObject({ type: 'string', nullable: true })
    expect(safe.properties.issue.properties.url.description).toContain('Format: uri')
    expect(providerSchema(refSchema, 'mistral.chat')).toEqual(refSchema)
    expect(strictRejected(providerSchema(refSchema, 'openai.responses', { strict: true }))).toEqual([])
  })

  it('refuses what is not a schema, with a code', () => {
    expect(() => providerSchema('x', 'google.generative-ai')).toThrow(TypeError)
    try {
      providerSchema(3, 'google.generative-ai')
    } catch (error) {
      expect(error.code).toBe('TOOLREG_INVALID_ARGUMENT')
      expect(error.message).toMatch(/JSON Schema/)
    }
  })
})

describe('applyDeferExposition with a provider', () => {
  it('exposes provider-safe schemas, converted once per tool and provider', async () => {
    const tools = { open_issue: mcpTool(refSchema), review: mcpTool(reviewTool.inputSchema) }
    const registry = registryWith(tools)
    const first = await applyDeferExposition(tools, registry, 1_000_000, { provider: 'google.vertex.chat' })
    expect(first.tools).not.toBe(tools)
    for (const t of Object.values(first.tools)) expect(geminiRejected(t.inputSchema.jsonSchema)).toEqual([])
    const again = await applyDeferExposition(tools, registry, 1_000_000, { provider: 'google.vertex.chat' })
    expect(again.tools.open_issue).toBe(first.tools.open_issue)
    const openai = await applyDeferExposition(tools, registry, 1_000_000, { provider: 'openai.responses', strict: true })
    expect(openai.tools.open_issue.strict).toBe(true)
    expect(strictRejected(openai.tools.open_issue.inputSchema.jsonSchema)).toEqual([])
    // Without a provider the schemas go out as the host wrote them.
    const plain = await applyDeferExposition(tools, registry, 1_000_000)
    expect(plain.tools.open_issue.inputSchema.jsonSchema).toEqual(tools.open_issue.inputSchema.jsonSchema)
  })

  it('validates the model input against the original schema (strict nulls read back as absent)', async () => {
    const original = tool({
      description: 'search',
      inputSchema: z.object({ query: z.string().min(2), limit: z.number().int().optional(), site: z.string().url().optional() }),
      execute: async (input) => input,
    })
    const tools = { search: original }
    const registry = registryWith(tools)
    const { tools: strictTools } = await applyDeferExposition(tools, registry, 1_000_000, { provider: 'openai.chat', strict: true })
    const safe = strictTools.search.inputSchema
    expect(safe.jsonSchema.required).toEqual(['limit', 'query', 'site'])
    expect(await safe.validate({ query: 'rust', limit: null, site: null })).toEqual({ success: true, value: { query: 'rust' } })
    expect((await safe.validate({ query: 'r', limit: null, site: null })).success).toBe(false)
    const { tools: geminiTools } = await applyDeferExposition(tools, registry, 1_000_000, { provider: 'google.generative-ai' })
    expect((await geminiTools.search.inputSchema.validate({ query: 'rust', site: 'not a url' })).success).toBe(false)
  })

  it('gives the meta-tools provider-safe schema outputs', async () => {
    const registry = new ToolRegistry({ logger: { warn() {} } })
    registry.register({ name: 'open_issue', namespace: 'mcp:tracker', description: 'Open an issue in the tracker', defer: 'always', tool: mcpTool(refSchema) })
    registry.register({ name: 'echo', namespace: 'util', description: 'Echo', defer: 'never', tool: mcpTool({ type: 'object', properties: { text: { type: 'string' } } }) })
    const tools = { open_issue: registry.getByName('open_issue').tool, echo: registry.getByName('echo').tool }
    const { tools: exposed } = await applyDeferExposition(tools, registry, 1_000_000, { provider: 'google.generative-ai' })
    expect(Object.keys(exposed).sort()).toEqual(['echo', 'tool_inspect', 'tool_invoke', 'tool_search'])
    for (const t of Object.values(exposed)) expect(geminiRejected(t.inputSchema.jsonSchema)).toEqual([])
    const found = await exposed.tool_search.execute({ query: 'open issue tracker', verbose: true }, { toolCallId: 's', messages: [] })
    const schema = found.matchedNamespaces[0].tools[0].inputSchema
    expect(geminiRejected(schema)).toEqual([])
    expect(JSON.stringify(schema)).not.toContain('$ref')
    const inspected = await exposed.tool_inspect.execute({ name: 'open_issue' }, { toolCallId: 'i', messages: [] })
    const exact = inspected.split('Exact JSON Schema:\n')[1]
    expect(exact).toBeDefined()
    expect(geminiRejected(JSON.parse(exact))).toEqual([])
    // Without a provider the exact part is the original, $refs and all.
    const { tools: raw } = await applyDeferExposition(tools, registry, 1_000_000)
    const rawInspected = await raw.tool_inspect.execute({ name: 'open_issue' }, { toolCallId: 'i', messages: [] })
    expect(rawInspected).toContain('$ref')
  })
})

describe('wire level: the real provider packages with a scripted fetch', () => {
  const tools = { open_issue: mcpTool(refSchema), create_pull_request_review: mcpTool(reviewTool.inputSchema) }

  it('@ai-sdk/google sends no construct Gemini rejects', async () => {
    const { fetch, bodies } = scriptedFetch(geminiReply)
    const model = createGoogleGenerativeAI({ apiKey: 'test-key', fetch })('gemini-2.5-flash')
    const registry = registryWith(tools)
    const exposed = await applyDeferExposition(tools, registry, 1_000_000, { provider: model.provider })
    const result = await generateText({ model, tools: exposed.tools, prompt: 'open an issue' })
    expect(result.text).toBe('ok')
    const declarations = bodies[0].tools[0].functionDeclarations
    expect(declarations.map((d) => d.name).sort()).toEqual(['create_pull_request_review', 'open_issue'])
    for (const d of declarations) expect(geminiRejected(d.parameters)).toEqual([])
    // The same request without the provider option carries the rejected constructs.
    await generateText({ model, tools, prompt: 'open an issue' })
    const unsafe = bodies[1].tools[0].functionDeclarations.flatMap((d) => geminiRejected(d.parameters))
    expect(unsafe.some((c) => c.includes('anyOf under items'))).toBe(true)
  })

  it('@ai-sdk/openai strict tools are closed, fully required and keyword-clean', async () => {
    const { fetch, bodies } = scriptedFetch(openaiReply)
    const model = createOpenAI({ apiKey: 'test-key', fetch })('gpt-4.1')
    const registry = registryWith(tools)
    const exposed = await applyDeferExposition(tools, registry, 1_000_000, { provider: model.provider, strict: true })
    const result = await generateText({ model, tools: exposed.tools, prompt: 'open an issue' })
    expect(result.text).toBe('ok')
    const sent = bodies[0].tools
    expect(sent).toHaveLength(2)
    for (const t of sent) {
      expect(t.strict).toBe(true)
      expect(strictRejected(t.parameters)).toEqual([])
      expect(JSON.stringify(t.parameters)).not.toContain('$ref')
    }
    await generateText({ model, tools, prompt: 'open an issue' })
    expect(bodies[1].tools.flatMap((t) => strictRejected(t.parameters)).length).toBeGreaterThan(0)
  })
})
