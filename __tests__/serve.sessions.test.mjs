// `toolreg serve` from the first session to the last, with the official MCP TypeScript SDK's
// client and real servers (server-everything and server-memory from node_modules, our rmcp test
// server), a hanging one and a crashing one: what the first session shows, what the next ones
// wait on, what a garbage-printing server costs, and how many list_changed a client hears.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { PromptListChangedNotificationSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { bin, cliEnv, writeConfig } from './cliRun.mjs'
import { referenceServer, testServer } from './mcpServers.mjs'
import { STARTUP_WAIT_MS } from '../cli/defaults.mjs'

const closing = []
afterAll(async () => {
  await Promise.allSettled(closing.map((close) => close()))
})

const entry = ({ command, args, env }) => ({ command, args, ...(env && { env }) })
const crashing = { command: process.execPath, args: ['-e', 'console.error("cannot open the database"); process.exit(3)'] }
// Never completes the MCP handshake: it sleeps for ten minutes before serving.
const hanging = entry(testServer('hanging', ['--slow-start-ms', '600000']))

/**
 * `toolreg serve` with `args` under the SDK client; `{ client, stderr(), changed, promptsChanged,
 * initializedMs }` (counts of the list_changed notifications heard so far).
 */
async function serve(args, cacheDir) {
  const started = Date.now()
  const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'serve', ...args], env: cliEnv({ TOOLREG_CACHE_DIR: cacheDir }), stderr: 'pipe' })
  let stderr = ''
  transport.stderr.on('data', (d) => (stderr += d))
  const client = new Client({ name: 'sdk-test-client', version: '1.0.0' })
  const heard = { tools: 0, prompts: 0 }
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => heard.tools++)
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => heard.prompts++)
  await client.connect(transport)
  closing.push(() => client.close())
  return { client, stderr: () => stderr, heard, started, initializedMs: Date.now() - started }
}

const until = async (what, check, ms = 20_000) => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) if (check()) return
  throw new Error(`timed out waiting for ${what}`)
}

