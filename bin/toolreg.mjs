#!/usr/bin/env node
// toolreg: what your MCP servers cost in tokens, what would be deferred for your model's
// context window, and whether the right tool can still be found. See `toolreg --help`.
import { main } from '../cli/program.mjs'
import { closeAllSessions } from '../cli/session.mjs'
import { EXIT } from '../cli/exitCodes.mjs'

/** Ctrl-C or a kill: stop every server process before leaving. */
async function stop(signal, code) {
  process.stderr.write(`\n${signal}: stopping every server…\n`)
  await closeAllSessions()
  process.exit(code)
}
process.once('SIGINT', () => stop('SIGINT', EXIT.INTERRUPTED))
process.once('SIGTERM', () => stop('SIGTERM', 143))

process.exitCode = await main(process.argv.slice(2))
