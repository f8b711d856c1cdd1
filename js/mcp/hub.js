'use strict'

const native = require('../../binding.js')
const { callNative, cleanErrorText, fromNative, invalidArgument } = require('../errors')

const DEFAULT_LIST_TIMEOUT_MS = 30_000
const DEFAULT_CALL_TIMEOUT_MS = 60_000

let nextCallId = 1

async function awaitNative(promise) {
  try {
    return await promise
  } catch (error) {
    throw fromNative(error)
  }
}

function checkConfig(config, index) {
  const where = index === undefined ? 'server' : `servers[${index}]`
  if (config === null || typeof config !== 'object') throw invalidArgument(where, 'expected a server config object')
  return JSON.stringify(config)
}

/**
 * signal → the cancel functions of its calls in flight. One request's signal is shared by all of
 * its tool calls; one listener per signal (not one per call) keeps Node's
 * MaxListenersExceededWarning out of the host's log however many calls share it.
 */
const cancelsBySignal = new WeakMap()

/** Runs `cancel` when `signal` aborts; the returned function stops tracking it. */
function trackAbort(signal, cancel) {
  let cancels = cancelsBySignal.get(signal)
  if (!cancels) {
    const pending = new Set()
    const onAbort = () => {
      cancelsBySignal.delete(signal)
      for (const fn of pending) fn()
    }
    cancels = { pending, onAbort }
    cancelsBySignal.set(signal, cancels)
    signal.addEventListener('abort', onAbort, { once: true })
  }
  cancels.pending.add(cancel)
  return () => {
    cancels.pending.delete(cancel)
    if (cancels.pending.size === 0 && cancelsBySignal.get(signal) === cancels) {
      cancelsBySignal.delete(signal)
      signal.removeEventListener('abort', cancels.onAbort)
    }
  }
}

/** Checks the `auth` option; returns the settings JSON and the one function the core calls. */
function authBridge(auth) {
  if (auth === undefined) return [undefined, undefined]
  if (auth === null || typeof auth !== 'object') throw invalidArgument('auth', 'expected an object { onAuthorizationUrl?, tokenStore?, redirectUri?, ... }')
  const { onAuthorizationUrl, tokenStore, redirectUri, clientName, clientMetadataUrl, timeoutMs } = auth
  if (onAuthorizationUrl !== undefined && typeof onAuthorizationUrl !== 'function') {
    throw invalidArgument('auth.onAuthorizationUrl', 'expected a function (url, { serverId, redirectUri }) => Promise<callback URL or code>')
  }
  if (onAuthorizationUrl && typeof redirectUri !== 'string') {
    throw invalidArgument('auth.redirectUri', 'expected the redirect URI that onAuthorizationUrl listens on, e.g. http://127.0.0.1:33418/callback')
  }
  if (tokenStore !== undefined && !(tokenStore && ['get', 'set', 'delete'].every((m) => typeof tokenStore[m] === 'function'))) {
    throw invalidArgument('auth.tokenStore', 'expected { get(key), set(key, value), delete(key) } (each may return a promise)')
  }
  for (const [key, value] of Object.entries({ redirectUri, clientName, clientMetadataUrl })) {
    if (value !== undefined && typeof value !== 'string') throw invalidArgument(`auth.${key}`, `expected a string, got ${typeof value}`)
  }
  if (timeoutMs !== undefined && !(Number.isInteger(timeoutMs) && timeoutMs > 0)) {
    throw invalidArgument('auth.timeoutMs', `expected a positive whole number of milliseconds, got ${String(timeoutMs)}`)
  }
  const settings = JSON.stringify({ authorize: Boolean(onAuthorizationUrl), tokenStore: Boolean(tokenStore), redirectUri, clientName, clientMetadataUrl, timeoutMs })
  const ops = {
    authorize: ({ prompt }) => onAuthorizationUrl(prompt.url, { serverId: prompt.serverId, redirectUri: prompt.redirectUri }),
    get: ({ key }) => tokenStore.get(key),
    set: ({ key, value }) => tokenStore.set(key, value),
    delete: ({ key }) => tokenStore.delete(key),
  }
  const call = (json) =>
    Promise.resolve(JSON.parse(json))
      .then((request) => ops[request.op](request))
      .then((answer) => JSON.stringify(answer ?? null))
  return [settings, onAuthorizationUrl || tokenStore ? call : undefined]
}

