// Token counting of every real tool definition in Toucan + Docker (~11k tools): toolreg
// (batch and single calls) against gpt-tokenizer and js-tiktoken, same texts, same run.
// Run: npm run build && node bench/tokens.bench.mjs
// BASELINE_ADDON=<path of another build's toolreg.*.node> adds that build's two rows, measured
// in the same process with the rounds of both builds interleaved (a before/after comparison).
import { performance } from 'node:perf_hooks'
import { countTokens as gptCount } from 'gpt-tokenizer/encoding/o200k_base'
import { getEncoding } from 'js-tiktoken'
import { createRequire } from 'node:module'
import path from 'node:path'
import { loadCatalog, requireData, median } from './catalog.mjs'

const require = createRequire(import.meta.url)
const { countTokens } = require('../index.js')

requireData('tokens.bench')
const catalog = loadCatalog()
const texts = catalog.map((t) => JSON.stringify({ name: t.name, description: t.description, input_schema: t.inputSchema }))
const bytes = texts.reduce((sum, t) => sum + Buffer.byteLength(t), 0)
const ROUNDS = Number(process.env.ROUNDS ?? 5)

const jsTiktoken = getEncoding('o200k_base')
countTokens('warm up the tokenizer')

const contenders = {
  'toolreg countTokens(texts[]) (batch, off-thread)': async () => (await countTokens(texts)).reduce((a, b) => a + b, 0),
  'toolreg countTokens(text) (one call per tool)': async () => texts.reduce((sum, t) => sum + countTokens(t), 0),
}
if (process.env.BASELINE_ADDON) {
  // The raw binding of the other build (what js/tokens.js wraps), loaded beside this one.
  const baseline = require(path.resolve(process.env.BASELINE_ADDON))
  baseline.countTokens('warm up the tokenizer', 'o200k_base')
  Object.assign(contenders, {
    'baseline addon countTokensBatch(texts[])': async () => (await baseline.countTokensBatch(texts, 'o200k_base')).reduce((a, b) => a + b, 0),
    'baseline addon countTokens(text)': async () => texts.reduce((sum, t) => sum + baseline.countTokens(t, 'o200k_base'), 0),
  })
}
Object.assign(contenders, {
  'gpt-tokenizer 4.0.0 countTokens': async () => texts.reduce((sum, t) => sum + gptCount(t), 0),
  'js-tiktoken 1.0.21 encode().length': async () => texts.reduce((sum, t) => sum + jsTiktoken.encode(t).length, 0),
})

console.log(`tools: ${texts.length}, definition bytes: ${(bytes / 1e6).toFixed(2)} MB, rounds: ${ROUNDS} (median), o200k_base`)
// Round-robin: every contender runs once per round, so a slow spell on the shared machine
// falls on all of them alike.
const times = Object.fromEntries(Object.keys(contenders).map((name) => [name, []]))
const totalOf = {}
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run] of Object.entries(contenders)) {
    const start = performance.now()
    totalOf[name] = await run()
    times[name].push(performance.now() - start)
  }
}
const rows = Object.keys(contenders).map((name) => {
  const ms = median(times[name])
  return { name, ms, total: totalOf[name], mbps: bytes / 1e6 / (ms / 1000) }
})
const totals = new Set(rows.map((r) => r.total))
const isAddon = (r) => r.name.startsWith('toolreg') || r.name.startsWith('baseline')
const fastestJs = Math.min(...rows.filter((r) => !isAddon(r)).map((r) => r.ms))
console.log('\n| implementation | median ms | MB/s | tokens | speed-up vs fastest JS |')
console.log('|---|---:|---:|---:|---:|')
for (const r of rows) {
  console.log(`| ${r.name} | ${r.ms.toFixed(0)} | ${r.mbps.toFixed(1)} | ${r.total} | ${(fastestJs / r.ms).toFixed(2)}× |`)
}
if (process.env.BASELINE_ADDON) {
  const ms = (name) => rows.find((r) => r.name === name).ms
  const ratio = (mine, theirs) => `${(ms(theirs) / ms(mine)).toFixed(2)}×`
  console.log(`\nthis build vs the baseline addon (speed ratio, > 1 = faster): batch ${ratio('toolreg countTokens(texts[]) (batch, off-thread)', 'baseline addon countTokensBatch(texts[])')}, one call per tool ${ratio('toolreg countTokens(text) (one call per tool)', 'baseline addon countTokens(text)')}`)
}
console.log(totals.size === 1 ? '\nAll implementations produced identical token totals.' : `\nTOKEN TOTALS DIFFER: ${[...totals].join(', ')}`)
if (totals.size !== 1) process.exit(1)

// First use of an encoding: its tables are built from the rank files then. Each figure is a
// fresh Node process loading the addon and counting one string right away (o200k_base is
// already being built by the load-time warm-up; cl100k_base is not).
const { execFileSync } = await import('node:child_process')
const firstUse = (encoding) => {
  const script = `const t0 = performance.now(); const { countTokens } = require(${JSON.stringify(require.resolve('../index.js'))}); const t1 = performance.now(); countTokens('hello', { encoding: '${encoding}' }); console.log(JSON.stringify({ load: t1 - t0, first: performance.now() - t1 }))`
  const runs = Array.from({ length: 3 }, () => JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' })))
  return { load: median(runs.map((r) => r.load)), first: median(runs.map((r) => r.first)) }
}
console.log('\n| first use in a fresh process (median of 3) | loading the addon | first countTokens call |')
console.log('|---|---:|---:|')
for (const encoding of ['o200k_base', 'cl100k_base']) {
  const { load, first } = firstUse(encoding)
  console.log(`| ${encoding} | ${load.toFixed(0)} ms | ${first.toFixed(0)} ms |`)
}
