// Loads the configured servers (a config file or the embedded default), connects to every MCP
// server concurrently, each within a timeout, and registers every tool in one ToolRegistry the
// way an app would (syncMcpToolsToRegistry for live servers, plain entries for the catalog).
import { createRequire } from 'node:module'
import { ConfigError, loadConfigFile } from './config.mjs'
import { referenceServers } from './defaults.mjs'
import { defaultCatalog, firstLine } from './catalog.mjs'
import { CliError, EXIT } from './exitCodes.mjs'

const require = createRequire(import.meta.url)
const { McpHub, ToolRegistry, buildMcpToolWireId, syncMcpToolsToRegistry } = require('../index.js')
const { withTimeout } = require('../js/mcp/sync.js')
const { tool, jsonSchema } = require('ai')

/** Sessions not yet closed; SIGINT closes them so no child process outlives the CLI. */
const openSessions = new Set()

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

/** MCP annotations mark write/delete tools; the CLI asks before running those. */
const isDestructive = ({ annotations }) => annotations?.destructiveHint === true

function catalogEntries(tools) {
  const servers = new Map()
  const entries = []
  for (const t of tools) {
    let server = servers.get(t.server)
    if (!server) servers.set(t.server, (server = { id: t.server, name: t.serverName, kind: 'catalog', transport: 'catalog', status: 'listed', tools: [] }))
    const name = buildMcpToolWireId({ serverId: t.server, serverName: t.serverName, toolName: t.name })
    if (server.tools.some((x) => x.name === name)) continue // a server listing one tool twice: the first wins
    server.tools.push({ name, tool: t.name })
    entries.push({
      name,
      namespace: `mcp:${t.server}`,
      namespaceLabel: `mcp:${t.serverName}`,
      description: firstLine(t.description) || t.name,
      defer: 'auto',
      tool: tool({ description: t.description, inputSchema: jsonSchema(t.inputSchema) }),
      mcp: { serverId: t.server, serverName: t.serverName, toolName: t.name },
    })
  }
  return { servers: [...servers.values()], entries }
}

/**
 * The servers of `config` (a file path), or the embedded default with its catalog when absent.
 * @param {{ config?: string, timeoutMs: number, progress?: ReturnType<import('./progress.mjs').createProgress> }} opts
 */
export async function openSession({ config, timeoutMs, progress }) {
  const loaded = config ? loadConfigFile(config) : referenceServers()
  const hub = new McpHub({ servers: [], connectTimeoutMs: timeoutMs, reconnectBackoffMs: 0 })
  const session = {
    hub,
    registry: new ToolRegistry(),
    configFile: config ?? null,
    servers: [],
    skipped: loaded.skipped,
    catalog: null,
    closed: false,
    async close() {
      if (session.closed) return
      session.closed = true
      openSessions.delete(session)
      await hub.close()
      loaded.cleanup?.()
    },
  }
  openSessions.add(session)
  try {
    for (const { config: serverConfig, key } of loaded.servers) {
      try {
        hub.addServer(serverConfig)
      } catch (error) {
        throw new ConfigError(config ?? 'embedded default', key, error.message)
      }
    }
    await connectAll(session, loaded.servers, { timeoutMs, progress })
    if (!config) {
      const { tools, label, source } = defaultCatalog()
      const built = catalogEntries(tools)
      session.registry.registerMany(built.entries)
      session.servers.push(...built.servers)
      session.catalog = { label, source, servers: built.servers.length, tools: built.entries.length }
    }
    return session
  } catch (error) {
    await session.close()
    throw error
  }
}

function stderrTailOf(hub, serverId) {
  return hub.status().find((s) => s.id === serverId)?.stderrTail ?? ''
}

async function connectAll(session, servers, { timeoutMs, progress }) {
  const { hub, registry } = session
  const records = await Promise.all(
    servers.map(async ({ config, key, display }) => {
      const record = { id: config.id, name: config.name, kind: 'mcp', transport: config.type, key, command: display, tools: [] }
      const started = Date.now()
      progress?.start(config.id, `connecting: ${display}`)
      try {
        const listed = await withTimeout(hub.listTools(config.id, { timeoutMs }), timeoutMs, `connecting to ${config.id} and listing its tools`)
        record.status = 'connected'
        record.listed = listed
        progress?.finish(config.id, true, `${listed.length} tools`)
      } catch (error) {
        record.status = 'failed'
        record.error = error.message
        record.stderrTail = stderrTailOf(hub, config.id)
        progress?.finish(config.id, false, `failed: ${error.message}`)
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
  const synced = await syncMcpToolsToRegistry(registry, hub, { selectedToolIds: selected, needsApproval: isDestructive, timeoutMs })
  for (const { serverId, error } of synced.failedServers) {
    Object.assign(records.find((r) => r.id === serverId), { status: 'failed', error, stderrTail: stderrTailOf(hub, serverId), tools: [] })
  }
  if (session.closed) throw new CliError('Interrupted: every server was stopped.', EXIT.INTERRUPTED)
  session.servers.push(...records)
}
