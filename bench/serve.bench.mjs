// `toolreg serve` measured from a real MCP client (the official TypeScript SDK's) over stdio:
//  1. Tokens a client sees at start (tools/list definitions + instructions, o200k_base), with
//     and without the gateway, on the CLI's default catalog (the committed excerpt, or the 11k
//     shared catalog when ../shared/data is there) served from the tools/list cache: every
//     catalog server is a config entry whose listing is cached, so nothing starts.
//  2. Overhead per forwarded call: echo on our rmcp test server through the gateway against the
//     same server called directly, p50/p90.
//  3. Cold start to the first tools/list answer for 5 reference servers: warm cache (nothing
//     starts) against an empty cache (every server starts and lists).
// Run on a quiet machine: npm run build && node scripts/cargo.mjs build --example mcp_test_server && node bench/serve.bench.mjs
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { defaultCatalog } from '../cli/catalog.mjs'
import { percentile } from './catalog.mjs'
import { referenceServer, testServer, testServerPath } from '../__tests__/mcpServers.mjs'

const require = createRequire(import.meta.url)
const { countTokens } = require('../index.js')
const bin = new URL('../bin/toolreg.mjs', import.meta.url).pathname
const num = (n) => n.toLocaleString('en-US')
/** `SERVE_BENCH_PARTS=1,3` runs only those parts. */
const parts = new Set((process.env.SERVE_BENCH_PARTS ?? '1,2,3').split(',').map(Number))

async function connect(command, args, env) {
  const client = new Client({ name: 'serve-bench', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command, args, env: { ...process.env, ...env }, stderr: 'ignore' }))
  return client
}

/** What a client puts in its context for these tools and instructions. */
const tokensOf = (tools, instructions = '') =>
  tools.reduce((sum, t) => sum + countTokens(JSON.stringify({ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema })), 0) + (instructions ? countTokens(instructions) : 0)

/** A config of pseudo servers whose listings sit in a fresh tools/list cache. */
async function cachedCatalogConfig(cacheDir) {
  const { writeCachedTools } = await import('../cli/cache.mjs')
  const { tools, label } = defaultCatalog()
  const byServer = new Map()
  for (const t of tools) {
    const server = String(t.server ?? t.serverName ?? 'catalog').replace(/[^\w.-]+/g, '-').slice(0, 40) || 'catalog'
    if (!byServer.has(server)) byServer.set(server, [])
    byServer.get(server).push({ name: t.name, description: t.description ?? '', inputSchema: t.inputSchema ?? t.input_schema ?? { type: 'object' } })
  }
  const mcpServers = {}
  const previous = process.env.TOOLREG_CACHE_DIR
  process.env.TOOLREG_CACHE_DIR = cacheDir
  for (const [id, listed] of byServer) {
    const config = { id, name: id, type: 'stdio', command: `/nonexistent/${id}`, args: [], env: {} }
    mcpServers[id] = { command: config.command, args: [] }
    const seen = new Set()
    writeCachedTools(config, listed.filter((t) => !seen.has(t.name) && seen.add(t.name)))
  }
  process.env.TOOLREG_CACHE_DIR = previous
  const file = join(cacheDir, 'catalog.json')
  writeFileSync(file, JSON.stringify({ mcpServers }))
  return { file, label, servers: byServer.size, tools: [...byServer.values()].flat() }
}

// 1. Tokens at start.
if (parts.has(1)) {
  const cacheDir = mkdtempSync(join(tmpdir(), 'toolreg-serve-bench-'))
  const catalog = await cachedCatalogConfig(cacheDir)
  console.log(`1. Tokens a client sees at start: ${catalog.label}, ${num(catalog.tools.length)} tools on ${num(catalog.servers)} servers (o200k_base)`)
  const without = tokensOf(catalog.tools)
  console.log(`   without the gateway (every definition): ${num(without)}`)
  for (const window of [32_000, 200_000]) {
    const started = performance.now()
    const client = await connect(process.execPath, [bin, 'serve', '--config', catalog.file, '--context-window', String(window)], { TOOLREG_CACHE_DIR: cacheDir })
    const { tools } = await client.listTools()
    const ms = performance.now() - started
    const seen = tokensOf(tools, client.getInstructions())
    console.log(`   through toolreg serve, --context-window ${num(window)}: ${num(seen)} (${tools.length} tools listed; ${(without / seen).toFixed(0)}x fewer; first tools/list after ${ms.toFixed(0)} ms)`)
    await client.close()
  }
}

