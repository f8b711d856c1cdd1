#!/usr/bin/env node
// Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
// lanes/conformance) against toolreg's McpHub as a client: every client scenario, with
// lanes/conformance/expected-failures.yml as the baseline. The suite needs Node >= 22, which
// scripts/ensure-node22.mjs provides from the npm registry; the client itself runs on this Node.
// Prints the suite's own summary and exits with its code: 0 when every scenario passed, or
// failed as the baseline says it does.
//
//   npm run conformance            (npm test runs it too: __tests__/conformance.test.mjs)
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureLaneDeps, ensureNode22 } from './ensure-node22.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const lane = path.join(root, 'lanes', 'conformance')

let node22
try {
  node22 = ensureNode22()
} catch (error) {
  console.log(`conformance: skipped, no Node 22 here (${error.message})`)
  process.exit(0)
}
ensureLaneDeps(lane)
const output = mkdtempSync(path.join(tmpdir(), 'toolreg-conformance-'))
const client = `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(root, 'scripts', 'conformance-client.mjs'))}`
const suite = spawnSync(
  node22,
  [
    path.join(lane, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js'),
    'client',
    '--command',
    client,
    '--suite',
    'all',
    '--expected-failures',
    path.join(lane, 'expected-failures.yml'),
    '--output-dir',
    output,
  ],
  { cwd: lane, encoding: 'utf8', timeout: 300_000 },
)
rmSync(output, { recursive: true, force: true })
// The suite's own summary, from its "=== SUITE SUMMARY ===" line on. The clients' stderr and the
// scenarios' contexts (test credentials) are shown only when the run failed.
const summary = suite.stdout.slice(Math.max(0, suite.stdout.indexOf('=== SUITE SUMMARY ===')))
console.log(summary.trim())
if (suite.status !== 0) console.error(`${suite.error ?? ''}${suite.stderr.slice(-8000)}`)
process.exit(suite.status ?? 1)
