#!/usr/bin/env node
// Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
// lanes/conformance) against toolreg, with lanes/conformance/expected-failures.yml as the
// baseline:
// - client scenarios against McpHub (scripts/conformance-client.mjs), one at a time (scenarios
//   under the baseline's `not-run` key are reported and skipped), one line per scenario;
// - server scenarios, every one the suite has (`--suite all`), against `toolreg serve --http
//   --no-auth` fronting our rmcp test server in its conformance mode (the tools the scenarios
//   call), with the suite's own summary lines.
// The suite needs Node >= 22, which scripts/ensure-node22.mjs provides from the npm registry;
// toolreg runs on this Node. Exits 1 if any scenario failed unexpectedly or passed although the
// baseline expects it to fail. `--client` or `--server` runs one side only.
//
//   npm run conformance            (npm test runs it too: __tests__/conformance.test.mjs)
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureLaneDeps, ensureNode22 } from './ensure-node22.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const lane = path.join(root, 'lanes', 'conformance')
const baseline = path.join(lane, 'expected-failures.yml')

let node22
try {
  node22 = ensureNode22()
} catch (error) {
  console.log(`conformance: skipped, no Node 22 here (${error.message})`)
  process.exit(0)
}
ensureLaneDeps(lane)
const suitePath = path.join(lane, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js')
const conformance = (args) => spawnSync(node22, [suitePath, ...args], { cwd: lane, encoding: 'utf8', timeout: 120_000 })

/** The `  - name` entries under a top-level key of the baseline file. */
function listed(key) {
  const names = []
  let inside = false
  for (const line of readFileSync(baseline, 'utf8').split('\n')) {
    if (/^\S/.test(line)) inside = line.startsWith(`${key}:`)
    else if (inside && /^\s+- /.test(line)) names.push(line.replace(/^\s+- /, '').trim())
  }
  return names
}

const sides = process.argv.includes('--client') ? ['client'] : process.argv.includes('--server') ? ['server'] : ['client', 'server']
const output = mkdtempSync(path.join(tmpdir(), 'toolreg-conformance-'))
let failed = false
try {
  if (sides.includes('client')) failed = runClientScenarios() || failed
  if (sides.includes('server')) failed = (await runServerScenarios()) || failed
} finally {
  rmSync(output, { recursive: true, force: true })
}
process.exit(failed ? 1 : 0)

/** Each client scenario against McpHub; true when one failed against the baseline. */
function runClientScenarios() {
  const listing = conformance(['list']).stdout
  const scenarios = [...listing.slice(listing.indexOf('Client scenarios')).matchAll(/^\s+- (\S+)/gm)].map((m) => m[1])
  const expected = new Set(listed('client'))
  const notRun = new Set(listed('not-run'))
  const client = `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(root, 'scripts', 'conformance-client.mjs'))}`
  const tally = { passed: 0, expected: 0, failed: 0 }
  console.log('Client scenarios (McpHub):')
  for (const scenario of scenarios) {
    if (notRun.has(scenario)) {
      console.log(`- ${scenario}: not run (see the baseline's not-run entry)`)
      continue
    }
    const run = conformance(['client', '--command', client, '--scenario', scenario, '--expected-failures', baseline, '--output-dir', output])
    // The suite prints its results on stderr, after the client's own output (which may hold the
    // scenario's test credentials): only the part from "Test Results" on is shown.
    const results = run.stderr.slice(Math.max(0, run.stderr.lastIndexOf('Test Results')))
    const counts = /Passed: (\d+)\/(\d+)/.exec(results)
    const outcome = run.status !== 0 ? 'failed' : expected.has(scenario) ? 'expected' : 'passed'
    tally[outcome]++
    const mark = { passed: '✓', expected: '~', failed: '✗' }[outcome]
    console.log(`${mark} ${scenario}: ${counts ? `${counts[1]}/${counts[2]} checks passed` : 'no result'}${outcome === 'expected' ? ' (expected failure)' : ''}`)
    if (outcome === 'failed') console.log(results.trim())
  }
  console.log(`${tally.passed} passed, ${tally.failed} failed, ${tally.expected} expected failures, ${notRun.size} not run`)
  return tally.failed > 0
}

/**
 * Every server scenario against `toolreg serve` fronting the rmcp test server's conformance
 * tools; prints the suite's summary (one line per scenario, its total, the baseline check).
 */
async function runServerScenarios() {
  const config = path.join(output, 'servers.json')
  writeFileSync(config, JSON.stringify({ mcpServers: { conformance: { command: testServerBinary(), args: ['--conformance'] } } }))
  const env = { ...process.env, TOOLREG_CACHE_DIR: path.join(output, 'cache'), TOOLREG_CONFIG_DIR: path.join(output, 'config') }
  const gateway = spawn(process.execPath, [path.join(root, 'bin', 'toolreg.mjs'), 'serve', '--http', '0', '--no-auth', '--config', config], { env, stdio: ['ignore', 'ignore', 'pipe'] })
  try {
    const url = await new Promise((resolve, reject) => {
      let stderr = ''
      gateway.stderr.on('data', (chunk) => {
        stderr += chunk
        const served = /serving MCP at (\S+)/.exec(stderr)
        if (served) resolve(served[1])
      })
      gateway.once('exit', (code) => reject(new Error(`toolreg serve exited with ${code} before serving:\n${stderr}`)))
    })
    const run = await new Promise((resolve) => {
      const suite = spawn(node22, [suitePath, 'server', '--url', url, '--suite', 'all', '--expected-failures', baseline, '--output-dir', output], { cwd: lane })
      let text = ''
      suite.stdout.on('data', (chunk) => (text += chunk))
      suite.stderr.on('data', (chunk) => (text += chunk))
      suite.once('exit', (status) => resolve({ status, text }))
    })
    // The suite's own summary: from its SUMMARY line on, without colour codes.
    const plain = run.text.replace(/\x1b\[[0-9;]*m/g, '')
    console.log(`Server scenarios (toolreg serve --http in front of the conformance test server):`)
    console.log(plain.slice(Math.max(0, plain.lastIndexOf('=== SUMMARY ==='))).trim())
    return run.status !== 0
  } finally {
    gateway.kill('SIGTERM')
  }
}

/** Our rmcp test server (examples/mcp_test_server), built when it is not there yet. */
function testServerBinary() {
  const host = /^host: (.+)$/m.exec(execFileSync('rustc', ['-vV'], { encoding: 'utf8' }))[1]
  const binary = path.join(root, 'target', host, 'debug', 'examples', 'mcp_test_server')
  if (!existsSync(binary)) {
    execFileSync(process.execPath, [path.join(root, 'scripts', 'cargo.mjs'), 'build', '--example', 'mcp_test_server'], { stdio: 'inherit' })
  }
  return binary
}
