// The official MCP conformance suite (@modelcontextprotocol/conformance, pinned in
// lanes/conformance, run as published on Node 22): the frozen requirement set of each revision
// (2025-11-25 and 2026-07-28), each scenario at its revision's wire, one at a time. Its client
// scenarios drive scripts/conformance-client.mjs, which uses McpHub as a host would; its server
// scenarios test `toolreg serve --http` in front of our rmcp test server's conformance tools.
// The required scenarios toolreg does not pass yet are listed, with the reason, in
// lanes/conformance/expected-failures-<revision>.yml; the script fails the run on any other
// failure and on a listed scenario that starts passing. The unscored scenarios (extensions,
// pending ones) are left to `npm run conformance`, which reports them: they score nothing and
// would double the time here.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const script = fileURLToPath(new URL('../scripts/conformance.mjs', import.meta.url))

/** The script's run of one side at both revisions, checked to pass against the baseline; null where Node 22 cannot be had. */
function conformance(side) {
  const run = spawnSync(process.execPath, [script, side, '--required-only'], { encoding: 'utf8', timeout: 900_000 })
  if (run.stdout.startsWith('conformance: skipped')) {
    console.log(run.stdout)
    return null
  }
  // stderr may carry npm's warnings from installing the lane on a fresh clone.
  if (run.status !== 0) console.log(run.stdout, run.stderr)
  expect(run.status).toBe(0)
  return run
}

/** How many scenarios of `side` the revision's baseline lists as failing. */
function listedFailures(revision, side) {
  const file = fileURLToPath(new URL(`../lanes/conformance/expected-failures-${revision}.yml`, import.meta.url))
  let inside = false
  let count = 0
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\S/.test(line) && !line.startsWith('#')) inside = line.startsWith(`${side}:`)
    else if (inside && /^\s+- /.test(line)) count++
  }
  return count
}

/** The summary line of one side at one revision: every required scenario passed or is a listed failure. */
function expectSummary(run, side, revision, total) {
  const summary = new RegExp(`^${side} ${revision}: (\\d+)/(\\d+) required passed, 0 failed, (\\d+) expected failures, 0 stale, 0 not run$`, 'm').exec(run.stdout)
  expect(summary, `${side} ${revision} summary`).not.toBeNull()
  const [, passed, required, expected] = summary.map(Number)
  expect(required).toBe(total)
  expect(expected).toBe(listedFailures(revision, side))
  expect(passed + expected).toBe(required)
  return passed
}

describe('MCP conformance suite, the requirement sets of 2025-11-25 and 2026-07-28', () => {
  it('client scenarios: McpHub passes all of 2025-11-25; at 2026-07-28 the ones it fails are the listed ones', () => {
    const run = conformance('--client')
    if (!run) return
    for (const scenario of ['initialize', 'tools_call', 'sse-retry', 'elicitation-sep1034-client-defaults', 'auth/metadata-default', 'auth/scope-step-up', 'auth/pre-registration']) {
      expect(run.stdout).toMatch(new RegExp(`^✓ ${scenario}: (\\d+)/\\1 checks passed$`, 'm'))
    }
    expect(expectSummary(run, 'client', '2025-11-25', 18)).toBe(18)
    // The issuer checks and the header validation of 2026-07-28 hold whatever the lifecycle.
    expect(run.stdout).toMatch(/^✓ auth\/iss-wrong-issuer: (\d+)\/\1 checks passed$/m)
    expectSummary(run, 'client', '2026-07-28', 32)
  }, 900_000)

  it('server scenarios: toolreg serve passes all of 2025-11-25, and at 2026-07-28 answers on the same endpoint with resultType, discovery and capability refusals', () => {
    const run = conformance('--server')
    if (!run) return
    expect(expectSummary(run, 'server', '2025-11-25', 30)).toBe(30)
    expectSummary(run, 'server', '2026-07-28', 37)
    // Both revisions' runs of one scenario, one after the other, against the one gateway.
    for (const scenario of ['tools-call-simple-text', 'tools-call-with-progress', 'resources-read-text', 'prompts-get-with-args', 'completion-complete', 'server-stateless', 'caching']) {
      expect(run.stdout).toMatch(new RegExp(`^✓ ${scenario}: (\\d+)/\\1 checks passed$`, 'm'))
    }
    expect(run.stdout.match(/^✓ tools-call-simple-text: /gm)).toHaveLength(2)
  }, 900_000)
})
