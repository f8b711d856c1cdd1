#!/usr/bin/env node
// toolreg: what your MCP servers cost in tokens, what would be deferred for your model's
// context window, and whether the right tool can still be found. See `toolreg --help`.
import { main, sessionModule } from '../cli/program.mjs'

// Ctrl-C and SIGTERM stop every server of an open session; sessions come with their module,
// which --help and --version never load.
sessionModule.loaded.then((session) => session.closeSessionsOnSignals())
// `toolreg … | head`: the reader left; stop quietly instead of crashing on the broken pipe.
process.stdout.on('error', async (error) => {
  if (error.code !== 'EPIPE') throw error
  await (await sessionModule.load()).closeAllSessions()
  process.exit(0)
})
process.exitCode = await main(process.argv.slice(2))
