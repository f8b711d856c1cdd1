#!/usr/bin/env node
// `npm run demo`: the toolreg CLI's main job on its demo setup — an audit of the MCP
// reference servers (run for real) plus the large listed-only catalog, then a few searches.
// The commands run in this one process on one session, so the servers start once. Works on the
// committed data alone (a fresh clone has no ../shared).
import { main } from '../cli/program.mjs'
import { closeAllSessions, closeSessionsOnSignals, openSession } from '../cli/session.mjs'

const steps = [
  ['audit', '--demo', '--context-window', '200000'],
  ['search', 'read a text file from disk', '--demo', '--limit', '3'],
  ['search', 'current weather forecast for a city', '--demo', '--limit', '3'],
  ['search', 'how is bitcoin trading today', '--demo', '--limit', '3', '--hybrid'],
]

let shared
/** Opens the default session once; each command's close() leaves it open for the next. */
async function openOnce(options) {
  shared ??= openSession(options)
  return { ...(await shared), close: async () => {} }
}

closeSessionsOnSignals()
let code = 0
try {
  for (const args of steps) {
    console.log(`\n$ toolreg ${args.map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(' ')}`)
    code = await main(args, { open: openOnce })
    if (code !== 0) break
  }
} finally {
  await closeAllSessions()
}
process.exitCode = code