describe('toolreg serve from the first session to the last', () => {
  it('first start on an empty cache: the first tools/list holds every server ready within the start-up bound, no list_changed needed; the next start waits on nothing that failed, in any request', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'toolreg-first-session-'))
    const file = writeConfig({
      mcpServers: { everything: entry(referenceServer('everything')), memory: entry(referenceServer('memory')), live: entry(testServer('live')), hanging, crashing },
    })
    // A window wide enough for every tool to be inline, so the list names them.
    const args = ['--config', file, '--context-window', '1000000', '--timeout', '30000']
    const first = await serve(args, cacheDir)
    const { tools } = await first.client.listTools()
    const listedMs = Date.now() - first.started
    const names = tools.map((t) => t.name)
    // The healthy servers are in the first answer, the broken ones are not waited on past the bound.
    expect(names).toEqual(expect.arrayContaining(['get-sum', 'read_graph', 'crash']))
    // initialize waits up to half the bound, the first list all of it (the hanging server
    // never settles), plus the first tool list's build on a busy machine.
    expect(first.initializedMs).toBeGreaterThanOrEqual(STARTUP_WAIT_MS / 2 - 500)
    expect(listedMs).toBeGreaterThanOrEqual(STARTUP_WAIT_MS - 500)
    expect(listedMs).toBeLessThan(STARTUP_WAIT_MS + 4000)
    expect(first.stderr()).toMatch(/warning: crashing is left out: the server process exited with status 3/)

    // Prompts and resources while the hanging server is still starting: not waited on for
    // more than 3 s (LATE_AFTER), everything's are there.
    let asked = Date.now()
    const [{ prompts }, { resources }] = await Promise.all([first.client.listPrompts(), first.client.listResources()])
    expect(Date.now() - asked).toBeLessThan(6000)
    expect(prompts.map((p) => p.name)).toContain('simple-prompt')
    expect(resources.length).toBeGreaterThan(0)
    // Nothing the client needs list_changed for: the tool list it has is the list.
    await new Promise((r) => setTimeout(r, 1000))
    expect(first.heard.tools).toBe(0)
    await first.client.close()

    // The crash is remembered; the hang only once it times out (30 s here, longer than that
    // session), so a session with a 3 s timeout finds it out first.
    const probing = await serve([...args.slice(0, -1), '3000'], cacheDir)
    // A session shorter than the hang's timeout left it known as a server that missed the
    // start-up wait: this one lists it in the background and waits for nothing.
    expect(probing.stderr()).toMatch(/hanging is listed in the background: it had not answered within the start-up wait at an earlier start/)
    expect(probing.initializedMs).toBeLessThan(STARTUP_WAIT_MS / 2)
    await until('the hanging server to be left out', () => /hanging is left out/.test(probing.stderr()), 15_000)
    await probing.client.close()
    const failed = readdirSync(join(cacheDir, 'tools-list')).filter((f) => f.endsWith('.failed.json')).map((f) => JSON.parse(readFileSync(join(cacheDir, 'tools-list', f), 'utf8')).server)
    expect(failed.sort()).toEqual(['crashing', 'hanging'])

    // The next session: every answer at once, nothing waits on the two known-bad servers.
    const next = await serve(args, cacheDir)
    expect(next.initializedMs).toBeLessThan(STARTUP_WAIT_MS / 2)
    expect(next.stderr()).toMatch(/hanging is left out: it failed \d+ min ago \(did not answer within 3 s[^\n]*trying it again in the background/)
    expect((await next.client.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['get-sum', 'read_graph', 'crash']))
    for (const request of [() => next.client.listPrompts(), () => next.client.listResources(), () => next.client.listResourceTemplates()]) {
      asked = Date.now()
      await request()
      // The servers whose tools were cached start now (a second or two for server-everything
      // on a busy machine); the hanging one, 30 s before, is not asked.
      expect(Date.now() - asked).toBeLessThan(3500)
    }
    expect(next.stderr()).not.toMatch(/Unexpected error|::/)
  }, 120_000)

  it('a server that prints garbage on stdout is given up within 2 s of its first line, not at its timeout', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'toolreg-garbage-'))
    const garbage = entry(testServer('garbage', ['--malformed=only']))
    const file = writeConfig({ mcpServers: { live: entry(testServer('live')), garbage } })
    const session = await serve(['--config', file, '--timeout', '30000', '--startup-wait', '10000'], cacheDir)
    await session.client.listTools()
    // It was waited on (the start-up wait is 10 s) only until it was given up.
    expect(session.initializedMs).toBeLessThan(6000)
    expect(session.stderr()).toMatch(/warning: garbage is left out: it wrote (a line|\d+ lines) on stdout that (is|are) not (an MCP message|MCP messages) \(the first: "this is not json"\) and never answered/)
  }, 60_000)

  it('a client hears one tools/list_changed per server that joins, and none for a list_changed that changes nothing', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'toolreg-joins-'))
    const file = writeConfig({ mcpServers: { everything: entry(referenceServer('everything')), live: entry(testServer('live', ['--slow-start-ms', '1500'])) } })
    // No start-up wait: both servers join after the first answer.
    const session = await serve(['--config', file, '--context-window', '1000000', '--startup-wait', '0'], cacheDir)
    await until('both servers to join', () => (session.stderr().match(/joined with/g) ?? []).length === 2)
    await new Promise((r) => setTimeout(r, 1500))
    // server-everything announces its tools as it registers them after the handshake; the
    // gateway lists it once more and tells its client once per join.
    expect(session.heard.tools).toBeGreaterThanOrEqual(1)
    expect(session.heard.tools).toBeLessThanOrEqual(2)
    const joined = session.heard.tools
    // A storm of list_changed that changes nothing: nothing to tell.
    await session.client.callTool({ name: 'storm', arguments: { count: 20 } })
    await new Promise((r) => setTimeout(r, 1500))
    expect(session.heard.tools).toBe(joined)
    // A tool the server adds is held by tool trust until approved: the list served does not
    // change, so there is nothing to tell either.
    await session.client.callTool({ name: 'toggle', arguments: {} })
    await until('the new tool to be held', () => /held live\/toggled until approved/.test(session.stderr()))
    await new Promise((r) => setTimeout(r, 500))
    expect(session.heard.tools).toBe(joined)
  }, 60_000)
})
