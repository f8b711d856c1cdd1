// The embedded default used when no --config is given: the official MCP reference servers the
// repository installs as devDependencies, run for real, plus the large listed-only catalog.
import { createRequire } from 'node:module'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { shellQuote } from './config.mjs'

const require = createRequire(import.meta.url)

// The per-server start timeouts and serve's start-up wait, here rather than in session.mjs and
// serve.mjs so that --help, which shows them, loads no addon.
export const DEFAULT_TIMEOUT_MS = 30_000
/**
 * `npx -y pkg`, `uvx pkg`, … download the server on their first run (a minute has been seen for
 * a large package); killing them mid-install leaves a broken npx cache that fails the next run
 * too. So without an explicit --timeout they get this much longer.
 */
export const PACKAGE_RUNNER_TIMEOUT_MS = 180_000

/**
 * How long after it starts `serve` may wait for servers with no cached tool list (and no
 * remembered failure) before its first `tools/list` answer: every server ready by then is in
 * it, so a client that lists once at start sees it; `initialize` (with the instructions)
 * waits for them up to half of it. A server still starting then joins with `list_changed`.
 * The bound comes from the clients' own timeouts, counted from the spawn: the OpenAI Agents
 * SDK gives each request 5 s (initialize at 3 s, tools/list 3 s after), Codex 10 s for the
 * start, initialize and tools/list together; see docs/gateway.md.
 */
export const STARTUP_WAIT_MS = 6000

/** The entry script of an installed package's bin. */
export function binOf(pkg) {
  const manifest = require.resolve(`${pkg}/package.json`)
  const { bin } = require(manifest)
  return join(dirname(manifest), typeof bin === 'string' ? bin : Object.values(bin)[0])
}

/**
 * `{ servers, skipped, cleanup }`: stdio configs for everything, filesystem (on a fresh
 * temporary folder) and memory (with its graph file in that folder). A package that is not
 * installed (the published package has no devDependencies) is skipped with the reason.
 */
export function referenceServers() {
  const scratch = mkdtempSync(join(tmpdir(), 'toolreg-cli-'))
  const wanted = [
    { id: 'everything', pkg: '@modelcontextprotocol/server-everything', args: ['stdio'] },
    { id: 'filesystem', pkg: '@modelcontextprotocol/server-filesystem', args: [scratch] },
    { id: 'memory', pkg: '@modelcontextprotocol/server-memory', args: [], env: { MEMORY_FILE_PATH: join(scratch, 'memory.jsonl') } },
  ]
  const servers = []
  const skipped = []
  for (const { id, pkg, args, env } of wanted) {
    let entry
    try {
      entry = binOf(pkg)
    } catch {
      skipped.push({ id, key: id, why: `${pkg} is not installed (it is a devDependency of toolreg; npm install it to audit it live)` })
      continue
    }
    const config = { id, name: id, type: 'stdio', command: process.execPath, args: [entry, ...args], env: env ?? {} }
    servers.push({ config, key: id, display: ['node', entry, ...args].map(shellQuote).join(' ') })
  }
  return { servers, skipped, cleanup: () => rmSync(scratch, { recursive: true, force: true }) }
}
