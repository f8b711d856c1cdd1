// Loads the real MCP tool catalogs from ../shared/data (Toucan: Smithery servers' live
// tools/list; Docker MCP registry). Benchmarks and the demo read them in place; nothing is
// copied into the repository.
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
