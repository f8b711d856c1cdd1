// Opens the servers a command needs and registers their tools in one ToolRegistry the way an
// app would (syncMcpToolsToRegistry for live servers, listed-only entries for cached listings
// and the demo catalog). A command starts only what it needs: `call server/tool` that server,
// `search` the servers with no fresh cached listing, `audit` all of them.
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { ConfigError, loadConfigFile } from './config.mjs'
import { discoverConfigs, mergeConfigs } from './discover.mjs'
import { mergeToolregSettings, needsApprovalBySettings } from './profiles.mjs'
import { DEFAULT_TIMEOUT_MS, PACKAGE_RUNNER_TIMEOUT_MS, referenceServers } from './defaults.mjs'
import { defaultCatalog, firstLine } from './catalog.mjs'
import { FAILURE_MAX_AGE_MS, readCachedTools, readRememberedFailure, rememberFailure, writeCachedTools } from './cache.mjs'
import { describeFailure, isPackageRunner } from './failures.mjs'
import { fileTokenStore } from './auth.mjs'
import { CliError, EXIT } from './exitCodes.mjs'
import { plural } from './format.mjs'

const require = createRequire(import.meta.url)
const { McpHub, ToolRegistry, buildMcpToolWireId, syncMcpToolsToRegistry } = require('../index.js')
const { withTimeout } = require('../js/mcp/sync.js')
const { tool, jsonSchema } = require('ai')

export { DEFAULT_TIMEOUT_MS, PACKAGE_RUNNER_TIMEOUT_MS }

/** How long `config`'s server may take to start and list its tools: package runners get longer unless --timeout was given. */
export function startTimeoutOf(config, { timeoutMs, timeoutGiven }) {
  return !timeoutGiven && isPackageRunner(config) ? Math.max(timeoutMs, PACKAGE_RUNNER_TIMEOUT_MS) : timeoutMs
}

/** Sessions not yet closed; SIGINT closes them so no child process outlives the CLI. */
const openSessions = new Set()

/** Tracks something with `close()` (the gateway) like a session, until it is closed. */
export function trackOpen(closable) {
  openSessions.add(closable)
  return () => openSessions.delete(closable)
}

export async function closeAllSessions() {
  await Promise.allSettled([...openSessions].map((s) => s.close()))
}

/**
 * Ctrl-C or a kill: server processes run in their own process groups, so the terminal's signal
 * does not reach them; close every session, then exit (130 or 143).
 */
export function closeSessionsOnSignals() {
  for (const [signal, code] of [['SIGINT', EXIT.INTERRUPTED], ['SIGTERM', EXIT.TERMINATED]]) {
    process.once(signal, async () => {
      process.stderr.write(`\n${signal}: stopping every server…\n`)
      await closeAllSessions()
      process.exit(code)
    })
  }
}

/**
 * Where the servers come from: `--config F`, `--demo`, else the discovered project or user
 * configs, else the demo (with a `notice` saying nothing was found).
 * @returns {{ kind: 'file' | 'project' | 'user' | 'demo', files: string[], servers, skipped: { id, key, file?, why }[], notice?: string, cleanup?: () => void }}
 */
export function resolveSource({ config, demo } = {}) {
  if (config) return { kind: 'file', ...mergeConfigs([loadConfigFile(config)]) }
  let notice
  if (!demo) {
    const found = discoverConfigs()
    if (found.scope) return { kind: found.scope, files: found.files, servers: found.servers, skipped: found.skipped, settings: found.settings }
    notice = `No MCP config found (looked for ${found.looked.join('; ')}). This is the DEMO setup, not your servers: pass --config FILE to audit yours.`
  }
  const d = referenceServers()
  return { kind: 'demo', files: [], servers: d.servers, skipped: d.skipped, cleanup: d.cleanup, notice, settings: mergeToolregSettings([]) }
}

/**
 * Why the CLI asks before running an MCP tool, or null: the config's `toolreg.needsApproval`
 * lists it, or the server marks it destructive (MCP annotations mark write/delete tools).
 */
function approvalReason(settings, { serverId, toolName, annotations }) {
  if (needsApprovalBySettings(settings, serverId, toolName)) return 'the config\'s toolreg.needsApproval lists it'
  if (annotations?.destructiveHint === true) return 'the server marks it destructive'
  return null
}

