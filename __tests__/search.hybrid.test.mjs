// Hybrid (words + embeddings) search: vectors per entry computed by the host's embedder in
// batches after registration, fused with the word ranking; lexical fallback on failure.
import { describe, it, expect } from 'vitest'
import { MockEmbeddingModelV3 } from 'ai/test'
import { ToolRegistry, createToolSearchTool } from '../index.js'
import { entry } from './helpers.mjs'
import { embedBuiltin } from '../binding.js'

// Scripted embeddings: one dimension per concept, found by keyword; a small constant keeps
// every vector non-zero. "weather" is deliberately not a weather keyword: in this catalog it
// names a UI widget, and only the embedding knows that rain is about the forecast.
const CONCEPTS = [
  ['rain', 'forecast', 'meteorolog', 'temperature'],
  ['theme', 'color', 'widget'],
  ['mail', 'inbox'],
]
function vectorOf(text) {
  const t = text.toLowerCase()
  return [...CONCEPTS.map((words) => (words.some((w) => t.includes(w)) ? 1 : 0)), 0.05]
}

function catalogEntries() {
  return [
    entry('weather_widget_theme', { description: 'Change the color theme of the weather widget', defer: 'always' }),
    entry('forecast_lookup', { description: 'Rain and temperature outlook for a location', defer: 'always' }),
    entry('send_mail', { namespace: 'mcp:mail', description: 'Send a message from the inbox', defer: 'always' }),
  ]
}

function mockModel(overrides = {}) {
  return new MockEmbeddingModelV3({
    maxEmbeddingsPerCall: 100,
    doEmbed: async ({ values }) => ({ embeddings: values.map(vectorOf), warnings: [] }),
    ...overrides,
  })
}

function quiet(options) {
  const warnings = []
  const registry = new ToolRegistry({ logger: { warn: (m) => warnings.push(m) }, ...options })
  return { registry, warnings }
}

const QUERY = 'weather rain'

