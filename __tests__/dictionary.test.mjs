// Chinese requests over English-described tools: with a bilingual dictionary, a request's
// Chinese terms also search with their English glosses (src/search/bridge.rs, js/dictionary.js).
// fixtures/dict-zh-en-tiny.tsv stands in for @toolreg/dict-zh-en (CC-CEDICT, built by
// `npm run dict:build`); the real one is tried when it has been built.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { registryOfTools } from './helpers.mjs'

const require = createRequire(import.meta.url)
const { ToolRegistry } = require('../index.js')
const root = join(import.meta.dirname, '..')
const TINY = join(root, 'fixtures', 'dict-zh-en-tiny.tsv')
const REAL = join(root, 'npm-optional', 'dict-zh-en', 'zh-en.tsv')

const TOOLS = [
  ['recall_message', 'Recall (withdraw) a chat message that was sent'],
  ['batch_send_messages', 'Send messages to many chats in bulk'],
  ['get_weather', 'Current weather and forecast for a city'],
  ['create_calendar_event', 'Create a meeting on the calendar'],
  ['write_file', 'Save text to a file on disk'],
  ['list_issues', 'List the issues of a GitHub repository'],
]

const registryWith = (options) => registryOfTools(TOOLS, options)

const names = (hits) => hits.map((h) => h.name)

describe('Chinese requests over English-described tools', () => {
  it('without a dictionary, nothing bridges the languages', async () => {
    const { registry } = registryWith({ dictionary: false })
    expect(await registry.searchAsync('撤回消息', { limit: 3 })).toEqual([])
  })

  it('with none named, the first Chinese request says which package bridges the languages when it is not installed; dictionary: false says nothing', async () => {
    let installed = true
    try {
      require.resolve('@toolreg/dict-zh-en', { paths: [process.cwd(), root] })
    } catch {
      installed = false
    }
    const { registry, warnings } = registryWith({})
    await registry.searchAsync('list github issues')
    expect(warnings).toEqual([])
    await registry.searchAsync('撤回消息')
    await registry.rank('天气', [{ name: 'get_weather' }])
    // Once per registry; none when the package is there (then it glosses instead).
    expect(warnings).toEqual(installed ? [] : [expect.stringMatching(/^toolreg: a search request in Chinese .*npm install @toolreg\/dict-zh-en .*dictionary: false/)])
    const off = registryWith({ dictionary: false })
    await off.registry.searchAsync('撤回消息')
    expect(off.warnings).toEqual([])
  })

  it('with one, the request\'s terms bring their English words: the right tool first', async () => {
    const { registry, warnings } = registryWith({ dictionary: TINY })
    expect(names(await registry.searchAsync('撤回消息', { limit: 3 }))[0]).toBe('recall_message')
    expect(names(await registry.searchAsync('帮我查询一下明天的天气', { limit: 3 }))[0]).toBe('get_weather')
    expect(names(await registry.searchAsync('创建会议日历', { limit: 3 }))[0]).toBe('create_calendar_event')
    expect(names(await registry.searchAsync('批量发送消息', { limit: 3 }))).toContain('batch_send_messages')
    // Mixed requests keep their English words; English requests are untouched.
    expect(names(await registry.searchAsync('保存到 file', { limit: 1 }))).toEqual(['write_file'])
    expect(names(await registry.searchAsync('list github issues', { limit: 1 }))).toEqual(['list_issues'])
    // meta-tools and native paths rank through rank(): glossed as well.
    expect((await registry.rank('撤回消息', [{ name: 'get_weather' }, { name: 'recall_message' }]))[0]).toBe('recall_message')
    expect(warnings).toEqual([])
  })

  it('a synchronous search cannot wait for the dictionary: it is loaded for the searches after', async () => {
    const { registry } = registryWith({ dictionary: TINY })
    const other = registryWith({ dictionary: TINY }).registry
    // A fresh file path: nothing of it is loaded in this process yet.
    const copy = join(mkdtempSync(join(tmpdir(), 'toolreg-dict-')), 'zh-en.tsv')
    writeFileSync(copy, '天气\tweather\n')
    const fresh = registryWith({ dictionary: copy }).registry
    expect(fresh.search('天气', { limit: 1 })).toEqual([])
    await fresh.searchAsync('天气')
    expect(names(fresh.search('天气', { limit: 1 }))).toEqual(['get_weather'])
    // Each registry takes the loaded dictionary at its own first request that needs it.
    await registry.searchAsync('天气')
    expect(names(other.search('撤回消息', { limit: 1 }))).toEqual([])
    await other.searchAsync('撤回')
    expect(names(other.search('撤回消息', { limit: 1 }))).toEqual(['recall_message'])
  })

  it('bad dictionary options fail at construction, naming the option; a bad file is reported once and search goes on', async () => {
    expect(() => new ToolRegistry({ dictionary: join(root, 'no-such-dictionary.tsv') })).toThrow(/invalid dictionary: .*no-such-dictionary\.tsv is not a file/)
    expect(() => new ToolRegistry({ dictionary: 42 })).toThrow(expect.objectContaining({ code: 'TOOLREG_INVALID_ARGUMENT' }))
    const broken = join(mkdtempSync(join(tmpdir(), 'toolreg-dict-')), 'broken.tsv')
    writeFileSync(broken, '# no tab below\n撤回 recall\n')
    const { registry, warnings } = registryWith({ dictionary: broken })
    expect(await registry.searchAsync('撤回消息')).toEqual([])
    expect(names(await registry.searchAsync('weather', { limit: 1 }))).toEqual(['get_weather'])
    await registry.searchAsync('消息')
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/could not be loaded.*line 2: expected `term<TAB>english words`/)
  })

  it('English requests find tools described only in Chinese: registering one loads the dictionary and glosses it', async () => {
    const copy = join(mkdtempSync(join(tmpdir(), 'toolreg-dict-')), 'zh-en.tsv')
    writeFileSync(copy, readFileSync(TINY))
    const { registry, warnings } = registryOfTools([
      // Pinyin names, as Chinese servers often have: only the glosses are English.
      ['tianqi', '查询城市天气'],
      ['nongli', '查询农历日历'],
      ['list_issues', 'List the issues of a GitHub repository'],
    ], { dictionary: copy })
    // The load started at registration; an asynchronous search waits for it.
    expect(names(await registry.searchAsync('weather in Paris', { limit: 3 }))).toEqual(['tianqi'])
    expect(names(registry.search('calendar', { limit: 3 }))).toEqual(['nongli'])
    expect(names(registry.search('github issues', { limit: 3 }))).toEqual(['list_issues'])
    // Without a dictionary the Chinese tools are out of an English request's reach.
    const plain = registryOfTools([['tianqi', '查询城市天气']], { dictionary: false }).registry
    expect(await plain.searchAsync('weather in Paris')).toEqual([])
    expect(warnings).toEqual([])
  })

  it.skipIf(!existsSync(REAL))('the CC-CEDICT package (npm run dict:build) bridges real requests', async () => {
    const { registry } = registryWith({ dictionary: REAL })
    expect(names(await registry.searchAsync('撤回已发送的消息', { limit: 3 }))[0]).toBe('recall_message')
    expect(names(await registry.searchAsync('明天北京的天气怎么样？', { limit: 3 }))[0]).toBe('get_weather')
  })
})
