#!/usr/bin/env node
// Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
// lanes/conformance) against toolreg: the frozen requirement set of each MCP revision the suite
// publishes (`list --requirements <rev>`), each scenario at its revision's wire, ONE scenario at a
// time (the suite's own parallel run overloads a small machine):
// - client scenarios against McpHub (scripts/conformance-client.mjs);
// - server scenarios against `toolreg serve --http --no-auth` fronting our rmcp test server in
//   its conformance mode (the tools, prompts and resources the scenarios use).
// The baseline is one file per revision, lanes/conformance/expected-failures-<rev>.yml, with a
// `client:` and a `server:` list; every entry carries its reason (a comment on its line or the
// comment block above it). A required scenario fails the run when it fails and is not listed, or
// passes although listed (a stale entry). The scenarios the suite runs but never scores
// (extensions, pending ones, ones added after the revision froze) are run and reported, and
// never fail the run. Entries under `not-run:` are reported and skipped (non-deterministic ones).
// The suite needs Node >= 22, which scripts/ensure-node22.mjs provides from the npm registry;
// toolreg runs on this Node. Exits 1 on any unexpected outcome.
//
//   npm run conformance [-- --client | --server] [--revision 2025-11-25] [--scenario name]
//                       [--required-only]   (skips the unscored scenarios)
//   (npm test runs the required scenarios: __tests__/conformance.test.mjs)
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureLaneDeps, ensureNode22 } from './ensure-node22.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const lane = path.join(root, 'lanes', 'conformance')
/** The revisions whose frozen requirement sets are run, oldest first. */
const REVISIONS = ['2025-11-25', '2026-07-28']

const argv = process.argv.slice(2)
/** The value after a `--name` flag, or undefined. */
const option = (name) => {
  const at = argv.indexOf(name)
  return at >= 0 ? argv[at + 1] : undefined
}
const sides = argv.includes('--client') ? ['client'] : argv.includes('--server') ? ['server'] : ['client', 'server']
const revisionFilter = option('--revision')
if (revisionFilter && !REVISIONS.includes(revisionFilter)) {
  console.error(`conformance: unknown --revision ${revisionFilter}; the suite's requirement sets are ${REVISIONS.join(', ')}`)
  process.exit(2)
}
const revisions = revisionFilter ? [revisionFilter] : REVISIONS
const only = option('--scenario')
const requiredOnly = argv.includes('--required-only')

