// The everyday verbs of the CLI, run as a user runs them against real servers: `tools [server]`,
// key=value params, `call --call-timeout`, and the servers' prompts and resources (`prompts`,
// `prompt`, `resources`, `read`). The reference server `everything` has prompts, resources and
// get-sum; our rmcp test server hangs on demand, and with --conformance has a binary resource.
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { cliEnv, runCli, writeConfig } from './cliRun.mjs'
import { referenceServer, testServer } from './mcpServers.mjs'
import { paramsFromWords } from '../cli/params.mjs'

/** A fresh cache per test: what one test lists or remembers must not decide another. */
const freshEnv = () => cliEnv({ TOOLREG_CACHE_DIR: mkdtempSync(join(tmpdir(), 'toolreg-cli-verbs-cache-')) })
const entryOf = ({ command, args }) => ({ command, args })

/** everything, our test server, one that never answers tools/list, and a disabled entry. */
const config = () => writeConfig({
  mcpServers: {
    everything: entryOf(referenceServer('everything')),
    test: entryOf(testServer('test')),
    hang: entryOf(testServer('hang', ['--hang-on-list'])),
    off: { command: 'nothing', disabled: true },
  },
})

describe('toolreg tools', () => {
  it('lists every server with its tool count and status, then from the cache; a failure is exit 4', async () => {
    const env = freshEnv()
    const file = config()
    const first = await runCli(['tools', '--config', file, '--json', '--timeout', '3000'], { env })
    expect(first.code).toBe(4)
    const byId = Object.fromEntries(JSON.parse(first.stdout).map((s) => [s.id, s]))
    expect(byId.everything).toMatchObject({ status: 'started', tools: expect.any(Number) })
    expect(byId.everything.tools).toBeGreaterThan(5)
    expect(byId.test).toMatchObject({ status: 'started', tools: expect.any(Number) })
    expect(byId.hang).toMatchObject({ status: 'failed', tools: null, reason: expect.stringMatching(/did not answer within 3 s/) })
    expect(byId.off).toMatchObject({ status: 'skipped', tools: null, reason: expect.stringMatching(/"disabled": true/) })

    const again = await runCli(['tools', '--config', file, '--timeout', '3000'], { env })
    expect(again.code).toBe(4)
    expect(again.stdout).toMatch(new RegExp(`^everything +${byId.everything.tools} tools +cached$`, 'm'))
    expect(again.stdout).toMatch(/^hang +failed: did not answer within 3 s.*--refresh tries it now$/m)
    expect(again.stdout).toMatch(/^off +skipped: "disabled": true/m)
  }, 60_000)

  it('lists one server\'s tools with the tokens of each definition, starting that server alone', async () => {
    const env = freshEnv()
    const file = config()
    // hang is in the config with a long --timeout: starting it would cost 20 s and a warning.
    const json = await runCli(['tools', 'everything', '--config', file, '--json', '--timeout', '20000'], { env })
    expect(json.code).toBe(0)
    expect(json.stderr).not.toMatch(/hang/)
    const tools = JSON.parse(json.stdout)
    expect(tools.every((t) => t.id.startsWith('everything/') && t.tokens > 10)).toBe(true)
    expect(tools.find((t) => t.id === 'everything/get-sum')).toMatchObject({ description: expect.stringMatching(/sum of two numbers/), needsApproval: false })
    const text = await runCli(['tools', 'everything', '--config', file], { env })
    expect(text.stdout).toMatch(/^everything\/get-sum +\d+ tokens +Returns the sum of two numbers$/m)
    expect(text.stdout.trim().split('\n')).toHaveLength(tools.length)
  }, 60_000)

  it('names the server it does not know, and says why a skipped one has no tools', async () => {
    const file = config()
    const typo = await runCli(['tools', 'evrything', '--config', file], { env: freshEnv() })
    expect(typo.code).toBe(5)
    expect(typo.stderr).toMatch(/No server "evrything" in the config\. Did you mean "everything"\?/)
    const skipped = await runCli(['tools', 'off', '--config', file], { env: freshEnv() })
    expect(skipped.code).toBe(3)
    expect(skipped.stderr).toMatch(/off is skipped: "disabled": true/)
  }, 30_000)
})

