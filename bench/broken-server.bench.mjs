// What a broken server costs the people in front of it, measured with the real CLI as a child
// process and, for `serve`, the official MCP TypeScript SDK's client over stdio.
//  1. `toolreg serve`: time from spawn to the `initialize` answer and to the first `tools/list`
//     answer, on a config with a server that hangs on tools/list, one that crashes at start, a
//     healthy one, and an npx first run (`npx -y` of a reference server with an empty npm cache,
//     so it downloads from the registry; run from a folder where npx finds no local copy).
//     Default start-up wait on a first start (empty caches) and on the next start (the tools/list
//     and answer caches the first one left), against `--startup-wait 30000` (what serve did
//     before: wait for every server) on a first start.
//  2. Every CLI command on a config with one hanging server, on a cached start (a first command
//     listed the healthy servers and remembered the failure), against the same command with
//     --refresh (every server listed live, so the hanging one is waited on, here for 5 s).
// Run on a quiet machine: node scripts/cargo.mjs build --example mcp_test_server && node bench/broken-server.bench.mjs [RUNS]
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { referenceServer, testServer, testServerPath } from '../__tests__/mcpServers.mjs'
import { median } from './catalog.mjs'

if (!existsSync(testServerPath)) {
  console.log('broken-server.bench: skipped — build the test server first: node scripts/cargo.mjs build --example mcp_test_server')
  process.exit(0)
}

const runs = Number(process.argv[2] ?? 5)
const dir = mkdtempSync(join(tmpdir(), 'toolreg-broken-bench-'))
const bin = new URL('../bin/toolreg.mjs', import.meta.url).pathname
const stdio = (server) => ({ command: server.command, args: server.args, ...(server.env && { env: server.env }) })
const fresh = (prefix) => mkdtempSync(join(dir, prefix))
const range = (t) => `${median(t).toFixed(0)} ms (${Math.min(...t).toFixed(0)}–${Math.max(...t).toFixed(0)})`

function configFile(name, mcpServers) {
  const file = join(dir, `${name}.json`)
  writeFileSync(file, JSON.stringify({ mcpServers }))
  return file
}

const hanging = stdio(testServer('hanging', ['--hang-on-list']))
const crashing = { command: process.execPath, args: ['-e', 'console.error("cannot open the database"); process.exit(3)'] }

/** Spawn → initialize answered → first tools/list answered, in ms; the tools listed. */
async function serveStart(file, extraArgs, cacheDir) {
  const started = performance.now()
  const client = new Client({ name: 'broken-server-bench', version: '1.0.0' })
  const env = { ...process.env, TOOLREG_CACHE_DIR: cacheDir, npm_config_cache: fresh('npm-'), NO_COLOR: '1' }
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [bin, 'serve', '--config', file, '--timeout', '30000', ...extraArgs], env, cwd: dir, stderr: 'ignore' }))
  const initialized = performance.now() - started
  const { tools } = await client.listTools()
  const listed = performance.now() - started
  await client.close()
  return { initialized, listed, tools: tools.length }
}

async function serveBench() {
  const file = configFile('serve', {
    live: stdio(testServer('live')),
    hanging,
    crashing,
    npx: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] },
  })
  console.log(`1. toolreg serve, spawn to answers, ${runs} runs each (median, min–max); a hanging, a crashing, a healthy server and an npx first run:`)
  const waitAll = '--startup-wait 30000, first start'
  const rows = { 'default, first start': [], 'default, next start': [], [waitAll]: [] }
  for (let i = 0; i < runs; i++) {
    const cache = fresh('cache-')
    rows['default, first start'].push(await serveStart(file, [], cache))
    rows['default, next start'].push(await serveStart(file, [], cache))
    rows[waitAll].push(await serveStart(file, ['--startup-wait', '30000'], fresh('cache-')))
  }
  const base = median(rows[waitAll].map((r) => r.listed))
  for (const [label, r] of Object.entries(rows)) {
    const listed = r.map((x) => x.listed)
    console.log(`   ${label.padEnd(34)} initialize ${range(r.map((x) => x.initialized))}, first tools/list ${range(listed)} (${(median(listed) / base).toFixed(3)}×), tools in it: ${[...new Set(r.map((x) => x.tools))].join('/')}`)
  }
}

function cliOnce(args, env) {
  const started = performance.now()
  const run = spawnSync(process.execPath, [bin, ...args], { env, encoding: 'utf8' })
  return { ms: performance.now() - started, code: run.status, stderr: run.stderr }
}

function cliBench() {
  const file = configFile('cli', { everything: stdio(referenceServer('everything')), memory: stdio(referenceServer('memory')), hanging })
  const env = { ...process.env, TOOLREG_CACHE_DIR: fresh('cache-'), NO_COLOR: '1' }
  const first = cliOnce(['search', 'echo', '--config', file, '--timeout', '5000'], env)
  console.log(`2. every command with one hanging server; the first command (lists all, waits 5 s on the hanging one): ${first.ms.toFixed(0)} ms. Then ${runs} runs each (median, min–max):`)
  const report = join(dir, 'report.html')
  const commands = [
    ['search', 'read a file'],
    ['search', 'add two numbers', '-n', 'everything'],
    ['inspect', 'everything/get-sum'],
    ['call', 'everything/get-sum', '{"a": 2, "b": 40}'],
    ['exec', 'return 1'],
    ['audit', '--json'],
    ['report', '--out', report],
  ]
  for (const command of commands) {
    const cached = []
    const refreshed = []
    for (let i = 0; i < runs; i++) {
      const run = cliOnce([...command, '--config', file, '--timeout', '5000'], env)
      if (![0, 4].includes(run.code)) throw new Error(`${command.join(' ')} exited ${run.code}: ${run.stderr}`)
      cached.push(run.ms)
      // --refresh is not an option of call: a call starts only its tool's server anyway.
      if (command[0] !== 'call' && command[0] !== 'inspect') refreshed.push(cliOnce([...command, '--config', file, '--timeout', '5000', '--refresh'], env).ms)
    }
    const against = refreshed.length ? `; with --refresh ${range(refreshed)}, ${(median(cached) / median(refreshed)).toFixed(2)}×` : ''
    console.log(`   ${command.slice(0, command[0] === 'search' && command.includes('-n') ? 4 : 2).join(' ').padEnd(36)} ${range(cached)}${against}`)
  }
}

await serveBench()
cliBench()