// 2. Per-call overhead.
if (parts.has(2)) {
  const dir = mkdtempSync(join(tmpdir(), 'toolreg-serve-bench-'))
  const server = testServer('t')
  const config = join(dir, 'one.json')
  writeFileSync(config, JSON.stringify({ mcpServers: { t: { command: server.command, args: server.args } } }))
  const direct = await connect(testServerPath, server.args, {})
  const gateway = await connect(process.execPath, [bin, 'serve', '--config', config], { TOOLREG_CACHE_DIR: dir })
  // SERVE_BENCH_BASELINE=<another checkout>/bin/toolreg.mjs: that build's gateway too, in the
  // same rounds, for a before/after on the same machine state.
  const baselineBin = process.env.SERVE_BENCH_BASELINE
  const baseline = baselineBin && (await connect(process.execPath, [baselineBin, 'serve', '--config', config], { TOOLREG_CACHE_DIR: mkdtempSync(join(tmpdir(), 'toolreg-serve-bench-')) }))
  const time = async (client, n) => {
    const ms = []
    for (let i = 0; i < n; i++) {
      const t0 = performance.now()
      await client.callTool({ name: 'echo', arguments: { text: `call ${i}` } })
      ms.push(performance.now() - t0)
    }
    return ms
  }
  await time(direct, 50)
  await time(gateway, 50)
  if (baseline) await time(baseline, 50)
  const rounds = { direct: [], gateway: [], baseline: [] }
  for (let r = 0; r < 4; r++) {
    rounds.direct.push(...(await time(direct, 250)))
    rounds.gateway.push(...(await time(gateway, 250)))
    if (baseline) rounds.baseline.push(...(await time(baseline, 250)))
  }
  const row = (ms) => `p50 ${percentile(ms, 0.5).toFixed(3)} ms, p90 ${percentile(ms, 0.9).toFixed(3)} ms`
  console.log('2. One echo call from the SDK client over stdio, 1,000 calls each, interleaved in 4 rounds')
  console.log(`   directly to the server: ${row(rounds.direct)}`)
  const over = (ms) => `(+${(percentile(ms, 0.5) - percentile(rounds.direct, 0.5)).toFixed(3)} ms at p50, ${(percentile(ms, 0.5) / percentile(rounds.direct, 0.5)).toFixed(1)}x)`
  console.log(`   through toolreg serve:  ${row(rounds.gateway)} ${over(rounds.gateway)}`)
  if (baseline) console.log(`   through ${baselineBin}: ${row(rounds.baseline)} ${over(rounds.baseline)}`)
  await direct.close()
  await gateway.close()
  if (baseline) await baseline.close()
}

// 3. Cold start with a warm cache against starting every server.
if (parts.has(3)) {
  const dir = mkdtempSync(join(tmpdir(), 'toolreg-serve-bench-'))
  const servers = Array.from({ length: 5 }, (_, i) => referenceServer('everything', `everything${i}`))
  const config = join(dir, 'five.json')
  writeFileSync(config, JSON.stringify({ mcpServers: Object.fromEntries(servers.map((s) => [s.id, { command: s.command, args: s.args }])) }))
  const firstList = async (cacheDir) => {
    const t0 = performance.now()
    const client = await connect(process.execPath, [bin, 'serve', '--config', config], { TOOLREG_CACHE_DIR: cacheDir })
    await client.listTools()
    const ms = performance.now() - t0
    await client.close()
    return ms
  }
  const cold = []
  const warm = []
  for (let r = 0; r < 3; r++) {
    const empty = mkdtempSync(join(dir, 'cache-'))
    cold.push(await firstList(empty))
    warm.push(await firstList(empty))
  }
  console.log('3. From spawning toolreg serve to the first tools/list answer, 5 × server-everything, 3 runs each')
  console.log(`   empty cache (every server starts and lists): ${cold.map((ms) => ms.toFixed(0)).join(' / ')} ms`)
  console.log(`   warm cache (nothing starts):                 ${warm.map((ms) => ms.toFixed(0)).join(' / ')} ms`)
}
