// `toolreg serve` driven by the newest published MCP TypeScript SDK clients, 1.x
// (`@modelcontextprotocol/sdk`) and 2.x (`@modelcontextprotocol/client`), over stdio and
// Streamable HTTP: run by `npm run lanes:latest` (the main suite's serve tests use the pinned
// 1.x client). The gateway is the checkout's; the servers are our rmcp test server and the
// official everything server.
import { afterAll, describe, it, expect } from 'vitest'
import * as sdk1 from '@modelcontextprotocol/sdk/client/index.js'
import * as sdk1Stdio from '@modelcontextprotocol/sdk/client/stdio.js'
import * as sdk1Http from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import * as sdk2 from '@modelcontextprotocol/client'
import * as sdk2Stdio from '@modelcontextprotocol/client/stdio'
import { bin, cliEnv, startServeHttp, writeConfig } from '../../__tests__/cliRun.mjs'
import { referenceServer, testServer, textOf } from '../../__tests__/mcpServers.mjs'

const servers = [referenceServer('everything'), testServer('faulty')]
const config = writeConfig({ mcpServers: Object.fromEntries(servers.map(({ id, command, args }) => [id, { command, args }])) })
const closing = []
afterAll(() => Promise.allSettled(closing.map((close) => close())))

const CLIENTS = {
  '@modelcontextprotocol/sdk 1.x': { Client: sdk1.Client, StdioClientTransport: sdk1Stdio.StdioClientTransport, StreamableHTTPClientTransport: sdk1Http.StreamableHTTPClientTransport },
  '@modelcontextprotocol/client 2.x': { Client: sdk2.Client, StdioClientTransport: sdk2Stdio.StdioClientTransport, StreamableHTTPClientTransport: sdk2.StreamableHTTPClientTransport },
}

async function exercise(client) {
  const { tools } = await client.listTools()
  expect(tools.map((t) => t.name)).toContain('add')
  expect((await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } })).structuredContent).toEqual({ sum: 3 })
  const refused = await client.callTool({ name: 'add', arguments: { a: 'lots', b: 2 } })
  expect(refused.isError).toBe(true)
  expect(textOf(refused)).toMatch(/^Invalid params for "add"/)
}

for (const [label, { Client, StdioClientTransport, StreamableHTTPClientTransport }] of Object.entries(CLIENTS)) {
  describe(`toolreg serve with the newest ${label} client`, () => {
    it('over stdio', async () => {
      const transport = new StdioClientTransport({ command: process.execPath, args: [bin, 'serve', '--startup-wait', '60000', '--config', config], env: cliEnv(), stderr: 'pipe' })
      const client = new Client({ name: 'lane-client', version: '1.0.0' })
      await client.connect(transport)
      closing.push(() => client.close())
      await exercise(client)
    }, 60_000)

    it('over Streamable HTTP', async () => {
      const { url, token, child } = await startServeHttp(['--startup-wait', '60000', '--config', config])
      closing.push(() => child.kill())
      const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } })
      const client = new Client({ name: 'lane-client', version: '1.0.0' })
      await client.connect(transport)
      closing.push(() => client.close())
      await exercise(client)
    }, 60_000)
  })
}
