// `toolreg auth`: signing in to OAuth-protected MCP servers. Tokens live in one file readable by
// the user alone, under the user's config directory; every command hands that file to McpHub as
// its token store, so a server signed in to once is reached by audit, search, call and serve.
// The sign-in itself opens the browser on the authorization server's page and listens on a
// loopback redirect (RFC 8252) for the answer.
import { spawn } from 'node:child_process'
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { homedir } from 'node:os'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

const require = createRequire(import.meta.url)
const { McpHub } = require('../index.js')

/** The user's config directory for toolreg, per platform; TOOLREG_CONFIG_DIR overrides it. */
export function configDir(env = process.env, platform = process.platform) {
  if (env.TOOLREG_CONFIG_DIR) return env.TOOLREG_CONFIG_DIR
  if (platform === 'win32') return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), 'toolreg')
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'toolreg')
  return join(env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'toolreg')
}

export const tokenFile = (env = process.env) => join(configDir(env), 'tokens.json')

function readTokens(file) {
  try {
    const tokens = JSON.parse(readFileSync(file, 'utf8'))
    return tokens && typeof tokens === 'object' && !Array.isArray(tokens) ? tokens : {}
  } catch {
    return {} // none yet, or unreadable: signing in again rewrites it
  }
}

/**
 * McpHub's `tokenStore` over one JSON file `{ serverId: value }`. Written whole through a
 * temporary file created with mode 0600 (and the directory 0700), so no other user can read it
 * at any moment; on Windows the file sits in the user's own profile.
 */
export function fileTokenStore(file = tokenFile()) {
  const write = (tokens) => {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
    const temp = `${file}.${process.pid}.tmp`
    writeFileSync(temp, `${JSON.stringify(tokens, null, 2)}\n`, { mode: 0o600 })
    chmodSync(temp, 0o600) // a leftover temp file of an earlier crash keeps its old mode otherwise
    renameSync(temp, file)
  }
  return {
    file,
    get: (key) => readTokens(file)[key] ?? null,
    set: (key, value) => write({ ...readTokens(file), [key]: value }),
    delete(key) {
      const tokens = readTokens(file)
      if (!(key in tokens)) return false
      delete tokens[key]
      if (Object.keys(tokens).length) write(tokens)
      else rmSync(file, { force: true })
      return true
    },
  }
}

/** The command that opens a URL in the user's browser: $BROWSER if set, else the platform's. */
function browserCommand(url, env = process.env, platform = process.platform) {
  if (env.BROWSER) return [env.BROWSER, [url]]
  if (platform === 'darwin') return ['open', [url]]
  if (platform === 'win32') return ['cmd', ['/c', 'start', '""', url.replace(/&/g, '^&')]]
  return ['xdg-open', [url]]
}

/** Opens `url` in a browser; resolves to false when none could be started. */
function openBrowser(url) {
  return new Promise((resolve) => {
    const [command, args] = browserCommand(url)
    let child
    try {
      child = spawn(command, args, { stdio: 'ignore', detached: process.platform !== 'win32' })
    } catch {
      resolve(false)
      return
    }
    child.once('error', () => resolve(false))
    child.once('spawn', () => {
      child.unref()
      resolve(true)
    })
  })
}

const PAGE = (title, text) =>
  `<!doctype html><meta charset="utf-8"><title>${title}</title><body style="font:16px system-ui;margin:3em"><h1>${title}</h1><p>${text}</p>`

/**
 * A loopback listener for the authorization server's redirect. `redirectUri` is where it
 * listens; `onAuthorizationUrl` opens the page (or prints it when no browser starts) and
 * resolves to the URL the browser came back to. `port` 0 picks a free one.
 */
export async function loopbackSignIn({ port = 0, write = (text) => process.stderr.write(text), open = openBrowser } = {}) {
  /** The sign-in in progress: the `state` it sent and where its answer goes. */
  let pending = null
  const server = createServer((req, res) => {
    const url = new URL(req.url, `http://127.0.0.1:${server.address().port}`)
    if (url.pathname !== '/callback' || !pending || url.searchParams.get('state') !== pending.state) {
      res.writeHead(404, { 'content-type': 'text/html; charset=utf-8' }).end(PAGE('Not found', 'No sign-in of toolreg is waiting for this page.'))
      return
    }
    const failed = url.searchParams.get('error')
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    res.end(failed ? PAGE('Sign-in failed', 'The authorization server refused the sign-in. You can close this tab; the terminal says more.') : PAGE('Signed in', 'toolreg has the sign-in. You can close this tab.'))
    pending.deliver(url.href)
    pending = null
  })
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', resolve)
  })
  const redirectUri = `http://127.0.0.1:${server.address().port}/callback`
  return {
    redirectUri,
    async onAuthorizationUrl(url, { serverId }) {
      const answer = new Promise((deliver) => {
        pending = { state: new URL(url).searchParams.get('state'), deliver }
      })
      const opened = await open(url)
      write(opened ? `Opened your browser to sign in to ${serverId}. If it did not appear, open this URL:\n  ${url}\n` : `Open this URL in a browser to sign in to ${serverId}:\n  ${url}\n`)
      write('Waiting for the sign-in to finish (Ctrl-C to cancel)…\n')
      return answer
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  }
}

/**
 * A fresh sign-in to `server` (a hub config): the stored token is not offered, and it is
 * replaced only when the new sign-in succeeds. Resolves to `{ askedToSignIn, tools }`.
 */
export async function signIn(config, { store = fileTokenStore(), timeoutMs, port = 0, write, open } = {}) {
  const loopback = await loopbackSignIn({ port, write, open })
  let current = null
  const freshStore = {
    get: () => current,
    set: async (key, value) => {
      current = value
      await store.set(key, value)
    },
    delete: () => {
      current = null
    },
  }
  let askedToSignIn = false
  const hub = new McpHub({
    servers: [config],
    connectTimeoutMs: 30_000,
    reconnectBackoffMs: 0,
    auth: {
      redirectUri: loopback.redirectUri,
      onAuthorizationUrl: (url, context) => {
        askedToSignIn = true
        return loopback.onAuthorizationUrl(url, context)
      },
      tokenStore: freshStore,
      timeoutMs,
    },
  })
  try {
    const tools = await hub.listTools(config.id, { timeoutMs: 30_000 })
    return { askedToSignIn, tools: tools.length }
  } finally {
    await hub.close()
    await loopback.close()
  }
}

/** Header names that carry credentials (an API key, a token), besides Authorization. */
const CREDENTIAL_HEADER = /^authorization$|api[-_]?key|token|secret/i

/**
 * What `auth status` shows of one server: signed in or not, scopes, expiry; never a token.
 * `headerCredentials`: the config's headers that carry credentials; with an Authorization
 * header the hub never signs in (`needsNoSignIn`).
 */
export function tokenStatus(config, store = fileTokenStore(), now = Date.now()) {
  const info = McpHub.describeStoredToken(store.get(config.id))
  const current = info && info.resource === config.url.trim()
  const headerCredentials = Object.keys(config.headers ?? {}).filter((name) => CREDENTIAL_HEADER.test(name))
  return {
    id: config.id,
    url: config.url,
    signedIn: Boolean(current),
    ...(headerCredentials.length && { headerCredentials, needsNoSignIn: headerCredentials.some((name) => /^authorization$/i.test(name)) }),
    ...(current && {
      scopes: info.scopes,
      refreshable: info.hasRefreshToken,
      expiresInSeconds: info.expiresAt == null ? null : Math.round(info.expiresAt - now / 1000),
    }),
    ...(info && !current && { staleFor: info.resource }),
  }
}
