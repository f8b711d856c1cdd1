// Error text that reaches users (the CLI, the gateway's log, McpHub errors) is sentences: no Rust
// type paths, no HTML documents, no Node stacks; and each names what is wrong. One table of real
// failure conditions, run through the CLI commands and through McpHub.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import { testServer } from './mcpServers.mjs'
import { cliEnv, runCli, startCli, writeConfig } from './cliRun.mjs'

const require = createRequire(import.meta.url)
const { McpHub } = require('../index.js')

const INTERNALS = [
  ['a Rust path', /\b[A-Za-z_]\w*::[A-Za-z_]\w*/],
  ['an HTML document', /<html|<!doctype/i],
  ['a Node stack', /^\s+at /m],
]

function expectClean(text, what) {
  for (const [name, pattern] of INTERNALS) expect(text, `${what} shows ${name}:\n${text}`).not.toMatch(pattern)
}

/** An HTTP server that answers every request with `status` and an HTML error page. */
async function htmlErrorServer(status) {
  const server = createServer((req, res) => {
    res.writeHead(status, { 'content-type': 'text/html' })
    res.end(`<!DOCTYPE html><html><head><title>${status} Oops at the proxy</title></head><body>${'<p>padding</p>'.repeat(100)}</body></html>`)
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { server, url: `http://127.0.0.1:${server.address().port}/mcp` }
}

/** A port nothing listens on: one just opened and closed again. */
async function closedPort() {
  const server = createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

let pages
let cases
beforeAll(async () => {
  pages = { 404: await htmlErrorServer(404), 500: await htmlErrorServer(500) }
  const garbage = testServer('garbage', ['--malformed=only'])
  // id → [config entry, what the sentence must say]
  cases = {
    closed: [{ url: `http://127.0.0.1:${await closedPort()}/mcp` }, /nothing is listening at 127\.0\.0\.1:\d+ \(connection refused\)/],
    page404: [{ url: pages[404].url }, /HTTP 404 Not Found \(an HTML page titled "404 Oops at the proxy"\)/],
    page500: [{ url: pages[500].url }, /HTTP 500/],
    sse404: [{ type: 'sse', url: pages[404].url.replace(/mcp$/, 'sse') }, /HTTP 404 Not Found \(an HTML page titled "404 Oops at the proxy"\)/],
    missing: [{ command: 'toolreg-no-such-command' }, /"toolreg-no-such-command"/],
    exits: [{ command: 'sh', args: ['-c', 'echo about to fail >&2; exit 3'] }, /exited with status 3/],
    garbage: [{ command: garbage.command, args: garbage.args }, /not (JSON-RPC|an MCP message)/],
  }
})
afterAll(() => Promise.all(Object.values(pages).map(({ server }) => new Promise((resolve) => server.close(resolve)))))

const configOf = (ids) => writeConfig({ mcpServers: Object.fromEntries(ids.map((id) => [id, cases[id][0]])) })

describe('no internals in error text', () => {
  it('audit, search and call name each failed server\'s problem in words', async () => {
    const ids = Object.keys(cases)
    const config = configOf(ids)
    const [audit, search, call] = await Promise.all([
      runCli(['audit', '--config', config, '--timeout', '3000']),
      runCli(['search', 'echo', '--config', config, '--timeout', '3000']),
      runCli(['call', 'page404/echo', '{}', '--config', config, '--timeout', '3000']),
    ])
    expect(audit.code).toBe(4)
    for (const id of ids) {
      expect(audit.stdout).toMatch(new RegExp(`${id} \\(mcpServers\\.${id}\\): .*${cases[id][1].source}`))
      expect(search.stderr).toMatch(new RegExp(`warning: ${id} is left out: .*${cases[id][1].source}`))
    }
    expect(call.code).toBe(4)
    expect(call.stderr).toMatch(/No tools of page404: it did not start/)
    for (const [what, run] of Object.entries({ audit, search, call })) expectClean(run.stdout + run.stderr, what)
  }, 60_000)

  it('McpHub errors and status are sentences with a code; the raw transport error is `details`', async () => {
    const ids = Object.keys(cases)
    const hub = new McpHub({ servers: ids.map((id) => ({ id, name: id, type: cases[id][0].type ?? (cases[id][0].url ? 'http' : 'stdio'), ...cases[id][0] })), connectTimeoutMs: 3000, reconnectBackoffMs: 0 })
    try {
      const errors = await Promise.all(ids.map((id) => hub.listTools(id, { timeoutMs: 4000 }).then(() => null, (error) => error)))
      ids.forEach((id, i) => {
        expect(errors[i]?.code, id).toBe('TOOLREG_MCP_CONNECT')
        expect(errors[i].message).toMatch(cases[id][1])
        expectClean(errors[i].message, `McpHub error of ${id}`)
      })
      expect(errors[ids.indexOf('page404')].details).toMatch(/<!DOCTYPE html>/)
      for (const status of hub.status()) expectClean(status.lastError, `status of ${status.id}`)
    } finally {
      await hub.close()
    }
  }, 30_000)

  it('serve logs the failed servers in words', async () => {
    // stdin stays open, as a client's does: serve ends when its client goes away.
    const run = startCli(['serve', '--config', configOf(['closed', 'page404', 'missing']), '--timeout', '3000'], { keepStdinOpen: true })
    await expect.poll(() => run.out.stderr, { timeout: 20_000 }).toMatch(/serving MCP on stdio/)
    // Servers are listed in the background, so a warning can come after serving starts; a
    // failure the tests above remembered is said at start, with its sentence, and not again
    // when the retry in the background fails alike.
    for (const id of ['closed', 'page404', 'missing']) {
      await expect.poll(() => run.out.stderr, { timeout: 20_000 }).toMatch(new RegExp(`${id} is left out: .*${cases[id][1].source}`))
    }
    run.child.kill()
    await run.done
    expectClean(run.out.stderr, 'serve')
  }, 30_000)

  it('serve --http on a port another program holds says so and what to do, exit 2, no "Unexpected error"', async () => {
    const holder = createServer()
    await new Promise((resolve) => holder.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = holder.address()
      const run = await runCli(['serve', '--http', String(port), '--config', writeConfig({ mcpServers: {} })])
      expect(run.code).toBe(2)
      expect(run.stderr).toMatch(new RegExp(`toolreg serve cannot listen on 127\\.0\\.0\\.1:${port}: another program already uses that port\\. Pick another with --http PORT \\(--http 0 takes a free one\\)`))
      expect(run.stderr).not.toMatch(/Unexpected error|--verbose/)
      expectClean(run.stderr, 'serve --http on a busy port')
    } finally {
      await new Promise((resolve) => holder.close(resolve))
    }
  }, 30_000)

  it('auth login against a server that answers with HTML error pages says what it answered', async () => {
    const run = await runCli(['auth', 'login', 'page404', '--config', configOf(['page404'])], { env: cliEnv({ BROWSER: 'true' }) })
    expect(run.code).toBe(9)
    expect(run.stderr).toMatch(/Sign-in to page404 did not complete: .*HTTP 404 Not Found \(an HTML page titled "404 Oops at the proxy"\)/)
    expectClean(run.stdout + run.stderr, 'auth login')
  }, 30_000)

  it('a missing file for exec --file, a missing directory for report --out: one sentence naming it, before any server starts', async () => {
    const config = writeConfig({ mcpServers: {} })
    const exec = await runCli(['exec', '--file', '/toolreg-missing/code.js', '--config', config])
    expect(exec.stderr.trim()).toBe('Cannot read /toolreg-missing/code.js: there is no such file.')
    // A server that never answers: the report must not wait for it to find the folder missing.
    const hangs = writeConfig({ mcpServers: { hangs: { command: testServer('hangs').command, args: [...testServer('hangs').args, '--hang-on-list'] } } })
    const report = await runCli(['report', '--out', '/toolreg-missing/dir/r.html', '--config', hangs, '--timeout', '20000', '--refresh'])
    expect(report.stderr.trim()).toBe('Cannot write /toolreg-missing/dir/r.html: the directory /toolreg-missing/dir does not exist.')
    expect(report.ms).toBeLessThan(15_000)
    for (const run of [exec, report]) {
      expect(run.code).toBe(2)
      expectClean(run.stderr, 'a file error')
    }
  }, 30_000)
})
