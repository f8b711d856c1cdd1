// MCP sync and connection benchmarks, with real servers over stdio:
//  1. 20 configured servers (our rmcp test server), a selection on one of them: tools/list
//     requests counted by the servers themselves, on a cold and on a warm cache.
//  2. Warm sync of 500 selected tools (one server listing 500): p50 over many syncs.
//  3. Cold start of 10 stdio servers (@modelcontextprotocol/server-everything from npm):
//     parallel (what the sync does) against one after another.
//  4. tool_exec runs making 3 MCP calls: straight through the hub in Rust against the JS path
//     (the same tool behind a host wrapper), with the JS thread idle and with it kept busy.
// Run: npm run build && node scripts/cargo.mjs build --example mcp_test_server && node bench/mcp.bench.mjs
import { performance } from 'node:perf_hooks'
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { referenceServer, testServer, testServerPath } from '../__tests__/mcpServers.mjs'
import { median, percentile } from './catalog.mjs'

const require = createRequire(import.meta.url)
const { McpHub, ToolRegistry, buildMcpToolWireId, createToolExecTool, syncMcpToolsToRegistry } = require('../index.js')

if (!existsSync(testServerPath)) {
  console.log(`mcp.bench: skipped — build the test server first: node scripts/cargo.mjs build --example mcp_test_server`)
  process.exit(0)
}

const listCount = async (hub, id) => Number((await hub.callTool(id, 'list_count', {})).content[0].text)
const fmt = (ms) => (ms >= 1 ? `${ms.toFixed(2)} ms` : `${(ms * 1000).toFixed(0)} µs`)

// 1. Scoped sync over 20 servers.
{
  const servers = Array.from({ length: 20 }, (_, i) => testServer(`srv${i}`, ['--tools', '25'], `Server ${i}`))
  const hub = new McpHub({ servers })
  const registry = new ToolRegistry()
  const selected = Array.from({ length: 25 }, (_, i) => buildMcpToolWireId({ serverId: 'srv7', serverName: 'Server 7', toolName: `gen_${String(i).padStart(5, '0')}` }))
  const cold = await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: selected })
  const afterCold = await listCount(hub, 'srv7')
  const warm = await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: selected })
  const afterWarm = await listCount(hub, 'srv7')
  const started = hub.status().filter((s) => s.state !== 'idle').map((s) => s.id)
  console.log('1. 20 configured servers, 25 tools selected on one')
  console.log(`   cold sync: listed ${JSON.stringify(cold.listedServers)}, tools/list requests on srv7: ${afterCold}, servers ever started: ${JSON.stringify(started)}`)
  console.log(`   warm sync: listed ${JSON.stringify(warm.listedServers)} from cache, further tools/list requests: ${afterWarm - afterCold}; registered ${warm.registered.length}`)
  await hub.close()
}

// 2. Warm sync of 500 selected tools.
{
  const hub = new McpHub({ servers: [testServer('big', ['--tools', '500', '--page-size', '100'], 'Big')] })
  const registry = new ToolRegistry()
  const selected = Array.from({ length: 500 }, (_, i) => buildMcpToolWireId({ serverId: 'big', serverName: 'Big', toolName: `gen_${String(i).padStart(5, '0')}` }))
  let t0 = performance.now()
  await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: selected })
  const coldMs = performance.now() - t0
  for (let i = 0; i < 50; i++) await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: selected })
  const times = []
  for (let i = 0; i < 500; i++) {
    t0 = performance.now()
    await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: selected })
    times.push(performance.now() - t0)
  }
  console.log('\n2. Sync of 500 selected tools (one server, 5 pages of 100)')
  console.log(`   cold (spawn + initialize + list + register): ${fmt(coldMs)}`)
  console.log(`   warm: p50 ${fmt(median(times))}, p90 ${fmt(percentile(times, 0.9))}, p99 ${fmt(percentile(times, 0.99))} (${registry.size} entries)`)
  await hub.close()
}

