// Pins learned from use: the host's usage store (only with its consent), the scorer's decay and
// token budget through the addon, pins frozen per conversation, approval gates kept, pins
// loaded up front in every strategy, and `toolreg serve --usage-store` marking them
// `anthropic/alwaysLoad`.
import { existsSync, mkdtempSync, readFileSync, writeFileSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { tool, jsonSchema } from 'ai'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ToolRegistry, applyDeferExposition, countTokens } from '../index.js'
import { bin, cliEnv, writeConfig } from './cliRun.mjs'
import { referenceServer } from './mcpServers.mjs'

const DAY = 24 * 3600 * 1000
const quiet = { warn() {} }
const dir = () => mkdtempSync(join(tmpdir(), 'toolreg-pins-'))

/** 30 deferred tools (a few with long schemas), one approval-gated and one eager. */
function catalog(options = {}) {
  const registry = new ToolRegistry({ logger: quiet, ...options })
  const ran = []
  const tools = {}
  const entries = []
  for (let i = 0; i < 30; i++) {
    const name = `tool_${String(i).padStart(2, '0')}`
    const properties = { query: { type: 'string', description: `What tool ${i} looks up` } }
    // tool_05 has a big schema: a pin that does not fit a small budget.
    if (i === 5) for (let k = 0; k < 60; k++) properties[`field_${k}`] = { type: 'string', description: `Field number ${k} of a long form` }
    tools[name] = tool({ description: `Tool number ${i}`, inputSchema: jsonSchema({ type: 'object', properties }), execute: async (input) => (ran.push(name), { ok: name, input }) })
    entries.push({ name, namespace: `ns${i % 3}`, description: `Tool number ${i}`, defer: 'always', tool: tools[name] })
  }
  tools.delete_all = tool({ description: 'Delete everything', inputSchema: jsonSchema({ type: 'object', properties: {} }), needsApproval: true, execute: async () => 'deleted' })
  entries.push({ name: 'delete_all', namespace: 'danger', description: 'Delete everything', defer: 'always', tool: tools.delete_all })
  tools.echo = tool({ description: 'Echo', inputSchema: jsonSchema({ type: 'object', properties: { text: { type: 'string' } } }), execute: async ({ text }) => text })
  entries.push({ name: 'echo', namespace: 'util', description: 'Echo', defer: 'never', tool: tools.echo })
  registry.registerMany(entries)
  return { registry, tools, ran }
}

const use = (tool, at, extra = {}) => JSON.stringify({ tool, namespace: 'ns', at, ...extra })
const callOptions = (id = 'c1') => ({ toolCallId: id, messages: [] })