/** Listed-only entries (no `execute`) of the demo catalog, described by their first line. */
function catalogEntries(server, tools) {
  const entries = []
  for (const t of tools) {
    const name = buildMcpToolWireId({ serverId: server.id, serverName: server.name, toolName: t.name })
    if (server.tools.some((x) => x.name === name)) continue // a server listing one tool twice: the first wins
    server.tools.push({ name, tool: t.name })
    entries.push({
      name,
      namespace: `mcp:${server.id}`,
      namespaceLabel: `mcp:${server.name}`,
      description: firstLine(t.description) || t.name,
      defer: 'auto',
      tool: tool({ description: t.description ?? t.title ?? '', inputSchema: jsonSchema(t.inputSchema ?? { type: 'object', properties: {} }) }),
      mcp: { serverId: server.id, serverName: server.name, toolName: t.name },
    })
  }
  return entries
}

function catalogServers(tools) {
  const byId = new Map()
  for (const t of tools) {
    if (!byId.has(t.server)) byId.set(t.server, { server: { id: t.server, name: t.serverName, kind: 'catalog', transport: 'catalog', status: 'listed', tools: [] }, tools: [] })
    byId.get(t.server).tools.push(t)
  }
  return [...byId.values()]
}

/**
 * Opens a session over the servers of `config`, the demo, or the discovered configs (see
 * resolveSource); `onSource(source)` hears which before anything starts.
 * - `start`: 'all', the ids of the servers to start (others are left out), or a function of
 *   the source giving either;
 * - `useCache`: a server with a fresh cached listing is not listed live; its tools are
 *   registered from the cache and it starts only when one of them is called;
 * - `retryFailed`: a server whose failure is remembered is started again. Without it (and when
 *   `start` is 'all': a command naming a server always tries it) the server is left out with
 *   the remembered reason, so one broken server does not cost every command its timeout; once
 *   the memory is FAILURE_MAX_AGE_MS old, the server is tried again in the background
 *   (retryInBackground) while the command goes on without it;
 * - `timeoutMs` with `timeoutGiven` false lets package runners (npx, uvx) take longer;
 * - `callTimeoutMs` bounds each tool call (the hub's default, 60 s, when not given).
 * - `onToolProgress` hears the servers' progress of every tool call (the sync's `onProgress`).
 * - `trust` is the registry's tool trust options (`toolreg trust` passes the pin file).
 * @param {{ config?: string, demo?: boolean, onSource?, timeoutMs: number, timeoutGiven?: boolean, callTimeoutMs?: number, start?, useCache?: boolean, retryFailed?: boolean, progress?, onToolProgress?, trust? }} opts
 */
export async function openSession({ config, demo, onSource, timeoutMs, timeoutGiven = true, callTimeoutMs, start = 'all', useCache = false, retryFailed = false, progress, onToolProgress, trust }) {
  const source = resolveSource({ config, demo })
  onSource?.(source)
  if (typeof start === 'function') start = start(source)
  const timeoutOf = (config) => startTimeoutOf(config, { timeoutMs, timeoutGiven })
  const wanted = source.servers.filter((s) => start === 'all' || start.has(s.config.id))
  // Tokens from `toolreg auth login` are used (and refreshed); a server that needs a new
  // sign-in fails with TOOLREG_MCP_AUTH_REQUIRED, and the failure says to run auth login.
  const hub = new McpHub({ servers: [], connectTimeoutMs: Math.max(timeoutMs, ...wanted.map((s) => timeoutOf(s.config))), reconnectBackoffMs: 0, auth: { tokenStore: fileTokenStore() } })
  const session = {
    hub,
    // Without a pin file (toolreg trust), pins live for the command; a flagged tool stays
    // listed, so audit and tools still show every tool the user has.
    registry: new ToolRegistry({ trust: trust ?? { holdBlocked: false } }),
    source,
    configFiles: source.files,
    servers: [],
    /** Wire id → why the tool needs approval (approvalReason), for the question the CLI asks. */
    approvalReasons: new Map(),
    skipped: source.skipped,
    catalog: null,
    closed: false,
    async close() {
      if (session.closed) return
      session.closed = true
      openSessions.delete(session)
      await hub.close()
      source.cleanup?.()
    },
  }
  openSessions.add(session)
  try {
    const live = []
    const cached = []
    for (const server of wanted) {
      try {
        hub.addServer(server.config) // connects only when listed or called
      } catch (error) {
        throw new ConfigError(server.file ?? 'the demo setup', server.key, error.message)
      }
      const failure = !retryFailed && start === 'all' ? readRememberedFailure(server.config, { maxAgeMs: Infinity }) : null
      const listing = useCache ? readCachedTools(server.config) : null
      if (failure) {
        const lapsed = Date.now() - failure.savedAt >= FAILURE_MAX_AGE_MS
        if (lapsed) retryInBackground(server, failure, timeoutOf(server.config))
        session.servers.push(rememberedRecord(server, failure, { lapsed }))
      }
      else if (listing) cached.push({ server, listing })
      else live.push({ ...server, timeoutMs: timeoutOf(server.config) })
    }
    // Cached servers first: their sync would evict the entries of servers it does not list.
    await registerCached(session, cached, { timeoutMs, callTimeoutMs, onToolProgress })
    await connectAll(session, live, { progress, callTimeoutMs, onToolProgress })
    // In the config's order, however each server came to be known.
    const order = new Map(wanted.map((s, i) => [s.config.id, i]))
    session.servers.sort((a, b) => order.get(a.id) - order.get(b.id))
    if (source.kind === 'demo') {
      const { tools, label, source: from } = defaultCatalog()
      const groups = catalogServers(tools)
      for (const { server, tools: own } of groups) session.registry.registerMany(catalogEntries(server, own))
      session.servers.push(...groups.map((g) => g.server))
      session.catalog = { label, source: from, servers: groups.length, tools: groups.reduce((n, g) => n + g.server.tools.length, 0) }
    }
    return session
  } catch (error) {
    await session.close()
    throw error
  }
}

