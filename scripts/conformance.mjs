#!/usr/bin/env node
// Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
// lanes/conformance) against toolreg's McpHub as a client: each client scenario the suite
// lists, one at a time, with lanes/conformance/expected-failures.yml as the baseline (scenarios
// under its `not-run` key are reported and skipped). The suite needs Node >= 22, which
// scripts/ensure-node22.mjs provides from the npm registry; the client itself runs on this Node.
// Prints one line per scenario and exits 1 if any scenario failed unexpectedly or passed
// although the baseline expects it to fail.
//
//   npm run conformance            (npm test runs it too: __tests__/conformance.test.mjs)
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
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
const suite = path.join(lane, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js')
const conformance = (args) => spawnSync(node22, [suite, ...args], { cwd: lane, encoding: 'utf8', timeout: 120_000 })

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

const listing = conformance(['list']).stdout
const scenarios = [...listing.slice(listing.indexOf('Client scenarios')).matchAll(/^\s+- (\S+)/gm)].map((m) => m[1])
const expected = new Set(listed('client'))
const notRun = new Set(listed('not-run'))
const output = mkdtempSync(path.join(tmpdir(), 'toolreg-conformance-'))
const client = `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(root, 'scripts', 'conformance-client.mjs'))}`
const tally = { passed: 0, expected: 0, failed: 0 }
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
rmSync(output, { recursive: true, force: true })
console.log(`${tally.passed} passed, ${tally.failed} failed, ${tally.expected} expected failures, ${notRun.size} not run`)
process.exit(tally.failed > 0 ? 1 : 0)
