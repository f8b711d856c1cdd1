#!/usr/bin/env node
// toolreg: what your MCP servers cost in tokens, what would be deferred for your model's
// context window, and whether the right tool can still be found. See `toolreg --help`.
import { main } from '../cli/program.mjs'
import { closeSessionsOnSignals } from '../cli/session.mjs'

closeSessionsOnSignals()
process.exitCode = await main(process.argv.slice(2))
