// What the benchmarks that build real provider requests share (bench/append.bench.mjs,
// bench/pins.bench.mjs): the ai@7 lane (`lanes/ai7`: ai 7, @ai-sdk/anthropic 4, @ai-sdk/openai 4,
// on Node 22) with toolreg installed as an app installs it, and a seeded random source.
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { ensureNode22, ensureLaneDeps } from '../scripts/ensure-node22.mjs'

// TOOLREG_BENCH_LANE=latest-ai7 measures with the newest published packages instead, as
// `npm run lanes:latest` installed them.
const laneName = process.env.TOOLREG_BENCH_LANE ?? 'ai7'
const lane = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'lanes', laneName)

/** The versions the lane measures with, for the report. */
export function laneVersions() {
  const laneRequire = createRequire(path.join(lane, 'package.json'))
  return Object.fromEntries(['ai', '@ai-sdk/anthropic', '@ai-sdk/openai'].map((name) => [name, laneRequire(`${name}/package.json`).version]))
}

/** On a Node older than 22, runs the calling script again on Node 22 (the lane's) and exits with its status. */
export function onNode22(scriptUrl) {
  if (Number(process.versions.node.split('.')[0]) >= 22) return
  ensureLaneDeps(lane)
  const run = spawnSync(ensureNode22(), [fileURLToPath(scriptUrl), ...process.argv.slice(2)], { stdio: 'inherit' })
  process.exit(run.status ?? 1)
}

/** The lane's packages, toolreg among them (so its `require('ai')` is the lane's ai@7). */
export async function loadLane() {
  const { default: installToolreg } = await import(pathToFileURL(path.join(lane, 'install-toolreg.mjs')).href)
  installToolreg()
  const laneRequire = createRequire(path.join(lane, 'package.json'))
  const load = (name) => import(pathToFileURL(laneRequire.resolve(name)).href)
  return { ai: await load('ai'), anthropic: await load('@ai-sdk/anthropic'), openai: await load('@ai-sdk/openai'), toolreg: laneRequire('toolreg') }
}

/** mulberry32: the same draws on every run. */
export function random(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = Math.imul(a ^ (a >>> 15), a | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
