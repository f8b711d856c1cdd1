// The CLI as people meet it, as a child process on real configs written to temp folders: which
// config it finds, VS Code variables, starting only what a command needs, the tools/list cache,
// failure wording, usage errors, --json, labels, and repaired params.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join, sep } from 'node:path'
import { referenceServer, testServer } from './mcpServers.mjs'
import { cliEnv, hasScript, root, runCli, runOnTerminal, writeConfig } from './cliRun.mjs'
import { plural } from '../cli/format.mjs'

const everything = () => {
  const { command, args } = referenceServer('everything')
  return { command, args }
}
const hanging = () => {
  const { command, args } = testServer('hangs', ['--hang-on-list'])
  return { command, args }
}

/** A folder with `files` ({ relative path: JSON }) written into it. */
function folder(files, base = mkdtempSync(join(tmpdir(), 'toolreg-project-'))) {
  for (const [path, json] of Object.entries(files)) {
    mkdirSync(join(base, path, '..'), { recursive: true })
    writeFileSync(join(base, path), JSON.stringify(json, null, 2))
  }
  return base
}

describe('config discovery (no --config)', () => {
  it('picks the project file from a folder below it, and says which file it used', async () => {
    const project = folder({ '.cursor/mcp.json': { mcpServers: { ev: everything() } } })
    const below = join(project, 'src', 'deep')
    mkdirSync(below, { recursive: true })
    const run = await runCli(['audit', '--json'], { cwd: below })
    expect(run.code, run.stderr).toBe(0)
    const doc = JSON.parse(run.stdout)
    expect(doc.configFiles).toEqual([join(project, '.cursor', 'mcp.json')])
    expect(doc.servers.map((s) => [s.id, s.status])).toEqual([['ev', 'connected']])
    expect(doc.catalog).toBeNull()
    const text = await runCli(['audit'], { cwd: below })
    expect(text.stdout.split('\n')[0]).toBe(`toolreg audit: ${join(project, '.cursor', 'mcp.json')}`)
  }, 60_000)

  it('reads every project file of that folder; an id in two files is taken from the first', async () => {
    const project = folder({
      '.cursor/mcp.json': { mcpServers: { ev: everything() } },
      '.mcp.json': { mcpServers: { ev: everything(), other: everything() } },
    })
    const doc = JSON.parse((await runCli(['audit', '--json'], { cwd: project })).stdout)
    expect(doc.configFiles).toEqual([join(project, '.cursor', 'mcp.json'), join(project, '.mcp.json')])
    expect(doc.servers.map((s) => s.id)).toEqual(['ev', 'other'])
    expect(doc.skipped).toEqual([expect.objectContaining({ key: 'mcpServers.ev', why: expect.stringContaining('already taken') })])
  }, 60_000)

  it('falls back to the user\'s client configs (Cursor, Claude Code) at their standard paths', async () => {
    const home = folder({
      '.config/Claude/claude_desktop_config.json': { preferences: { menuBarEnabled: false } },
      '.cursor/mcp.json': { mcpServers: { fromCursor: everything() } },
      '.claude.json': { numStartups: 3, mcpServers: { fromClaudeCode: everything() } },
    })
    const elsewhere = mkdtempSync(join(tmpdir(), 'toolreg-elsewhere-'))
    const doc = JSON.parse((await runCli(['audit', '--json'], { cwd: elsewhere, env: cliEnv({ HOME: home }) })).stdout)
    expect(doc.configFiles).toEqual([join(home, '.cursor', 'mcp.json'), join(home, '.claude.json')])
    expect(doc.servers.map((s) => s.id)).toEqual(['fromCursor', 'fromClaudeCode'])
    const desktop = folder({ '.config/Claude/claude_desktop_config.json': { mcpServers: { fromDesktop: everything() } } })
    const other = JSON.parse((await runCli(['audit', '--json'], { cwd: elsewhere, env: cliEnv({ HOME: desktop }) })).stdout)
    expect(other.configFiles).toEqual([join(desktop, '.config', 'Claude', 'claude_desktop_config.json')])
  }, 60_000)

  it('with nothing found, runs the demo and says so at the top and the bottom', async () => {
    const run = await runCli(['audit'], { cwd: mkdtempSync(join(tmpdir(), 'toolreg-empty-')) })
    expect(run.code).toBe(0)
    const lines = run.stdout.trim().split('\n')
    for (const line of [lines[0], lines.at(-1)]) expect(line).toMatch(/^No MCP config found \(looked for .+\)\. This is the DEMO setup, not your servers/)
  }, 60_000)
})