/**
 * Real MCP client connections, owned by the Rust core (rmcp): stdio child processes,
 * Streamable HTTP and legacy HTTP+SSE servers. Connections open lazily on first use; tool
 * lists are cached until the server says they changed; child stderr is captured.
 */
/** A prompt's arguments: an object of strings, or absent. */
function checkStrings(field, value) {
  if (value === undefined || value === null) return
  if (typeof value !== 'object' || Array.isArray(value) || Object.values(value).some((v) => typeof v !== 'string')) {
    throw invalidArgument(field, 'expected an object of string values')
  }
}

class McpHub {
  #native
  /** callId → the `onProgress` of a call in flight. */
  #progress
  /** serverId → { version, tools }: parsed once per server-side list version. */
  #tools = new Map()

  /**
   * @param {{ servers?: object[], connectTimeoutMs?: number, reconnectBackoffMs?: number, onElicitation?: Function, onSampling?: Function, onRoots?: Function, auth?: object }} [options]
   *   `reconnectBackoffMs` (default 1000): after a failed connect, calls within this delay
   *   fail at once with that error instead of starting the server again; it doubles per
   *   further failure (up to 32x) and resets once a connect succeeds. 0 retries every call.
   *   `onElicitation(request) → Promise<{ action, content? }>`: asks the user when a server
   *   sends `elicitation/create` (form mode); fields the answer leaves out take the schema's
   *   defaults. Without it the hub declares no elicitation capability.
   *   `onSampling(request) → Promise<{ role, content, model, stopReason? }>`: answers a server's
   *   `sampling/createMessage` with the host's model. Without it the hub declares no sampling
   *   capability.
   *   `onRoots({ serverId }) → Promise<{ roots: [{ uri, name? }] }>`: the directories a server
   *   may work in, when it asks (`roots/list`). Without it the hub declares no roots capability.
   *   `onToolsChanged(serverId)`: a server's tool list changed (`listTools` lists it anew).
   *   `onLog({ serverId, level, logger?, data })`: a server's log message.
   *   `onListChanged({ serverId, list })`: a server's prompt (`list` 'prompts') or resource
   *   ('resources') list changed. `onResourceUpdated({ serverId, uri })`: a resource subscribed
   *   to (through `toolreg serve`) changed.
   *   `auth`: OAuth 2.1 for remote servers that ask for it (see docs/api.md):
   *   `{ onAuthorizationUrl(url, { serverId, redirectUri }) → Promise<callback URL or code>,
   *   redirectUri, tokenStore?: { get, set, delete }, clientName?, clientMetadataUrl?, timeoutMs? }`.
   */
  constructor(options = {}) {
    const servers = options.servers ?? []
    if (!Array.isArray(servers)) throw invalidArgument('servers', 'expected an array of server configs')
    const json = `[${servers.map((s, i) => checkConfig(s, i)).join(',')}]`
    for (const key of ['connectTimeoutMs', 'reconnectBackoffMs']) {
      const ms = options[key]
      if (ms !== undefined && !(Number.isInteger(ms) && ms >= 0 && ms <= 2 ** 32 - 1)) {
        throw invalidArgument(key, `expected a whole number of milliseconds, got ${String(ms)}`)
      }
    }
    const asks = { onElicitation: '{ action, content? }', onSampling: '{ role, content, model }', onRoots: '{ roots }' }
    for (const [key, answer] of Object.entries(asks)) {
      if (options[key] !== undefined && typeof options[key] !== 'function') {
        throw invalidArgument(key, `expected a function (request) => Promise<${answer}>`)
      }
    }
    const [elicit, sample, roots] = Object.keys(asks).map(
      (key) => options[key] && ((json) => Promise.resolve(JSON.parse(json)).then(options[key]).then((answer) => JSON.stringify(answer))),
    )
    const [authSettings, authCall] = authBridge(options.auth)
    const { onToolsChanged, onLog, onListChanged, onResourceUpdated } = options
    for (const [key, fn] of Object.entries({ onToolsChanged, onLog, onListChanged, onResourceUpdated })) {
      if (fn !== undefined && typeof fn !== 'function') throw invalidArgument(key, 'expected a function')
    }
    // One native callback for what servers send outside an answer; a host callback that
    // throws is the host's bug, not the server's: it must not reach the hub. It must not hold
    // `this` either: the native hub holds the callback, and a hub nobody closes must still be
    // collected (and its children killed).
    const progressOf = new Map()
    this.#progress = progressOf
    const events = {
      toolsChanged: ({ serverId }) => onToolsChanged?.(serverId),
      log: ({ serverId, message }) => onLog?.({ serverId, ...message }),
      listChanged: ({ serverId, list }) => onListChanged?.({ serverId, list }),
      resourceUpdated: ({ serverId, uri }) => onResourceUpdated?.({ serverId, uri }),
      progress: ({ callId, progress, total, message }) => progressOf.get(callId)?.({ progress, ...(total != null && { total }), ...(message != null && { message }) }),
    }
    const onEvent = (json) => {
      try {
        const event = JSON.parse(json)
        events[event.op]?.(event)
      } catch {}
      return Promise.resolve('null')
    }
    this.#native = callNative(() => new native.NativeMcpHub(json, { connectTimeoutMs: options.connectTimeoutMs, reconnectBackoffMs: options.reconnectBackoffMs }, elicit, sample, authSettings, authCall, onEvent, roots))
  }

