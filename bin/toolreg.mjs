#!/usr/bin/env node
// toolreg: what your MCP servers cost in tokens, what would be deferred for your model's
// context window, and whether the right tool can still be found. See `toolreg --help`.
import { main } from '../cli/program.mjs'
import { closeAllSessions, closeSessionsOnSignals } from '../cli/session.mjs'

closeSessionsOnSignals()
// `toolreg … | head`: the reader left; stop quietly instead of crashing on the broken pipe.
process.stdout.on('error', async (error) => {
  if (error.code !== 'EPIPE') throw error
  await closeAllSessions()
  process.exit(0)
})
process.exitCode = await main(process.argv.slice(2))