describe('VS Code variables', () => {
  it('resolves ${workspaceFolder}, ${userHome}, ${pathSeparator} and ${env:…}; skips ${input:…} servers with the reason', async () => {
    const { command, args } = everything()
    const project = folder({
      '.vscode/mcp.json': {
        inputs: [{ id: 'token', type: 'promptString', description: 'API token', password: true }],
        servers: {
          vars: { type: 'stdio', command, args, env: { WS: '${workspaceFolder}', HOME_DIR: '${userHome}', SEP: '${pathSeparator}', TOKEN: '${env:TOOLREG_TEST_TOKEN}' } },
          asks: { type: 'stdio', command, args, env: { TOKEN: '${input:token}' } },
          unset: { type: 'stdio', command, args, env: { KEY: '${env:TOOLREG_SURELY_UNSET}' } },
          editor: { type: 'stdio', command, args: [...args, '${command:pickFile}'] },
        },
      },
    })
    const env = cliEnv({ TOOLREG_TEST_TOKEN: 's3cret' })
    const audit = await runCli(['audit', '--json'], { cwd: project, env })
    expect(audit.code, audit.stderr).toBe(0)
    const doc = JSON.parse(audit.stdout)
    expect(doc.servers.map((s) => [s.id, s.status])).toEqual([['vars', 'connected']])
    expect(doc.skipped).toEqual([
      expect.objectContaining({ key: 'servers.asks', why: expect.stringMatching(/servers\.asks\.env\.TOKEN uses \$\{input:token\}, which VS Code asks the user for/) }),
      expect.objectContaining({ key: 'servers.unset', why: expect.stringMatching(/\$\{env:TOOLREG_SURELY_UNSET\}, but TOOLREG_SURELY_UNSET is not set/) }),
      expect.objectContaining({ key: 'servers.editor', why: expect.stringMatching(/\$\{command:pickFile\}, which only the editor can resolve/) }),
    ])
    const call = await runCli(['call', 'vars/get-env', '{}'], { cwd: project, env })
    expect(call.code, call.stderr).toBe(0)
    const seen = JSON.parse(call.stdout.slice(call.stdout.indexOf('{')))
    expect(seen).toMatchObject({ WS: project, HOME_DIR: env.HOME, SEP: sep, TOKEN: 's3cret' })
  }, 60_000)
})