  addServer(config) {
    const json = checkConfig(config)
    callNative(() => this.#native.addServer(json))
  }

  /** Closes the server's connection (no child process remains) and forgets it. */
  async removeServer(id) {
    this.#tools.delete(id)
    return awaitNative(this.#native.removeServer(id))
  }

  /** `[{ id, name, transport }]` in configuration order. */
  get servers() {
    return this.#native.servers()
  }

  /**
   * The `instructions` the server sent when its current connection opened, or null (none sent,
   * or not connected). Third-party text: a registry's tool trust reviews it
   * (`registry.serverInstructions()`) before it may reach a model.
   */
  instructions(serverId) {
    return callNative(() => this.#native.instructions(serverId)) ?? null
  }

  /**
   * Holds a server the host remembers as failed: every request to it (tools, calls, prompts,
   * resources) fails at once with `reason` (a sentence) instead of starting it or waiting on
   * it, until a `listTools(serverId, { probe: true })` connects.
   */
  hold(serverId, reason) {
    callNative(() => this.#native.hold(serverId, String(reason)))
  }

  /**
   * The tools the server lists (all pages), from the cache when nothing changed. `probe`: list
   * a server held as failed too (see `hold`), to try it again; a success lifts the hold.
   */
  async listTools(serverId, { timeoutMs = DEFAULT_LIST_TIMEOUT_MS, probe = false } = {}) {
    const known = this.#tools.get(serverId)
    const listing = await awaitNative(this.#native.listTools(serverId, timeoutMs, known?.version, probe))
    if (listing.toolsJson == null && known) return known.tools
    const tools = JSON.parse(listing.toolsJson)
    this.#tools.set(serverId, { version: listing.version, tools })
    return tools
  }

  /**
   * Calls a tool; resolves to the MCP `CallToolResult` (`{ content, structuredContent?, isError }`).
   * A timeout or an aborted `signal` cancels the request on the server too. `onProgress({
   * progress, total?, message? })` hears the server's progress notifications of this call.
   */
  async callTool(serverId, name, args = {}, { timeoutMs = DEFAULT_CALL_TIMEOUT_MS, signal, onProgress } = {}) {
    if (onProgress !== undefined && typeof onProgress !== 'function') throw invalidArgument('onProgress', 'expected a function')
    const callId = nextCallId++
    const cancel = () => this.#native.cancelCall(callId)
    if (signal?.aborted) cancel()
    const untrack = signal ? trackAbort(signal, cancel) : undefined
    if (onProgress) this.#progress.set(callId, onProgress)
    try {
      return JSON.parse(await awaitNative(this.#native.callTool(serverId, name, JSON.stringify(args ?? {}), timeoutMs, callId, Boolean(onProgress))))
    } finally {
      untrack?.()
      // Progress the server sent just before its answer may still be queued behind it.
      if (onProgress) setImmediate(() => this.#progress.delete(callId))
    }
  }

  /** The server's prompts (all pages); `[]` when it offers none. */
  async listPrompts(serverId, { timeoutMs = DEFAULT_LIST_TIMEOUT_MS } = {}) {
    return (await this.#feature(serverId, 'prompts/list', {}, timeoutMs)).prompts
  }

  /** `prompts/get`: resolves to `{ description?, messages }`. */
  async getPrompt(serverId, name, args, { timeoutMs = DEFAULT_CALL_TIMEOUT_MS } = {}) {
    if (typeof name !== 'string') throw invalidArgument('name', 'expected the prompt\'s name')
    checkStrings('arguments', args)
    return this.#feature(serverId, 'prompts/get', { name, ...(args && { arguments: args }) }, timeoutMs)
  }

  /** The server's resources (all pages); `[]` when it offers none. */
  async listResources(serverId, { timeoutMs = DEFAULT_LIST_TIMEOUT_MS } = {}) {
    return (await this.#feature(serverId, 'resources/list', {}, timeoutMs)).resources
  }

  /** The server's resource templates (all pages). */
  async listResourceTemplates(serverId, { timeoutMs = DEFAULT_LIST_TIMEOUT_MS } = {}) {
    return (await this.#feature(serverId, 'resources/templates/list', {}, timeoutMs)).resourceTemplates
  }

  /** `resources/read`: resolves to `{ contents: [{ uri, mimeType?, text | blob }] }`. */
  async readResource(serverId, uri, { timeoutMs = DEFAULT_CALL_TIMEOUT_MS } = {}) {
    if (typeof uri !== 'string') throw invalidArgument('uri', 'expected a resource URI')
    return this.#feature(serverId, 'resources/read', { uri }, timeoutMs)
  }

  /** Subscribes to a resource; its changes reach the `onResourceUpdated` option. */
  async subscribeResource(serverId, uri, { timeoutMs = DEFAULT_CALL_TIMEOUT_MS } = {}) {
    if (typeof uri !== 'string') throw invalidArgument('uri', 'expected a resource URI')
    await this.#feature(serverId, 'resources/subscribe', { uri }, timeoutMs)
  }

  async unsubscribeResource(serverId, uri, { timeoutMs = DEFAULT_CALL_TIMEOUT_MS } = {}) {
    if (typeof uri !== 'string') throw invalidArgument('uri', 'expected a resource URI')
    await this.#feature(serverId, 'resources/unsubscribe', { uri }, timeoutMs)
  }

  /**
   * `completion/complete`: suggestions for one argument of a prompt (`ref: { type: 'ref/prompt',
   * name }`) or a resource template (`{ type: 'ref/resource', uri }`); resolves to
   * `{ values, total?, hasMore? }`.
   */
  async complete(serverId, ref, argument, { context, timeoutMs = DEFAULT_CALL_TIMEOUT_MS } = {}) {
    if (ref?.type !== 'ref/prompt' && ref?.type !== 'ref/resource') {
      throw invalidArgument('ref', "expected { type: 'ref/prompt', name } or { type: 'ref/resource', uri }")
    }
    if (typeof argument?.name !== 'string' || typeof argument?.value !== 'string') {
      throw invalidArgument('argument', 'expected { name, value } (strings)')
    }
    const params = { ref, argument, ...(context && { context }) }
    return (await this.#feature(serverId, 'completion/complete', params, timeoutMs)).completion
  }

  #feature(serverId, method, params, timeoutMs) {
    return awaitNative(this.#native.featureRequest(serverId, method, JSON.stringify(params), timeoutMs)).then(JSON.parse)
  }

  /**
   * Each server's state, last error (a sentence; `lastErrorDetails`: the transport's own text
   * behind it, when that says more), cached tool count, protocol version, pid and stderr tail.
   */
  status() {
    return JSON.parse(this.#native.status()).map((server) => (server.lastError == null ? server : { ...server, lastError: cleanErrorText(server.lastError) }))
  }

  /** Servers that may own these wire ids, decided from the ids alone (nothing is listed). */
  serversForToolIds(toolIds) {
    return this.#native.serversForWireIds([...toolIds])
  }

  /** Closes every connection and waits for child processes to exit. */
  async close() {
    this.#tools.clear()
    await awaitNative(this.#native.close())
  }

  /**
   * What a value from `auth.tokenStore` holds, without its secrets: `{ resource, clientId,
   * scopes, hasRefreshToken, expiresAt }` (seconds since the epoch, or null), or null when the
   * value is not one toolreg wrote. For a settings page that shows where the user is signed in.
   */
  static describeStoredToken(value) {
    if (typeof value !== 'string') return null
    const json = native.describeMcpStoredToken(value)
    return json == null ? null : JSON.parse(json)
  }

  /** The native hub behind `host` when it is an McpHub whose `callTool` nobody replaced. */
  static nativeOf(host) {
    return host instanceof McpHub && host.callTool === McpHub.prototype.callTool ? host.#native : undefined
  }
}

module.exports = { McpHub, DEFAULT_CALL_TIMEOUT_MS, DEFAULT_LIST_TIMEOUT_MS }