/**
 * A configured server as commands report it: which files list it (`files`), the id of an
 * earlier server it is the same as (`sameAs`), and why its transport was guessed.
 */
function recordOf(server) {
  const { config, key, display, files = [], sameAs = null, transportGuess } = server
  return { id: config.id, name: config.name, kind: 'mcp', transport: config.type, key, command: display, files, sameAs, ...(transportGuess && { transportGuess }), tools: [] }
}

/** A server left out for a failure remembered from an earlier command. */
function rememberedRecord(server, failure, { lapsed }) {
  const minutes = Math.max(1, Math.round((Date.now() - failure.savedAt) / 60_000))
  const retry = lapsed
    ? `it failed when last tried, ${minutes} min ago, and is being tried again in the background: --refresh tries it now`
    : `it failed ${minutes} min ago and is left out; it is tried again in the background ${Math.round(FAILURE_MAX_AGE_MS / 60_000)} min after that: --refresh tries it now`
  return { ...recordOf(server), status: 'failed', summary: failure.summary, hint: failure.hint ? `${failure.hint}; ${retry}` : retry, error: failure.summary, stderrTail: '', rememberedAt: failure.savedAt }
}

/**
 * Tries a server whose remembered failure lapsed again, in a detached process of its own
 * (cli/probe.mjs) that outlives the command: it writes the server's tool list to the cache, or
 * the failure again, for the next command. The memory is renewed first, so that the commands
 * that run meanwhile neither wait on the server nor start another try.
 */
function retryInBackground(server, failure, timeoutMs) {
  rememberFailure(server.config, failure)
  try {
    const probe = spawn(process.execPath, [new URL('./probe.mjs', import.meta.url).pathname], {
      detached: true,
      stdio: 'ignore',
      windowsHide: true,
      env: { ...process.env, TOOLREG_PROBE: JSON.stringify({ config: server.config, display: server.display, timeoutMs }) },
    })
    probe.on('error', () => {}) // no Node to start: the memory lapses again and the next command tries
    probe.unref()
  } catch {
    // as above
  }
}

/**
 * Registers the tools of cached listings the way a live sync does (approval gates, executable
 * entries): a call starts the server then, through the hub's lazy connection.
 */
