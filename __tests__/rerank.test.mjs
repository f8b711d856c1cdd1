// A host reranker over the first stage's top k (`ToolRegistry({ rerank, rerankTopK })`): it
// orders what `searchAsync`, `rank` and the meta-tools return; a failing or malformed one is
// warned about and the first-stage order stands; `search` (sync) stays the first stage.
import { describe, expect, it } from 'vitest'
import { ToolRegistry, applyDeferExposition } from '../index.js'
import { entry } from './helpers.mjs'

const catalog = [
  ['weather_alerts', 'Severe weather alerts for a region'],
  ['get_weather', 'Current weather for a city'],
  ['get_forecast', 'Weather forecast for the next days'],
  ['weather_history', 'Past weather records for a city'],
  ['send_email', 'Send an email to a recipient'],
]

/** A registry over the catalog whose reranker scores by `score(candidate)`, recording its calls. */
function setup(score, options = {}) {
  const calls = []
  const warnings = []
  const registry = new ToolRegistry({
    logger: { warn: (message) => warnings.push(message) },
    rerank: async (query, candidates) => {
      calls.push({ query, candidates })
      return score(candidates)
    },
    ...options,
  })
  for (const [name, description] of catalog) registry.register(entry(name, { description, defer: 'always' }))
  return { registry, calls, warnings }
}

/** Scores that reverse the first stage's order. */
const reverse = (candidates) => candidates.map((_, i) => i)

describe('rerank', () => {
  it("orders searchAsync's hits by the reranker's scores, given the first stage's top k with their text", async () => {
    const { registry, calls } = setup(reverse, { rerankTopK: 3 })
    const first = registry.search('weather city', { limit: 3 }).map((h) => h.name)
    const hits = await registry.searchAsync('weather city', { limit: 3 })
    expect(hits.map((h) => h.name)).toEqual([...first].reverse())
    expect(hits.map((h) => h.score)).toEqual([2, 1, 0])
    expect(calls).toHaveLength(1)
    expect(calls[0].query).toBe('weather city')
    expect(calls[0].candidates.map((c) => c.name)).toEqual(first)
    expect(calls[0].candidates.find((c) => c.name === 'get_weather').text).toBe('get weather: Current weather for a city')
    // The sync search is the first stage alone.
    expect(registry.search('weather city', { limit: 3 }).map((h) => h.name)).toEqual(first)
  })

  it('reranks only the top k; hits past it follow in first-stage order', async () => {
    const { registry } = setup(reverse, { rerankTopK: 2 })
    const first = registry.search('weather', { limit: 4 }).map((h) => h.name)
    const hits = await registry.searchAsync('weather', { limit: 4 })
    expect(hits.map((h) => h.name)).toEqual([first[1], first[0], first[2], first[3]])
  })

  it('reranks for more than the limit asks: the top k is scored, then cut to the limit', async () => {
    const { registry, calls } = setup(reverse, { rerankTopK: 4 })
    const first = registry.search('weather', { limit: 4 }).map((h) => h.name)
    const hits = await registry.searchAsync('weather', { limit: 1 })
    expect(calls[0].candidates).toHaveLength(4)
    expect(hits.map((h) => h.name)).toEqual([first[3]])
  })

  it('a reranker that throws or answers badly is warned about, and the first-stage order stands', async () => {
    const answers = [
      () => {
        throw new Error('reranker offline')
      },
      () => [1, 2],
      (c) => c.map(() => Number.NaN),
      () => 'best first',
    ]
    for (const answer of answers) {
      const { registry, warnings } = setup(answer)
      const first = registry.search('weather', { limit: 3 }).map((h) => h.name)
      expect((await registry.searchAsync('weather', { limit: 3 })).map((h) => h.name)).toEqual(first)
      expect(warnings).toHaveLength(1)
      expect(warnings[0]).toMatch(/^toolreg: rerank (failed; using the first-stage ranking: reranker offline|must resolve to \d+ finite numbers)/)
    }
  })

  it('leaves select:, regex and empty queries alone', async () => {
    const { registry, calls } = setup(reverse)
    await registry.searchAsync('select:get_weather,send_email')
    await registry.searchAsync('weather.*', { mode: 'regex' })
    await registry.searchAsync('   ')
    expect(calls).toHaveLength(0)
  })

  it('orders rank() and the tool_search meta-tool', async () => {
    const { registry } = setup(reverse)
    const first = registry.search('weather', { limit: 10 }).map((h) => h.name)
    const all = catalog.map(([name, description]) => ({ name, description }))
    expect(await registry.rank('weather', all)).toEqual([...first].reverse())

    const { tools } = await applyDeferExposition(registry.selectActiveTools({}), registry, 1000)
    const found = await tools.tool_search.execute({ query: 'weather', limit: 2 }, { toolCallId: 's', messages: [] })
    expect(found.matchedNamespaces.flatMap((ns) => ns.tools.map((t) => t.name))).toEqual([first[first.length - 1], first[first.length - 2]])
  })

  it('refuses a rerank that is not a function and a rerankTopK out of range, naming the option', () => {
    expect(() => new ToolRegistry({ rerank: 'cohere' })).toThrow(/rerank: expected a function/)
    for (const rerankTopK of [0, 2.5, 1001]) {
      expect(() => new ToolRegistry({ rerank: async () => [], rerankTopK })).toThrow(/rerankTopK: expected a whole number from 1 to 1000/)
    }
  })
})
