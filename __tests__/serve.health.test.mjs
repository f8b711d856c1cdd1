// `toolreg serve --http`'s health check, `GET /healthz`, as a load balancer or an orchestrator's
// probe reaches it: no token, a tiny JSON body with backend counts by state. The gateway is the
// CLI run as an operator runs it (token from TOOLREG_SERVE_TOKEN) in front of our rmcp test
// server and a server whose command does not exist.
import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { cliEnv, startServeHttp, writeConfig } from './cliRun.mjs'
import { testServer } from './mcpServers.mjs'

const token = randomBytes(32).toString('base64url')
const { command, args } = testServer('echo')
const config = writeConfig({ mcpServers: { echo: { command, args }, missing: { command: join(tmpdir(), 'no-such-mcp-server') } } })
const env = cliEnv({
  TOOLREG_CACHE_DIR: mkdtempSync(join(tmpdir(), 'toolreg-health-cache-')),
  TOOLREG_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'toolreg-health-config-')),
  TOOLREG_SERVE_TOKEN: token,
})
let child
const started = startServeHttp(['--config', config], { env, onStart: (spawned) => (child = spawned) })
const served = started.then(({ url }) => new URL(url))
afterAll(() => child.kill('SIGTERM'))

const healthz = async (init) => fetch(new URL('/healthz', await served), init)

describe('toolreg serve --http: GET /healthz', () => {
  it('answers 200 without the token, with backend counts that follow the backends, naming no server and holding no secret', async () => {
    let body
    // The servers start in the background: idle or connecting first, then connected or failed.
    for (let i = 0; i < 150; i++) {
      const response = await healthz()
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('application/json')
      const text = await response.text()
      expect(text).not.toContain(token)
      expect(text).not.toMatch(/echo|missing|no-such/)
      body = JSON.parse(text)
      expect(body.status).toBe('ok')
      const { configured, ...states } = body.backends
      expect(configured).toBe(2)
      expect(Object.values(states).reduce((a, b) => a + b, 0)).toBe(2)
      if (body.backends.connected === 1 && body.backends.failed === 1) break
      await new Promise((r) => setTimeout(r, 200))
    }
    expect(body).toEqual({ status: 'ok', backends: { configured: 2, idle: 0, connecting: 0, connected: 1, failed: 1, closed: 0 } })
  }, 60_000)

  it('answers GET only; /mcp still wants the token', async () => {
    const post = await healthz({ method: 'POST', body: '{}' })
    expect(post.status).toBe(405)
    expect(post.headers.get('allow')).toBe('GET, HEAD')
    const mcp = await fetch(await served, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' })
    expect(mcp.status).toBe(401)
  })

  it('does not print a token the operator set (it would land in the service log)', async () => {
    const { stderr, token: printed } = await started
    expect(printed).toBeUndefined()
    expect(stderr()).toContain('Authorization: Bearer <the token in TOOLREG_SERVE_TOKEN>')
    expect(stderr()).not.toContain(token)
  })
})
