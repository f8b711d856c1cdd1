// Tries one server again in a process of its own, detached from the command that started it:
// a server whose remembered failure lapsed is retried in the background instead of making a
// command wait on it (cli/session.mjs, retryInBackground). What it finds is written where the
// next command reads it: the server's tool list in the cache (which forgets the failure), or
// the failure again. The server's config comes in TOOLREG_PROBE (JSON: { config, display,
// timeoutMs }), taken out of the environment before anything starts.
import { createRequire } from 'node:module'
import { fileTokenStore } from './auth.mjs'
import { rememberFailure, writeCachedTools } from './cache.mjs'
import { describeFailure, isPackageRunner } from './failures.mjs'

const require = createRequire(import.meta.url)
const { McpHub } = require('../index.js')

const { config, display, timeoutMs } = JSON.parse(process.env.TOOLREG_PROBE)
delete process.env.TOOLREG_PROBE
const hub = new McpHub({ servers: [config], connectTimeoutMs: timeoutMs, reconnectBackoffMs: 0, auth: { tokenStore: fileTokenStore() } })
try {
  const tools = await hub.listTools(config.id, { timeoutMs })
  writeCachedTools(config, tools, hub.instructions(config.id))
} catch (error) {
  const stderrTail = hub.status().find((s) => s.id === config.id)?.stderrTail ?? ''
  rememberFailure(config, describeFailure({ id: config.id, transport: config.type, command: display, error: error?.message ?? String(error), code: error?.code, timeoutMs, stderrTail, runner: isPackageRunner(config) }))
} finally {
  await hub.close()
}
