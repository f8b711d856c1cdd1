// OAuth 2.1 against our rmcp test server's own authorization server (`--oauth`: protected
// resource metadata, discovery, dynamic registration, PKCE, refresh, revocation): McpHub's
// `auth` over Streamable HTTP and legacy SSE, and `toolreg auth` run as a user runs it, with a
// scripted browser that approves at once. No token may appear in any output or error.
import { chmodSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createRequire } from 'node:module'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startHttpTestServer } from './mcpServers.mjs'
import { cliEnv, runCli, writeConfig } from './cliRun.mjs'

const require = createRequire(import.meta.url)
const { McpHub } = require('../index.js')

/** Starts the test server with OAuth on; resolves to `{ url, stop }`. */
async function startOAuthServer(args = []) {
  const { origin, stop } = await startHttpTestServer(['--oauth', ...args])
  return { url: origin, stop }
}

/** The user in the browser: approves, and the page redirects to the client's redirect URI. */
async function approve(authorizationUrl) {
  const page = await fetch(authorizationUrl, { redirect: 'manual' })
  expect(page.status).toBe(302)
  return page.headers.get('location')
}

function mapStore() {
  const values = new Map()
  return { values, get: (k) => values.get(k) ?? null, set: (k, v) => void values.set(k, v), delete: (k) => void values.delete(k) }
}

const stats = async (base) => (await fetch(`${base}/admin/stats`)).json()
const REDIRECT = 'http://127.0.0.1:1/callback'
/** Every token the server issued, as they appear in a stored value (or in the file of them). */
const tokensIn = (value) => [...value.matchAll(/\\?"(?:access|refresh)_token\\?":\\?"([^"\\]+)/g)].map((m) => m[1])

let server
beforeAll(async () => {
  server = await startOAuthServer()
})
afterAll(() => server?.stop())

describe('McpHub auth', () => {
  it('signs in on the 401, stores the tokens, and a later hub uses them without asking', async () => {
    const store = mapStore()
    const prompts = []
    const hub = new McpHub({
      servers: [{ id: 'srv', type: 'streamableHttp', url: `${server.url}/mcp` }],
      auth: {
        redirectUri: REDIRECT,
        tokenStore: store,
        onAuthorizationUrl: async (url, context) => {
          prompts.push({ url, ...context })
          return approve(url)
        },
      },
    })
    try {
      const tools = await hub.listTools('srv')
      expect(tools.map((t) => t.name)).toContain('echo')
      expect(prompts).toHaveLength(1)
      expect(prompts[0]).toMatchObject({ serverId: 'srv', redirectUri: REDIRECT })
      const asked = new URL(prompts[0].url).searchParams
      expect(asked.get('code_challenge_method')).toBe('S256')
      expect(asked.get('resource')).toBe(`${server.url}/mcp`)
      expect(asked.get('scope')).toBe('mcp:tools')
    } finally {
      await hub.close()
    }
    const stored = store.values.get('srv')
    const info = McpHub.describeStoredToken(stored)
    expect(info).toMatchObject({ resource: `${server.url}/mcp`, scopes: ['mcp:tools'], hasRefreshToken: true })
    for (const token of tokensIn(stored)) expect(JSON.stringify(info)).not.toContain(token)

    const before = await stats(server.url)
    const again = new McpHub({ servers: [{ id: 'srv', type: 'streamableHttp', url: `${server.url}/mcp` }], auth: { tokenStore: store } })
    try {
      const result = await again.callTool('srv', 'echo', { text: 'signed in' })
      expect(result.content[0].text).toBe('signed in')
    } finally {
      await again.close()
    }
    expect((await stats(server.url)).authorizations).toBe(before.authorizations)
  })

  it('refreshes an expired token without asking the user', async () => {
    const shortLived = await startOAuthServer(['--oauth-token-ttl', '1'])
    const store = mapStore()
    let prompts = 0
    const hub = new McpHub({
      servers: [{ id: 'srv', type: 'streamableHttp', url: `${shortLived.url}/mcp` }],
      auth: { redirectUri: REDIRECT, tokenStore: store, onAuthorizationUrl: (url) => (prompts++, approve(url)) },
    })
    try {
      await hub.callTool('srv', 'echo', { text: 'first' })
      const first = store.values.get('srv')
      await new Promise((r) => setTimeout(r, 1500))
      expect((await hub.callTool('srv', 'echo', { text: 'after expiry' })).content[0].text).toBe('after expiry')
      expect(prompts).toBe(1)
      expect((await stats(shortLived.url)).refreshes).toBeGreaterThanOrEqual(1)
      expect(store.values.get('srv')).not.toBe(first)
    } finally {
      await hub.close()
      shortLived.stop()
    }
  })

  it('signs in over the legacy SSE transport too', async () => {
    const store = mapStore()
    const hub = new McpHub({
      servers: [{ id: 'legacy', type: 'sse', url: `${server.url}/sse` }],
      auth: { redirectUri: REDIRECT, tokenStore: store, onAuthorizationUrl: approve },
    })
    try {
      expect((await hub.callTool('legacy', 'echo', { text: 'over sse' })).content[0].text).toBe('over sse')
      expect(McpHub.describeStoredToken(store.values.get('legacy'))?.resource).toBe(`${server.url}/sse`)
    } finally {
      await hub.close()
    }
  })

  it('without a way to ask the user, fails at once with TOOLREG_MCP_AUTH_REQUIRED', async () => {
    const hub = new McpHub({ servers: [{ id: 'srv', type: 'streamableHttp', url: `${server.url}/mcp` }] })
    const started = Date.now()
    try {
      const error = await hub.listTools('srv').catch((e) => e)
      expect(error.code).toBe('TOOLREG_MCP_AUTH_REQUIRED')
      expect(error.message).toMatch(/needs you to sign in.*onAuthorizationUrl.*toolreg auth login/)
      expect(Date.now() - started).toBeLessThan(5000)
    } finally {
      await hub.close()
    }
  })

  it('a declined or abandoned sign-in is a clear error, and the hub carries on', async () => {
    const hub = new McpHub({
      servers: [
        { id: 'declined', type: 'streamableHttp', url: `${server.url}/mcp` },
        { id: 'abandoned', type: 'streamableHttp', url: `${server.url}/mcp` },
      ],
      auth: {
        redirectUri: REDIRECT,
        timeoutMs: 300,
        onAuthorizationUrl: (url, { serverId }) =>
          serverId === 'declined' ? Promise.resolve(`${REDIRECT}?error=access_denied&error_description=the+user+said+no&state=x`) : new Promise(() => {}),
      },
    })
    try {
      const declined = await hub.listTools('declined').catch((e) => e)
      expect(declined.code).toBe('TOOLREG_MCP_AUTH_REQUIRED')
      expect(declined.message).toMatch(/access_denied: the user said no/)
      const abandoned = await hub.listTools('abandoned', { timeoutMs: 60_000 }).catch((e) => e)
      expect(abandoned.code).toBe('TOOLREG_MCP_AUTH_REQUIRED')
      expect(abandoned.message).toMatch(/not completed within 0 s/)
      expect(hub.status().map((s) => s.state)).toEqual(['failed', 'failed'])
    } finally {
      await hub.close()
    }
  })

  it('a failing tokenStore is named in the error, and the hub carries on', async () => {
    const hub = new McpHub({
      servers: [{ id: 'srv', type: 'streamableHttp', url: `${server.url}/mcp` }],
      auth: { tokenStore: { get: () => Promise.reject(new Error('the keychain is locked')), set() {}, delete() {} } },
    })
    try {
      const error = await hub.listTools('srv').catch((e) => e)
      expect(error.message).toMatch(/tokenStore\.get failed: .*the keychain is locked/)
      expect(hub.status()[0].state).toBe('failed')
    } finally {
      await hub.close()
    }
  })

  it('rejects bad auth options with a sentence naming the option', () => {
    const bad = (auth) => {
      try {
        new McpHub({ auth })
      } catch (error) {
        return `${error.code}: ${error.message}`
      }
      return 'accepted'
    }
    expect(bad({ onAuthorizationUrl: () => '' })).toMatch(/TOOLREG_INVALID_ARGUMENT.*auth\.redirectUri/)
    expect(bad({ tokenStore: { get() {} } })).toMatch(/auth\.tokenStore.*get\(key\), set\(key, value\), delete\(key\)/)
    expect(bad({ timeoutMs: -1 })).toMatch(/auth\.timeoutMs/)
    expect(bad({ tokenStore: mapStore(), redirectUri: REDIRECT })).toBe('accepted')
  })
})

