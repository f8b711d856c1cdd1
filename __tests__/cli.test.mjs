// The toolreg CLI run as a child process against real MCP servers: the reference servers
// (devDependencies), our rmcp test server for faults, and plain processes that die at start.
import { beforeAll, describe, expect, it } from 'vitest'
import { readFileSync, readdirSync } from 'node:fs'
import { spawn, spawnSync } from 'node:child_process'
import { McpHub, buildMcpToolWireId, countTokens } from '../index.js'
import { loadExcerpt } from '../cli/catalog.mjs'
import { referenceServer, testServer, processGone } from './mcpServers.mjs'
import { cliEnv, hasScript, runCli, runOnTerminal, startCli, writeConfig } from './cliRun.mjs'

const REFERENCE = ['everything', 'filesystem', 'memory']
const everythingConfig = () => {
  const { command, args } = referenceServer('everything')
  return { command, args }
}

/** What a provider receives for each tool, priced independently of the CLI. */
async function expectedCosts(groups) {
  const names = []
  const texts = []
  for (const { serverId, serverName, tools } of groups) {
    const seen = new Set()
    for (const t of tools) {
      const name = buildMcpToolWireId({ serverId, serverName, toolName: t.name })
      if (seen.has(name)) continue
      seen.add(name)
      names.push(name)
      texts.push(JSON.stringify({ name, description: t.description ?? t.title ?? '', input_schema: t.inputSchema ?? { type: 'object', properties: {} } }))
    }
  }
  const tokens = await countTokens(texts)
  return new Map(names.map((n, i) => [n, tokens[i]]))
}

describe('toolreg audit on the embedded default', () => {
  let doc
  let live
  beforeAll(async () => {
    const run = await runCli(['audit', '--demo', '--json', '--context-window', '200000'])
    expect(run.stderr).not.toMatch(/Error|failed/)
    expect(run.code).toBe(0)
    doc = JSON.parse(run.stdout)
    const hub = new McpHub({ servers: REFERENCE.map((k) => referenceServer(k)) })
    try {
      live = await Promise.all(REFERENCE.map(async (id) => ({ serverId: id, serverName: id, tools: await hub.listTools(id) })))
    } finally {
      await hub.close()
    }
  }, 120_000)

  it('audits the three reference servers live and the committed catalog excerpt', () => {
    const mcp = doc.servers.filter((s) => s.kind === 'mcp')
    expect(mcp.map((s) => [s.id, s.status])).toEqual(REFERENCE.map((id) => [id, 'connected']))
    for (const { serverId, tools } of live) expect(mcp.find((s) => s.id === serverId).toolCount).toBe(tools.length)
    expect(doc.catalog.source).toBe('excerpt')
    const excerpt = loadExcerpt()
    expect(doc.catalog.servers).toBe(new Set(excerpt.map((t) => t.server)).size)
    expect(doc.summary.tools).toBe(doc.tools.length)
    expect(doc.tools.filter((t) => !t.callable)).toHaveLength(doc.catalog.tools)
  })

  it('prices every tool exactly as countTokens prices its definition', async () => {
    const catalog = new Map()
    for (const t of loadExcerpt()) {
      if (!catalog.has(t.server)) catalog.set(t.server, { serverId: t.server, serverName: t.serverName, tools: [] })
      catalog.get(t.server).tools.push(t)
    }
    const expected = await expectedCosts([...live, ...catalog.values()])
    const got = new Map(doc.tools.map((t) => [t.name, t.tokens]))
    expect(got.size).toBe(expected.size)
    for (const [name, tokens] of expected) expect(got.get(name), name).toBe(tokens)
    const total = [...expected.values()].reduce((a, b) => a + b, 0)
    expect(doc.summary.tokens).toBe(total)
    expect(doc.servers.reduce((sum, s) => sum + s.tokens, 0)).toBe(total)
    for (const { serverId, serverName, tools } of live) {
      const own = await expectedCosts([{ serverId, serverName, tools }])
      expect(doc.servers.find((s) => s.id === serverId).tokens).toBe([...own.values()].reduce((a, b) => a + b, 0))
    }
  })

  it('defers the auto pool, keeps destructive (approval-gated) tools inline, and reports the savings', () => {
    const m = doc.summary
    expect(m.reasonCode).toMatch(/defer/i)
    expect(m.deferredTools).toBeGreaterThan(3000)
    const gated = doc.tools.filter((t) => t.approvalGated)
    expect(gated.map((t) => t.tool)).toEqual(expect.arrayContaining(['write_file', 'delete_entities']))
    for (const t of gated) expect(t.deferred).toBe(false)
    expect(m.inlineTokens).toBe(m.tokens - m.deferredTokens + m.overheadTokens)
    expect(m.savedTokens).toBeGreaterThan(m.tokens / 2)
    expect(m.share).toBeCloseTo(m.tokens / 200_000, 6)
  })

  it('prints tables, the catalog label and a summary; progress goes to stderr as plain lines', async () => {
    const run = await runCli(['audit', '--demo', '--model', 'gpt-4o', '--refresh'])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/context window 128,000 \(gpt-4o\)/)
    for (const text of ['MCP servers', 'Tools of filesystem', 'write_file', 'listed but not callable', 'Summary', 'saved']) expect(run.stdout).toContain(text)
    for (const id of REFERENCE) expect(run.stderr).toMatch(new RegExp(`^${id}: \\d+ tools`, 'm'))
    expect(run.stdout).not.toContain('connecting')
  }, 60_000)
})