describe('hybrid search', () => {
  it('ranks the tool whose meaning matches first, where word search alone gets it wrong', async () => {
    const model = mockModel()
    const { registry, warnings } = quiet({ embeddingModel: model })
    for (const e of catalogEntries()) registry.register(e)
    await registry.embeddingsReady()
    expect(registry.embeddingStats).toMatchObject({ enabled: true, ready: 3, pending: 0, dimensions: 4 })

    // The precondition that makes this test able to fail: words alone pick the widget.
    expect(registry.search(QUERY)[0].name).toBe('weather_widget_theme')
    const hybrid = await registry.searchAsync(QUERY)
    expect(hybrid[0].name).toBe('forecast_lookup')
    expect(hybrid.map((h) => h.name)).toContain('weather_widget_theme')

    // tool_search uses the hybrid ranking when the registry has an embedder.
    const search = createToolSearchTool(registry, catalogEntries().map((e) => e.name))
    const out = await search.execute({ query: QUERY }, { toolCallId: 't', messages: [] })
    expect(out.matchedNamespaces[0].tools[0].name).toBe('forecast_lookup')
    expect(warnings).toEqual([])
  })

  it('without an embedder, searchAsync and tool_search are the word ranking', async () => {
    const { registry } = quiet()
    for (const e of catalogEntries()) registry.register(e)
    await registry.embeddingsReady()
    expect(registry.hybrid).toBe(false)
    expect((await registry.searchAsync(QUERY))[0].name).toBe('weather_widget_theme')
    const search = createToolSearchTool(registry, catalogEntries().map((e) => e.name))
    const out = await search.execute({ query: QUERY }, { toolCallId: 't', messages: [] })
    expect(out.matchedNamespaces[0].tools[0].name).toBe('weather_widget_theme')
  })

  it('accepts a plain embed function, batches registrations and never blocks register', async () => {
    const calls = []
    const embed = async (texts) => {
      calls.push(texts)
      return texts.map(vectorOf)
    }
    const { registry } = quiet({ embed, embedBatchSize: 2 })
    for (const e of catalogEntries()) registry.register(e)
    expect(calls).toEqual([]) // register is synchronous; embedding starts afterwards
    await registry.embeddingsReady()
    expect(calls.map((c) => c.length)).toEqual([2, 1])
    expect(calls.flat().some((t) => t.includes('Rain and temperature outlook'))).toBe(true)

    // Re-registering an unchanged entry keeps its vector; a changed text is embedded again.
    registry.register(catalogEntries()[1])
    await registry.embeddingsReady()
    expect(calls.length).toBe(2)
    registry.register(entry('forecast_lookup', { description: 'Hourly rain forecast', defer: 'always' }))
    await registry.embeddingsReady()
    expect(calls.length).toBe(3)
    expect(calls[2]).toEqual([expect.stringContaining('Hourly rain forecast')])
    expect((await registry.searchAsync(QUERY))[0].name).toBe('forecast_lookup')
  })

  it('registerMany registers in one call and embeds in batches', async () => {
    const calls = []
    const { registry } = quiet({ embed: async (texts) => (calls.push(texts), texts.map(vectorOf)) })
    registry.registerMany(catalogEntries())
    expect(registry.size).toBe(3)
    await registry.embeddingsReady()
    expect(calls.length).toBe(1)
    expect((await registry.searchAsync(QUERY))[0].name).toBe('forecast_lookup')
    // A bad entry leaves the registry as it was.
    expect(() => registry.registerMany([entry('fine_one'), entry('bad name')])).toThrow(TypeError)
    expect(registry.has('fine_one')).toBe(false)
    expect(registry.size).toBe(3)
  })

  it('falls back to words with a warning when the embedder fails', async () => {
    let fail = true
    const model = mockModel({
      doEmbed: async ({ values }) => {
        if (fail) throw new Error('embedding service down')
        return { embeddings: values.map(vectorOf), warnings: [] }
      },
    })
    const { registry, warnings } = quiet({ embeddingModel: model })
    for (const e of catalogEntries()) registry.register(e)
    await registry.embeddingsReady()
    expect(warnings.some((w) => w.includes('embedding service down'))).toBe(true)
    expect(registry.embeddingStats).toMatchObject({ ready: 0, pending: 3 })
    expect((await registry.searchAsync(QUERY))[0].name).toBe('weather_widget_theme')

    // The service recovers: the queued tools are embedded on the next attempt.
    fail = false
    await registry.embeddingsReady()
    expect(registry.embeddingStats).toMatchObject({ ready: 3, pending: 0 })
    expect((await registry.searchAsync(QUERY))[0].name).toBe('forecast_lookup')

    // The query's embedding fails: word search, one more warning.
    fail = true
    const before = warnings.length
    const hits = await registry.searchAsync('weather rain tomorrow')
    expect(hits[0].name).toBe('weather_widget_theme')
    expect(warnings.length).toBe(before + 1)
    expect(warnings.at(-1)).toMatch(/query failed; using word search only/)
  })

  it('embeds a multi-sentence query whole and per sentence, once', async () => {
    const calls = []
    const { registry, warnings } = quiet({ embed: async (texts) => (calls.push(texts), texts.map(vectorOf)) })
    registry.registerMany(catalogEntries())
    await registry.embeddingsReady()
    calls.length = 0
    const query = 'Will it rain on Sunday? Also, check my inbox for new mail.'
    const names = (await registry.searchAsync(query)).map((h) => h.name)
    expect(calls).toEqual([[query, 'Will it rain on Sunday?', 'Also, check my inbox for new mail.']])
    expect(names.slice(0, 2).sort()).toEqual(['forecast_lookup', 'send_mail'])
    await registry.searchAsync(query)
    expect(calls.length).toBe(1) // the query's vectors are cached
    expect(warnings).toEqual([])
  })

  it('falls back to words when the embedder returns too few query vectors', async () => {
    const query = 'Will it rain on Sunday? Also, check my inbox.'
    const embed = async (texts) => (texts[0] === query ? [vectorOf(query)] : texts.map(vectorOf))
    const { registry, warnings } = quiet({ embed })
    registry.registerMany(catalogEntries())
    await registry.embeddingsReady()
    const hits = await registry.searchAsync(query)
    expect(hits.map((h) => h.name)).toEqual(registry.search(query).map((h) => h.name))
    expect(warnings).toEqual([expect.stringMatching(/returned 1 vectors for 3 query texts/)])
  })

  it('returns nothing for a query that fits nothing, in words or meaning', async () => {
    const { registry } = quiet({ embeddingModel: mockModel() })
    for (const e of catalogEntries()) registry.register(e)
    await registry.embeddingsReady()
    expect(await registry.searchAsync('zebra xylophone')).toEqual([])
  })

  it('keeps filters: the allow-list and namespace apply to the embedding ranking too', async () => {
    const { registry } = quiet({ embeddingModel: mockModel() })
    for (const e of catalogEntries()) registry.register(e)
    await registry.embeddingsReady()
    const names = (await registry.searchAsync('inbox rain', { names: ['send_mail', 'weather_widget_theme'] })).map((h) => h.name)
    expect(names).not.toContain('forecast_lookup')
    expect(names).toContain('send_mail')
    const inMail = (await registry.searchAsync('rain', { namespace: 'mcp:mail' })).map((h) => h.name)
    expect(inMail).toEqual([])
  })

  it('drops a vector computed for a text that changed meanwhile', async () => {
    const gates = []
    const embed = (texts) => new Promise((resolve) => gates.push(() => resolve(texts.map(vectorOf))))
    const { registry } = quiet({ embed })
    registry.register(entry('forecast_lookup', { description: 'Old widget color text', defer: 'always' }))
    await new Promise((r) => setImmediate(r))
    expect(gates.length).toBe(1)
    // Changed while the first embedding is in flight.
    registry.register(entry('forecast_lookup', { description: 'Rain outlook', defer: 'always' }))
    gates[0]()
    await new Promise((r) => setImmediate(r))
    expect(registry.embeddingStats).toMatchObject({ ready: 0 })
    const done = registry.embeddingsReady()
    await new Promise((r) => setImmediate(r))
    gates[1]?.()
    await done
    expect(registry.embeddingStats).toMatchObject({ ready: 1, pending: 0 })
  })

  it('rejects a non-function embed option', () => {
    expect(() => new ToolRegistry({ embed: 42 })).toThrow(/embed/)
  })
})