describe('toolreg auth', () => {
  const home = mkdtempSync(join(tmpdir(), 'toolreg-auth-'))
  const configDir = join(home, 'config')
  const browser = join(home, 'browser.mjs')
  writeFileSync(browser, `#!${process.execPath}\nconst page = await fetch(process.argv[2], { redirect: 'manual' })\nawait fetch(page.headers.get('location'))\n`)
  chmodSync(browser, 0o755)
  const env = cliEnv({ TOOLREG_CONFIG_DIR: configDir, BROWSER: browser })
  const outputs = []
  const cli = async (...args) => {
    const run = await runCli(args, { env })
    outputs.push(run.stdout, run.stderr)
    return run
  }

  it('login stores a token only the user can read; call uses it; a revoked token says to log in again; logout forgets it', async () => {
    const config = writeConfig({ mcpServers: { srv: { url: `${server.url}/mcp` }, local: { command: 'node' } } })
    const login = await cli('auth', 'login', 'srv', '--config', config)
    expect(login.stderr).toMatch(/Opened your browser to sign in to srv/)
    expect(login.stdout).toMatch(/^Signed in to srv: \d+ tools\. The token is stored in .*tokens\.json\./m)
    expect(login.code).toBe(0)
    const file = join(configDir, 'tokens.json')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(statSync(configDir).mode & 0o777).toBe(0o700)
    const tokens = tokensIn(readFileSync(file, 'utf8'))
    expect(tokens.length).toBe(2)

    const status = await cli('auth', 'status', '--json', '--config', config)
    expect(JSON.parse(status.stdout)).toEqual([expect.objectContaining({ id: 'srv', signedIn: true, scopes: ['mcp:tools'], refreshable: true })])

    const call = await cli('call', 'srv/echo', '{"text":"with the stored token"}', '--config', config)
    expect(call.stdout.trim()).toBe('with the stored token')

    await fetch(`${server.url}/admin/revoke`, { method: 'POST' })
    const revoked = await cli('call', 'srv/echo', '{"text":"x"}', '--config', config)
    expect(revoked.code).not.toBe(0)
    expect(revoked.stderr).toMatch(/srv is left out: .* needs you to sign in; run: toolreg auth login srv/)
    expect(revoked.ms).toBeLessThan(15_000)

    const logout = await cli('auth', 'logout', 'srv', '--config', config)
    expect(logout.stdout).toMatch(/Signed out of srv/)
    const after = await cli('auth', 'status', '--config', config)
    expect(after.stdout).toMatch(/^srv {2}not signed in$/m)

    const unknown = await cli('auth', 'login', 'local', '--config', config)
    expect(unknown.code).toBe(9)
    expect(unknown.stderr).toMatch(/No remote MCP server "local" .*remote servers: srv/)

    for (const token of tokens) for (const text of outputs) expect(text).not.toContain(token)
  }, 60_000)
})
