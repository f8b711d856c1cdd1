'use strict'

const { tool, jsonSchema } = require('ai')
const { invalidArgument, ToolregError } = require('../errors')
const { internals, hasApprovalGate } = require('../registry')
const { McpHub, DEFAULT_CALL_TIMEOUT_MS } = require('./hub')
const { buildMcpToolWireId, isReferenceWireIdOf, checkStyle } = require('./wireId')
const { mcpResultToText, mcpResultToModelOutput } = require('./content')
const { checkedSchemaOf } = require('../guard')

const DEFAULT_SYNC_TIMEOUT_MS = 15_000

/** registry → wireId → what was registered for it, so an unchanged tool is not re-registered. */
const syncedByRegistry = new WeakMap()

/** The `execute` this module made for an MCP tool → where its calls go. */
const hubRoutes = new WeakMap()

/** The failure of an MCP tool (`isError: true`), carrying the server's text for the model. */
class McpToolError extends ToolregError {
  constructor(message, result) {
    super(message, 'TOOLREG_MCP_TOOL_ERROR')
    this.name = 'McpToolError'
    this.result = result
  }
}

/** What a call of the MCP tool `name` gives its caller: the result, or an McpToolError. */
function mcpCallOutput(result, name) {
  if (result?.isError) throw new McpToolError(mcpResultToText(result) || `${name} failed`, result)
  return result
}

/**
 * Where calls of `tool` may go without the JS thread (tool_exec calls them from Rust): only a
 * tool this module made for an McpHub, with the hub's own `execute` and `callTool` and no
 * approval gate. A host that wraps any of these keeps every call going through its wrapper.
 */
function directMcpRoute(tool) {
  const route = hubRoutes.get(tool.execute)
  // Progress goes to the host's `onProgress` from the JS path only.
  const hub = route && !route.reportsProgress && !hasApprovalGate(tool) ? McpHub.nativeOf(route.host) : undefined
  return hub && { hub, serverId: route.serverId, toolName: route.toolName, timeoutMs: route.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS }
}

