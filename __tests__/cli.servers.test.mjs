// Which servers a CLI command starts, and what a broken one costs: failures are remembered (with
// the reason, shown) so the next commands leave the server out at once; `search -n` starts one
// server; `exec` starts a cached server only when its code calls it. Real servers: our rmcp test
// server, behind a wrapper that counts its starts.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { cliEnv, runCli, writeConfig } from './cliRun.mjs'
import { testServer } from './mcpServers.mjs'

/** A fresh cache per test: what one test remembers must not decide another. */
const freshEnv = () => cliEnv({ TOOLREG_CACHE_DIR: mkdtempSync(join(tmpdir(), 'toolreg-cli-servers-cache-')) })

/** The test server behind a node wrapper that appends a line to `marker` each time it starts. */
function countedServer(id, args = []) {
  const marker = join(mkdtempSync(join(tmpdir(), 'toolreg-starts-')), 'starts')
  writeFileSync(marker, '')
  const { command, args: serverArgs } = testServer(id, args)
  const wrapper = `require('fs').appendFileSync(${JSON.stringify(marker)}, 'start\\n'); process.exitCode = require('child_process').spawnSync(${JSON.stringify(command)}, ${JSON.stringify(serverArgs)}, { stdio: 'inherit' }).status ?? 1`
  return { entry: { command: process.execPath, args: ['-e', wrapper] }, starts: () => readFileSync(marker, 'utf8').split('\n').filter(Boolean).length }
}

