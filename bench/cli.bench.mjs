// `toolreg call` start-up with 1 vs 4 servers in the config: a call starts only its tool's
// server, so the other three (one of them a server that never answers) must not cost anything.
// Each run is the real CLI as a child process (Node start, addon load, config, one server, the
// call), the two configs taking turns so that a change of load hits both.
// Run: node scripts/cargo.mjs build --example mcp_test_server && node bench/cli.bench.mjs [ROUNDS]
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { referenceServer, testServer, testServerPath } from '../__tests__/mcpServers.mjs'
import { median } from './catalog.mjs'

if (!existsSync(testServerPath)) {
  console.log('cli.bench: skipped — build the test server first: node scripts/cargo.mjs build --example mcp_test_server')
  process.exit(0)
}

const rounds = Number(process.argv[2] ?? 15)
const dir = mkdtempSync(join(tmpdir(), 'toolreg-cli-bench-'))
const stdio = (server) => ({ command: server.command, args: server.args, ...(server.env && { env: server.env }) })
const configs = {
  '1 server': { everything: stdio(referenceServer('everything')) },
  '4 servers (one hangs)': {
    everything: stdio(referenceServer('everything')),
    filesystem: stdio(referenceServer('filesystem')),
    memory: stdio(referenceServer('memory')),
    hangs: stdio(testServer('hangs', ['--hang-on-list'])),
  },
}
const files = Object.fromEntries(Object.entries(configs).map(([label, mcpServers], i) => {
  const file = join(dir, `mcp${i}.json`)
  writeFileSync(file, JSON.stringify({ mcpServers }))
  return [label, file]
}))
const bin = new URL('../bin/toolreg.mjs', import.meta.url).pathname
const env = { ...process.env, TOOLREG_CACHE_DIR: join(dir, 'cache'), NO_COLOR: '1' }

function callOnce(file) {
  const started = process.hrtime.bigint()
  const run = spawnSync(process.execPath, [bin, 'call', 'everything/get-sum', '{"a": 2, "b": 40}', '--config', file, '--timeout', '60000'], { env, encoding: 'utf8' })
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  if (run.status !== 0 || !run.stdout.includes('42')) throw new Error(`call failed (${run.status}): ${run.stderr}`)
  return ms
}

const times = Object.fromEntries(Object.keys(files).map((label) => [label, []]))
for (const label of Object.keys(files)) callOnce(files[label]) // warm the file cache
for (let i = 0; i < rounds; i++) {
  for (const [label, file] of i % 2 ? Object.entries(files).reverse() : Object.entries(files)) times[label].push(callOnce(file))
}
const base = median(times['1 server'])
console.log(`toolreg call everything/get-sum, ${rounds} runs each, median (min–max):`)
for (const [label, t] of Object.entries(times)) {
  console.log(`  ${label.padEnd(22)} ${median(t).toFixed(0)} ms (${Math.min(...t).toFixed(0)}–${Math.max(...t).toFixed(0)})  ${(median(t) / base).toFixed(2)}×`)
}