async function registerCached(session, cached, { timeoutMs, callTimeoutMs, onToolProgress }) {
  if (!cached.length) return
  const listings = new Map(cached.map(({ server, listing }) => [server.config.id, listing]))
  // The identity tool trust pins under (the config's command line or URL), as for a live sync.
  const identities = new Map(session.hub.servers.map((s) => [s.id, s.identity]))
  const adapter = {
    servers: cached.map(({ server }) => ({ id: server.config.id, name: server.config.name, identity: identities.get(server.config.id) })),
    // A descriptor's own `id` would name its entry on this path: MCP tools have none, and a
    // stray one must not give a cached tool another name than its live listing does.
    listTools: async (serverId) => listings.get(serverId).tools.map(({ id: _, ...descriptor }) => descriptor),
    // Reviewed by tool trust as a live listing's are (a listing cached before they were kept has none).
    instructions: (serverId) => listings.get(serverId).instructions,
    callTool: (serverId, name, args, opts) => session.hub.callTool(serverId, name, args, opts),
  }
  await syncMcpToolsToRegistry(session.registry, adapter, { needsApproval: approvalCheck(session), timeoutMs, callTimeoutMs, onProgress: onToolProgress })
  for (const { server, listing } of cached) {
    const record = { ...recordOf(server), status: 'cached', cachedAt: listing.savedAt }
    for (const t of listing.tools) {
      const name = buildMcpToolWireId({ serverId: record.id, serverName: record.name, toolName: t.name })
      if (session.registry.getByName(name) && !record.tools.some((x) => x.name === name)) record.tools.push({ name, tool: t.name })
    }
    session.servers.push(record)
  }
}

/** The sync's `needsApproval`: records why, for the question the CLI asks before a call. */
function approvalCheck(session) {
  return (info) => {
    const reason = approvalReason(session.source.settings, info)
    if (reason) session.approvalReasons.set(info.wireId, reason)
    return reason !== null
  }
}

function stderrTailOf(hub, serverId) {
  return hub.status().find((s) => s.id === serverId)?.stderrTail ?? ''
}

function fail(record, hub, error, { config, timeoutMs, runner }) {
  record.status = 'failed'
  record.error = error?.message ?? String(error)
  record.details = error?.details
  record.stderrTail = stderrTailOf(hub, record.id)
  Object.assign(record, describeFailure({ ...record, code: error?.code, timeoutMs, runner }))
  record.tools = []
  rememberFailure(config, record)
}

async function connectAll(session, servers, { progress, callTimeoutMs, onToolProgress }) {
  const { hub, registry } = session
  const records = await Promise.all(
    servers.map(async (server) => {
      const { config, display, timeoutMs } = server
      const record = recordOf(server)
      const started = Date.now()
      const runner = isPackageRunner(config)
      progress?.start(config.id, `starting: ${display}${runner ? ' (a first run may download the package)' : ''}`)
      try {
        // The hub enforces timeoutMs and says why it ran out (e.g. garbage on stdout); this
        // outer limit, a second later, only guards against a hub that never settles.
        const listed = await withTimeout(hub.listTools(config.id, { timeoutMs }), timeoutMs + 1000, `connecting to ${config.id} and listing its tools`)
        record.status = 'connected'
        record.listed = listed
        writeCachedTools(config, listed, hub.instructions(config.id))
        progress?.finish(config.id, true, plural(listed.length, 'tool'))
      } catch (error) {
        fail(record, hub, error, { config, timeoutMs, runner })
        progress?.finish(config.id, false, record.summary)
      }
      record.ms = Date.now() - started
      return record
    }),
  )
  progress?.stop()
  const selected = []
  for (const record of records) {
    for (const t of record.listed ?? []) {
      const name = buildMcpToolWireId({ serverId: record.id, serverName: record.name, toolName: t.name })
      if (record.tools.some((x) => x.name === name)) continue
      record.tools.push({ name, tool: t.name })
      selected.push(name)
    }
    delete record.listed
  }
  if (session.closed) throw new CliError('Interrupted: every server was stopped.', EXIT.INTERRUPTED)
  const timeoutMs = Math.max(0, ...servers.map((s) => s.timeoutMs))
  const synced = await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: selected, needsApproval: approvalCheck(session), timeoutMs, callTimeoutMs, onProgress: onToolProgress })
  for (const { serverId, error } of synced.failedServers) {
    const server = servers.find((s) => s.config.id === serverId)
    fail(records.find((r) => r.id === serverId), hub, { message: error }, { config: server.config, timeoutMs: server.timeoutMs, runner: isPackageRunner(server.config) })
  }
  if (session.closed) throw new CliError('Interrupted: every server was stopped.', EXIT.INTERRUPTED)
  session.servers.push(...records)
}

/**
 * The record of the server `id` a command named (the session started it, or has its cached
 * listing), or a CliError when it failed: the warning already printed says why.
 */
export function namedServer(session, id) {
  const record = session.servers.find((s) => s.id === id)
  if (record?.status === 'failed') throw new CliError(`${id} did not start (the warning above says why).`, EXIT.SERVER_FAILED)
  return record
}