let node22
try {
  node22 = ensureNode22()
} catch (error) {
  console.log(`conformance: skipped, no Node 22 here (${error.message})`)
  process.exit(0)
}
ensureLaneDeps(lane)
// A lane installed before the pin moved keeps the old suite: reinstall it at the pinned version.
const pinned = JSON.parse(readFileSync(path.join(lane, 'package.json'), 'utf8')).dependencies['@modelcontextprotocol/conformance']
const installedManifest = path.join(lane, 'node_modules', '@modelcontextprotocol', 'conformance', 'package.json')
if (!existsSync(installedManifest) || JSON.parse(readFileSync(installedManifest, 'utf8')).version !== pinned) {
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: lane, stdio: ['ignore', 'ignore', 'inherit'], shell: process.platform === 'win32' })
}
const suitePath = path.join(lane, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js')

/** Runs the suite with these arguments; resolves to its exit status and merged, uncoloured output. */
function suite(args) {
  return new Promise((resolve) => {
    const child = spawn(node22, [suitePath, ...args], { cwd: lane })
    let text = ''
    child.stdout.on('data', (chunk) => (text += chunk))
    child.stderr.on('data', (chunk) => (text += chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000)
    child.once('close', (status) => {
      clearTimeout(timer)
      resolve({ status, text: text.replace(/\x1b\[[0-9;]*m/g, '') })
    })
  })
}

/**
 * The revision's frozen requirement set for one side: the required scenarios, and the ones run
 * but never scored with their category (`extension`, `pending`, `added-after-release`).
 */
async function requirements(revision, side) {
  const { text } = await suite(['list', '--requirements', revision])
  const heading = side === 'client' ? 'Client scenarios' : 'Server scenarios'
  const section = text.slice(text.indexOf(heading))
  const required = []
  for (const line of section.split('\n').slice(1)) {
    const entry = /^\s+- (\S+)$/.exec(line)
    if (entry) required.push(entry[1])
    else if (line.trim() !== '') break
  }
  const unscored = []
  let category = null
  for (const line of text.slice(text.indexOf('never scored')).split('\n')) {
    const group = /^\s+([\w-]+) \(\d+\):$/.exec(line)
    if (group) category = group[1]
    const entry = /^\s+- (\S+) \[(client|server)\]$/.exec(line)
    if (entry && entry[2] === side) unscored.push({ scenario: entry[1], category })
  }
  if (required.length === 0) throw new Error(`conformance: the suite lists no ${side} scenarios for ${revision}:\n${text}`)
  return { required, unscored }
}

/**
 * A baseline file's lists: `{ client: Map(name → reason), server: …, 'not-run': … }`. An entry's
 * reason is its line's comment, else the comment block above it; an entry without one is an error.
 */
function readBaseline(file) {
  const lists = { client: new Map(), server: new Map(), 'not-run': new Map() }
  let key = null
  let block = []
  for (const [index, line] of readFileSync(file, 'utf8').split('\n').entries()) {
    if (/^\S/.test(line) && !line.startsWith('#')) {
      key = line.replace(/:.*$/, '')
      block = []
    } else if (/^\s*#/.test(line)) {
      block.push(line.replace(/^\s*#\s?/, ''))
    } else if (/^\s+- /.test(line)) {
      const [, name, comment] = /^\s+- (\S+)\s*(?:#\s*(.*))?$/.exec(line)
      const reason = comment || block.join(' ').trim()
      if (!reason) throw new Error(`${path.relative(root, file)}:${index + 1}: ${name} has no reason`)
      if (!lists[key]) throw new Error(`${path.relative(root, file)}:${index + 1}: unknown key ${key}`)
      lists[key].set(name, reason)
    } else if (line.trim() === '') {
      block = []
    }
  }
  return lists
}

/** One scenario's outcome: whether it passed and its "a/b checks passed" counts. */
async function runScenario(side, scenario, revision, target) {
  const args =
    side === 'client'
      ? ['client', '--command', target, '--scenario', scenario, '--spec-version', revision]
      : ['server', '--url', target, '--scenario', scenario, '--spec-version', revision]
  let run = await suite(args)
  // An unscored scenario may be filed under a later revision; it is still worth reporting.
  if (/not applicable/i.test(run.text) && !/Test Results/.test(run.text)) run = await suite([...args, '--force'])
  // The suite prints its results after the client's own output (which may hold the scenario's
  // test credentials): only the part from "Test Results" on is kept.
  const results = run.text.slice(Math.max(0, run.text.lastIndexOf('Test Results')))
  const counts = /Passed: (\d+)\/(\d+)/.exec(results)
  const failedChecks = counts && /(\d+) failed/.exec(results)
  // A run with no checks at all (a scenario that found nothing to test) is no pass.
  const passed = run.status === 0 && counts !== null && counts[2] !== "0" && (!failedChecks || failedChecks[1] === "0")
  return { passed, counts: counts ? `${counts[1]}/${counts[2]} checks passed` : 'no result', results: results.trim() }
}

/** One side at one revision; resolves to true when an outcome was unexpected. */
async function runSide(side, revision, target) {
  const { required, unscored } = await requirements(revision, side)
  const baselineFile = path.join(lane, `expected-failures-${revision}.yml`)
  const baseline = readBaseline(baselineFile)
  const expected = baseline[side]
  const notRun = baseline['not-run']
  const unknown = [...expected.keys()].filter((name) => !required.includes(name))
  const tally = { passed: 0, expected: 0, failed: 0, stale: 0, notRun: 0 }
  console.log(`\n${side === 'client' ? 'Client scenarios (McpHub)' : 'Server scenarios (toolreg serve --http)'}, ${revision}:`)
  for (const scenario of required) {
    if (only && scenario !== only) continue
    if (notRun.has(scenario)) {
      tally.notRun++
      console.log(`- ${scenario}: not run (${notRun.get(scenario)})`)
      continue
    }
    const result = await runScenario(side, scenario, revision, target)
    const listedAsFailing = expected.has(scenario)
    const outcome = result.passed ? (listedAsFailing ? 'stale' : 'passed') : listedAsFailing ? 'expected' : 'failed'
    tally[outcome]++
    const mark = { passed: '✓', expected: '~', failed: '✗', stale: '!' }[outcome]
    const note = { passed: '', expected: ' (expected failure)', failed: '', stale: ' but the baseline lists it as failing: remove the entry' }[outcome]
    console.log(`${mark} ${scenario}: ${result.counts}${note}`)
    if (outcome === 'failed') console.log(result.results.replace(/^/gm, '    '))
  }
  let unscoredPassed = 0
  for (const { scenario, category } of requiredOnly ? [] : unscored) {
    if (only && scenario !== only) continue
    const result = await runScenario(side, scenario, revision, target)
    if (result.passed) unscoredPassed++
    console.log(`${result.passed ? '+' : '·'} ${scenario} [${category}, not scored]: ${result.counts}`)
  }
  const total = required.length
  console.log(
    `${side} ${revision}: ${tally.passed}/${total} required passed, ${tally.failed} failed, ${tally.expected} expected failures, ` +
      `${tally.stale} stale, ${tally.notRun} not run` +
      (requiredOnly ? '' : `; unscored ${unscoredPassed}/${unscored.length} passed`),
  )
  for (const name of unknown) console.log(`! ${name}: listed in ${path.basename(baselineFile)} but not required at ${revision}`)
  return tally.failed > 0 || tally.stale > 0 || unknown.length > 0
}

const output = mkdtempSync(path.join(tmpdir(), 'toolreg-conformance-'))
let failed = false
try {
  if (sides.includes('client')) {
    const client = `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(root, 'scripts', 'conformance-client.mjs'))}`
    for (const revision of revisions) failed = (await runSide('client', revision, client)) || failed
  }
  if (sides.includes('server')) {
    const gateway = await startGateway()
    try {
      for (const revision of revisions) failed = (await runSide('server', revision, gateway.url)) || failed
    } finally {
      gateway.process.kill('SIGTERM')
    }
  }
} finally {
  rmSync(output, { recursive: true, force: true })
}
process.exit(failed ? 1 : 0)

/** `toolreg serve --http --no-auth` in front of the rmcp test server's conformance mode. */
async function startGateway() {
  const config = path.join(output, 'servers.json')
  // Pinned to the handshake lifecycle: the test server's sampling, elicitation and subscription
  // tools ask and notify the 2025-11-25 way, within a session; at 2026-07-28 the hub would
  // reach it statelessly and those requests would have nowhere to go.
  // The input-required-result scenarios' tools and prompt are another server's, of 2026-07-28:
  // they ask with input_required results under the keys the scenarios give, which the gateway
  // relays to 2026-07-28 clients (and answers through its 2025-11-25 clients' sessions).
  const binary = testServerBinary()
  writeFileSync(config, JSON.stringify({ mcpServers: {
    conformance: { command: binary, args: ['--conformance'], protocolVersion: '2025-11-25' },
    'conformance-mrtr': { command: binary, args: ['--conformance-mrtr'], protocolVersion: '2026-07-28' },
  } }))
  const env = { ...process.env, TOOLREG_CACHE_DIR: path.join(output, 'cache'), TOOLREG_CONFIG_DIR: path.join(output, 'config') }
  const child = spawn(process.execPath, [path.join(root, 'bin', 'toolreg.mjs'), 'serve', '--http', '0', '--no-auth', '--config', config], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  const url = await new Promise((resolve, reject) => {
    let stderr = ''
    child.stderr.on('data', (chunk) => {
      stderr += chunk
      const served = /serving MCP at (\S+)/.exec(stderr)
      if (served) resolve(served[1])
    })
    child.once('exit', (code) => reject(new Error(`toolreg serve exited with ${code} before serving:\n${stderr}`)))
  })
  // Keep draining its stderr so a chatty gateway never blocks on a full pipe.
  child.stderr.resume()
  return { process: child, url }
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
