#!/usr/bin/env node
// `npm run demo`: the toolreg CLI's main job on the embedded default — an audit of the MCP
// reference servers (run for real) plus the large listed-only catalog, then a few searches.
// Works on the committed data alone (a fresh clone has no ../shared).
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const bin = fileURLToPath(new URL('../bin/toolreg.mjs', import.meta.url))

const steps = [
  ['audit', '--context-window', '200000'],
  ['search', 'read a text file from disk', '--limit', '3'],
  ['search', 'current weather forecast for a city', '--limit', '3'],
  ['search', 'how is bitcoin trading today', '--limit', '3', '--hybrid'],
  ['inspect', 'filesystem/read_text_file'],
]

for (const args of steps) {
  console.log(`\n$ toolreg ${args.map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ')}`)
  const run = spawnSync(process.execPath, [bin, ...args], { stdio: 'inherit' })
  if (run.status !== 0) process.exit(run.status ?? 1)
}