describe('built-in embeddings', () => {
  const entries = () => [
    entry('crypto_quotes', { description: 'Live quotes for cryptocurrencies and stocks', defer: 'always' }),
    entry('weather_now', { description: 'Current weather conditions for a city', defer: 'always' }),
    entry('send_mail', { namespace: 'mcp:mail', description: 'Send an email message', defer: 'always' }),
  ]
  const QUERY = 'how is bitcoin trading'

  it('finds a tool by meaning with no embedder: tools embedded in the background, queries too', async () => {
    // The precondition that makes this test able to fail: no word of the query is in the catalog.
    const words = new ToolRegistry()
    words.registerMany(entries())
    expect(words.search(QUERY)).toEqual([])

    const registry = new ToolRegistry({ builtinEmbeddings: true })
    registry.registerMany(entries())
    expect(registry.hybrid).toBe(true)
    expect(registry.embeddingStats).toMatchObject({ enabled: true, ready: 0, pending: 3 }) // register never waits
    await registry.embeddingsReady()
    expect(registry.embeddingStats).toMatchObject({ ready: 3, pending: 0, dimensions: 128 })
    expect((await registry.searchAsync(QUERY))[0].name).toBe('crypto_quotes')
    expect(registry.search(QUERY)).toEqual([]) // the synchronous search stays lexical
    // Later registrations are embedded too; exact names still win.
    registry.register(entry('rain_radar', { description: 'Precipitation radar maps', defer: 'always' }))
    await registry.embeddingsReady()
    expect(registry.embeddingStats).toMatchObject({ ready: 4, pending: 0 })
    expect((await registry.searchAsync('select:send_mail')).map((h) => h.name)).toEqual(['send_mail'])
    expect((await registry.searchAsync('will it rain tomorrow'))[0].name).toBe('rain_radar')
    // Bad input still fails clearly on the async path.
    await expect(registry.searchAsync('x', { mode: 'fuzzy' })).rejects.toThrow(TypeError)
    await expect(registry.searchAsync('(', { mode: 'regex' })).rejects.toMatchObject({ code: 'TOOLREG_INVALID_QUERY' })
  })

  it('embeds natively: unit vectors, and a zero vector for a text with nothing meaningful', async () => {
    const [empty, bitcoin] = await embedBuiltin(['the of and ?!', 'bitcoin price'])
    expect(empty).toBeInstanceOf(Float32Array)
    expect(empty.length).toBe(128)
    expect(empty.every((x) => x === 0)).toBe(true)
    expect(Math.hypot(...bitcoin)).toBeCloseTo(1, 5)
  })

  it('refuses to combine with a host embedder, and a non-boolean', () => {
    expect(() => new ToolRegistry({ builtinEmbeddings: true, embed: async (t) => t.map(vectorOf) })).toThrow(TypeError)
    expect(() => new ToolRegistry({ builtinEmbeddings: 'yes' })).toThrow(/builtinEmbeddings/)
  })
})