describe("a tool's progress on stderr", () => {
  const file = writeConfig({ mcpServers: { everything: entryOf(referenceServer('everything')) } })
  const steps = (n) => Array.from({ length: n }, (_, i) => `everything/trigger-long-running-operation: ${i + 1}/${n}`)

  it('call and exec print what the server reports while the tool runs; stdout keeps the result alone', async () => {
    const env = freshEnv()
    const code = "return (await tools.invoke('everything/trigger-long-running-operation', { duration: 0.4, steps: 2 })).content[0].text"
    const [called, ran] = await Promise.all([
      runCli(['call', 'everything/trigger-long-running-operation', 'duration=0.6', 'steps=3', '--config', file, '--json'], { env }),
      runCli(['exec', code, '--config', file, '--json'], { env }),
    ])
    expect(called.code).toBe(0)
    expect(JSON.parse(called.stdout).content[0].text).toMatch(/Long running operation completed/)
    expect(called.stderr.split('\n').filter((line) => line.startsWith('everything/'))).toEqual(steps(3))
    expect(ran.code).toBe(0)
    expect(JSON.parse(ran.stdout).result).toMatch(/Long running operation completed/)
    expect(ran.stderr.split('\n').filter((line) => line.startsWith('everything/'))).toEqual(steps(2))
  }, 60_000)
})

describe('key=value params', () => {
  const file = writeConfig({ mcpServers: { everything: entryOf(referenceServer('everything')) } })

  it('types the values by the tool\'s schema; key:=JSON is raw; one JSON object still works', async () => {
    const env = freshEnv()
    const runs = await Promise.all([
      runCli(['call', 'everything/get-sum', 'a=2', 'b=40', '--config', file], { env }),
      runCli(['call', 'everything/get-sum', 'a:=2', 'b:=40.5', '--config', file], { env }),
      runCli(['call', 'everything/get-sum', '{"a": 2, "b": 40}', '--config', file], { env }),
      runCli(['call', 'everything/get-annotated-message', 'messageType=success', 'includeImage=false', '--config', file, '--json'], { env }),
    ])
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0, 0])
    expect(runs[0].stdout.trim()).toBe('The sum of 2 and 40 is 42.')
    expect(runs[1].stdout.trim()).toBe('The sum of 2 and 40.5 is 42.5.')
    expect(runs[2].stdout.trim()).toBe('The sum of 2 and 40 is 42.')
    expect(JSON.parse(runs[3].stdout).content.some((c) => c.type === 'image')).toBe(false)
  }, 60_000)

  it('refuses bad input in words, naming the key and what it expected', async () => {
    const env = freshEnv()
    const [word, unknown, mixed, twice] = await Promise.all([
      runCli(['call', 'everything/get-sum', 'a=2', 'b=forty', '--config', file], { env }),
      runCli(['call', 'everything/get-sum', 'a=2', 'bb=3', '--config', file], { env }),
      runCli(['call', 'everything/get-sum', 'a=2', '{"b": 3}', '--config', file], { env }),
      runCli(['call', 'everything/get-sum', 'a=2', 'a=3', '--config', file], { env }),
    ])
    expect([word.code, word.stderr.trim()]).toEqual([6, 'b=forty: expected a number.'])
    expect(unknown.code).toBe(6)
    expect(unknown.stderr).toMatch(/everything\/get-sum takes no parameter "bb"\. Did you mean "b"\?.* It takes: a, b\./)
    expect(mixed.code).toBe(2)
    expect(mixed.stderr).toMatch(/The word \{"b": 3\} is not key=value: give the params either as one JSON object or as key=value words/)
    expect([twice.code, twice.stderr.trim()]).toEqual([2, 'a is given twice.'])
  }, 60_000)

  it('fills nested objects from dotted keys and parses arrays, objects, booleans and integers', () => {
    const schema = {
      type: 'object',
      properties: {
        where: { type: 'object', properties: { path: { type: 'string' }, depth: { type: 'integer' } }, additionalProperties: false },
        tags: { type: 'array', items: { type: 'string' } },
        dry: { type: 'boolean' },
        code: { type: 'string' },
        mode: { enum: ['fast', 'slow'] },
        limit: { type: ['integer', 'null'] },
      },
    }
    const parse = (...words) => JSON.parse(paramsFromWords(words, { schema, label: 'x/y' }))
    expect(parse('where.path=/tmp', 'where.depth=2', 'tags=["a","b"]', 'dry=true', 'code=007', 'mode=fast', 'limit=null')).toEqual({ where: { path: '/tmp', depth: 2 }, tags: ['a', 'b'], dry: true, code: '007', mode: 'fast', limit: null })
    expect(parse('limit=3')).toEqual({ limit: 3 })
    expect(paramsFromWords([], { schema, label: 'x/y' })).toBe('{}')
    expect(paramsFromWords(['{broken'], { schema, label: 'x/y' })).toBe('{broken') // for the repair, as before
    const refused = (...words) => {
      try {
        paramsFromWords(words, { schema, label: 'x/y' })
      } catch (error) {
        return [error.exitCode, error.message]
      }
      return null
    }
    expect(refused('where.depth=2.5')).toEqual([6, 'where.depth=2.5: expected a whole number.'])
    expect(refused('limit=many')).toEqual([6, 'limit=many: expected a whole number or null.'])
    expect(refused('dry=yes')).toEqual([6, 'dry=yes: expected a boolean.'])
    expect(refused('tags=a,b')[1]).toMatch(/^tags=a,b: expected a JSON array, and that is not JSON .*Quote JSON for the shell: tags='\["a", 1\]'\.$/)
    expect(refused('where.pth=/tmp')).toEqual([6, 'x/y takes no parameter "pth" inside where. Did you mean "path"? It takes: path, depth.'])
  })
})