describe('starting only what a command needs', () => {
  it('call server/tool starts that server alone: a hanging neighbour does not hold it up', async () => {
    const file = writeConfig({ mcpServers: { hangs: hanging(), a: everything(), b: everything(), c: everything() } })
    // With every server started, this would wait out the 60 s timeout of `hangs`.
    const run = await runCli(['call', 'a/get-sum', '{"a": 2, "b": 40}', '--config', file, '--timeout', '60000'])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain('The sum of 2 and 40 is 42')
    expect(run.ms).toBeLessThan(30_000)
    const inspect = await runCli(['inspect', 'b/echo', '--config', file, '--timeout', '60000', '--json'])
    expect(inspect.code).toBe(0)
    expect(JSON.parse(inspect.stdout)).toMatchObject({ id: 'b/echo', server: 'b', tool: 'echo', inputSchema: { type: 'object' } })
    expect(inspect.ms).toBeLessThan(30_000)
  }, 60_000)

  it('search lists a server once, then answers from the cache until --refresh', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolreg-starts-'))
    const marker = join(dir, 'started')
    const { command, args } = everything()
    // The server appends a line to `marker` each time it starts.
    const wrapper = { command: 'sh', args: ['-c', `echo x >> '${marker}'; exec '${command}' "$@"`, 'sh', ...args] }
    const file = writeConfig({ mcpServers: { ev: wrapper } })
    const env = cliEnv({ TOOLREG_CACHE_DIR: join(dir, 'cache') })
    const starts = () => readFileSync(marker, 'utf8').trim().split('\n').length
    const search = (...extra) => runCli(['search', 'add two numbers', '--config', file, '--json', ...extra], { env })
    const first = await search()
    expect(first.code, first.stderr).toBe(0)
    expect(JSON.parse(first.stdout)[0].id).toBe('ev/get-sum')
    expect(starts()).toBe(1)
    const second = await search()
    expect(JSON.parse(second.stdout)).toEqual(JSON.parse(first.stdout))
    expect(starts()).toBe(1)
    const inspect = await runCli(['inspect', 'ev/get-sum', '--config', file], { env })
    expect(inspect.stdout).toContain('@param {number} params.a')
    expect(starts()).toBe(1)
    await search('--refresh')
    expect(starts()).toBe(2)
  }, 60_000)
})