// 3. Cold start of 10 stdio servers, one after another against all at once (what the sync
// does). Two server kinds: ours with a 300 ms start-up sleep (start-up waits on I/O, as for
// servers that open connections), and server-everything from npm (start-up is Node's own CPU
// work, so ten of them compete for the machine's two cores).
async function coldStart(label, configs) {
  const sequentialHub = new McpHub({ servers: configs('seq') })
  let t0 = performance.now()
  const single = []
  for (const { id } of sequentialHub.servers) {
    const s0 = performance.now()
    await sequentialHub.listTools(id)
    single.push(performance.now() - s0)
  }
  const sequentialMs = performance.now() - t0
  await sequentialHub.close()
  const parallelHub = new McpHub({ servers: configs('par') })
  t0 = performance.now()
  await Promise.all(parallelHub.servers.map(({ id }) => parallelHub.listTools(id)))
  const parallelMs = performance.now() - t0
  await parallelHub.close()
  const slowest = Math.max(...single)
  console.log(`   ${label}: slowest single ${fmt(slowest)}; sequential ${fmt(sequentialMs)}; parallel ${fmt(parallelMs)} = ${(parallelMs / slowest).toFixed(2)}× the slowest single, ${(sequentialMs / parallelMs).toFixed(2)}× faster than sequential`)
}
console.log('\n3. Cold start (spawn + initialize + tools/list) of 10 stdio servers')
await coldStart('rmcp test server, 300 ms start-up', (prefix) => Array.from({ length: 10 }, (_, i) => testServer(`${prefix}${i}`, ['--slow-start-ms', '300'])))
await coldStart('server-everything (npm)', (prefix) => Array.from({ length: 10 }, (_, i) => referenceServer('everything', `${prefix}${i}`)))

// 4. tool_exec and MCP calls. The wrapper does nothing but call the hub's own execute; it only
// takes the calls to the JS thread, as any host wrapper would.
{
  const hub = new McpHub({ servers: [testServer('ex')] })
  const registry = new ToolRegistry()
  const echoId = buildMcpToolWireId({ serverId: 'ex', serverName: 'ex', toolName: 'echo' })
  await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: [echoId] })
  const direct = createToolExecTool(registry, { allowedNames: [echoId], poolSize: 1 })
  const entry = registry.getByName(echoId)
  const hubExecute = entry.tool.execute
  entry.tool.execute = (input, options) => hubExecute(input, options)
  const viaJs = createToolExecTool(registry, { allowedNames: [echoId], poolSize: 1 })
  const code = `for (let i = 0; i < 3; i++) await tools[${JSON.stringify(echoId)}]({ text: 'x' }); return 1`
  const RUNS = 400
  async function runs(execTool) {
    const times = []
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now()
      const output = await execTool.execute({ code }, { toolCallId: `b${i}` })
      if (output.result !== 1) throw new Error(`bench run failed: ${JSON.stringify(output)}`)
      times.push(performance.now() - t0)
    }
    return times
  }
  const row = (label, times) => `   ${label}: p50 ${fmt(median(times))}, p90 ${fmt(percentile(times, 0.9))}`
  console.log(`\n4. tool_exec runs of 3 sequential MCP calls (rmcp echo), ${RUNS} runs per row, in 2 alternating rounds`)
  for (const busy of [false, true]) {
    // A busy main process: a timer that keeps the JS thread working 4 ms out of every ~5.
    const timer = busy
      ? setInterval(() => {
          const until = performance.now() + 4
          while (performance.now() < until) {
            // busy
          }
        }, 1)
      : undefined
    const times = { direct: [], js: [] }
    for (let round = 0; round < 2; round++) {
      times.direct.push(...(await runs(direct)))
      times.js.push(...(await runs(viaJs)))
    }
    clearInterval(timer)
    const ratio = median(times.js) / median(times.direct)
    console.log(`   JS thread ${busy ? 'busy 4 ms of every ~5' : 'idle'}:`)
    console.log(row('straight through the hub (Rust)', times.direct))
    console.log(`${row('JS path (wrapped execute)      ', times.js)}  → direct is ${ratio.toFixed(2)}× faster (p50)`)
  }
  await hub.close()
}
