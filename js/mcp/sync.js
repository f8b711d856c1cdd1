'use strict'

const { tool, jsonSchema } = require('ai')
const native = require('../../binding.js')
const { invalidArgument, ToolregError } = require('../errors')
const { buildMcpToolWireId } = require('./wireId')
const { mcpResultToText, mcpResultToModelOutput } = require('./content')

const DEFAULT_SYNC_TIMEOUT_MS = 15_000

/** registry → wireId → what was registered for it, so an unchanged tool is not re-registered. */
const syncedByRegistry = new WeakMap()

/** The failure of an MCP tool (`isError: true`), carrying the server's text for the model. */
class McpToolError extends ToolregError {
  constructor(message, result) {
    super(message, 'TOOLREG_MCP_TOOL_ERROR')
    this.name = 'McpToolError'
    this.result = result
  }
}

function serversOf(host) {
  const servers = typeof host.servers === 'function' ? host.servers() : host.servers
  if (!Array.isArray(servers)) throw invalidArgument('hub.servers', 'expected an array of { id, name }')
  return servers.map((s) => ({ id: s.id, name: s.name ?? s.id }))
}

/** Servers that can own a selected id: decided from the ids' server segments, nothing listed. */
function owningServers(servers, selected) {
  const segments = new Set()
  for (const id of selected) {
    const segment = native.mcpWireIdServerSegment(id)
    if (segment != null) segments.add(segment)
  }
  return servers.filter((s) => segments.has(native.mcpServerSegment(s.name)))
}

function withTimeout(promise, ms, what) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new ToolregError(`${what} timed out after ${ms} ms`, 'TOOLREG_MCP_TIMEOUT')), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

const wireIds = new Map()
const WIRE_ID_CACHE_SIZE = 100_000

/** Wire ids are pure functions of their inputs; computing them natively per sync would cost a crossing per tool. */
function cachedWireId(server, toolName) {
  const key = `${server.id}\0${server.name}\0${toolName}`
  let id = wireIds.get(key)
  if (id === undefined) {
    id = buildMcpToolWireId({ serverId: server.id, serverName: server.name, toolName })
    if (wireIds.size >= WIRE_ID_CACHE_SIZE) wireIds.clear()
    wireIds.set(key, id)
  }
  return id
}

function firstLine(text) {
  return (text ?? '').split('\n').map((line) => line.trim()).find(Boolean) ?? ''
}

function isGated(needsApproval, info) {
  if (typeof needsApproval === 'function') return Boolean(needsApproval(info))
  if (needsApproval instanceof Set) return needsApproval.has(info.wireId)
  return needsApproval === true
}

function buildEntry(host, server, descriptor, wireId, gated, callTimeoutMs) {
  const mcpTool = tool({
    description: descriptor.description ?? descriptor.title ?? '',
    inputSchema: jsonSchema(descriptor.inputSchema ?? { type: 'object', properties: {} }),
    ...(gated && { needsApproval: true }),
    execute: async (args, options = {}) => {
      const result = await host.callTool(server.id, descriptor.name, args, { timeoutMs: callTimeoutMs, signal: options.abortSignal })
      if (result?.isError) throw new McpToolError(mcpResultToText(result) || `${descriptor.name} failed`, result)
      return result
    },
    toModelOutput: ({ output }) => mcpResultToModelOutput(output),
  })
  return {
    name: wireId,
    namespace: `mcp:${server.id}`,
    namespaceLabel: `mcp:${server.name}`,
    description: firstLine(descriptor.description) || firstLine(descriptor.title) || descriptor.name,
    defer: gated ? 'never' : 'auto',
    tool: mcpTool,
    applies: (scope) => scope?.mcpToolIds?.has(wireId) ?? false,
    mcp: { serverId: server.id, serverName: server.name, toolName: descriptor.name },
  }
}

/**
 * Registers the selected MCP tools, listing only the servers that own a selected id.
 * Idempotent and safe to run per request and concurrently; evicts only entries of listed
 * servers that the server no longer lists, never after a failed or timed-out list.
 *
 * @param {import('../registry').ToolRegistry} registry
 * @param {{ servers, listTools(serverId, opts), callTool(serverId, name, args, opts) }} host an `McpHub` or the host's own adapter
 * @param {{ selectedToolIds: Iterable<string>, timeoutMs?: number, callTimeoutMs?: number, needsApproval?: boolean | Set<string> | ((info) => boolean) }} opts
 */
async function syncMcpToolsToRegistry(registry, host, opts = {}) {
  if (host == null || typeof host.listTools !== 'function' || typeof host.callTool !== 'function') {
    throw invalidArgument('hub', 'expected an McpHub or an adapter with servers, listTools() and callTool()')
  }
  const selected = new Set(opts.selectedToolIds ?? [])
  const timeoutMs = opts.timeoutMs ?? DEFAULT_SYNC_TIMEOUT_MS
  const result = { registered: [], evicted: [], listedServers: [], failedServers: [] }
  if (selected.size === 0) return result

  let synced = syncedByRegistry.get(registry)
  if (!synced) syncedByRegistry.set(registry, (synced = new Map()))

  const owners = owningServers(serversOf(host), selected)
  const listings = await Promise.all(
    owners.map(async (server) => {
      try {
        const tools = await withTimeout(Promise.resolve(host.listTools(server.id, { timeoutMs })), timeoutMs, `tools/list of ${server.id}`)
        return { server, tools }
      } catch (error) {
        return { server, error }
      }
    }),
  )

  const byNamespace = new Map()
  for (const entry of registry.getAll()) {
    if (!byNamespace.has(entry.namespace)) byNamespace.set(entry.namespace, [])
    byNamespace.get(entry.namespace).push(entry)
  }

  for (const { server, tools, error } of listings) {
    if (error) {
      result.failedServers.push({ serverId: server.id, error: error?.message ?? String(error) })
      continue
    }
    result.listedServers.push(server.id)
    const listed = new Set()
    for (const descriptor of tools ?? []) {
      if (typeof descriptor?.name !== 'string') continue
      const wireId = cachedWireId(server, descriptor.name)
      if (listed.has(wireId)) continue // a server listing one tool twice: the first wins
      listed.add(wireId)
      if (!selected.has(wireId)) continue
      const gated = isGated(opts.needsApproval, { serverId: server.id, serverName: server.name, toolName: descriptor.name, wireId, annotations: descriptor.annotations })
      const previous = synced.get(wireId)
      // Same descriptor object (the hub's cache) or same JSON: keep the entry, and with it the
      // tool object its token cost is cached on.
      const unchanged =
        previous !== undefined &&
        registry.getByName(wireId) === previous.entry &&
        previous.gated === gated &&
        previous.serverName === server.name &&
        (previous.descriptor === descriptor || previous.json === JSON.stringify(descriptor))
      if (!unchanged) {
        const entry = buildEntry(host, server, descriptor, wireId, gated, opts.callTimeoutMs)
        registry.register(entry)
        synced.set(wireId, { entry, descriptor, json: JSON.stringify(descriptor), gated, serverName: server.name })
      } else if (previous.descriptor !== descriptor) {
        previous.descriptor = descriptor
      }
      result.registered.push(wireId)
    }
    for (const entry of byNamespace.get(`mcp:${server.id}`) ?? []) {
      if (!listed.has(entry.name) && registry.deregister(entry.name)) {
        synced.delete(entry.name)
        result.evicted.push(entry.name)
      }
    }
  }
  return result
}

module.exports = { syncMcpToolsToRegistry, McpToolError, DEFAULT_SYNC_TIMEOUT_MS }