describe('toolreg search, inspect, call, exec', () => {
  it('search ranks the filesystem reader first, with --namespace and --hybrid', async () => {
    const words = await runCli(['search', 'read the contents of a text file', '--demo', '--namespace', 'filesystem', '--limit', '3', '--json'])
    expect(words.code).toBe(0)
    const hits = JSON.parse(words.stdout)
    expect(hits).toHaveLength(3)
    expect(hits.every((h) => h.namespace === 'mcp:filesystem')).toBe(true)
    expect(hits[0].name).toMatch(/read_text_file|read_file/)
    const hybrid = await runCli(['search', 'weather forecast for a city', '--demo', '--hybrid', '-k', '5'])
    expect(hybrid.code).toBe(0)
    expect(hybrid.stdout).toMatch(/^ 1\. toucan-\d+\/\S+/m)
    expect(hybrid.stdout.toLowerCase()).toContain('weather')
  }, 60_000)

  it('inspect prints the JSDoc signature; an unknown name exits 5 with suggestions', async () => {
    const run = await runCli(['inspect', 'filesystem/read_text_file', '--demo'])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/@param/)
    expect(run.stdout).toMatch(/path/)
    const missing = await runCli(['inspect', 'no_such_tool_anywhere', '--demo'])
    expect(missing.code).toBe(5)
    expect(missing.stderr).toContain('No tool named "no_such_tool_anywhere"')
  }, 60_000)

  it('call validates, runs, and asks before destructive tools', async () => {
    const destroy = ['call', 'memory/delete_entities', '{"entityNames": ["x"]}', '--demo']
    const [sum, invalid, notJson, refused, approved, search] = await Promise.all([
      runCli(['call', 'everything/get-sum', '{"a": 2, "b": 40}', '--demo']),
      runCli(['call', 'everything/get-sum', '{"a": "two"}', '--demo']),
      runCli(['call', 'everything/get-sum', '{a: 2', '--demo']),
      runCli(destroy),
      runCli([...destroy, '--yes']),
      runCli(['search', 'weather', '--demo', '--json', '-k', '1']),
    ])
    expect(sum.code).toBe(0)
    expect(sum.stdout).toContain('The sum of 2 and 40 is 42')
    expect(invalid.code).toBe(6)
    expect(invalid.stderr).toContain('The params do not match everything/get-sum')
    expect(invalid.stderr).toContain('"b" is a required property')
    expect(invalid.stderr).toContain('@param {number} params.a')
    expect(notJson.code).toBe(6)
    expect(notJson.stderr).toContain('not valid JSON')
    expect(refused.code).toBe(8)
    expect(refused.stderr).toContain('--yes')
    expect(approved.code).toBe(0)
    const listed = await runCli(['call', JSON.parse(search.stdout)[0].id, '{}', '--demo'])
    expect(listed.code).toBe(5)
    expect(listed.stderr).toContain('listed-only catalog')
  }, 120_000)

  it.skipIf(!hasScript)('call asks on a terminal before a destructive tool, and honours the answer', async () => {
    const destroy = ['call', 'memory/delete_entities', '{"entityNames": ["x"]}', '--demo']
    const [yes, no] = await Promise.all([runOnTerminal(destroy, { answer: 'y' }), runOnTerminal(destroy, { answer: 'n' })])
    expect(yes.out).toContain('needs approval: the server marks it destructive. Run it with {"entityNames":["x"]}? [y/N]')
    expect(yes.code).toBe(0)
    expect(yes.out).toContain('Entities deleted successfully')
    expect(no.code).toBe(8)
    expect(no.out).toContain('Not approved')
  }, 60_000)

  it('call and exec ask before a tool the config\'s toolreg.needsApproval lists, as before a destructive one', async () => {
    // get-sum is not destructive: only the config's pattern gates it.
    const config = writeConfig({ mcpServers: { everything: everythingConfig() }, toolreg: { needsApproval: ['everything/get-*'] } })
    const sum = ['call', 'everything/get-sum', '{"a": 2, "b": 40}', '--config', config]
    const exec = ['exec', `return await tools.invoke(${JSON.stringify(buildMcpToolWireId({ serverId: 'everything', serverName: 'everything', toolName: 'get-sum' }))}, { a: 2, b: 40 })`, '--config', config]
    const [refused, approved, execRefused, execApproved, other] = await Promise.all([
      runCli(sum),
      runCli([...sum, '--yes']),
      runCli(exec),
      runCli([...exec, '--yes']),
      runCli(['call', 'everything/echo', '{"message": "hi"}', '--config', config]),
    ])
    expect(refused.code).toBe(8)
    expect(refused.stderr).toContain("everything/get-sum needs approval (the config's toolreg.needsApproval lists it)")
    expect(refused.stdout).not.toContain('42')
    expect(approved.code).toBe(0)
    expect(approved.stdout).toContain('The sum of 2 and 40 is 42')
    expect(execRefused.code).toBe(7)
    expect(execRefused.stderr).toMatch(/TOOLREG_APPROVAL/)
    expect(execApproved.code).toBe(0)
    expect(execApproved.stdout).toContain('The sum of 2 and 40 is 42')
    expect(other.code).toBe(0)
  }, 120_000)

  it('call repairs broken params it can fix without a model, and says so', async () => {
    const run = await runCli(['call', 'everything/get-sum', "{'a': '2', b: 40,}", '--demo'])
    expect(run.code).toBe(0)
    expect(run.stderr).toMatch(/Repaired the params \(.+\): \{"a":2,"b":40\}/)
    expect(run.stdout).toContain('The sum of 2 and 40 is 42')
  }, 60_000)

  it('exec runs code in the sandbox that calls a real MCP tool; a failing script exits 7', async () => {
    const found = await runCli(['search', 'sum of two numbers', '--demo', '--namespace', 'everything', '--json', '-k', '1'])
    const [{ id, name }] = JSON.parse(found.stdout)
    expect(name).toMatch(/get_sum/)
    expect(id).toBe('everything/get-sum')
    // By wire id and by the server/tool name the CLI prints, in parallel.
    const code = `const [r, same] = await parallel(tools.invoke(${JSON.stringify(id)}, { a: 2, b: 40 }), tools[${JSON.stringify(name)}]({ a: 1, b: 1 })); console.log('called twice'); return { r, same }`
    const run = await runCli(['exec', code, '--demo'])
    expect(run.code).toBe(0)
    expect(run.stderr).toContain('called twice')
    expect(run.stdout).toContain('The sum of 2 and 40 is 42')
    expect(run.stdout).toContain('The sum of 1 and 1 is 2')
    const typo = await runCli(['exec', 'return await tools.get_smu({})', '--demo'])
    expect(typo.stderr).toContain('TOOLREG_UNKNOWN_TOOL')
    const failing = await runCli(['exec', 'throw new Error("nope")', '--demo'])
    expect(failing.code).toBe(7)
    expect(failing.stderr).toContain('nope')
    const escape = await runCli(['exec', 'return typeof require + typeof process', '--demo'])
    expect(escape.code).toBe(0)
    expect(escape.stdout).toContain('"undefinedundefined"')
  }, 120_000)

  it('every subcommand has --help; a bad flag exits 2', async () => {
    const commands = ['audit', 'search', 'inspect', 'call', 'exec', 'report']
    const runs = await Promise.all(commands.map((command) => runCli([command, '--help'])))
    for (const [i, command] of commands.entries()) {
      const run = runs[i]
      expect(run.code, command).toBe(0)
      expect(run.stdout).toContain(`Usage: toolreg ${command}`)
      expect(run.stdout).toMatch(new RegExp(`Examples:\\n  \\$ toolreg ${command}\\b`))
    }
    expect((await runCli(['--help'])).stdout).toContain('Exit codes:')
    const bad = await runCli(['audit', '--context-window', 'lots'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('expected a positive whole number')
  }, 60_000)
})

describe('toolreg audit with a config file', () => {
  it('reads a VS Code "servers" config with ${env:VAR} substitution', async () => {
    const { command, args } = everythingConfig()
    const file = writeConfig({ servers: { demo: { type: 'stdio', command: '${env:TOOLREG_TEST_NODE}', args } } })
    const run = await runCli(['audit', '--config', file, '--json', '--refresh'], { env: cliEnv({ TOOLREG_TEST_NODE: command }) })
    expect(run.code).toBe(0)
    const doc = JSON.parse(run.stdout)
    expect(doc.config).toBe(file)
    expect(doc.servers.map((s) => [s.id, s.status])).toEqual([['demo', 'connected']])
    expect(doc.catalog).toBeNull()
  }, 60_000)

  it('a broken config (or one whose every entry is skipped) names the file and the key, and exits 3', async () => {
    const cases = [
      [{ mcpServers: { github: { command: 42 } } }, 'mcpServers.github.command'],
      [{ mcpServers: { remote: { url: 'ftp://example.invalid/mcp' } } }, 'mcpServers.remote'],
      [{ tools: {} }, '"mcpServers"'],
      ['{ "mcpServers": ', 'not valid JSON'],
    ]
    const files = cases.map(([json]) => writeConfig(json))
    const runs = await Promise.all(files.map((file) => runCli(['audit', '--config', file])))
    for (const [i, [, key]] of cases.entries()) {
      const [file, run] = [files[i], runs[i]]
      expect(run.code, key).toBe(3)
      expect(run.stderr).toContain(file)
      // A skipped entry's reason is in the audit's own output, not said twice.
      expect(run.stdout + run.stderr).toContain(key)
    }
  }, 60_000)

  it('a server that dies at start is reported with its stderr and command; the others are audited', async () => {
    const file = writeConfig({
      mcpServers: {
        dies: { command: process.execPath, args: ['-e', "console.error('boom: no API key'); process.exit(3)"] },
        everything: everythingConfig(),
      },
    })
    const run = await runCli(['audit', '--config', file, '--refresh'])
    expect(run.code).toBe(4)
    expect(run.stdout).toContain('Failed servers (1)')
    expect(run.stdout).toContain('| boom: no API key')
    expect(run.stdout).toContain(`command: ${process.execPath} -e`)
    expect(run.stdout).toContain('Tools of everything')
    const json = JSON.parse((await runCli(['audit', '--config', file, '--json', '--refresh'])).stdout)
    const dies = json.servers.find((s) => s.id === 'dies')
    expect(dies.status).toBe('failed')
    expect(dies.stderrTail).toContain('boom: no API key')
    expect(json.servers.find((s) => s.id === 'everything').toolCount).toBeGreaterThan(5)
  }, 60_000)

  it('a server that hangs times out; the others are still audited', async () => {
    const hang = testServer('hangs', ['--hang-on-list'])
    const file = writeConfig({ mcpServers: { hangs: { command: hang.command, args: hang.args }, everything: everythingConfig() } })
    const run = await runCli(['audit', '--config', file, '--timeout', '1500', '--json', '--refresh'])
    expect(run.code).toBe(4)
    const doc = JSON.parse(run.stdout)
    const hangs = doc.servers.find((s) => s.id === 'hangs')
    expect(hangs.status).toBe('failed')
    expect(hangs.error).toMatch(/timed out/)
    expect(doc.servers.find((s) => s.id === 'everything').status).toBe('connected')
    expect(run.ms).toBeLessThan(20_000)
  }, 60_000)
})

/** Pids whose parent is `pid`, from /proc. */
function childrenOf(pid) {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        const stat = readFileSync(`/proc/${d}/stat`, 'utf8')
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid
      } catch {
        return false
      }
    })
    .map(Number)
}

describe('Ctrl-C', () => {
  it('SIGINT during an audit stops every server process and exits 130', async () => {
    const hang = testServer('hangs', ['--hang-on-list'])
    const file = writeConfig({ mcpServers: { hangs: { command: hang.command, args: hang.args }, everything: everythingConfig() } })
    const { child, out, done } = startCli(['audit', '--config', file, '--timeout', '60000', '--refresh'])
    const deadline = Date.now() + 30_000
    while (!/^everything: \d+ tools/m.test(out.stderr) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    const servers = childrenOf(child.pid)
    expect(servers.length).toBe(2)
    child.kill('SIGINT')
    const run = await done
    expect(run.code).toBe(130)
    expect(run.stderr).toContain('SIGINT: stopping every server')
    for (const pid of servers) expect(processGone(pid), `server pid ${pid}`).toBe(true)
  }, 60_000)
})
