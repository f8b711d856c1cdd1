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
//  0. The first session and the next, with real servers: the reference servers from
//     node_modules (everything, memory, filesystem), `npx -y @modelcontextprotocol/server-memory`
//     and, when `uvx` and `mcp-server-time` are on PATH, the Python reference server
//     `mcp-server-time` (installed, and by `uvx` with an empty uv cache on a cold start), our test
//     server, a hanging one (no handshake), a crashing one and a garbage-printing one. Cold: empty
//     toolreg, npm and uv caches; warm: the caches the cold start left. For each: when
//     `initialize` and the first `tools/list` were answered, which servers the first list holds,
//     and when each later tools/list_changed came.
//  3. What a known-bad server costs afterwards: the next session's prompts/list, resources/list
//     and resources/templates/list; the time to give up a garbage-printing server; and `toolreg
//     prompts` once a failure memory has lapsed.
// Run on a quiet machine: node scripts/cargo.mjs build --example mcp_test_server && node bench/broken-server.bench.mjs [RUNS] [--only 0,3]
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { referenceServer, testServer, testServerPath } from '../__tests__/mcpServers.mjs'
import { createRequire } from 'node:module'
import { median } from './catalog.mjs'

const { buildMcpToolWireId } = createRequire(import.meta.url)('../index.js')

if (!existsSync(testServerPath)) {
  console.log('broken-server.bench: skipped — build the test server first: node scripts/cargo.mjs build --example mcp_test_server')
  process.exit(0)
}

const runs = Number(process.argv[2] ?? 5)
const only = process.argv.includes('--only') ? new Set(process.argv[process.argv.indexOf('--only') + 1].split(',')) : null
const sectionWanted = (n) => !only || only.has(String(n))
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

const onPath = (command) => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0
const python = onPath('uvx') && onPath('mcp-server-time')
/** A marker tool of each server, to tell which ones a tool list holds. */
const markers = { everything: 'get-sum', memory: 'read_graph', filesystem: 'list_directory', npxMemory: 'npxMemory', time: 'get_current_time', uvxTime: 'uvxTime', live: 'crash' }

/**
 * One session: spawn → initialize → first tools/list, then `watchMs` more for list_changed.
 * `{ initialized, listed, servers: [ids in the first list], changes: [ms of each list_changed], stderr }`.
 */
async function session(file, { cacheDir, npmCache, uvCache, extraArgs = [], watchMs = 0 }) {
  const started = performance.now()
  const client = new Client({ name: 'broken-server-bench', version: '1.0.0' })
  const changes = []
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => changes.push(performance.now() - started))
  const env = { ...process.env, TOOLREG_CACHE_DIR: cacheDir, npm_config_cache: npmCache, UV_CACHE_DIR: uvCache, NO_COLOR: '1' }
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'serve', '--config', file, '--context-window', '1000000', '--timeout', '30000', ...extraArgs], env, cwd: dir, stderr: 'pipe' })
  let stderr = ''
  transport.stderr.on('data', (d) => (stderr += d))
  await client.connect(transport)
  const initialized = performance.now() - started
  const { tools } = await client.listTools()
  const listed = performance.now() - started
  // Tools two servers share (npx memory and memory, uvx time and time) are listed by wire id.
  const names = tools.map((t) => t.name)
  const prefix = (id) => buildMcpToolWireId({ serverId: id, serverName: id, toolName: 'x' }).replace(/x(_[0-9a-f]+)?$/, '')
  const servers = Object.entries(markers).filter(([id, tool]) => names.includes(tool) || names.some((n) => n.startsWith(prefix(id)))).map(([id]) => id)
  if (watchMs) await new Promise((r) => setTimeout(r, watchMs))
  const result = { initialized, listed, servers, changes, stderr, client }
  return result
}

