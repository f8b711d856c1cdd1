import { describe, it, expect } from 'vitest'
import { tool, jsonSchema, asSchema } from 'ai'
import { z } from 'zod'
import { getEncoding } from 'js-tiktoken'
import { countTokens, shouldDefer } from '../index.js'

const reference = { o200k_base: getEncoding('o200k_base'), cl100k_base: getEncoding('cl100k_base') }

const samples = [
  '',
  'hello world',
  'Hello, World!  \n\n  trailing spaces   ',
  JSON.stringify({ name: 'github_create_issue', description: 'Create a new issue', input_schema: { type: 'object', properties: { owner: { type: 'string' } } } }),
  '北京天气怎么样？请查询今天的天气预报。',
  'Café-Überweisung naïve — “quotes” and emoji 🚀👩‍👩‍👧',
  "I'm sure they've said it's what we'd DONE, isn't it?",
  '12345678901234567890 3.14159 0x1F 1e-10\t\r\n',
]

describe('countTokens', () => {
  for (const encoding of ['o200k_base', 'cl100k_base']) {
    it(`equals tiktoken for known strings (${encoding})`, () => {
      for (const text of samples) {
        expect(countTokens(text, { encoding })).toBe(reference[encoding].encode(text).length)
      }
    })
  }

  it('defaults to o200k_base', () => {
    const text = '北京天气怎么样？请查询今天的天气预报。'
    expect(countTokens(text)).toBe(reference.o200k_base.encode(text).length)
    expect(countTokens(text)).not.toBe(countTokens(text, { encoding: 'cl100k_base' }))
  })

  it('counts an array in parallel and keeps the order', async () => {
    const texts = Array.from({ length: 300 }, (_, i) => `tool ${i}: ${'lorem ipsum dolor '.repeat((i % 40) + 1)}`)
    const pending = countTokens(texts)
    expect(pending).toBeInstanceOf(Promise)
    const counts = await pending
    expect(counts).toEqual(texts.map((t) => reference.o200k_base.encode(t).length))
  })

  it('rejects bad input with errors that name the field', async () => {
    expect(() => countTokens(42)).toThrow(/invalid text/)
    expect(() => countTokens('x', { encoding: 'p50k_base' })).toThrow(/invalid encoding: "p50k_base"/)
    await expect(countTokens(['ok', 7])).rejects.toThrow(/invalid text\[1\]/)
  })
})

describe('tool cost', () => {
  it('is the same for a Zod tool and a jsonSchema() tool with the same schema', async () => {
    const zodSchema = z.object({ city: z.string().describe('City name'), days: z.number().int().optional() })
    const zodTool = tool({ description: 'Weather forecast', inputSchema: zodSchema })
    const plainTool = tool({ description: 'Weather forecast', inputSchema: jsonSchema(asSchema(zodSchema).jsonSchema) })
    const entries = [
      { name: 'forecast', namespace: 'web', description: 'x', defer: 'auto', tool: zodTool },
      { name: 'forecast', namespace: 'web', description: 'x', defer: 'auto', tool: plainTool },
    ]
    const zodCost = (await shouldDefer([entries[0]], 1000)).autoTokens
    const plainCost = (await shouldDefer([entries[1]], 1000)).autoTokens
    expect(zodCost).toBe(plainCost)
    const expected = JSON.stringify({ name: 'forecast', description: 'Weather forecast', input_schema: asSchema(zodSchema).jsonSchema })
    expect(zodCost).toBe(reference.o200k_base.encode(expected).length)
  })

  it('counts an async jsonSchema() once it resolves', async () => {
    const schema = { type: 'object', properties: { q: { type: 'string' } } }
    const lazy = tool({ description: 'lazy', inputSchema: jsonSchema(async () => schema) })
    const { autoTokens } = await shouldDefer([{ name: 'lazy', namespace: 'web', description: 'x', defer: 'auto', tool: lazy }], 1000)
    expect(autoTokens).toBe(reference.o200k_base.encode(JSON.stringify({ name: 'lazy', description: 'lazy', input_schema: schema })).length)
  })
})

describe('cost cache', () => {
  it('tokenizes each definition once; a re-registered tool is priced again', async () => {
    const { createRequire } = await import('node:module')
    const native = createRequire(import.meta.url)('../binding.js')
    const original = native.countTokensBatch
    const batches = []
    native.countTokensBatch = (texts, encoding) => {
      batches.push(texts.length)
      return original(texts, encoding)
    }
    try {
      const make = (i, description = `tool ${i}`) => ({ name: `t${i}`, namespace: 'web', description: 'x', defer: 'auto', tool: tool({ description, inputSchema: jsonSchema({ type: 'object' }) }) })
      const entries = Array.from({ length: 1000 }, (_, i) => make(i))
      await shouldDefer(entries, 32_000)
      expect(batches).toEqual([1000])
      await shouldDefer(entries, 32_000)
      await shouldDefer(entries, 200_000, { encoding: 'o200k_base' })
      expect(batches).toEqual([1000])
      entries[7] = make(7, 'a changed description')
      await shouldDefer(entries, 32_000)
      expect(batches).toEqual([1000, 1])
      await shouldDefer(entries, 32_000, { encoding: 'cl100k_base' })
      expect(batches).toEqual([1000, 1, 1000])
    } finally {
      native.countTokensBatch = original
    }
  })
})