describe('the usage store', () => {
  it('is written only when the host gives one, and holds names, namespaces, times and ids: never arguments or results', async () => {
    const folder = dir()
    const none = catalog()
    const plain = await applyDeferExposition(none.tools, none.registry, 8_000, { strategy: 'meta-tools', userId: 'u1' })
    await plain.tools.echo.execute({ text: 'secret-argument' }, callOptions())
    expect(none.registry.learnsPins).toBe(false)
    expect(await none.registry.pins()).toEqual([])
    expect(readdirSync(folder)).toEqual([])

    const file = join(folder, 'nested', 'usage.jsonl')
    const { registry, tools } = catalog({ usageStore: file })
    const exposed = await applyDeferExposition(tools, registry, 8_000, { strategy: 'meta-tools', userId: 'u1', assistantId: 'a1' })
    await exposed.tools.echo.execute({ text: 'secret-argument' }, callOptions())
    // tool_invoke records the tool it ran (after inspecting: the inspect-first rule).
    await exposed.tools.tool_inspect.execute({ name: 'tool_07' }, callOptions('c2'))
    await exposed.tools.tool_invoke.execute({ name: 'tool_07', params: { query: 'secret-query' } }, callOptions('c3'))
    await registry.pins() // waits for the writes
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line))
    expect(lines.map((l) => [l.tool, l.namespace, l.user, l.assistant])).toEqual([
      ['echo', 'util', 'u1', 'a1'],
      ['tool_07', 'ns1', 'u1', 'a1'],
    ])
    expect(lines.every((l) => Object.keys(l).sort().join() === 'assistant,at,namespace,tool,user' && Math.abs(l.at - Date.now()) < 60_000)).toBe(true)
    expect(readFileSync(file, 'utf8')).not.toMatch(/secret/)
    // Meta-tools themselves are not uses.
    expect(lines.some((l) => l.tool.startsWith('tool_search') || l.tool === 'tool_inspect' || l.tool === 'tool_invoke')).toBe(false)
  })

  it('tool_exec records the tools its code calls', async () => {
    const kept = []
    const { registry, tools } = catalog({ usageStore: { load: () => kept, record: (u) => void kept.push(u) } })
    const exposed = await applyDeferExposition(tools, registry, 8_000, { exec: true, userId: 'u3' })
    const output = await exposed.tools.tool_exec.execute({ code: 'const a = await tools.tool_04({ query: "q" }); const b = await tools.echo({ text: "t" }); return [a.ok, b]' }, callOptions())
    expect(output.result).toEqual(['tool_04', 't'])
    await registry.pins()
    expect(kept.map((u) => [u.tool, u.user])).toEqual([['tool_04', 'u3'], ['echo', 'u3']])
  })

  it('a callback store receives the same uses; a failing one is logged once and never fails the call', async () => {
    const kept = []
    const { registry, tools } = catalog({ usageStore: { load: () => kept, record: (u) => void kept.push(u) } })
    const exposed = await applyDeferExposition(tools, registry, 8_000, { strategy: 'native', provider: 'anthropic.messages', userId: 'u9' })
    // The native path: the deferred tool stays in the ToolSet; the SDK executes it directly,
    // once a search loaded it.
    const searched = [
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 's1', toolName: 'tool_search', input: { query: 'x' } }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 's1', toolName: 'tool_search', output: { type: 'json', value: { tools: ['tool_03'] } } }] },
    ]
    await exposed.tools.tool_03.execute({ query: 'x' }, { ...callOptions(), messages: searched })
    await registry.pins()
    expect(kept.map((u) => [u.tool, u.user])).toEqual([['tool_03', 'u9']])

    const warnings = []
    const failing = catalog({ usageStore: { load: () => [], record: () => Promise.reject(new Error('disk full')) }, logger: { warn: (m) => warnings.push(m) } })
    const out = await applyDeferExposition(failing.tools, failing.registry, 8_000, {})
    expect(await out.tools.echo.execute({ text: 'hi' }, callOptions())).toBe('hi')
    await out.tools.echo.execute({ text: 'hi' }, callOptions())
    await failing.registry.pins()
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(warnings.filter((w) => w.includes('disk full'))).toHaveLength(1)
  })

  it('a bad store is a typed error from pins(), and only a warning for a conversation, which goes on without pins', async () => {
    const file = join(dir(), 'usage.jsonl')
    writeFileSync(file, `${use('tool_01', Date.now())}\n{"tool": 5}\n`)
    const warnings = []
    const { registry, tools } = catalog({ usageStore: file, logger: { warn: (m) => warnings.push(m) } })
    await expect(registry.pins()).rejects.toMatchObject({ code: 'TOOLREG_USAGE_STORE_INVALID', message: expect.stringContaining('line 2') })
    const conversation = {}
    const exposed = await applyDeferExposition(tools, registry, 8_000, { conversation })
    expect(exposed.pinned).toEqual([])
    expect(exposed.warnings.join('\n')).toMatch(/no pins for this conversation: .*usage store is unreadable: line 2/)
    expect(warnings.join('\n')).toMatch(/line 2/)
    expect(() => new ToolRegistry({ usageStore: 42 })).toThrow(expect.objectContaining({ code: 'TOOLREG_INVALID_ARGUMENT' }))
  })
})

