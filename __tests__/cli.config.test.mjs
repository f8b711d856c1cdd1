// The CLI as people meet it, as a child process on real configs written to temp folders: which
// config it finds, VS Code variables, starting only what a command needs, the tools/list cache,
// failure wording, usage errors, --json, labels, and repaired params.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join, sep } from 'node:path'
import { referenceServer, startHttpTestServer, testServer } from './mcpServers.mjs'
import { cliEnv, hasScript, root, runCli, runOnTerminal, writeConfig } from './cliRun.mjs'
import { loadConfigFile, parseConfig } from '../cli/config.mjs'
import { clientOf, discoverConfigs, userConfigFiles } from '../cli/discover.mjs'
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

  it('reads every project file of that folder; an id two files give different servers is taken from the first', async () => {
    const project = folder({
      '.cursor/mcp.json': { mcpServers: { ev: everything() } },
      '.mcp.json': { mcpServers: { ev: { ...everything(), env: { OTHER: '1' } }, other: everything() } },
    })
    const doc = JSON.parse((await runCli(['audit', '--json'], { cwd: project })).stdout)
    expect(doc.configFiles).toEqual([join(project, '.cursor', 'mcp.json'), join(project, '.mcp.json')])
    expect(doc.servers.map((s) => s.id)).toEqual(['ev', 'other'])
    expect(doc.skipped).toEqual([expect.objectContaining({ id: 'ev', key: 'mcpServers.ev', file: join(project, '.mcp.json'), why: expect.stringContaining('already taken by a different server') })])
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
    const verbose = await runCli(['audit', '--config', file, '--verbose', '--refresh'])
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
    // Both run the server: without --refresh, the one that starts second could take the
    // failure the other just remembered (which keeps no stderr) instead.
    const [run, verbose] = await Promise.all([runCli(['audit', '--config', file, '--refresh']), runCli(['audit', '--config', file, '--verbose', '--refresh'])])
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

/** A file holding `text` as written (comments and all), in a fresh folder. */
function textFile(text, name = 'mcp.json') {
  const file = join(mkdtempSync(join(tmpdir(), 'toolreg-text-')), name)
  writeFileSync(file, text)
  return file
}

describe('config files people have', () => {
  it('reads comments and trailing commas (VS Code accepts them), keeping // and /* inside strings', () => {
    const file = textFile(`{
  // the team's servers
  "servers": {
    /* remote */ "docs": { "url": "https://example.com//a/*b*/", "headers": { "X": "//not a comment" }, },
    "local": { "command": "node", "args": ["server.js",], },
  },
}`)
    const { servers, skipped } = loadConfigFile(file, { env: {} })
    expect(skipped).toEqual([])
    expect(servers.map((s) => s.config)).toEqual([
      expect.objectContaining({ id: 'docs', url: 'https://example.com//a/*b*/', headers: { X: '//not a comment' } }),
      expect.objectContaining({ id: 'local', command: 'node', args: ['server.js'] }),
    ])
  })

  it('a file that is still invalid is named with line:column and the key it is in', () => {
    const cases = [
      ['{\n  "mcpServers": {\n    "a": { "command": "x", "args": ["y" "z"] }\n  }\n}', 'line 3, column 41 (in mcpServers.a.args): expected \',\' or \']\', found \'"\''],
      ['{ "mcpServers": {\n  "a": { "command": \'x\' } } }', 'line 2, column 21 (in mcpServers.a.command): a string in single quotes; JSON needs double quotes'],
      ['{ "servers": {} /* never closed', 'line 1, column 17: a /* comment is never closed with */'],
      ['{ "mcpServers": ', 'line 1, column 17 (in mcpServers): expected a value, found the end of the file'],
    ]
    for (const [text, where] of cases) {
      const file = textFile(text)
      expect(() => loadConfigFile(file), text).toThrow(`${file}: is not valid JSON at ${where}`)
    }
  })

  it('Claude Code\'s ${VAR} and ${VAR:-default} in command, args, env, url and headers; an unset one without a default skips the server, naming it', () => {
    const env = { TOOLREG_BIN: '/opt/bin/server', TOOLREG_KEY: 'k1', TOOLREG_EMPTY: '' }
    const { servers, skipped } = parseConfig({
      mcpServers: {
        local: { command: '${TOOLREG_BIN}', args: ['--key=${TOOLREG_KEY}', '${TOOLREG_MODE:-fast}'], env: { KEY: '${TOOLREG_KEY}', EMPTY: '${TOOLREG_EMPTY:-unused}' } },
        remote: { type: 'http', url: '${TOOLREG_HOST:-https://example.com}/mcp', headers: { Authorization: 'Bearer ${TOOLREG_KEY}' } },
        missing: { command: 'node', env: { TOKEN: '${TOOLREG_SURELY_UNSET}' } },
      },
    }, 'mcp.json', { env })
    expect(servers.map((s) => s.config)).toEqual([
      expect.objectContaining({ command: '/opt/bin/server', args: ['--key=k1', 'fast'], env: { KEY: 'k1', EMPTY: '' } }),
      expect.objectContaining({ url: 'https://example.com/mcp', headers: { Authorization: 'Bearer k1' } }),
    ])
    expect(skipped).toEqual([{ id: 'missing', key: 'mcpServers.missing', file: 'mcp.json', why: expect.stringMatching(/^mcpServers\.missing\.env\.TOKEN uses \$\{TOOLREG_SURELY_UNSET\}, but TOOLREG_SURELY_UNSET is not set: set it .*or give a default as \$\{TOOLREG_SURELY_UNSET:-value\}$/) }])
  })

  it('an entry toolreg cannot run skips that server with the reason, never the file; Windsurf\'s serverUrl is a url; a url ending in /sse is legacy SSE', () => {
    const { servers, skipped } = parseConfig({
      mcpServers: {
        socket: { type: 'ws', url: 'ws://127.0.0.1:9/' },
        windsurf: { serverUrl: 'https://example.com/mcp' },
        legacy: { url: 'https://example.com/v1/sse' },
        named: { url: 'https://example.com/sse', type: 'http' },
        gemini: { httpUrl: 'https://example.com/mcp' },
        ftp: { url: 'ftp://example.com/mcp' },
        typo: { command: 42 },
        ok: { command: 'node' },
      },
    }, 'mcp.json', { env: {} })
    expect(servers.map((s) => [s.config.id, s.config.type, s.transportGuess ?? null])).toEqual([
      ['windsurf', 'streamableHttp', null],
      ['legacy', 'sse', 'the URL ends in /sse and no "type" is given'],
      ['named', 'streamableHttp', null],
      ['ok', 'stdio', null],
    ])
    expect(Object.fromEntries(skipped.map((s) => [s.id, s.why]))).toEqual({
      socket: expect.stringMatching(/^mcpServers\.socket\.type: "ws" \(WebSocket\) is not an MCP transport toolreg speaks; use one of http, /),
      gemini: 'mcpServers.gemini: needs "command" (a local server) or "url" (a remote one); it has "httpUrl"',
      ftp: 'mcpServers.ftp.url: "ftp://example.com/mcp" is not an http:// or https:// URL',
      typo: 'mcpServers.typo.command: expected a non-empty string, got 42',
    })
  })

  it('finds VS Code\'s and Windsurf\'s user configs; a broken file beside them is skipped with its reason, the others read', () => {
    const home = mkdtempSync(join(tmpdir(), 'toolreg-home-'))
    const write = (path, text) => {
      mkdirSync(join(home, path, '..'), { recursive: true })
      writeFileSync(join(home, path), text)
    }
    write('.cursor/mcp.json', '{ "mcpServers": { "a": { "command": "node" } ')
    write('.config/Code/User/mcp.json', '{\n  // VS Code user settings\n  "servers": { "code": { "command": "node", }, },\n}')
    write('.codeium/windsurf/mcp_config.json', '{ "mcpServers": { "surf": { "serverUrl": "https://example.com/mcp" } } }')
    const cwd = mkdtempSync(join(tmpdir(), 'toolreg-elsewhere-'))
    const found = discoverConfigs({ cwd, home, env: {}, platform: 'linux' })
    const [cursor, code, surf] = ['.cursor/mcp.json', '.config/Code/User/mcp.json', '.codeium/windsurf/mcp_config.json'].map((p) => join(home, p))
    expect(found.scope).toBe('user')
    expect(found.files).toEqual([cursor, code, surf])
    expect(found.servers.map((s) => [s.config.id, s.file])).toEqual([['code', code], ['surf', surf]])
    expect(found.skipped).toEqual([{ id: null, key: null, file: cursor, why: 'is not valid JSON at line 1, column 46 (in mcpServers): expected \',\' or \'}\', found the end of the file' }])
    expect(['Cursor', 'VS Code', 'Windsurf']).toEqual(found.files.map(clientOf))
    const vscode = (platform, env = {}) => userConfigFiles({ home: '/h', platform, env }).find((u) => u.client === 'VS Code').file
    expect(vscode('darwin')).toBe(join('/h', 'Library', 'Application Support', 'Code', 'User', 'mcp.json'))
    expect(vscode('win32', { APPDATA: 'C:\\Users\\me\\AppData\\Roaming' })).toBe(join('C:\\Users\\me\\AppData\\Roaming', 'Code', 'User', 'mcp.json'))
    expect(vscode('linux', { XDG_CONFIG_HOME: '/x' })).toBe(join('/x', 'Code', 'User', 'mcp.json'))
  })

  it('a broken .vscode/mcp.json does not stop a valid .cursor/mcp.json beside it; given with --config it is an error (exit 3)', async () => {
    const project = folder({ '.cursor/mcp.json': { mcpServers: { ev: everything() } } })
    mkdirSync(join(project, '.vscode'))
    const broken = join(project, '.vscode', 'mcp.json')
    writeFileSync(broken, '{\n  "servers": {\n    "x": { "command": "node" }\n    "y": {}\n  }\n}')
    const run = await runCli(['audit'], { cwd: project })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain(`skipped the file in ${broken}: is not valid JSON at line 4, column 5 (in servers): expected ',' or '}', found '"'`)
    expect(run.stdout).toMatch(/│ ev +│ Cursor +│ stdio +│ (connected|cached)/)
    const explicit = await runCli(['audit', '--config', broken])
    expect(explicit.code).toBe(3)
    expect(explicit.stderr).toContain(`Config error: ${broken}: is not valid JSON at line 4, column 5`)
  }, 60_000)
})

describe('config files people have, end to end', () => {
  it('Claude Code variables reach the server: ${VAR} and ${VAR:-default}', async () => {
    const { command, args } = everything()
    const project = folder({
      '.mcp.json': {
        mcpServers: {
          vars: { command: '${TOOLREG_TEST_NODE}', args, env: { SET: '${TOOLREG_TEST_TOKEN}', DEFAULTED: '${TOOLREG_SURELY_UNSET:-fallback}' } },
          unset: { command, args, env: { KEY: '${TOOLREG_SURELY_UNSET}' } },
        },
      },
    })
    const env = cliEnv({ TOOLREG_TEST_NODE: command, TOOLREG_TEST_TOKEN: 's3cret' })
    const call = await runCli(['call', 'vars/get-env', '{}'], { cwd: project, env })
    expect(call.code, call.stderr).toBe(0)
    expect(JSON.parse(call.stdout.slice(call.stdout.indexOf('{')))).toMatchObject({ SET: 's3cret', DEFAULTED: 'fallback' })
  }, 60_000)

  it('a url ending in /sse with no "type" is audited as legacy SSE, and says so', async () => {
    const server = await startHttpTestServer()
    try {
      const file = writeConfig({ mcpServers: { legacy: { url: `${server.origin}/sse` } } })
      const run = await runCli(['audit', '--config', file, '--json'])
      expect(run.code, run.stderr).toBe(0)
      expect(JSON.parse(run.stdout).servers).toEqual([expect.objectContaining({ id: 'legacy', transport: 'sse', status: 'connected', transportGuess: 'the URL ends in /sse and no "type" is given' })])
      expect((await runCli(['audit', '--config', file])).stdout).toContain('legacy is taken as legacy SSE: the URL ends in /sse and no "type" is given')
    } finally {
      server.stop()
    }
  }, 60_000)
})

describe('skipped servers stay visible', () => {
  const skippedConfig = () => writeConfig({ mcpServers: { github: { ...everything(), env: { GITHUB_TOKEN: '${TOOLREG_SURELY_UNSET_GH}' } }, ev: everything() } })
  const why = 'mcpServers.github.env.GITHUB_TOKEN uses ${TOOLREG_SURELY_UNSET_GH}, but TOOLREG_SURELY_UNSET_GH is not set'

  it('call and inspect of a skipped server say it was skipped, why and how to fix it (exit 3); search warns', async () => {
    const file = skippedConfig()
    const [call, inspect, bare, search] = await Promise.all([
      runCli(['call', 'github/get-sum', '{"a": 1, "b": 2}', '--config', file]),
      runCli(['inspect', 'github/echo', '--config', file]),
      runCli(['call', 'create_issue', '{}', '--config', file]),
      runCli(['search', 'echo', '--config', file, '--json']),
    ])
    for (const run of [call, inspect]) {
      expect(run.code).toBe(3)
      expect(run.stderr).toContain(`github is skipped, so its tools are unknown: ${why}: set it in the environment toolreg runs in, or give a default as \${TOOLREG_SURELY_UNSET_GH:-value} (in ${file}).`)
      expect(run.stderr).not.toContain('No tools of a server')
    }
    expect(bare.code).toBe(5)
    expect(bare.stderr).toContain('The tools of skipped servers are unknown (github; toolreg audit says why).')
    expect(search.code).toBe(0)
    expect(search.stderr).toContain(`warning: github is skipped: ${why}`)
  }, 60_000)

  it('audit and report list skipped servers; when every server was skipped they exit 3', async () => {
    const partly = skippedConfig()
    const out = join(mkdtempSync(join(tmpdir(), 'toolreg-skipped-report-')), 'r.html')
    const [audit, report] = await Promise.all([runCli(['audit', '--config', partly]), runCli(['report', '--config', partly, '--out', out])])
    expect(audit.code, audit.stderr).toBe(0)
    expect(audit.stdout).toContain(`skipped mcpServers.github: ${why}`)
    expect(audit.stdout).toMatch(/servers +1 MCP \(0 failed\), 1 skipped/)
    expect(report.code).toBe(0)
    const rows = [...readFileSync(out, 'utf8').matchAll(/<tr data-server="([^"]*)"><td>[^<]*<\/td><td>([^<]*)<\/td>/g)].map((m) => [m[1], m[2]])
    expect(rows).toEqual([['github', expect.stringContaining(why.replaceAll('"', '&quot;'))]])

    const none = writeConfig({ mcpServers: { github: { ...everything(), env: { GITHUB_TOKEN: '${TOOLREG_SURELY_UNSET_GH}' } }, off: { ...everything(), disabled: true } } })
    const [text, json, page] = await Promise.all([runCli(['audit', '--config', none]), runCli(['audit', '--config', none, '--json']), runCli(['report', '--config', none, '--out', out])])
    for (const run of [text, json, page]) {
      expect(run.code).toBe(3)
      expect(run.stderr).toContain(`Nothing was audited: every server in ${none} was skipped.`)
    }
    expect(json.stderr).toContain(`github: ${why}`)
    expect(JSON.parse(json.stdout).skipped.map((s) => s.id)).toEqual(['github', 'off'])
    expect(readFileSync(out, 'utf8')).toContain('No tools to draw: every server was skipped (see above).')
  }, 60_000)
})

describe('audit per config file', () => {
  it('each client\'s file is its own per-request total; a server in two files or under two ids is counted once in the combined one', async () => {
    const { command, args, env } = referenceServer('memory')
    const home = folder({
      '.cursor/mcp.json': { mcpServers: { ev: everything(), memory: { command, args, env } } },
      '.claude.json': { mcpServers: { everything: everything() } },
      '.config/Code/User/mcp.json': { servers: { ev: everything() } },
    })
    const files = ['.cursor/mcp.json', '.claude.json', '.config/Code/User/mcp.json'].map((f) => join(home, f))
    const elsewhere = mkdtempSync(join(tmpdir(), 'toolreg-elsewhere-'))
    const [json, text] = await Promise.all([
      runCli(['audit', '--json'], { cwd: elsewhere, env: cliEnv({ HOME: home }) }),
      runCli(['audit'], { cwd: elsewhere, env: cliEnv({ HOME: home }) }),
    ])
    expect(json.code, json.stderr).toBe(0)
    const doc = JSON.parse(json.stdout)
    const server = Object.fromEntries(doc.servers.map((s) => [s.id, s]))
    expect(doc.servers.map((s) => [s.id, s.files, s.sameAs])).toEqual([['ev', [files[0], files[2]], null], ['memory', [files[0]], null], ['everything', [files[1]], 'ev']])
    expect(doc.clients.map((c) => [c.file, c.client, c.servers])).toEqual([[files[0], 'Cursor', ['ev', 'memory']], [files[1], 'Claude Code', ['everything']], [files[2], 'VS Code', ['ev']]])
    const [cursor, claude, vscode] = doc.clients.map((c) => c.summary)
    expect(cursor.tokens).toBe(server.ev.tokens + server.memory.tokens)
    expect(claude.tokens).toBe(server.everything.tokens)
    expect(vscode.tokens).toBe(server.ev.tokens)
    for (const c of [cursor, claude, vscode]) expect(c.inlineTokens).toBe(c.tokens - c.deferredTokens + c.overheadTokens)
    expect(doc.summary).toMatchObject({ mcpServers: 2, sharedServers: 1, tokens: server.ev.tokens + server.memory.tokens, tools: server.ev.toolCount + server.memory.toolCount })
    expect(text.stdout).toContain('Per config file (what each client sends)')
    expect(text.stdout).toMatch(new RegExp(`│ Claude Code ${files[1].replace(/[.]/g, '\\.')} +│ 1 +│ +${server.everything.toolCount} │`))
    expect(text.stdout).toContain('everything is the same server as ev (same command line): the combined total counts it once')
    expect(text.stdout).toContain('Summary (every config together, each server counted once)')
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
