// Two builds of the addon against each other on the local model's cost, in alternating fresh
// processes (a shared VM's speed drifts within minutes, so one run of each proves nothing):
//
//   node bench/local-model.ab.mjs DIR_A DIR_B [ROUNDS]
//
// DIR_A and DIR_B are copies of the package (index.js, binding.js, js/, node_modules) that
// differ in their toolreg.*.node. Each round runs A then B, each in a fresh process that loads
// the model (npm run model:build) and times, over 300 StableToolBench test queries (../shared
// data, or $TOOLREG_DATA; skipped without it), `embedQuery` (what
// searchAsync embeds) and `embed([query])` one query at a time, and 200 texts in one `embed`
// call (per text, both cores). Prints every round, the median of the rounds' p50s and the
// median of the rounds' B/A ratios.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { median, stableToolBenchQueries, timeQueries } from './catalog.mjs'

const root = resolve(fileURLToPath(import.meta.url), '..', '..')
const MODEL = join(root, 'npm-optional', 'model-minilm-l6-v2', 'model')

async function measure(dir) {
  const { loadLocalModel } = createRequire(join(resolve(dir), 'index.js'))('./index.js')
  const model = await loadLocalModel({ path: MODEL, cacheDir: false })
  const list = stableToolBenchQueries(300)
  const p50 = async (run) => (await timeQueries(list, run)).p50
  const embedQuery = await p50((q) => model.embedQuery(q))
  const whole = await p50((q) => model.embed([q]))
  const texts = Array.from({ length: 200 }, (_, i) => `tool ${i}: ${list[i % list.length]}`)
  const t = performance.now()
  await model.embed(texts)
  console.log(JSON.stringify({ embedQuery, whole, batchPerText: (performance.now() - t) / texts.length }))
}

function main() {
  const [a, b, rounds = '5'] = process.argv.slice(2)
  if (process.argv[2] === '--child') return measure(process.argv[3])
  if (!a || !b) throw new Error('usage: node bench/local-model.ab.mjs DIR_A DIR_B [ROUNDS]')
  if (!existsSync(join(MODEL, 'model.safetensors'))) {
    console.log('local-model A/B: skipped — the model is not built (npm run model:build).')
    return
  }
  if (!stableToolBenchQueries(1)) {
    console.log('local-model A/B: skipped — it times StableToolBench requests from the shared data set (set TOOLREG_DATA to its path).')
    return
  }
  const results = { [a]: [], [b]: [] }
  for (let round = 1; round <= Number(rounds); round++) {
    for (const dir of [a, b]) {
      const run = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', dir], { encoding: 'utf8' })
      if (run.status !== 0) throw new Error(`${dir}: ${run.stderr}`)
      const r = JSON.parse(run.stdout.trim().split('\n').pop())
      results[dir].push(r)
      console.log(`round ${round} ${dir}: embedQuery ${r.embedQuery.toFixed(2)} ms, whole ${r.whole.toFixed(2)} ms, batch ${r.batchPerText.toFixed(2)} ms/text`)
    }
  }
  // The ratio within each round (A and B ran a minute apart) drifts less than the times.
  for (const key of ['embedQuery', 'whole', 'batchPerText']) {
    const [ma, mb] = [a, b].map((d) => median(results[d].map((r) => r[key])))
    const ratios = results[a].map((r, i) => results[b][i][key] / r[key])
    console.log(`${key}: A ${ma.toFixed(2)} ms, B ${mb.toFixed(2)} ms; B/A per round ${ratios.map((x) => x.toFixed(2)).join(' ')}, median ${median(ratios).toFixed(2)}`)
  }
}

await main()
