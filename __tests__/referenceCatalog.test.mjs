// The registry over the real tools/list captures of four official MCP reference servers
// (committed in fixtures/, see fixtures/README.md).
import { describe, it, expect, beforeAll } from 'vitest'
import { readFileSync } from 'node:fs'
import { tool, jsonSchema } from 'ai'
import { getEncoding } from 'js-tiktoken'
import { applyDeferExposition, shouldDefer } from '../index.js'
import { quietRegistry } from './helpers.mjs'

const servers = ['everything', 'filesystem', 'memory', 'github']

function loadEntries() {
  const entries = []
  for (const server of servers) {
    const capture = JSON.parse(readFileSync(new URL(`../fixtures/${server}.tools_list.json`, import.meta.url), 'utf8'))
    for (const t of capture.tools) {
      entries.push({
        name: `mcp__${server}__${t.name.replace(/-/g, '_')}`,
        namespace: `mcp:${server}`,
        description: (t.description ?? '').split('\n')[0],
        defer: 'auto',
        tool: tool({ description: t.description, inputSchema: jsonSchema(t.inputSchema), execute: async (input) => ({ server, tool: t.name, input }) }),
      })
    }
  }
  return entries
}

describe('the reference MCP servers as one catalog', () => {
  let registry
  let entries
  beforeAll(() => {
    ;({ registry } = quietRegistry())
    entries = loadEntries()
    for (const e of entries) registry.register(e)
  })

  it('registers all 62 tools', () => {
    expect(registry.size).toBe(62)
  })

  it('prices every definition exactly as tiktoken does', async () => {
    const encoder = getEncoding('o200k_base')
    const expected = entries.reduce(
      (sum, e) => sum + encoder.encode(JSON.stringify({ name: e.name, description: e.tool.description, input_schema: e.tool.inputSchema.jsonSchema })).length,
      0,
    )
    const { autoTokens } = await shouldDefer(entries, 128_000)
    expect(autoTokens).toBe(expected)
  })

  it.each([
    ['read the contents of a text file', 'mcp__filesystem__read_text_file'],
    ['create a pull request on github', 'mcp__github__create_pull_request'],
    ['create entities in the knowledge graph', 'mcp__memory__create_entities'],
    ['list the commits of a repository', 'mcp__github__list_commits'],
    ['add two numbers', 'mcp__everything__get_sum'],
    ['move or rename a file', 'mcp__filesystem__move_file'],
  ])('search "%s" ranks %s in the top 3', (query, expected) => {
    const names = registry.search(query, { limit: 3 }).map((h) => h.name)
    expect(names).toContain(expected)
  })

  it('defers the catalog for a 32k model and finds tools through tool_search', async () => {
    const tools = Object.fromEntries(entries.map((e) => [e.name, e.tool]))
    const { tools: exposed, decision, systemPrompt } = await applyDeferExposition(tools, registry, 32_000)
    expect(decision.reasonCode).toBe('auto_pool_deferred')
    expect(Object.keys(exposed).sort()).toEqual(['tool_inspect', 'tool_invoke', 'tool_search'])
    expect(systemPrompt).toContain('<namespace name="mcp:github" count="26"/>')
    const found = await exposed.tool_search.execute({ query: 'search issues in github repositories' }, { toolCallId: 's', messages: [] })
    expect(found.matchedNamespaces[0].namespace).toBe('mcp:github')
    const doc = await exposed.tool_inspect.execute({ name: 'mcp__github__create_issue' }, { toolCallId: 'i', messages: [] })
    expect(doc).toContain('@param {string} params.owner')
    const out = await exposed.tool_invoke.execute(
      { name: 'mcp__github__create_issue', params: { owner: 'o', repo: 'r', title: 't' } },
      { toolCallId: 'c', messages: [] },
    )
    expect(out).toEqual({ server: 'github', tool: 'create_issue', input: { owner: 'o', repo: 'r', title: 't' } })
    await expect(
      exposed.tool_invoke.execute({ name: 'mcp__github__create_issue', params: { owner: 'o' } }, { toolCallId: 'c2', messages: [] }),
    ).rejects.toThrow(/Invalid params for "mcp__github__create_issue"/)
  })
})