describe('the scorer through registry.pins()', () => {
  it('recent and frequent win, per user and assistant, with why', async () => {
    const now = Date.now()
    const file = join(dir(), 'usage.jsonl')
    const lines = [
      // Old but frequent: 8 uses 60 days ago (four half-lives: ~0.03 each).
      ...Array.from({ length: 8 }, () => use('tool_01', now - 60 * DAY, { user: 'u1', assistant: 'a1' })),
      // Recent: 3 uses today by this user and assistant.
      ...Array.from({ length: 3 }, () => use('tool_02', now - 1000, { user: 'u1', assistant: 'a1' })),
      // Another user's favourite: 4 uses today, a quarter each for u1.
      ...Array.from({ length: 4 }, () => use('tool_03', now - 1000, { user: 'u2', assistant: 'a2' })),
      // The same user with another assistant: half each.
      ...Array.from({ length: 4 }, () => use('tool_04', now - 1000, { user: 'u1', assistant: 'a2' })),
    ]
    writeFileSync(file, `${lines.join('\n')}\n`)
    const { registry } = catalog({ usageStore: file })
    const pins = await registry.pins({ userId: 'u1', assistantId: 'a1', now })
    expect(pins.map((p) => p.name)).toEqual(['tool_02', 'tool_04'])
    const [first, second] = pins
    expect(first).toMatchObject({ namespace: 'ns2', uses: 3, scope: 'user+assistant' })
    expect(first.score).toBeCloseTo(3, 3)
    expect(second).toMatchObject({ uses: 4, scope: 'user' })
    expect(second.score).toBeCloseTo(2, 3)
    expect(first.tokens).toBeGreaterThan(10)
    expect(first.why).toMatch(/^used 3 times \(last .*\), mostly by this user with this assistant; score 3\.00 ≥ 1\.5; \d+ tokens, \d+ of 2000 pinned so far$/)
    // For user u2, their own tool wins and u1's are a quarter each (3 × 0.25 < 1.5).
    expect((await registry.pins({ userId: 'u2', assistantId: 'a2', now })).map((p) => p.name)).toEqual(['tool_03', 'tool_04'])
    // Four uses four days ago: 4 × 0.82 with the default half-life of 14 days, 4 × 0.0625 with one day.
    const withOlder = join(dir(), 'usage.jsonl')
    writeFileSync(withOlder, [...lines, ...Array.from({ length: 4 }, () => use('tool_06', now - 4 * DAY, { user: 'u1', assistant: 'a1' }))].join('\n'))
    const twoWeeks = await catalog({ usageStore: withOlder }).registry.pins({ userId: 'u1', assistantId: 'a1', now })
    expect(twoWeeks.map((p) => p.name)).toEqual(['tool_06', 'tool_02', 'tool_04'])
    expect(twoWeeks[0].score).toBeCloseTo(4 * 0.5 ** (4 / 14), 6)
    const oneDay = await catalog({ usageStore: withOlder, pins: { halfLifeMs: DAY } }).registry.pins({ userId: 'u1', assistantId: 'a1', now })
    expect(oneDay.map((p) => p.name)).toEqual(['tool_02', 'tool_04'])
    // Without ids, every use counts fully: tool_03 and tool_04 (4 each) lead.
    expect((await registry.pins({ now })).map((p) => p.name).slice(0, 3)).toEqual(['tool_03', 'tool_04', 'tool_02'])
  })

  it('fills the token budget with definitions counted exactly, passing over one too big', async () => {
    const now = Date.now()
    const file = join(dir(), 'usage.jsonl')
    // tool_05 (big schema) is the most used; then tool_10, tool_11, tool_12.
    const counts = { tool_05: 9, tool_10: 8, tool_11: 7, tool_12: 6 }
    writeFileSync(file, Object.entries(counts).flatMap(([name, n]) => Array.from({ length: n }, () => use(name, now))).join('\n'))
    const big = catalog({ usageStore: file })
    const all = await big.registry.pins({ now })
    expect(all.map((p) => p.name)).toEqual(['tool_05', 'tool_10', 'tool_11', 'tool_12'])
    const small = all.find((p) => p.name === 'tool_10').tokens
    const budgetTokens = 2 * small + 5
    expect(all[0].tokens).toBeGreaterThan(budgetTokens)
    const { registry, tools } = catalog({ usageStore: file, pins: { budgetTokens } })
    const pins = await registry.pins({ now })
    expect(pins.map((p) => p.name)).toEqual(['tool_10', 'tool_11'])
    expect(pins.reduce((sum, p) => sum + p.tokens, 0)).toBeLessThanOrEqual(budgetTokens)
    // The count is the registry's own: the definition as the provider receives it, in o200k_base.
    const definition = JSON.stringify({ name: 'tool_10', description: tools.tool_10.description, input_schema: await tools.tool_10.inputSchema.jsonSchema })
    expect(Math.abs(pins[0].tokens - countTokens(definition))).toBeLessThan(12)
    const capped = catalog({ usageStore: file, pins: { maxPins: 1 } })
    expect((await capped.registry.pins({ now })).map((p) => p.name)).toEqual(['tool_05'])
  })
})

