// One sentence a user can act on for a server that failed, from the hub's error (a sentence
// already; the transport's raw text is its `details`, shown with --verbose), plus a hint.
import { basename } from 'node:path'

/** Commands that fetch the server package on first use: npx -y, uvx, pnpm dlx, bunx, … */
const RUNNERS = new Set(['npx', 'uvx', 'bunx', 'pipx'])
const DLX = new Set(['pnpm', 'yarn', 'bun'])

export function isPackageRunner(config) {
  if (config.type !== 'stdio') return false
  const command = basename(config.command).replace(/\.(cmd|exe)$/i, '')
  return RUNNERS.has(command) || (DLX.has(command) && ['dlx', 'x'].includes(config.args?.[0])) || (command === 'uv' && config.args?.[0] === 'tool')
}

/** `1.5 s`: a duration in tenths of seconds. */
export const seconds = (ms) => `${Math.round(ms / 100) / 10} s`

/**
 * `{ summary, hint? }` for a failed server record (`transport`, `command` or URL, `error`,
 * `code`, `timeoutMs`, `stderrTail`, `runner`: started by a package runner). Every summary is one
 * sentence.
 */
export function describeFailure({ id, transport, command, error, code, timeoutMs, stderrTail = '', runner = false }) {
  const url = transport === 'stdio' ? null : command.replace(/^\S+ /, '')
  if (code === 'TOOLREG_MCP_AUTH_REQUIRED') {
    return { summary: `${url} needs you to sign in`, hint: `run: toolreg auth login ${id}` }
  }
  const timedOut = code === 'TOOLREG_MCP_TIMEOUT' || /timed out after/.test(error)
  if (timedOut) {
    const quiet = !stderrTail.trim()
    return {
      summary: `did not answer within ${seconds(timeoutMs)}${quiet ? ' and printed nothing on stderr' : ''}`,
      hint: runner
        ? `a first run of ${basename(command.split(' ')[0])} may still be downloading the package: run it once by hand, or give it longer with --timeout ${Math.max(300_000, timeoutMs * 2)}`
        : `if it is only slow to start, give it longer with --timeout ${timeoutMs * 4}`,
    }
  }
  const noise = /it wrote (\d+) lines? on stdout that (?:is|are) not JSON-RPC \(the first: (".*")\)/.exec(error)
  if (noise) {
    return {
      summary: `it wrote ${noise[1] === '1' ? 'a line on stdout that is not an MCP message' : `${noise[1]} lines on stdout that are not MCP messages`} (the first: ${noise[2]}) and never answered`,
      hint: 'a stdio server must write only JSON-RPC on stdout, its logs on stderr: look for a quiet or stdio flag in its documentation',
    }
  }
  const exited = /exited with status (\d+)/.exec(error)
  if (exited) return { summary: `the server process exited with status ${exited[1]} before it was ready${stderrTail.trim() ? '; its stderr says why' : ''}` }
  const notStarted = /could not start "([^"]+)": (.*?)( \(os error \d+\))?$/.exec(error)
  if (notStarted) {
    return /No such file/.test(notStarted[2])
      ? { summary: `the command ${JSON.stringify(notStarted[1])} was not found`, hint: 'install it, or give its full path in the config' }
      : { summary: `the command ${JSON.stringify(notStarted[1])} could not be started: ${notStarted[2].toLowerCase()}` }
  }
  const reason = error.replace(/^could not connect to MCP server "[^"]*": /, '')
  // The hub's "the server answered HTTP 404 Not Found (an HTML page titled …)", said of the URL.
  const answered = /answered (HTTP (\d{3}).*)$/.exec(reason)
  if (answered) {
    const status = Number(answered[2])
    if (status === 401 || status === 403) return { summary: `${url} refused the request with ${answered[1]}`, hint: 'check the credentials in the server\'s "headers"' }
    if (status === 404 || status === 405) return { summary: `${url} answered ${answered[1]}: no MCP endpoint at that path`, hint: 'check the URL; Streamable HTTP servers usually end in /mcp, legacy SSE ones in /sse ("type": "sse")' }
    return { summary: `${url} answered ${answered[1]}` }
  }
  if (url && /nothing is listening|could not be resolved|could not connect to|timed out/.test(reason)) {
    return { summary: `could not reach ${url}: ${reason}`, hint: 'is the server running, and are the host and port right?' }
  }
  return { summary: reason.split('\n')[0] }
}