function serversOf(host) {
  const servers = typeof host.servers === 'function' ? host.servers() : host.servers
  if (!Array.isArray(servers)) throw invalidArgument('hub.servers', 'expected an array of { id, name }')
  return servers.map((s) => ({ id: s.id, name: s.name ?? s.id, ...(typeof s.identity === 'string' && { identity: s.identity }) }))
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
function cachedWireId(server, toolName, style) {
  const key = `${style}\0${server.id}\0${server.name}\0${toolName}`
  let id = wireIds.get(key)
  if (id === undefined) {
    id = buildMcpToolWireId({ serverId: server.id, serverName: server.name, toolName }, { style })
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

/** The one-liner an MCP tool is registered (and searched) with. */
function entryDescriptionOf(descriptor) {
  return firstLine(descriptor.description) || firstLine(descriptor.title) || descriptor.name
}

function buildEntry(host, server, descriptor, wireId, gated, { native, callTimeoutMs, onProgress, warn }, metadata) {
  /** The call's progress for the host, named by the call it belongs to; a host callback that throws is only warned about. */
  const progressOf = (toolCallId) => (update) => {
    try {
      onProgress({ toolCallId, name: wireId, serverId: server.id, toolName: descriptor.name, ...update })
    } catch (error) {
      warn(`toolreg: onProgress threw for MCP tool ${JSON.stringify(wireId)}: ${error?.message ?? error}`)
    }
  }
  const mcpTool = tool({
    description: descriptor.description ?? descriptor.title ?? '',
    // The server's JSON Schema has no validator of its own: the registry's checks the calls
    // the AI SDK makes of this tool directly, as tool_invoke does.
    inputSchema: checkedSchemaOf(native, wireId, jsonSchema(descriptor.inputSchema ?? { type: 'object', properties: {} })),
    ...(gated && { needsApproval: true }),
    execute: async (args, options = {}) => {
      const callOptions = { timeoutMs: callTimeoutMs, signal: options.abortSignal, ...(onProgress && { onProgress: progressOf(options.toolCallId) }) }
      const result = await host.callTool(server.id, descriptor.name, args, callOptions)
      return mcpCallOutput(result, descriptor.name)
    },
    toModelOutput: ({ output }) => mcpResultToModelOutput(output),
    ...(metadata !== undefined && { metadata }),
  })
  hubRoutes.set(mcpTool.execute, { host, serverId: server.id, toolName: descriptor.name, timeoutMs: callTimeoutMs, reportsProgress: Boolean(onProgress) })
  return {
    name: wireId,
    namespace: `mcp:${server.id}`,
    namespaceLabel: `mcp:${server.name}`,
    description: entryDescriptionOf(descriptor),
    defer: gated ? 'never' : 'auto',
    tool: mcpTool,
    applies: (scope) => scope?.mcpToolIds?.has(wireId) ?? false,
    // `descriptor`: the definition as tool trust admitted it (hidden Unicode stripped, or the
    // pinned form kept), which is what a gateway may serve for this tool.
    mcp: { serverId: server.id, serverName: server.name, toolName: descriptor.name, descriptor },
  }
}

/** Lists each server concurrently, each within `timeoutMs`; a failure is recorded, not thrown. */
function listServers(host, servers, timeoutMs) {
  return Promise.all(
    servers.map(async (server) => {
      try {
        const tools = await withTimeout(Promise.resolve(host.listTools(server.id, { timeoutMs })), timeoutMs, `tools/list of ${server.id}`)
        // What the server sent at connect, for tool trust; left out when the host cannot tell.
        const instructions = typeof host.instructions === 'function' ? (host.instructions(server.id) ?? null) : undefined
        return { server, tools: Array.isArray(tools) ? tools : [], instructions }
      } catch (error) {
        return { server, error }
      }
    }),
  )
}

/**
 * Registers one listed tool, or keeps its entry when nothing about it changed. Returns false
 * when the tool is left out (the host's `metadata()` threw).
 */
function registerListed(registry, synced, host, opts, { server, descriptor, wireId }) {
  let metadata
  try {
    metadata = host.metadata ? host.metadata(descriptor) : undefined
  } catch (error) {
    registry[internals].logger.warn(`toolreg: metadata() for MCP tool ${JSON.stringify(wireId)} threw; leaving it out: ${error?.message ?? error}`)
    return false
  }
  const label = typeof descriptor.serverName === 'string' ? { ...server, name: descriptor.serverName } : server
  const gated = isGated(opts.needsApproval, { serverId: server.id, serverName: label.name, toolName: descriptor.name, wireId, annotations: descriptor.annotations })
  const metadataJson = metadata === undefined ? undefined : JSON.stringify(metadata)
  const previous = synced.get(wireId)
  // Same descriptor object (the hub's cache) or same JSON: keep the entry, and with it the
  // tool object its token cost is cached on.
  const unchanged =
    previous !== undefined &&
    registry.getByName(wireId) === previous.entry &&
    previous.gated === gated &&
    previous.serverName === label.name &&
    previous.metadataJson === metadataJson &&
    previous.onProgress === opts.onProgress &&
    (previous.descriptor === descriptor || previous.json === JSON.stringify(descriptor))
  if (!unchanged) {
    const warn = (message) => registry[internals].logger.warn(message)
    const entry = buildEntry(host, label, descriptor, wireId, gated, { native: registry[internals].native, callTimeoutMs: opts.callTimeoutMs, onProgress: opts.onProgress, warn }, metadata)
    registry.register(entry)
    synced.set(wireId, { entry, descriptor, json: JSON.stringify(descriptor), gated, serverName: label.name, metadataJson, onProgress: opts.onProgress })
  } else if (previous.descriptor !== descriptor) {
    previous.descriptor = descriptor
  }
  return true
}

/**
 * The listings as the registry's tool trust admits them (js/trust.js): each server's tools
 * compared with its pins and scanned before anything of them is registered; what is held is
 * left out, so a tool registered before is evicted. `wireIdsOf(server, tools)` → `(name) => id`.
 */
async function trusted(registry, listings, wireIdsOf) {
  const { trust } = registry[internals]
  if (!trust) return listings
  const everyTool = listings.flatMap(({ server, tools }) => (tools ?? []).filter((t) => typeof t?.name === 'string').map((t) => [server.id, t.name]))
  return Promise.all(
    listings.map(async (listing) => {
      if (listing.error) return listing
      const { server, tools, instructions } = listing
      try {
        const reviewed = await trust.review(server, tools, { wireIdOf: wireIdsOf(server, tools), otherTools: everyTool, instructions })
        return { server, tools: reviewed.tools, held: reviewed.held }
      } catch (error) {
        // An unreadable trust store admits nothing of the server: it fails like a listing.
        return { server, error }
      }
    }),
  )
}

/** A tool trust holds leaves the registry: its earlier definition must not stay in use. */
function evictHeld(registry, synced, listings, result) {
  for (const { held } of listings) if (held?.length) evict(registry, synced, held, result)
}

/** Deregisters `names`, recording them as evicted. */
function evict(registry, synced, names, result) {
  for (const name of names) {
    if (registry.deregister(name)) {
      synced.delete(name)
      result.evicted.push(name)
    }
  }
}

function mcpEntriesByNamespace(registry) {
  const byNamespace = new Map()
  for (const entry of registry.getAll()) {
    if (!entry.namespace.startsWith('mcp:')) continue
    if (!byNamespace.has(entry.namespace)) byNamespace.set(entry.namespace, [])
    byNamespace.get(entry.namespace).push(entry)
  }
  return byNamespace
}

function syncedOf(registry) {
  let synced = syncedByRegistry.get(registry)
  if (!synced) syncedByRegistry.set(registry, (synced = new Map()))
  return synced
}

function emptyResult() {
  return { registered: [], evicted: [], listedServers: [], failedServers: [] }
}

/**
 * Registers MCP tools as registry entries. Idempotent and safe to run per request and
 * concurrently; a failed or timed-out listing evicts nothing, and one failing server does
 * not stop the others.
 *
 * - A host with `serversForToolIds` (an `McpHub`) is scoped: only the servers owning a
 *   selected id are listed, ids are `buildMcpToolWireId`'s, and entries of a listed server
 *   that it no longer lists are evicted. No selection lists nothing.
 * - A host adapter over its own catalog (no `serversForToolIds`) has every server listed
 *   (its catalog is a cache); a descriptor's own `id` is the entry name, see `syncCatalog`.
 *
 * @param {import('../registry').ToolRegistry} registry
 * @param {{ servers, listTools(serverId, opts), callTool(serverId, name, args, opts), serversForToolIds?(ids), metadata?(descriptor) }} host
 * @param {{ selectedToolIds?: Iterable<string>, wireIdStyle?: 'toolreg' | 'reference', timeoutMs?: number, callTimeoutMs?: number, needsApproval?: boolean | Set<string> | ((info) => boolean), onProgress?: (update) => void }} [opts]
 *   `wireIdStyle` names the ids toolreg computes (`buildMcpToolWireId`'s `style`): 'reference'
 *   keeps the ids a migrating host persisted. `onProgress({ toolCallId, name, serverId,
 *   toolName, progress, total?, message? })` hears the servers' progress of each call of a
 *   synced tool, named by the `toolCallId` its `execute` got.
 */
async function syncMcpToolsToRegistry(registry, host, opts = {}) {
  if (host == null || typeof host.listTools !== 'function' || typeof host.callTool !== 'function') {
    throw invalidArgument('hub', 'expected an McpHub or an adapter with servers, listTools() and callTool()')
  }
  if (host.metadata !== undefined && typeof host.metadata !== 'function') {
    throw invalidArgument('hub.metadata', 'expected a function (descriptor) => metadata')
  }
  opts ??= {}
  if (opts.wireIdStyle !== undefined) checkStyle('wireIdStyle', opts.wireIdStyle)
  if (opts.onProgress !== undefined && typeof opts.onProgress !== 'function') {
    throw invalidArgument('onProgress', 'expected a function ({ toolCallId, name, serverId, toolName, progress, total?, message? }) => void')
  }
  return typeof host.serversForToolIds === 'function' ? syncOwners(registry, host, opts) : syncCatalog(registry, host, opts)
}

/** Servers that can own a selected id, decided from the ids alone (nothing is listed). */
function ownersOf(host, selected, style) {
  const servers = serversOf(host)
  if (style === 'reference') return servers.filter((s) => [...selected].some((id) => isReferenceWireIdOf(id, s.name)))
  const ownerIds = new Set(host.serversForToolIds(selected))
  return servers.filter((s) => ownerIds.has(s.id))
}

/** The scoped path: owners decided from the selected ids alone, before anything is listed. */
async function syncOwners(registry, host, opts) {
  // Without a selection nothing would be listed or registered; say so instead of doing nothing.
  if (opts.selectedToolIds == null) {
    throw invalidArgument('selectedToolIds', 'is required with an McpHub: pass the wire ids to sync (buildMcpToolWireId), or [] to sync nothing')
  }
  const selected = new Set(opts.selectedToolIds)
  const result = emptyResult()
  if (selected.size === 0) return result
  const synced = syncedOf(registry)
  const style = opts.wireIdStyle ?? 'toolreg'
  const owners = ownersOf(host, selected, style)
  const listings = await trusted(registry, await listServers(host, owners, opts.timeoutMs ?? DEFAULT_SYNC_TIMEOUT_MS), (server) => (name) => cachedWireId(server, name, style))
  const byNamespace = mcpEntriesByNamespace(registry)

  for (const { server, tools, error } of listings) {
    if (error) {
      result.failedServers.push({ serverId: server.id, error: error?.message ?? String(error) })
      continue
    }
    result.listedServers.push(server.id)
    const listed = new Set()
    for (const descriptor of tools) {
      if (typeof descriptor?.name !== 'string') continue
      const wireId = cachedWireId(server, descriptor.name, style)
      if (listed.has(wireId)) continue // a server listing one tool twice: the first wins
      listed.add(wireId)
      if (!selected.has(wireId)) continue
      if (registerListed(registry, synced, host, opts, { server, descriptor, wireId })) result.registered.push(wireId)
    }
    const gone = (byNamespace.get(`mcp:${server.id}`) ?? []).filter((e) => !listed.has(e.name)).map((e) => e.name)
    evict(registry, synced, gone, result)
  }
  evictHeld(registry, synced, listings, result)
  return result
}

/**
 * The host-catalog path (the reference registry's semantics):
 * - every server of the adapter is listed; a descriptor's `id` (else `buildMcpToolWireId`) is
 *   its entry name, and selected ids are matched against those ids;
 * - no `selectedToolIds` syncs every tool; an empty selection lists nothing;
 * - entries of `mcp:` servers the adapter no longer has are evicted; so are entries of a
 *   server owning a selected id that it no longer lists; other servers' entries stay;
 * - repeated descriptors of one tool (server id + tool name) register once; two different
 *   tools sharing one id are both left out, with a warning;
 * - `host.metadata(descriptor)` becomes the entry tool's `metadata`.
 */
async function syncCatalog(registry, host, opts) {
  const selected = opts.selectedToolIds == null ? null : new Set(opts.selectedToolIds)
  const result = emptyResult()
  if (selected?.size === 0) return result
  const synced = syncedOf(registry)
  const servers = serversOf(host)
  const byNamespace = mcpEntriesByNamespace(registry)

  const present = new Set(servers.map((s) => `mcp:${s.id}`))
  for (const [namespace, entries] of byNamespace) {
    if (!present.has(namespace)) evict(registry, synced, entries.map((e) => e.name), result)
  }

  const wireIdsOf = (server, tools) => {
    const ids = new Map(tools.filter((d) => typeof d?.id === 'string' && d.id !== '').map((d) => [d.name, d.id]))
    return (name) => ids.get(name) ?? cachedWireId(server, name, opts.wireIdStyle ?? 'toolreg')
  }
  const listings = await trusted(registry, await listServers(host, servers, opts.timeoutMs ?? DEFAULT_SYNC_TIMEOUT_MS), wireIdsOf)
  // id → the one tool listed under it, or null when two different tools claim it.
  const byId = new Map()
  const { logger } = registry[internals]
  for (const { server, tools, error } of listings) {
    if (error) {
      result.failedServers.push({ serverId: server.id, error: error?.message ?? String(error) })
      continue
    }
    result.listedServers.push(server.id)
    for (const descriptor of tools) {
      if (typeof descriptor?.name !== 'string') continue
      const wireId = typeof descriptor.id === 'string' && descriptor.id !== '' ? descriptor.id : cachedWireId(server, descriptor.name, opts.wireIdStyle ?? 'toolreg')
      const identity = `${server.id}\0${descriptor.name}`
      const claimed = byId.get(wireId)
      if (claimed === undefined) {
        byId.set(wireId, { server, descriptor, wireId, identity })
      } else if (claimed !== null && claimed.identity !== identity) {
        logger.warn(`toolreg: MCP tools ${JSON.stringify(claimed.descriptor.name)} (server ${JSON.stringify(claimed.server.id)}) and ${JSON.stringify(descriptor.name)} (server ${JSON.stringify(server.id)}) share the id ${JSON.stringify(wireId)}; leaving both out`)
        byId.set(wireId, null)
      }
    }
  }

  const listedIds = new Map(result.listedServers.map((id) => [id, new Set()]))
  const owning = new Set()
  for (const [wireId, listed] of byId) {
    if (listed === null) continue
    listedIds.get(listed.server.id).add(wireId)
    if (selected && !selected.has(wireId)) continue
    owning.add(listed.server.id)
    if (registerListed(registry, synced, host, opts, listed)) result.registered.push(wireId)
  }
  // A server whose tools trust holds owns them still: what it no longer lists goes too.
  for (const { server, held } of listings) if (held?.length) owning.add(server.id)
  for (const serverId of owning) {
    const ids = listedIds.get(serverId)
    evict(registry, synced, (byNamespace.get(`mcp:${serverId}`) ?? []).filter((e) => !ids.has(e.name) && registry.getByName(e.name) === e).map((e) => e.name), result)
  }
  evictHeld(registry, synced, listings, result)
  return result
}

module.exports = { syncMcpToolsToRegistry, McpToolError, mcpCallOutput, directMcpRoute, DEFAULT_SYNC_TIMEOUT_MS, withTimeout, entryDescriptionOf }