describe('pins in a conversation', () => {
  it('are computed on its first request and frozen in the conversation object, while uses keep being recorded', async () => {
    const file = join(dir(), 'usage.jsonl')
    writeFileSync(file, [use('tool_08', Date.now()), use('tool_08', Date.now())].join('\n'))
    const { registry, tools } = catalog({ usageStore: file })
    const conversation = {}
    const first = await applyDeferExposition(tools, registry, 8_000, { conversation, strategy: 'meta-tools' })
    expect(first.pinned).toEqual(['tool_08'])
    expect(conversation.toolreg.pins).toEqual(['tool_08'])
    // tool_20 is used a lot meanwhile: this conversation keeps its pins (its cache holds) …
    for (let i = 0; i < 5; i++) await first.tools.tool_08.execute({ query: 'x' }, callOptions())
    const inspect = first.tools.tool_inspect
    await inspect.execute({ name: 'tool_20' }, callOptions())
    for (let i = 0; i < 3; i++) await first.tools.tool_invoke.execute({ name: 'tool_20', params: {} }, callOptions(`i${i}`))
    const again = await applyDeferExposition(tools, registry, 8_000, { conversation: JSON.parse(JSON.stringify(conversation)), strategy: 'meta-tools' })
    expect(again.pinned).toEqual(['tool_08'])
    expect(Object.keys(again.tools)).toEqual(Object.keys(first.tools))
    // … and the next conversation gets the new one.
    const next = await applyDeferExposition(tools, registry, 8_000, { conversation: {}, strategy: 'meta-tools' })
    expect(next.pinned.sort()).toEqual(['tool_08', 'tool_20'])
    // Without a conversation nothing is pinned unless the host says which (its own frozen set); `false` turns them off.
    expect((await applyDeferExposition(tools, registry, 8_000, {})).pinned).toEqual([])
    expect((await applyDeferExposition(tools, registry, 8_000, { pins: ['tool_09'] })).pinned).toEqual(['tool_09'])
    expect((await applyDeferExposition(tools, registry, 8_000, { conversation: {}, pins: false })).pinned).toEqual([])
  })

  it('never pins an approval-gated tool: it stays inline with its gate, and tool_invoke still refuses it', async () => {
    const file = join(dir(), 'usage.jsonl')
    writeFileSync(file, Array.from({ length: 5 }, () => use('delete_all', Date.now())).concat([use('tool_01', Date.now()), use('tool_01', Date.now())]).join('\n'))
    const { registry, tools } = catalog({ usageStore: file })
    expect((await registry.pins()).map((p) => p.name)).toEqual(['tool_01'])
    const exposed = await applyDeferExposition(tools, registry, 8_000, { conversation: {}, strategy: 'meta-tools' })
    expect(exposed.tools.delete_all.needsApproval).toBe(true)
    expect(exposed.tools.tool_01.needsApproval).toBeUndefined()
    await exposed.tools.tool_inspect.execute({ name: 'delete_all' }, callOptions())
    await expect(exposed.tools.tool_invoke.execute({ name: 'delete_all', params: {} }, callOptions())).rejects.toMatchObject({ code: 'TOOLREG_APPROVAL_REQUIRED' })
    // A host's own pin list cannot take the gate off either: the pinned tool is the host's tool.
    const hostPinned = await applyDeferExposition(tools, registry, 8_000, { pins: ['delete_all'], strategy: 'native', provider: 'anthropic.messages' })
    expect(hostPinned.tools.delete_all.needsApproval).toBe(true)
  })

  it('are loaded up front in every strategy', async () => {
    const file = join(dir(), 'usage.jsonl')
    writeFileSync(file, [use('tool_12', Date.now()), use('tool_12', Date.now())].join('\n'))
    const { registry, tools } = catalog({ usageStore: file })
    const expose = (opts) => applyDeferExposition(tools, registry, 8_000, { conversation: {}, ...opts })

    const meta = await expose({ strategy: 'meta-tools' })
    expect(meta.strategy).toBe('meta-tools')
    expect(Object.keys(meta.tools)).toContain('tool_12')
    expect(Object.keys(meta.tools)).not.toContain('tool_13')
    expect(meta.deferredEntries.map((e) => e.name)).not.toContain('tool_12')
    // tool_search ranks only what is not loaded yet.
    const searched = await meta.tools.tool_search.execute({ query: 'Tool number 12', limit: 50 }, callOptions())
    const listed = searched.matchedNamespaces.flatMap((g) => g.tools.map((t) => t.name))
    expect(listed).toContain('tool_13')
    expect(listed).not.toContain('tool_12')

    const anthropic = await expose({ strategy: 'native', provider: 'anthropic.messages' })
    expect(anthropic.strategy).toBe('anthropic-native')
    expect(anthropic.tools.tool_12.providerOptions?.anthropic?.deferLoading).toBeUndefined()
    expect(anthropic.tools.tool_13.providerOptions.anthropic.deferLoading).toBe(true)

    const openai = await expose({ strategy: 'native', provider: 'openai.responses' })
    expect(openai.strategy).toBe('openai-native')
    expect(openai.tools.tool_12.providerOptions?.openai?.deferLoading).toBeUndefined()
    expect(openai.tools.tool_13.providerOptions.openai.deferLoading).toBe(true)

    // Append: the pinned tool stays in the request's `tools`; the others leave it.
    const append = await expose({ strategy: 'append', provider: 'anthropic.messages' })
    expect(append.strategy).toBe('anthropic-append')
    const definition = (name) => ({ type: 'function', name, description: name, inputSchema: { type: 'object', properties: {} } })
    const params = { prompt: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], tools: Object.keys(append.tools).map(definition) }
    const sent = await append.middleware.transformParams({ params, type: 'generate' })
    expect(sent.tools.map((t) => t.name).sort()).toEqual(['delete_all', 'echo', 'tool_12', 'tool_search'])
    // ai@7's own tool search is covered in the ai@7 lane (this ai@6 has none).
  })
})

