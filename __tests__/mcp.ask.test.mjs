// Servers asking their client, through McpHub against our rmcp test server over stdio.
// Elicitation: its `ask` tool sends `elicitation/create` for { name (default "Ada"), age
// (default 36) } and returns the answer it got as text. Sampling: in its conformance mode,
// `test_sampling {prompt}` sends `sampling/createMessage` and answers "LLM response: <text>".
import { afterEach, describe, expect, it } from 'vitest'
import { McpHub } from '../index.js'
import { testServer } from './mcpServers.mjs'

let hub
afterEach(() => hub?.close())

// The server's own `elicitation/create` and `sampling/createMessage` requests exist up to
// 2025-11-25 (the hub pins that revision for them); from 2026-07-28 on a server asks through an
// `input_required` result, answered by the same callbacks (`pin` left out).
const SESSION_ERA = '2025-11-25'

async function ask(onElicitation, pin) {
  hub = new McpHub({ servers: [{ ...testServer('t'), ...(pin && { protocolVersion: pin }) }], ...(onElicitation && { onElicitation }) })
  const result = await hub.callTool('t', 'ask', {}, { timeoutMs: 20_000 })
  return result.content[0].text
}

describe('McpHub elicitation', () => {
  it.each([['2026-07-28'], [SESSION_ERA]])("hands the server's question to onElicitation and fills in the defaults the answer left out (%s)", async (revision) => {
    const asked = []
    const answer = await ask(async (request) => {
      asked.push(request)
      return { action: 'accept', content: { age: 41 } }
    }, revision)
    expect(JSON.parse(answer)).toEqual({ action: 'accept', content: { age: 41, name: 'Ada' } })
    expect(asked).toHaveLength(1)
    expect(asked[0]).toMatchObject({ serverId: 't', message: 'Who are you?', requestedSchema: { type: 'object' } })
  })

  it('passes a decline through unchanged', async () => {
    expect(JSON.parse(await ask(() => ({ action: 'decline' })))).toEqual({ action: 'decline' })
  })

  it('without onElicitation declares no capability, so the server cannot ask', async () => {
    const answer = await ask(undefined, SESSION_ERA)
    expect(answer).toMatch(/^elicitation failed/)
  })

  it('at 2026-07-28 a question the host cannot answer fails the call, saying why', async () => {
    await expect(ask()).rejects.toMatchObject({ code: 'TOOLREG_MCP_CALL', message: expect.stringMatching(/does not support elicitation/) })
  })

  it('a failing onElicitation fails that request at the server, and the hub carries on', async () => {
    const answer = await ask(async () => {
      throw new Error('dialog crashed')
    }, SESSION_ERA)
    expect(answer).toMatch(/^elicitation failed: .*dialog crashed/)
    const echoed = await hub.callTool('t', 'echo', { text: 'still here' })
    expect(echoed.content[0].text).toBe('still here')
  })

  it('refuses an onElicitation that is not a function', () => {
    expect(() => new McpHub({ onElicitation: 'yes' })).toThrow(/onElicitation/)
  })
})

describe('McpHub sampling', () => {
  async function sample(onSampling) {
    hub = new McpHub({ servers: [{ ...testServer('c', ['--conformance']), protocolVersion: SESSION_ERA }], ...(onSampling && { onSampling }) })
    return hub.callTool('c', 'test_sampling', { prompt: 'Name a colour' }, { timeoutMs: 20_000 })
  }

  it("hands the server's request to onSampling and returns the host model's answer to it", async () => {
    const asked = []
    const result = await sample(async (request) => {
      asked.push(request)
      return { role: 'assistant', content: { type: 'text', text: 'teal' }, model: 'host-model', stopReason: 'endTurn' }
    })
    expect(result.isError).not.toBe(true)
    expect(result.content[0].text).toBe('LLM response: teal')
    expect(asked).toEqual([
      expect.objectContaining({ serverId: 'c', maxTokens: 100, messages: [{ role: 'user', content: { type: 'text', text: 'Name a colour' } }] }),
    ])
  })

  it('without onSampling declares no capability, so the server cannot ask', async () => {
    const result = await sample()
    expect(result.content[0].text).toMatch(/^sampling failed/)
  })

  it('an answer that is not a sampling result fails that request at the server, naming why', async () => {
    const result = await sample(() => ({ text: 'no role, no model' }))
    expect(result.content[0].text).toMatch(/^sampling failed: .*sampling answer is not valid/)
    const again = await hub.callTool('c', 'test_simple_text', {})
    expect(again.content[0].text).toBe('This is a simple text response for testing.')
  })

  it('refuses an onSampling that is not a function', () => {
    expect(() => new McpHub({ onSampling: {} })).toThrow(/onSampling/)
  })
})

// The test server's `--conformance-mrtr` mode: `test_input_required_result_list_roots` asks for
// the roots (`roots/list` in a session, a roots input request at 2026-07-28) and lists their URIs.
describe('McpHub roots', () => {
  async function roots(onRoots, pin) {
    hub = new McpHub({ servers: [{ ...testServer('r', ['--conformance-mrtr']), protocolVersion: pin }], ...(onRoots && { onRoots }) })
    return hub.callTool('r', 'test_input_required_result_list_roots', {}, { timeoutMs: 20_000 })
  }

  it('hands roots/list and a roots input request to onRoots, at both revisions', async () => {
    for (const pin of [SESSION_ERA, '2026-07-28']) {
      const asked = []
      const result = await roots(async (request) => {
        asked.push(request)
        return { roots: [{ uri: 'file:///work/project', name: 'project' }] }
      }, pin)
      expect(result.content[0].text, pin).toBe("The client's roots: file:///work/project")
      expect(asked, pin).toEqual([{ serverId: 'r' }])
      await hub.close()
    }
  })

  it('without onRoots declares no capability: the server cannot ask', async () => {
    await expect(roots(undefined, '2026-07-28')).rejects.toMatchObject({ code: 'TOOLREG_MCP_CALL', message: expect.stringMatching(/roots/) })
  })

  it('refuses an onRoots that is not a function', () => {
    expect(() => new McpHub({ onRoots: [] })).toThrow(/onRoots/)
  })
})