describe('call --call-timeout', () => {
  it('bounds the call itself: past it the call is cancelled, and the error says how to give more time', async () => {
    const file = writeConfig({ mcpServers: { test: entryOf(testServer('test')) } })
    const run = await runCli(['call', 'test/slow', 'ms=30000', '--call-timeout', '700', '--config', file], { env: freshEnv() })
    expect(run.code).toBe(7)
    expect(run.stderr.trim()).toBe('test/slow did not answer within 0.7 s, so it was cancelled; give it longer with --call-timeout 2800.')
    expect(run.ms).toBeLessThan(15_000)
    const enough = await runCli(['call', 'test/slow', 'ms=300', '--call-timeout', '10000', '--config', file], { env: freshEnv() })
    expect([enough.code, enough.stdout.trim()]).toEqual([0, 'slept 300 ms'])
  }, 60_000)
})

describe('prompts and resources', () => {
  const file = config()

  it('prompts lists every server\'s prompts with their arguments, and who has none; only the named server starts', async () => {
    const env = freshEnv()
    const [all, json, none] = await Promise.all([
      runCli(['prompts', '--config', file, '--timeout', '3000'], { env }),
      runCli(['prompts', 'everything', '--config', file, '--json', '--timeout', '20000'], { env }),
      runCli(['prompts', 'test', '--config', file, '--timeout', '20000'], { env }),
    ])
    expect(all.code).toBe(4) // hang did not start: the list is without it, and says so
    expect(all.stderr).toMatch(/warning: hang is left out: did not answer within 3 s/)
    expect(all.stdout).toMatch(/^everything\/args-prompt +\(city\*, state\) +A prompt with two arguments/m)
    expect(all.stdout).toMatch(/^No prompts: test\.$/m)
    const prompts = JSON.parse(json.stdout)
    expect(prompts.find((p) => p.id === 'everything/args-prompt')).toMatchObject({ server: 'everything', name: 'args-prompt', arguments: expect.arrayContaining([expect.objectContaining({ name: 'city', required: true })]) })
    expect(json.stderr).not.toMatch(/hang/)
    expect([none.code, none.stdout.trim()]).toEqual([0, 'test has no prompts.'])
  }, 60_000)

  it('prompt prints the messages, with its arguments as key=value; a wrong name or argument is said in words', async () => {
    const env = freshEnv()
    const [got, json, missing, unknown, typo, none, bare] = await Promise.all([
      runCli(['prompt', 'everything/args-prompt', 'city=Paris', 'state=Texas', '--config', file], { env }),
      runCli(['prompt', 'everything/simple-prompt', '--config', file, '--json'], { env }),
      runCli(['prompt', 'everything/args-prompt', 'state=Texas', '--config', file], { env }),
      runCli(['prompt', 'everything/args-prompt', 'city=Paris', 'town=x', '--config', file], { env }),
      runCli(['prompt', 'everything/args-promt', '--config', file], { env }),
      runCli(['prompt', 'test/anything', '--config', file], { env }),
      runCli(['prompt', 'args-prompt', '--config', file], { env }),
    ])
    expect(got.code).toBe(0)
    expect(got.stdout).toMatch(/^user:\n.*Paris, Texas/m)
    expect(JSON.parse(json.stdout)).toMatchObject({ id: 'everything/simple-prompt', messages: [{ role: 'user', content: { type: 'text' } }] })
    expect([missing.code, missing.stderr.trim()]).toEqual([6, 'everything/args-prompt needs city=… (Name of the city).'])
    expect(unknown.code).toBe(6)
    expect(unknown.stderr).toMatch(/everything\/args-prompt takes no parameter "town"\. It takes: city, state\./)
    expect(typo.code).toBe(5)
    expect(typo.stderr).toMatch(/everything has no prompt "args-promt"\. Did you mean "everything\/args-prompt"\? Its prompts: simple-prompt, args-prompt/)
    expect([none.code, none.stderr.trim()]).toEqual([5, 'test has no prompts.'])
    expect(bare.code).toBe(2)
    expect(bare.stderr).toMatch(/Name the prompt as server\/prompt/)
  }, 90_000)

  it('resources lists resources and templates; read prints text, names a binary one, writes it with --out', async () => {
    const env = freshEnv()
    const conformance = writeConfig({ mcpServers: { conf: entryOf(testServer('conf', ['--conformance'])), test: entryOf(testServer('test')) } })
    const out = join(mkdtempSync(join(tmpdir(), 'toolreg-read-')), 'pixel.png')
    const [listed, text, template, binary, written, typo, none] = await Promise.all([
      runCli(['resources', 'everything', '--config', file, '--json'], { env }),
      runCli(['read', 'everything', 'demo://resource/static/document/architecture.md', '--config', file], { env }),
      runCli(['read', 'everything', 'demo://resource/dynamic/text/3', '--config', file], { env }),
      runCli(['read', 'conf', 'test://static-binary', '--config', conformance], { env }),
      runCli(['read', 'conf', 'test://static-binary', '--out', out, '--config', conformance], { env }),
      runCli(['read', 'everything', 'demo://resource/static/document/architectur.md', '--config', file], { env }),
      runCli(['resources', 'test', '--config', conformance], { env }),
    ])
    const { resources, templates } = JSON.parse(listed.stdout)
    expect(resources.map((r) => r.uri)).toContain('demo://resource/static/document/architecture.md')
    expect(templates.map((t) => t.uriTemplate)).toContain('demo://resource/dynamic/text/{resourceId}')
    expect(text.stdout).toMatch(/^# Everything Server/)
    expect(template.stdout).toMatch(/^Resource 3: /)
    expect([binary.code, binary.stdout.trim()]).toEqual([0, '(test://static-binary is binary: image/png, 70 bytes; --out FILE writes it)'])
    expect(written.stdout.trim()).toBe(`Wrote ${out} (70 bytes, image/png).`)
    expect(readFileSync(out).subarray(1, 4).toString()).toBe('PNG')
    expect(typo.code).toBe(7)
    expect(typo.stderr.trim()).toBe('Reading demo://resource/static/document/architectur.md from everything failed: Resource demo://resource/static/document/architectur.md not found. Did you mean "demo://resource/static/document/architecture.md"?')
    expect([none.code, none.stdout.trim()]).toEqual([0, 'test has no resources.'])
  }, 90_000)
})

describe('help', () => {
  it('toolreg --help lists the new commands, and each has examples', async () => {
    const verbs = ['tools', 'prompts', 'prompt', 'resources', 'read']
    const [main, ...helps] = await Promise.all([runCli(['--help']), ...verbs.map((v) => runCli([v, '--help']))])
    for (const verb of verbs) expect(main.stdout).toMatch(new RegExp(`^  ${verb} \\[options\\]`, 'm'))
    for (const [i, help] of helps.entries()) expect(help.stdout).toMatch(new RegExp(`Examples:\\n  \\$ toolreg ${verbs[i]}\\b`))
  }, 30_000)
})