describe('toolreg serve --usage-store', () => {
  const closing = []
  afterAll(async () => {
    await Promise.allSettled(closing.map((close) => close()))
  })
  const env = cliEnv({ TOOLREG_CACHE_DIR: dir(), TOOLREG_CONFIG_DIR: dir() })
  const server = referenceServer('everything')
  const config = writeConfig({ mcpServers: { [server.id]: { command: server.command, args: server.args } } })

  async function connect(store) {
    const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'serve', '--startup-wait', '60000', '--config', config, '--context-window', '4000', '--usage-store', store], env, stderr: 'pipe' })
    const client = new Client({ name: 'pins-test', version: '1.0.0' })
    await client.connect(transport)
    closing.push(() => client.close())
    return client
  }

  it('records calls and, in the next session, lists the tools used most as alwaysLoad', async () => {
    const store = join(dir(), 'usage.jsonl')
    const first = await connect(store)
    const before = (await first.listTools()).tools
    expect(before.find((t) => t.name === 'get-sum')).toBeUndefined() // deferred behind tool_search
    await first.callTool({ name: 'tool_inspect', arguments: { name: 'get-sum' } })
    for (let i = 0; i < 3; i++) {
      const result = await first.callTool({ name: 'tool_invoke', arguments: { name: 'get-sum', params: { a: 1, b: i } } })
      expect(result.isError).toBeFalsy()
    }
    await first.close()
    const recorded = () => (existsSync(store) ? readFileSync(store, 'utf8').trim().split('\n').filter(Boolean) : [])
    await expect.poll(recorded, { timeout: 10_000 }).toHaveLength(3)
    const lines = recorded().map((l) => JSON.parse(l))
    expect(lines[0]).toMatchObject({ namespace: 'mcp:everything' })
    expect(JSON.stringify(lines)).not.toMatch(/"a"|"b"/)

    const second = await connect(store)
    const listed = (await second.listTools()).tools
    const pinned = listed.find((t) => t.name === 'get-sum')
    expect(pinned?._meta?.['anthropic/alwaysLoad']).toBe(true)
    // A direct call of the pinned tool is forwarded and recorded too.
    expect((await second.callTool({ name: 'get-sum', arguments: { a: 2, b: 3 } })).isError).toBeFalsy()
    await second.close()
    await expect.poll(recorded, { timeout: 10_000 }).toHaveLength(4)
  }, 60_000)
})
