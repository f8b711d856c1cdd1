// The pieces of a conformance run that more than one script needs: the official suite
// (@modelcontextprotocol/conformance, pinned in lanes/conformance) on Node 22, its frozen
// requirement sets, the baseline files, one scenario at a time, one side at one revision judged
// against its baseline, and `toolreg serve --http` fronting our rmcp test server's conformance
// mode. scripts/conformance.mjs runs them against one gateway; scripts/scale-out.mjs against two
// replicas behind nginx, judged the same way.
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureLaneDeps, ensureNode22 } from './ensure-node22.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
export const lane = path.join(root, 'lanes', 'conformance')
/** The revisions whose frozen requirement sets are run, oldest first. */
export const REVISIONS = ['2025-11-25', '2026-07-28']

let node22 = null
let suitePath = null

/**
 * Makes the suite runnable: Node 22 (from the npm registry when this Node is another) and the
 * lane installed at its pinned version. Throws with `code` NO_NODE22 when no Node 22 can be had
 * (callers skip the run then), with any other error when the lane cannot be installed.
 */
/**
 * The flags both runners share: `--revision REV` (checked against the suite's requirement sets;
 * an unknown one exits 2 naming them) and `--scenario NAME`.
 * @returns {{ revision: string | undefined, only: string | undefined }}
 */
export function sharedOptions(argv, script) {
  const option = (name) => {
    const at = argv.indexOf(name)
    return at >= 0 ? argv[at + 1] : undefined
  }
  const revision = option('--revision')
  if (revision && !REVISIONS.includes(revision)) {
    console.error(`${script}: unknown --revision ${revision}; the suite's requirement sets are ${REVISIONS.join(', ')}`)
    process.exit(2)
  }
  return { revision, only: option('--scenario') }
}

export function prepareSuite() {
  try {
    node22 = ensureNode22()
  } catch (error) {
    throw Object.assign(new Error(error.message), { code: 'NO_NODE22' })
  }
  ensureLaneDeps(lane)
  // A lane installed before the pin moved keeps the old suite: reinstall it at the pinned version.
  const pinned = JSON.parse(readFileSync(path.join(lane, 'package.json'), 'utf8')).dependencies['@modelcontextprotocol/conformance']
  const installedManifest = path.join(lane, 'node_modules', '@modelcontextprotocol', 'conformance', 'package.json')
  if (!existsSync(installedManifest) || JSON.parse(readFileSync(installedManifest, 'utf8')).version !== pinned) {
    execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: lane, stdio: ['ignore', 'ignore', 'inherit'], shell: process.platform === 'win32' })
  }
  suitePath = path.join(lane, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js')
}

/** Runs the suite with these arguments; resolves to its exit status and merged, uncoloured output. */
function suite(args) {
  if (!suitePath) throw new Error('conformance: prepareSuite() first')
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

/**
 * One side at one revision, judged against `lanes/conformance/expected-failures-<revision>.yml`:
 * a required scenario fails the run when it fails and is not listed, or passes although listed.
 * `label` names what is tested in the heading; `only` runs one scenario; `requiredOnly` skips
 * the unscored ones. Resolves to `{ unexpected, passed, required }`.
 */
export async function runSide(side, revision, target, { label, only, requiredOnly = false } = {}) {
  const { required, unscored } = await requirements(revision, side)
  const baselineFile = path.join(lane, `expected-failures-${revision}.yml`)
  const baseline = readBaseline(baselineFile)
  const expected = baseline[side]
  const notRun = baseline['not-run']
  const unknown = [...expected.keys()].filter((name) => !required.includes(name))
  const tally = { passed: 0, expected: 0, failed: 0, stale: 0, notRun: 0 }
  console.log(`\n${label ?? (side === 'client' ? 'Client scenarios (McpHub)' : 'Server scenarios (toolreg serve --http)')}, ${revision}:`)
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
  return { unexpected: tally.failed > 0 || tally.stale > 0 || unknown.length > 0, passed: tally.passed, required: total }
}

/**
 * `toolreg serve --http` on a free loopback port in front of the rmcp test server's conformance
 * mode, with its cache and config under `dir`. Without `token` it runs `--no-auth`; with one, it
 * takes it from TOOLREG_SERVE_TOKEN as an operator would. `env` adds to its environment (the
 * shared state key of replicas). Resolves to `{ process, url }`.
 */
export async function startGateway(dir, { token = null, env: extraEnv = {} } = {}) {
  mkdirSync(dir, { recursive: true })
  const config = path.join(dir, 'servers.json')
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
  const env = { ...process.env, ...extraEnv, TOOLREG_CACHE_DIR: path.join(dir, 'cache'), TOOLREG_CONFIG_DIR: path.join(dir, 'config') }
  if (token) env.TOOLREG_SERVE_TOKEN = token
  else delete env.TOOLREG_SERVE_TOKEN
  const args = [path.join(root, 'bin', 'toolreg.mjs'), 'serve', '--http', '0', '--config', config, ...(token ? [] : ['--no-auth'])]
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'pipe'] })
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