describe('failures in one sentence', () => {
  let http
  let url
  beforeAll(async () => {
    http = createServer((req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' })
      res.end(`<!DOCTYPE html><html><head><title>404 Not Found</title></head><body>${'<p>padding</p>'.repeat(200)}</body></html>`)
    })
    await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${http.address().port}/mcp`
  })
  afterAll(() => new Promise((resolve) => http.close(resolve)))

  it('an HTTP 404 page and an unreachable server: a sentence each, transport internals only with --verbose', async () => {
    const file = writeConfig({ mcpServers: { page: { url }, gone: { url: 'http://127.0.0.1:9/mcp' }, ev: everything() } })
    const run = await runCli(['audit', '--config', file])
    expect(run.code).toBe(4)
    expect(run.stdout).toContain(`page (mcpServers.page): ${url} answered HTTP 404 Not Found (an HTML page titled "404 Not Found"): no MCP endpoint at that path`)
    expect(run.stdout).toContain('gone (mcpServers.gone): could not reach http://127.0.0.1:9/mcp: nothing is listening at 127.0.0.1:9 (connection refused)')
    expect(run.stdout).not.toMatch(/rmcp::|reqwest|<p>padding/)
    const verbose = await runCli(['audit', '--config', file, '--verbose'])
    expect(verbose.stdout).toMatch(/error: .*HTTP 404/)
    const search = await runCli(['search', 'echo', '--config', file])
    expect(search.code).toBe(0)
    expect(search.stderr).toMatch(/^warning: page is left out: .* answered HTTP 404 .*\(--verbose for details\)$/m)
    expect(search.stderr).not.toMatch(/rmcp::|<p>padding/)
  }, 60_000)

  it('a server that does not answer in time gets a hint: --timeout', async () => {
    const file = writeConfig({ mcpServers: { hangs: hanging() } })
    const run = await runCli(['audit', '--config', file, '--timeout', '1500'])
    expect(run.code).toBe(4)
    expect(run.stdout).toContain('hangs (mcpServers.hangs): did not answer within 1.5 s')
    expect(run.stdout).toMatch(/hint: +if it is only slow to start, give it longer with --timeout 6000$/m)
  }, 60_000)

  /** A stand-in named npx that runs `server`: the CLI knows package runners by their command's name. */
  function fakeNpx({ command, args }) {
    const dir = mkdtempSync(join(tmpdir(), 'toolreg-npx-'))
    writeFileSync(join(dir, 'npx'), `#!/bin/sh\nexec '${command}' ${args.map((a) => `'${a}'`).join(' ')}\n`, { mode: 0o755 })
    return writeConfig({ mcpServers: { pkg: { command: join(dir, 'npx'), args: ['-y', 'some-mcp-server'] } } })
  }

  it('a server started by npx that is slow to start (a first download) is waited for unless --timeout says otherwise', async () => {
    const file = fakeNpx(testServer('pkg', ['--slow-start-ms', '2500']))
    const [cut, waited] = await Promise.all([
      runCli(['call', 'pkg/echo', '{"text": "hi"}', '--config', file, '--timeout', '1000']),
      runCli(['call', 'pkg/echo', '{"text": "hi"}', '--config', file]),
    ])
    expect(cut.code).toBe(4) // the server did not start: not "no such tool"
    expect(cut.stderr).toMatch(/^warning: pkg is left out: did not answer within 1 s/m)
    expect(waited.code, waited.stderr).toBe(0)
    expect(waited.stdout).toContain('hi')
  }, 60_000)

  it('a server started by npx that does not answer: the hint is the first download', async () => {
    const file = fakeNpx(hanging())
    const run = await runCli(['audit', '--config', file, '--timeout', '1500'])
    expect(run.code).toBe(4)
    expect(run.stderr).toContain('pkg: starting: ')
    expect(run.stderr).toContain('(a first run may download the package)')
    expect(run.stdout).toContain('pkg (mcpServers.pkg): did not answer within 1.5 s')
    expect(run.stdout).toMatch(/hint: +a first run of \S*npx may still be downloading the package: run it once by hand, or give it longer with --timeout 300000/)
  }, 60_000)

  it('a server that writes garbage on stdout is named as such, not as slow', async () => {
    const { command, args } = testServer('noisy', ['--malformed=only'])
    const file = writeConfig({ mcpServers: { noisy: { command, args } } })
    const run = await runCli(['audit', '--config', file, '--timeout', '1500'])
    expect(run.code).toBe(4)
    expect(run.stdout).toContain('noisy (mcpServers.noisy): it wrote a line on stdout that is not an MCP message (the first: "this is not json") and never answered')
    expect(run.stdout).toMatch(/hint: +a stdio server must write only JSON-RPC on stdout/)
  }, 60_000)

  it('a long stderr keeps the line that names the cause; --verbose shows all of it', async () => {
    const script = "console.error('Error: ERR_MODULE_NOT_FOUND: cannot find package zod'); for (let i = 0; i < 30; i++) console.error('    at frame ' + i); process.exit(1)"
    const file = writeConfig({ mcpServers: { broken: { command: process.execPath, args: ['-e', script] } } })
    const [run, verbose] = await Promise.all([runCli(['audit', '--config', file]), runCli(['audit', '--config', file, '--verbose'])])
    expect(run.stdout).toContain('broken (mcpServers.broken): the server process exited with status 1 before it was ready; its stderr says why')
    expect(run.stdout).toContain('| Error: ERR_MODULE_NOT_FOUND: cannot find package zod\n      | …\n      |     at frame 20\n')
    expect(run.stdout).not.toContain('at frame 19\n')
    expect(verbose.stdout).toContain('|     at frame 19\n')
  }, 60_000)

  it('a command that does not exist is named', async () => {
    const file = writeConfig({ mcpServers: { typo: { command: 'no-such-mcp-server-xyz' } } })
    const run = await runCli(['audit', '--config', file])
    expect(run.stdout).toContain('typo (mcpServers.typo): the command "no-such-mcp-server-xyz" was not found')
    expect(run.stdout).toMatch(/hint: +install it, or give its full path/)
  }, 60_000)
})

describe('the command line itself', () => {
  it('no usage error prints more than 3 lines, and each points to --help', async () => {
    const cases = [['bogus'], ['search'], ['audit', '--context-window', 'lots'], ['call'], ['inspect', 'a', 'b'], ['audit', '--no-such-flag'], ['exec'], ['audit', '--model', 'mystery-1']]
    const runs = await Promise.all(cases.map((args) => runCli(args)))
    for (const [i, run] of runs.entries()) {
      expect(run.code, cases[i].join(' ')).toBe(2)
      expect(run.stdout).toBe('')
      const lines = run.stderr.trim().split('\n')
      expect(lines.length, run.stderr).toBeLessThanOrEqual(3)
    }
    expect(runs[1].stderr).toBe(`error: missing required argument 'query'\nRun "toolreg search --help" for usage.\n`)
  }, 60_000)

  it('--json on inspect, exec and report', async () => {
    const file = writeConfig({ mcpServers: { ev: everything() } })
    const out = join(mkdtempSync(join(tmpdir(), 'toolreg-report-')), 'r.html')
    const [inspect, exec, report] = await Promise.all([
      runCli(['inspect', 'ev/get-sum', '--config', file, '--json']),
      runCli(['exec', 'console.log("hi"); return 1 + 1', '--config', file, '--json']),
      runCli(['report', '--config', file, '--out', out, '--json']),
    ])
    expect(JSON.parse(inspect.stdout)).toMatchObject({ id: 'ev/get-sum', signature: expect.stringContaining('@param {number} params.a') })
    expect(JSON.parse(exec.stdout)).toEqual({ result: 2, logs: ['hi'] })
    expect(exec.stderr).toBe('')
    expect(JSON.parse(report.stdout)).toEqual({ file: out, bytes: readFileSync(out).length, servers: 1, tools: expect.any(Number), failedServers: 0 })
  }, 60_000)

  it('labels o200k counts as exact for OpenAI models and as an estimate for others', async () => {
    const file = writeConfig({ mcpServers: { ev: everything() } })
    const [claude, gpt] = await Promise.all([runCli(['audit', '--config', file, '--model', 'claude-sonnet-4']), runCli(['audit', '--config', file, '--model', 'gpt-4o'])])
    expect(claude.stdout).toContain('o200k_base tokens (an estimate for claude-sonnet-4, whose tokenizer differs; exact for OpenAI models) of each tool definition')
    expect(gpt.stdout).toContain('Exact o200k_base tokens of each tool definition')
  }, 60_000)

  it('a repair that may change the params is shown and needs a yes; a faithful one just runs', async () => {
    const file = writeConfig({ mcpServers: { ev: everything() } })
    const truncated = ['call', 'ev/echo', '{"message": "hi', '--config', file]
    const [refused, confirmed, faithful] = await Promise.all([runCli(truncated), runCli([...truncated, '--yes']), runCli(['call', 'ev/echo', "{'message': 'hi',}", '--config', file])])
    expect(refused.code).toBe(6)
    expect(refused.stderr).toContain('Repaired the params (json:truncated): {"message":"hi"}')
    expect(refused.stderr).toContain('pass --yes to run the repaired call')
    expect(refused.stdout).toBe('')
    expect(confirmed.code).toBe(0)
    expect(confirmed.stdout).toContain('Echo: hi')
    expect(faithful.code).toBe(0)
    expect(faithful.stderr).toMatch(/^Repaired the params \(json:trailing-comma, json:single-quotes\)/)
  }, 60_000)

  it.skipIf(!hasScript)('on a terminal: a live line per starting server, and a repaired call asked about before it runs', async () => {
    const file = writeConfig({ mcpServers: { ev: everything() } })
    const truncated = ['call', 'ev/echo', '{"message": "hi', '--config', file]
    const [yes, no] = await Promise.all([runOnTerminal(truncated, { answer: 'y' }), runOnTerminal(truncated, { answer: 'n' })])
    for (const run of [yes, no]) {
      expect(run.out).toContain(`servers from ${file}`)
      expect(run.out).toMatch(/ev +starting: \S*node /)
      expect(run.out).toMatch(/✔ ev +\d+ tools/)
      expect(run.out).toContain('Repaired the params (json:truncated): {"message":"hi"}\r\nThis repair may have changed what you typed. Run ev/echo with it? [y/N]')
    }
    expect(yes.code).toBe(0)
    expect(yes.out).toContain('Echo: hi')
    expect(no.code).toBe(8)
    expect(no.out).toContain('Not run: the repaired params were declined.')
    expect(no.out).not.toContain('Echo: hi')
  }, 60_000)

  it('"did you mean" by edit distance on the tool name, as server/tool', async () => {
    const file = writeConfig({ mcpServers: { ev: everything() } })
    const run = await runCli(['inspect', 'ev/get-sm', '--config', file])
    expect(run.code).toBe(5)
    expect(run.stderr).toContain('ev has no tool "get-sm". Did you mean "ev/get-sum"?')
    const bare = await runCli(['call', 'get-sun', '{}', '--config', file])
    expect(bare.stderr).toContain('No tool named "get-sun". Did you mean "ev/get-sum"?')
  }, 60_000)
})

describe('small things the CLI says', () => {
  it('--version and --help load neither the addon nor the AI SDK', () => {
    const script = `import { createRequire } from 'node:module'
import { main } from './cli/program.mjs'
for (const args of [['--version'], ['--help'], ['audit', '--help']]) await main(args)
const loaded = Object.keys(createRequire(import.meta.url).cache).filter((file) => /\\.node$|binding\\.js$|[\\\\/]ai[\\\\/]/.test(file))
process.stderr.write(JSON.stringify(loaded))`
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: root, encoding: 'utf8', env: cliEnv() })
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+/)
    expect(run.stdout).toContain('--timeout <ms>')
    expect(JSON.parse(run.stderr)).toEqual([])
  })

  it('counts agree with their nouns', () => {
    expect([0, 1, 2, 1000].map((n) => plural(n, 'tool'))).toEqual(['0 tools', '1 tool', '2 tools', '1,000 tools'])
  })

  it('auth status says a server with an Authorization header needs no sign-in', async () => {
    const file = writeConfig({ mcpServers: { keyed: { url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer x' } }, apikey: { url: 'http://127.0.0.1:9/mcp', headers: { 'X-API-Key': 'x' } }, open: { url: 'http://127.0.0.1:9/mcp' } } })
    const run = await runCli(['auth', 'status', '--config', file])
    expect(run.stdout).toMatch(/^keyed {2}needs no sign-in: its config sends credentials in Authorization$/m)
    expect(run.stdout).toMatch(/^apikey {2}not signed in; its config sends credentials in X-API-Key, so it may need none$/m)
    expect(run.stdout).toMatch(/^open {2}not signed in$/m)
    expect(run.stdout).not.toContain('Bearer x')
  })

  it('a syntax error in exec code is placed in the user\'s code, never at the wrapper\'s }', async () => {
    const file = writeConfig({ mcpServers: {} })
    const [cut, bad] = await Promise.all([runCli(['exec', 'const a = 1\nreturn a +', '--config', file]), runCli(['exec', 'const a = 1\nreturn a +* 2', '--config', file])])
    expect(cut.stderr).toMatch(/TOOLREG_EXEC_SYNTAX\): the code ends before something it opened .* is closed/)
    expect(bad.stderr).toMatch(/TOOLREG_EXEC_SYNTAX\): Unexpected token '\*' at line 2, column 11/)
    for (const run of [cut, bad]) {
      expect(run.code).toBe(7)
      expect(run.stderr).not.toContain("'}'")
    }
  }, 30_000)

  it('a server that dies during a call: --verbose shows the end of its stderr', async () => {
    const file = writeConfig({ mcpServers: { dies: testServer('dies') } })
    const [plain, verbose] = await Promise.all([runCli(['call', 'dies/crash', '{}', '--config', file]), runCli(['call', 'dies/crash', '{}', '--config', file, '--verbose'])])
    for (const run of [plain, verbose]) expect(run.code).toBe(7)
    expect(verbose.stderr).toMatch(/exited with status 3[\s\S]*The server's stderr ended with:[\s\S]*\| crash: exiting mid-call/)
    expect(plain.stderr).not.toContain('crash: exiting mid-call')
  }, 30_000)
})
