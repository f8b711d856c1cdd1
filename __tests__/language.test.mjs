// Which embedder serves which language: a request mostly in another script than Latin is ranked
// by words alone when the embedder is English (the built-in table, an English local model), and
// with the vector when the model is multilingual; the local model is chosen by the users'
// languages. Tiny models stand in for the real ones (fixtures/tiny-bert: WordPiece, English;
// fixtures/tiny-e5: SentencePiece, multilingual).
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { registryOfTools } from './helpers.mjs'

const require = createRequire(import.meta.url)
const { readableInEnglish } = require('../js/language.js')
const { resolveLocalModel } = require('../js/localModel.js')
const root = join(import.meta.dirname, '..')

const TOOLS = [
  ['get_weather', 'Current weather and forecast for a city'],
  ['query_weather_zh', '查询城市的天气预报和气温'],
  ['send_message', 'Send a chat message to a channel'],
  ['create_calendar_event', '在日历中创建会议日程'],
]

const registryWith = (options) => registryOfTools(TOOLS, options)

describe('search in the user\'s language', () => {
  it('tells text an English embedder can read from text mostly in another script', () => {
    for (const text of ['weather in Paris', 'météo à Besançon', 'search github issues about 内存泄漏', '', '12345 ???']) {
      expect(readableInEnglish(text), text).toBe(true)
    }
    for (const text of ['帮我查一下北京天气', '帮我查一下北京天气 weather', 'погода в Москве', '東京の天気を教えて', '서울 날씨']) {
      expect(readableInEnglish(text), text).toBe(false)
    }
  })

  it('with the built-in (English) embeddings, a Chinese request is ranked by words alone, said once; an English one stays hybrid', async () => {
    const { registry, warnings } = registryWith({ builtinEmbeddings: true })
    await registry.embeddingsReady()
    const chinese = '帮我查一下明天的天气预报'
    const hits = await registry.searchAsync(chinese, { limit: 3 })
    expect(hits.map((h) => h.name)).toEqual(registry.search(chinese, { limit: 3 }).map((h) => h.name))
    expect(hits[0].name).toBe('query_weather_zh')
    await registry.searchAsync('在日历里创建一个会议', { limit: 3 })
    expect(registry.embeddingStats.wordsOnlyRequests).toBe(2)
    const wordsAlone = warnings.filter((w) => /ranked by words alone/.test(w))
    expect(wordsAlone).toHaveLength(1)
    expect(wordsAlone[0]).toMatch(/multilingual-e5-small/)
    await registry.searchAsync('weather forecast for tomorrow', { limit: 3 })
    expect(registry.embeddingStats.wordsOnlyRequests).toBe(2)
  })

  it('an English local model leaves a Chinese request to words; a multilingual one embeds it', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'toolreg-language-'))
    const english = registryWith({ localModel: { path: join(root, 'fixtures', 'tiny-bert'), cacheDir } })
    await english.registry.embeddingsReady()
    await english.registry.searchAsync('帮我查一下天气', { limit: 3 })
    expect(english.registry.embeddingStats.wordsOnlyRequests).toBe(1)
    expect(english.warnings.join('\n')).toMatch(/local model .* \(English\) cannot read it/)

    const multilingual = registryWith({ localModel: { path: join(root, 'fixtures', 'tiny-e5'), cacheDir } })
    await multilingual.registry.embeddingsReady()
    await multilingual.registry.searchAsync('帮我查一下天气', { limit: 3 })
    expect(multilingual.registry.embeddingStats.wordsOnlyRequests).toBe(0)
    expect(multilingual.warnings.filter((w) => /ranked by words alone/.test(w))).toEqual([])
  })

  it('chooses the local model by the users\' languages: English users MiniLM, others the multilingual one', () => {
    const missingPackage = (languages) => {
      try {
        resolveLocalModel({ languages }, 'localModel')
        return null
      } catch (error) {
        return error
      }
    }
    // Neither package is installed in a clean clone: the error names the one that would serve.
    const forEnglish = missingPackage(['en'])
    const forChinese = missingPackage(['zh-CN', 'en'])
    if (forEnglish === null || forChinese === null) return // a model package is installed here
    expect(forEnglish.code).toBe('TOOLREG_LOCAL_MODEL_MISSING')
    expect(forEnglish.message).toMatch(/the optional package @toolreg\/model-minilm-l6-v2 is not installed/)
    expect(forChinese.message).toMatch(/the optional package @toolreg\/model-multilingual-e5-small is not installed/)
    expect(forChinese.message).toMatch(/better on English requests/)
    expect(() => resolveLocalModel({ languages: 'zh' }, 'localModel')).toThrow(/localModel\.languages: expected the users' languages/)
    expect(() => resolveLocalModel({ languages: [] }, 'localModel')).toThrow(/localModel\.languages/)
  })
})
