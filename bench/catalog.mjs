// Loads the real MCP tool catalogs from ../shared/data (Toucan: Smithery servers' live
// tools/list; Docker MCP registry). Benchmarks and the demo read them in place; nothing is
// copied into the repository.
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { dataDir, haveSharedData } from '../cli/catalog.mjs'

export { dataDir, loadCatalog, firstLine } from '../cli/catalog.mjs'

/** Prints why the benchmark cannot run and exits cleanly when the shared data is absent. */
export function requireData(what) {
  const dir = dataDir()
  if (!haveSharedData(dir)) {
    console.log(`${what}: skipped — the shared data set is not at ${dir} (set TOOLREG_DATA to its path).`)
    process.exit(0)
  }
  return dir
}

/** A name every provider accepts, unique per server and tool. */
export function wireName(tool, index) {
  const clean = (s) => s.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 24) || 'x'
  return `mcp__${clean(tool.server)}__${clean(tool.name)}_${index}`.slice(0, 64)
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]
}

/**
 * `count` distinct StableToolBench test requests, evenly spaced over the sorted files, or null
 * without the shared data (the local-model benches' query list).
 */
export function stableToolBenchQueries(count) {
  const dir = join(dataDir(), 'stabletoolbench', 'test_instruction')
  if (!existsSync(dir)) return null
  const all = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .flatMap((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')).map((q) => q.query))
    .filter((q) => typeof q === 'string' && q.trim() !== '')
  const unique = [...new Set(all)]
  const step = Math.max(1, Math.floor(unique.length / count))
  return unique.filter((_, i) => i % step === 0).slice(0, count)
}

/** p50/p90 of `run(query)` over `list`, one at a time, after 10 warm-up calls on other text. */
export async function timeQueries(list, run) {
  for (const q of list.slice(0, 10)) await run(`warm-up ${q}`)
  const times = []
  for (const q of list) {
    const t = performance.now()
    await run(q)
    times.push(performance.now() - t)
  }
  return { p50: median(times), p90: percentile(times, 0.9) }
}
