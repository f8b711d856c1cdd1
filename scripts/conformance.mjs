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
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { REVISIONS, prepareSuite, runSide, sharedOptions, startGateway } from './conformance-suite.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

const argv = process.argv.slice(2)
const sides = argv.includes('--client') ? ['client'] : argv.includes('--server') ? ['server'] : ['client', 'server']
const { revision: revisionFilter, only } = sharedOptions(argv, 'conformance')
const revisions = revisionFilter ? [revisionFilter] : REVISIONS
const requiredOnly = argv.includes('--required-only')

try {
  prepareSuite()
} catch (error) {
  if (error.code !== 'NO_NODE22') throw error
  console.log(`conformance: skipped, no Node 22 here (${error.message})`)
  process.exit(0)
}

const output = mkdtempSync(path.join(tmpdir(), 'toolreg-conformance-'))
let failed = false
try {
  if (sides.includes('client')) {
    const client = `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(root, 'scripts', 'conformance-client.mjs'))}`
    for (const revision of revisions) failed = (await runSide('client', revision, client, { only, requiredOnly })).unexpected || failed
  }
  if (sides.includes('server')) {
    const gateway = await startGateway(output)
    try {
      for (const revision of revisions) failed = (await runSide('server', revision, gateway.url, { only, requiredOnly })).unexpected || failed
    } finally {
      gateway.process.kill('SIGTERM')
    }
  }
} finally {
  rmSync(output, { recursive: true, force: true })
}
process.exit(failed ? 1 : 0)