describe('a broken server costs one command, not every command', () => {
  it('remembers a failure: the next commands leave the server out at once, say when it failed and how to retry', async () => {
    const env = freshEnv()
    const hanging = countedServer('hanging', ['--hang-on-list'])
    const live = countedServer('live')
    const file = writeConfig({ mcpServers: { hanging: hanging.entry, live: live.entry } })
    const first = await runCli(['search', 'echo a message', '--config', file, '--timeout', '3000'], { env })
    expect(first.code).toBe(0)
    expect(first.stderr).toMatch(/warning: hanging is left out: did not answer within 3 s/)
    expect(hanging.starts()).toBe(1)

    for (const args of [['search', 'echo a message'], ['audit', '--json'], ['exec', 'return 1'], ['report', '--out', join(mkdtempSync(join(tmpdir(), 'toolreg-report-')), 'r.html')]]) {
      const run = await runCli([...args, '--config', file, '--timeout', '20000'], { env })
      // Not started again, so not waited on; the reason and the way to retry are shown.
      expect(hanging.starts(), args[0]).toBe(1)
      const said = args[0] === 'audit' ? JSON.parse(run.stdout).servers.find((s) => s.id === 'hanging') : null
      if (said) expect(said).toMatchObject({ status: 'failed', summary: expect.stringMatching(/did not answer within 3 s/), hint: expect.stringMatching(/failed \d+ min ago .*--refresh tries it now/) })
      else if (args[0] !== 'report') expect(run.stderr, args[0]).toMatch(/hanging is left out: did not answer within 3 s[^\n]*failed \d+ min ago[^\n]*--refresh tries it now/)
    }
    expect(live.starts()).toBe(1) // listed once, then served from the cache
    const table = await runCli(['audit', '--config', file, '--timeout', '20000'], { env })
    expect(table.stdout).toContain('stderr:  (not kept from the earlier command: --refresh runs the server again)')
    expect(hanging.starts()).toBe(1)

    // Naming the server, or --refresh, tries it again.
    const named = await runCli(['inspect', 'hanging/echo', '--config', file, '--timeout', '2000'], { env })
    expect(named.code).not.toBe(0)
    expect(hanging.starts()).toBe(2)
    await runCli(['search', 'echo', '--config', file, '--timeout', '2000', '--refresh'], { env })
    expect(hanging.starts()).toBe(3)
  }, 120_000)

  it('a mistyped tool name is answered from the cached lists, starting no server', async () => {
    const env = freshEnv()
    const one = countedServer('one')
    const two = countedServer('two')
    const file = writeConfig({ mcpServers: { one: one.entry, two: two.entry } })
    expect((await runCli(['tools', '--config', file], { env })).code).toBe(0)
    expect([one.starts(), two.starts()]).toEqual([1, 1])
    for (const verb of ['call', 'inspect']) {
      const typo = await runCli([verb, 'ehco', '--config', file], { env })
      expect(typo.code, verb).toBe(5)
      expect(typo.stderr).toMatch(/No tool named "ehco"\. Did you mean "one\/echo", "two\/echo"\? \(By the servers' cached tool lists; a tool a server added since is reached as SERVER\/TOOL/)
    }
    expect([one.starts(), two.starts()]).toEqual([1, 1])
    // A full name starts its server alone.
    const called = await runCli(['call', 'one/echo', 'text=hi', '--config', file], { env })
    expect(called.code, called.stderr).toBe(0)
    expect([one.starts(), two.starts()]).toEqual([2, 1])
  }, 60_000)

  it('prompts and resources wait on no server whose failure is remembered; once the memory lapses the server is tried again in the background, and joins when it starts', async () => {
    const env = freshEnv()
    const cacheDir = env.TOOLREG_CACHE_DIR
    // A server that cannot start yet: its command is a script we mend later (the config, and
    // so the cache key, stay the same).
    const script = join(mkdtempSync(join(tmpdir(), 'toolreg-mended-')), 'server.sh')
    writeFileSync(script, 'sleep 600\n')
    const { command, args } = testServer('mended', ['--conformance'])
    const file = writeConfig({ mcpServers: { mended: { command: 'sh', args: [script] }, live: { command, args } } })
    const first = await runCli(['prompts', '--config', file, '--timeout', '2000'], { env })
    expect(first.stderr).toMatch(/mended is left out: did not answer within 2 s/)

    const failedFile = () => readdirSync(join(cacheDir, 'tools-list')).find((f) => f.endsWith('.failed.json'))
    const memory = () => JSON.parse(readFileSync(join(cacheDir, 'tools-list', failedFile()), 'utf8'))
    // Remembered: left out at once, by prompts and resources alike.
    for (const verb of ['prompts', 'resources']) {
      const run = await runCli([verb, '--config', file, '--timeout', '20000'], { env })
      expect(run.ms, verb).toBeLessThan(8000)
      expect(run.stderr, verb).toMatch(/mended is left out: did not answer within 2 s[^\n]*failed \d+ min ago and is left out; it is tried again in the background 10 min after that/)
    }

    // Mended, and the memory 11 minutes old: the command still does not wait on it, it says so,
    // and a process of its own tries the server meanwhile.
    writeFileSync(script, `exec ${[command, ...args].map((w) => `'${w}'`).join(' ')}\n`)
    const aged = { ...memory(), savedAt: Date.now() - 11 * 60_000 }
    writeFileSync(join(cacheDir, 'tools-list', failedFile()), JSON.stringify(aged))
    const lapsed = await runCli(['prompts', '--config', file, '--timeout', '20000'], { env })
    expect(lapsed.ms).toBeLessThan(8000)
    expect(lapsed.stderr).toMatch(/mended is left out: [^\n]*is being tried again in the background: --refresh tries it now/)
    for (let i = 0; i < 200 && failedFile(); i++) await new Promise((r) => setTimeout(r, 100))
    expect(failedFile()).toBeUndefined() // the background try listed it: its failure is forgotten
    const joined = await runCli(['prompts', 'mended', '--config', file, '--timeout', '20000'], { env })
    expect(joined.code).toBe(0)
    expect(joined.stdout).toMatch(/^mended\//m)
  }, 120_000)

  it('search --namespace starts only that server', async () => {
    const env = freshEnv()
    const hanging = countedServer('hanging', ['--hang-on-list'])
    const live = countedServer('live')
    const file = writeConfig({ mcpServers: { hanging: hanging.entry, live: live.entry } })
    const run = await runCli(['search', 'echo a message', '--config', file, '-n', 'live', '--json', '--timeout', '30000'], { env })
    expect(run.code).toBe(0)
    expect(JSON.parse(run.stdout)[0].id).toBe('live/echo')
    expect([hanging.starts(), live.starts()]).toEqual([0, 1])
    const typo = await runCli(['search', 'echo', '--config', file, '-n', 'lvie'], { env })
    expect(typo.code).toBe(5)
    expect(typo.stderr).toMatch(/No server "lvie" in the config\. Did you mean "live"\?/)
    expect(hanging.starts()).toBe(0)
  }, 60_000)

  it('exec starts a cached server only when its code calls one of its tools', async () => {
    const env = freshEnv()
    const live = countedServer('live')
    const file = writeConfig({ mcpServers: { live: live.entry } })
    await runCli(['search', 'echo', '--config', file], { env })
    expect(live.starts()).toBe(1)
    const idle = await runCli(['exec', 'return 1 + 1', '--config', file, '--json'], { env })
    expect(JSON.parse(idle.stdout).result).toBe(2)
    expect(live.starts()).toBe(1)
    const called = await runCli(['exec', "return await tools.invoke('live/echo', { text: 'hi' })", '--config', file, '--json'], { env })
    expect(JSON.stringify(JSON.parse(called.stdout).result)).toMatch(/hi/)
    expect(live.starts()).toBe(2)
  }, 60_000)
})
