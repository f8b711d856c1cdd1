// Elicitation through McpHub against our rmcp test server over stdio: its `ask` tool sends
// `elicitation/create` for { name (default "Ada"), age (default 36) } and returns the answer it
// got as text.
import { afterEach, describe, expect, it } from 'vitest'
import { McpHub } from '../index.js'
import { testServer } from './mcpServers.mjs'

let hub
afterEach(() => hub?.close())

async function ask(onElicitation) {
  hub = new McpHub({ servers: [testServer('t')], ...(onElicitation && { onElicitation }) })
  const result = await hub.callTool('t', 'ask', {}, { timeoutMs: 20_000 })
  return result.content[0].text
}

describe('McpHub elicitation', () => {
  it("hands the server's question to onElicitation and fills in the defaults the answer left out", async () => {
    const asked = []
    const answer = await ask(async (request) => {
      asked.push(request)
      return { action: 'accept', content: { age: 41 } }
    })
    expect(JSON.parse(answer)).toEqual({ action: 'accept', content: { age: 41, name: 'Ada' } })
    expect(asked).toHaveLength(1)
    expect(asked[0]).toMatchObject({ serverId: 't', message: 'Who are you?', requestedSchema: { type: 'object' } })
  })

  it('passes a decline through unchanged', async () => {
    expect(JSON.parse(await ask(() => ({ action: 'decline' })))).toEqual({ action: 'decline' })
  })

  it('without onElicitation declares no capability, so the server cannot ask', async () => {
    const answer = await ask()
    expect(answer).toMatch(/^elicitation failed/)
  })

  it('a failing onElicitation fails that request at the server, and the hub carries on', async () => {
    const answer = await ask(async () => {
      throw new Error('dialog crashed')
    })
    expect(answer).toMatch(/^elicitation failed: .*dialog crashed/)
    const echoed = await hub.callTool('t', 'echo', { text: 'still here' })
    expect(echoed.content[0].text).toBe('still here')
  })

  it('refuses an onElicitation that is not a function', () => {
    expect(() => new McpHub({ onElicitation: 'yes' })).toThrow(/onElicitation/)
  })
})