async function firstSessionBench() {
  const node = (kind) => stdio(referenceServer(kind))
  const mcpServers = {
    everything: node('everything'),
    memory: node('memory'),
    filesystem: node('filesystem'),
    npxMemory: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-memory'] },
    ...(python && { time: { command: 'mcp-server-time', args: [] }, uvxTime: { command: 'uvx', args: ['mcp-server-time'] } }),
    live: stdio(testServer('live')),
    hanging: stdio(testServer('hanging', ['--slow-start-ms', '600000'])),
    crashing,
    garbage: stdio(testServer('garbage', ['--malformed=only'])),
  }
  const file = configFile('first-session', mcpServers)
  console.log(`0. toolreg serve, the first session and the next, ${runs} runs each; ${Object.keys(mcpServers).length} servers${python ? '' : ' (no uvx or mcp-server-time on PATH: no Python server)'}:`)
  const table = { cold: [], warm: [] }
  for (let i = 0; i < runs; i++) {
    const caches = { cacheDir: fresh('cache-'), npmCache: fresh('npm-'), uvCache: fresh('uv-') }
    for (const kind of ['cold', 'warm']) {
      // Short sessions, shorter than the hanging server's 30 s timeout: the next one knows of
      // it only as a server that missed the start-up wait.
      const run = await session(file, { ...caches, watchMs: 12_000 })
      await run.client.close()
      table[kind].push(run)
    }
  }
  for (const [kind, rows] of Object.entries(table)) {
    const count = (id) => rows.filter((r) => r.servers.includes(id)).length
    console.log(`   ${kind.padEnd(5)} initialize ${range(rows.map((r) => r.initialized))}, first tools/list ${range(rows.map((r) => r.listed))}`)
    console.log(`         in the first list (of ${rows.length} runs): ${Object.keys(markers).filter((id) => id in mcpServers).map((id) => `${id} ${count(id)}`).join(', ')}`)
    console.log(`         tools/list_changed after it, ms from spawn: ${rows.map((r) => (r.changes.length ? r.changes.map((c) => c.toFixed(0)).join('+') : 'none')).join(' | ')}`)
  }
}

/** Milliseconds of `request()`. */
async function timed(request) {
  const started = performance.now()
  await request()
  return performance.now() - started
}

async function knownBadBench() {
  console.log(`3. what a known-bad server costs afterwards, ${runs} runs each:`)
  const file = configFile('known-bad', { everything: stdio(referenceServer('everything')), hanging: stdio(testServer('hanging', ['--slow-start-ms', '600000'])) })
  const rows = { prompts: [], resources: [], templates: [] }
  for (let i = 0; i < runs; i++) {
    const caches = { cacheDir: fresh('cache-'), npmCache: fresh('npm-'), uvCache: fresh('uv-') }
    // The first session learns of the hang (a 3 s timeout here), the next one is measured.
    const first = await session(file, { ...caches, extraArgs: ['--timeout', '3000'], watchMs: 4000 })
    await first.client.close()
    const next = await session(file, caches)
    rows.prompts.push(await timed(() => next.client.listPrompts()))
    rows.resources.push(await timed(() => next.client.listResources()))
    rows.templates.push(await timed(() => next.client.listResourceTemplates()))
    await next.client.close()
  }
  for (const [what, ms] of Object.entries(rows)) console.log(`   next session, ${what} list (everything starts; hanging remembered): ${range(ms)}`)

  const garbage = configFile('garbage', { garbage: stdio(testServer('garbage', ['--malformed=only'])) })
  const gaveUp = []
  for (let i = 0; i < runs; i++) {
    const run = await session(garbage, { cacheDir: fresh('cache-'), npmCache: fresh('npm-'), uvCache: fresh('uv-'), extraArgs: ['--startup-wait', '30000'] })
    // initialize waits for it up to 15 s: it is answered when the server is given up.
    gaveUp.push(run.initialized)
    await run.client.close()
  }
  console.log(`   a garbage-printing server (--timeout 30000, --startup-wait 30000), spawn to initialize, i.e. to giving it up: ${range(gaveUp)}`)

  const cli = configFile('cli-lapsed', { everything: stdio(referenceServer('everything')), hanging: stdio(testServer('hanging', ['--slow-start-ms', '600000'])) })
  const lapsed = []
  for (let i = 0; i < runs; i++) {
    const env = { ...process.env, TOOLREG_CACHE_DIR: fresh('cache-'), NO_COLOR: '1' }
    cliOnce(['prompts', '--config', cli, '--timeout', '3000'], env)
    const folder = join(env.TOOLREG_CACHE_DIR, 'tools-list')
    const failed = readdirSync(folder).find((f) => f.endsWith('.failed.json'))
    const memory = JSON.parse(readFileSync(join(folder, failed), 'utf8'))
    writeFileSync(join(folder, failed), JSON.stringify({ ...memory, savedAt: Date.now() - 11 * 60_000 }))
    lapsed.push(cliOnce(['prompts', '--config', cli, '--timeout', '30000'], env).ms)
  }
  console.log(`   toolreg prompts once the memory lapsed (11 min), --timeout 30000: ${range(lapsed)} (the hanging server is tried by a detached process)`)
}

if (sectionWanted(0)) await firstSessionBench()
if (sectionWanted(1)) await serveBench()
if (sectionWanted(2)) cliBench()
if (sectionWanted(3)) await knownBadBench()
