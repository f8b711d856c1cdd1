// `toolreg serve`: one MCP server in front of the configured ones, for MCP clients toolreg did
// not write. The client sees what the defer decision keeps inline, under the tools' own names,
// plus tool_search / tool_inspect / tool_invoke (and tool_exec) for the rest; the instructions
// carry the deferred-tools section. rmcp speaks the protocol (crates/toolreg-mcp/src/gateway); this file decides
// what is listed and runs the calls.
import { AsyncLocalStorage } from 'node:async_hooks'
import { createHash, randomBytes } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { FAILURE_MAX_AGE_MS, readCachedTools, readGatewayAnswer, readRememberedFailure, readSlowStart, rememberFailure, rememberSlowStart, writeCachedTools, writeGatewayAnswer } from './cache.mjs'
import { fileTokenStore } from './auth.mjs'
import { describeFailure, isPackageRunner } from './failures.mjs'
import { num, plural } from './format.mjs'
import { STARTUP_WAIT_MS } from './defaults.mjs'

const require = createRequire(import.meta.url)
const native = require('../binding.js')
const { McpHub, ToolRegistry, applyDeferExposition, syncMcpToolsToRegistry } = require('../index.js')
const { DEFAULT_CALL_TIMEOUT_MS } = require('../js/mcp/hub.js')
const { MetaToolName } = require('../js/meta/shared.js')
const { internals } = require('../js/registry.js')
const { checkParams, invalidParamsError } = require('../js/guard.js')

const META_ORDER = [MetaToolName.Search, MetaToolName.Inspect, MetaToolName.Invoke, 'tool_exec']

const isMcpResult = (output) => output !== null && typeof output === 'object' && Array.isArray(output.content)

/** A text result, for the failures the gateway itself reports. */
const textResult = (text, isError) => ({ content: [{ type: 'text', text }], isError })

/** One part of an AI SDK tool's model output as an MCP content block. */
function contentBlockOf(part) {
  if (part.type === 'text') return { type: 'text', text: part.text }
  if (part.type === 'image-data' || (part.type === 'media' && part.mediaType?.startsWith('image/'))) {
    return { type: 'image', data: part.data, mimeType: part.mediaType }
  }
  if (part.type === 'file-data' || part.type === 'media') {
    return { type: 'resource', resource: { uri: `data:${part.mediaType}`, mimeType: part.mediaType, blob: part.data } }
  }
  return { type: 'text', text: JSON.stringify(part) }
}

/**
 * A meta-tool's output as an MCP `CallToolResult`: what the model would read (its
 * `toModelOutput`), and an MCP tool's own result whole (every content type, `isError`).
 */
async function callResultOf(tool, output, toolCallId, input) {
  if (isMcpResult(output)) return { ...output, isError: output.isError === true }
  const shown = tool.toModelOutput ? await tool.toModelOutput({ toolCallId, input, output }) : { type: 'json', value: output }
  switch (shown?.type) {
    case 'text':
    case 'error-text':
      return textResult(String(shown.value), shown.type === 'error-text')
    case 'content':
      return { content: shown.value.map(contentBlockOf), isError: false }
    default:
      return textResult(JSON.stringify(shown?.value ?? null, null, 2), shown?.type === 'error-json')
  }
}

/** The MCP definition of a meta-tool (an AI SDK tool). */
async function metaDefinition(name, tool) {
  return { name, description: tool.description ?? '', inputSchema: await tool.inputSchema.jsonSchema }
}

/**
 * Builds the gateway over `servers` (hub configs from the CLI's config loader) and returns at
 * once with what is known: servers with a fresh cached tools/list are served from it (and start
 * only when a call, or a client's look at prompts or resources, needs them); the others are
 * listed in the background, each joining the served tools when it answers (`list_changed`), or
 * left out with one log line saying why (remembered, so CLI commands skip it for a while).
 * `keeps(serverId, toolName)` picks the tools served (a profile); `callTimeoutMs` bounds each
 * request forwarded to a server (a call, directly or through the meta-tools, a prompt, a
 * resource); `needsApproval(serverId, toolName)` marks tools that, like the ones a server marks
 * destructive, stay inline and out of tool_invoke / tool_exec. `startupWaitMs`: see
 * STARTUP_WAIT_MS. `stateKey`: see readStateKey.
 */
export async function createGateway(servers, { contextWindow, exec = false, timeoutMs = 30_000, timeoutOf = () => timeoutMs, callTimeoutMs = DEFAULT_CALL_TIMEOUT_MS, stateKey, log = () => {}, keeps = () => true, needsApproval = () => false, startupWaitMs = STARTUP_WAIT_MS, usageStore, trustFile } = {}) {
  const version = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version
  let gateway = null
  let gatewayReady
  const gatewayExists = new Promise((resolve) => (gatewayReady = resolve))
  // Rebuilds (a server joined, or changed its tools) run in order once the gateway exists: a
  // server that answers while the first build runs joins right after it.
  let rebuilding = gatewayExists
  // The client's call a tool the host runs serves (`{ id, wantsProgress, progressSent }`),
  // through every await and the sandbox's callbacks: the server it calls is then known to be
  // that call's (callReaches), and that server's progress is the call's.
  const servedCall = new AsyncLocalStorage()
  const askClient = async (kind, request) => {
    if (!gateway) throw new Error('no client is connected to the gateway')
    return JSON.parse(await gateway.askClient(kind, JSON.stringify(request)))
  }
  // The rebuild waiting to start, if any: the changes that come in meanwhile (a server that
  // joins, and the list_changed bursts servers send as they register their tools) all go into
  // it, so the clients hear one tools/list_changed for them.
  let queued = null
  // The first tools/list has been answered (or may be): list changes are announced from then on.
  let firstListed = false
  /**
   * Builds the tool list again and tells the clients, once, if it changed; `why` is logged
   * when it is done.
   */
  const rebuild = (why) => {
    if (queued) {
      if (why) queued.whys.push(why)
      return
    }
    queued = { whys: why ? [why] : [] }
    rebuilding = rebuilding.then(async () => {
      const { whys } = queued
      queued = null
      try {
        const before = JSON.stringify([definitions, instructions])
        await build()
        gateway.setInstructions(instructions)
        // Before the first tools/list is answered (it waits for this), no client has a list
        // to refresh.
        if (firstListed && JSON.stringify([definitions, instructions]) !== before) await gateway.notifyToolsChanged()
        for (const said of whys) log(`${said}; now ${describeSummary(summary)}`)
      } catch (error) {
        log(`warning: could not rebuild the tool list: ${error.message}`)
      }
    })
  }
  // A server's list_changed makes it listed anew: one listing at a time per server, and one
  // more if it said so again meanwhile (servers announce each tool they add at start).
  const relisting = new Map()
  const onToolsChanged = (serverId) => {
    if (relisting.has(serverId)) {
      relisting.get(serverId).again = true
      return
    }
    const state = { again: false }
    relisting.set(serverId, state)
    const config = configs.get(serverId)
    hub
      .listTools(serverId, { timeoutMs })
      .then((tools) => {
        const instructions = hub.instructions(serverId)
        listings.set(serverId, { tools, instructions })
        writeCachedTools(config, tools, instructions)
        if (!state.again) rebuild()
      })
      .catch((error) => log(`warning: could not list ${serverId} after it changed its tools: ${error.message}`))
      .finally(() => {
        relisting.delete(serverId)
        if (state.again && !closing) onToolsChanged(serverId)
      })
  }
  const hub = new McpHub({
    servers: servers.map((s) => s.config),
    connectTimeoutMs: Math.max(timeoutMs, ...servers.map((s) => timeoutOf(s.config))),
    auth: { tokenStore: fileTokenStore() },
    // A server asking its client is answered by the gateway's client whose call it serves.
    onElicitation: (request) => askClient('elicitation', request),
    onSampling: (request) => askClient('sampling', request),
    onRoots: (request) => askClient('roots', request),
    onToolsChanged,
    onLog: ({ serverId, ...message }) => gateway?.log(JSON.stringify({ ...message, logger: message.logger ?? serverId })),
    // Prompts and resources pass through the gateway natively; their changes are relayed.
    onListChanged: ({ list }) => gateway?.listChanged(list),
    onResourceUpdated: ({ serverId, uri }) => gateway?.resourceUpdated(serverId, uri),
  })
  const configs = new Map(servers.map((s) => [s.config.id, s.config]))
  /** serverId → `{ tools }` once listed (or cached), `{ failed }` when it could not be. */
  const listings = new Map()
  const pending = []
  let closing = false
  // Counts listings that settled, so one that settles while the first build runs is not missed.
  let listingsChanged = 0
  let firstBuildSaw
  const byId = new Map(servers.map((s) => [s.config.id, s]))
  /** The failure last said of each server, so a retry that fails alike says nothing new. */
  const failureSaid = new Map()
  /** Server id → the timer of its next retry in the background. */
  const retryTimers = new Map()
  /** The servers the first answers wait for (no cached list, no failure or slow start remembered). */
  const waitedFor = []
  /** Servers held in the hub as failed: a client's prompts and resources lists leave them out. */
  const held = new Set()
  for (const server of servers) {
    const cached = readCachedTools(server.config)
    const remembered = cached ? null : readRememberedFailure(server.config, { maxAgeMs: Infinity })
    if (cached) listings.set(server.config.id, { tools: cached.tools, instructions: cached.instructions })
    else if (remembered) {
      // A server that failed before: nothing waits on it (no request of any client, nor the
      // first answer); it is tried again in the background, and joins if it starts now.
      hub.hold(server.config.id, remembered.summary)
      held.add(server.config.id)
      listings.set(server.config.id, { failed: remembered.summary })
      failureSaid.set(server.config.id, remembered.summary)
      const ago = Math.max(1, Math.round((Date.now() - remembered.savedAt) / 60_000))
      log(`${server.config.id} is left out: it failed ${ago} min ago (${remembered.summary}); trying it again in the background`)
      listLive(server, { probe: true })
    } else if (readSlowStart(server.config)) {
      // It missed the start-up wait last time (hanging, or slow to start): listed in the
      // background, not waited for; it joins with list_changed if it answers.
      log(`${server.config.id} is listed in the background: it had not answered within the start-up wait at an earlier start`)
      listLive(server)
    } else {
      waitedFor.push(server)
      pending.push(listLive(server))
    }
  }
  /**
   * Lists one server in the background: it joins the served tools, or is left out with why,
   * held in the hub (no request waits on it) and tried again once its failure memory lapses.
   * `probe`: the server is held; this listing is the retry.
   */
  async function listLive({ config }, { probe = false } = {}) {
    const serverTimeout = timeoutOf(config)
    try {
      const tools = await hub.listTools(config.id, { timeoutMs: serverTimeout, probe })
      const instructions = hub.instructions(config.id)
      const wasHeld = held.delete(config.id)
      listings.set(config.id, { tools, instructions })
      failureSaid.delete(config.id)
      writeCachedTools(config, tools, instructions)
      // Before the gateway exists, the first build takes it in (and the start-up line says so).
      listingsChanged++
      if (gateway) {
        rebuild(`${config.id} joined with ${plural(tools.filter((t) => keeps(config.id, t.name)).length, 'tool')}`)
        // Prompts and resources listed while it was out are listed anew.
        if (wasHeld) gateway.serverJoined(config.id)
      }
    } catch (error) {
      // The gateway closing (the client went away) ends listings too: that is no failure of the
      // server's, to report or to remember.
      if (closing) return
      serverFailed(config, { message: error?.message ?? String(error), code: error?.code }, serverTimeout)
    }
  }
  /**
   * A server that did not start (listing its tools, or for a client's prompts or resources):
   * said once with why, remembered for the CLI and the next start, held in the hub so that no
   * request waits on it, and tried again in the background when the memory lapses.
   */
  function serverFailed(config, { message, code }, serverTimeout) {
    const display = byId.get(config.id)?.display ?? config.id
    const stderrTail = hub.status().find((x) => x.id === config.id)?.stderrTail ?? ''
    const failure = describeFailure({ id: config.id, transport: config.type, command: display, error: message, code, timeoutMs: serverTimeout, stderrTail, runner: isPackageRunner(config) })
    hub.hold(config.id, failure.summary)
    held.add(config.id)
    rememberFailure(config, failure)
    // A server whose tools were cached keeps them listed: a call fails at once, with why.
    if (!listings.get(config.id)?.tools) listings.set(config.id, { failed: failure.summary })
    if (failureSaid.get(config.id) !== failure.summary) {
      failureSaid.set(config.id, failure.summary)
      const said = stderrTail.trim().split('\n').pop()
      log(`warning: ${config.id} is left out: ${failure.summary}${failure.hint ? `; ${failure.hint}` : ''}${said ? `; stderr: ${said.slice(0, 300)}` : ''}`)
    }
    listingsChanged++
    if (gateway) rebuild()
    // One retry at a time (a failure found by a listing and by a client's prompts at once).
    if (retryTimers.has(config.id)) return
    const timer = setTimeout(() => {
      retryTimers.delete(config.id)
      if (!closing) listLive(byId.get(config.id), { probe: true })
    }, FAILURE_MAX_AGE_MS)
    timer.unref()
    retryTimers.set(config.id, timer)
  }
  // The identity tool trust pins under (the config's command line or URL), as `toolreg trust` has it.
  const identities = new Map(hub.servers.map((s) => [s.id, s.identity]))
  const adapter = {
    servers: servers.map((s) => ({ id: s.config.id, name: s.config.name, identity: identities.get(s.config.id) })),
    // Answers from what is known, never waiting on a server: one still listing (or failed)
    // has no tools yet, which keeps the entries it had.
    async listTools(serverId) {
      const listing = listings.get(serverId)
      if (!listing?.tools) throw new Error(listing?.failed ?? `${serverId} is still starting`)
      return listing.tools.filter((t) => keeps(serverId, t.name))
    },
    // Unknown (undefined) for a listing cached before instructions were kept: not reviewed then.
    instructions: (serverId) => listings.get(serverId)?.instructions,
    callTool: (serverId, name, args, opts) => {
      // A tool the host runs for a client's call (tool_invoke, tool_exec, a deferred tool):
      // what this server asks meanwhile may be that client's to answer.
      const call = servedCall.getStore()
      if (call === undefined || !gateway) return hub.callTool(serverId, name, args, opts)
      gateway.callReaches(call.id, serverId)
      if (!call.wantsProgress) return hub.callTool(serverId, name, args, opts)
      // One rising count across every server call of the run (tool_exec may make several):
      // MCP wants each notification's progress above the last, so one that is not is left out.
      const onProgress = (update) => {
        opts?.onProgress?.(update)
        if (!(update.progress > call.progressSent)) return
        call.progressSent = update.progress
        gateway.progress(call.id, update.progress, update.total, update.message)
      }
      return hub.callTool(serverId, name, args, { ...opts, onProgress })
    },
  }
  // With a usage store, calls are recorded in it and the pins learned from it are loaded up
  // front: computed at the first build and kept for the gateway's life (one client session),
  // so the tool list does not change under the client's prompt cache.
  const registry = new ToolRegistry({ ...(usageStore && { usageStore }), trust: trustFile ? { store: trustFile } : {} })
  /** Held tools already named in the log, so each is said once per change. */
  const heldSaid = new Set()
  const pinsKept = usageStore ? {} : undefined
  // Kept across rebuilds: a server joining does not make the model inspect its tools again.
  const inspectedNames = new Set()
  let exposed = new Map()
  let definitions = []
  let instructions = null
  let summary
  /** Lists (from the cache where fresh), decides what stays inline, and builds the tool list. */
  /** A digest of everything the tool list and instructions follow from, for readGatewayAnswer. */
  function answerKey() {
    const served = servers.map(({ config }) => {
      const tools = listings.get(config.id)?.tools?.filter((t) => keeps(config.id, t.name))
      return [config.id, config.name, tools?.map((t) => [t, needsApproval(config.id, t.name)]) ?? null]
    })
    // The pins follow from the usage store: a store that changed since makes a fresh answer.
    const usage = usageStore ? [usageStore, fileStamp(usageStore)] : null
    // So do the trust decisions: an approval or reset since makes a fresh answer too.
    const trust = trustFile ? [trustFile, fileStamp(trustFile)] : null
    return createHash('sha256').update(JSON.stringify({ version, contextWindow, exec: Boolean(exec), served, usage, trust })).digest('hex').slice(0, 32)
  }
  // Builds run one at a time: the first one may still run (a start answered from an earlier
  // one's list) when a server joins or changes its tools.
  let lastBuild = Promise.resolve()
  function build() {
    const run = lastBuild.then(buildNow)
    lastBuild = run.catch(() => {})
    return run
  }
  async function buildNow() {
    const key = answerKey()
    // Destructive tools stay inline and gated: the client's own confirmation applies to them,
    // and tool_invoke / tool_exec refuse them.
    const synced = await syncMcpToolsToRegistry(registry, adapter, {
      timeoutMs,
      callTimeoutMs,
      needsApproval: (info) => info.annotations?.destructiveHint === true || needsApproval(info.serverId, info.toolName),
    })
    for (const held of registry.trust().filter((t) => t.state === 'held')) {
      const key = `${held.serverId}/${held.toolName}\0${held.change}`
      if (heldSaid.has(key)) continue
      heldSaid.add(key)
      log(`toolreg serve: held ${held.serverId}/${held.toolName} until approved (toolreg trust approve ${held.serverId}/${held.toolName}): ${held.change}`)
    }
    for (const held of registry.serverInstructions().filter((i) => i.state === 'held')) {
      const key = `${held.serverId}\0instructions\0${held.change}`
      if (heldSaid.has(key)) continue
      heldSaid.add(key)
      log(`toolreg serve: held the instructions of ${held.serverId} until approved (toolreg trust approve ${held.serverId}): ${held.change}`)
    }
    const active = registry.selectActiveTools({ mcpToolIds: new Set(synced.registered) })
    // MCP tools are shown under their own names; a name two servers share (or a meta-tool's)
    // gets the collision-free wire id instead. Decided over every served tool, not only the
    // inline ones, so a tool keeps its name when the defer decision changes, and the
    // meta-tools take (and suggest) the names the client lists.
    const owners = new Map()
    for (const name of Object.keys(active)) {
      const toolName = registry.getByName(name)?.mcp?.toolName ?? name
      owners.set(toolName, (owners.get(toolName) ?? 0) + 1)
    }
    const shownNames = new Map()
    for (const name of Object.keys(active)) {
      const own = registry.getByName(name)?.mcp?.toolName
      if (own && owners.get(own) === 1 && !META_ORDER.includes(own)) shownNames.set(name, own)
    }
    const exposition = await applyDeferExposition(active, registry, contextWindow, { exec, shownNames, inspectedNames, ...(pinsKept && { conversation: pinsKept }) })
    const inline = Object.keys(exposition.tools).filter((name) => !META_ORDER.includes(name))
    const nextExposed = new Map()
    for (const name of inline) nextExposed.set(shownNames.get(name) ?? name, { entry: registry.getByName(name), tool: exposition.tools[name] })
    const nextDefinitions = []
    for (const name of META_ORDER) {
      if (exposition.tools[name]) nextDefinitions.push(await metaDefinition(name, exposition.tools[name]))
    }
    for (const [name, { entry, tool }] of [...nextExposed].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      // The definition as tool trust admitted it, never the server's listing as it came.
      const descriptor = entry?.mcp?.descriptor
      const definition = descriptor ? { ...descriptor, name } : await metaDefinition(name, tool)
      // Kept inline on purpose (pinned ones included): clients that defer on their own should not (Claude's hint).
      nextDefinitions.push({ ...definition, _meta: { ...definition._meta, 'anthropic/alwaysLoad': true } })
    }
    for (const name of META_ORDER) if (exposition.tools[name]) nextExposed.set(name, { tool: exposition.tools[name] })
    exposed = nextExposed
    setDirectRoutes()
    definitions = nextDefinitions
    instructions = withServerInstructions(exposition.systemPrompt, registry.serverInstructions())
    const states = [...configs.keys()].map((id) => listings.get(id))
    summary = {
      servers: servers.length,
      failedServers: states.filter((l) => l?.failed).length,
      startingServers: states.filter((l) => !l).length,
      tools: synced.registered.length,
      inline: inline.length,
      deferred: exposition.deferredEntries?.length ?? 0,
      listed: definitions.length,
    }
    writeGatewayAnswer(key, { definitions, instructions })
  }
  /**
   * The listed server tools, for the native gateway to forward without a round trip through
   * this host (most of a forwarded call's overhead). Only inline tools, which a client calls
   * as the server would: deferred ones go through tool_invoke here, which applies approval.
   * The gateway checks their arguments against the registry's schema first (`checkAs`), as
   * tool_invoke checks the calls it runs.
   */
  function setDirectRoutes() {
    if (!gateway) return
    const routes = {}
    for (const [name, { entry }] of exposed) {
      if (entry?.mcp) routes[name] = { serverId: entry.mcp.serverId, tool: entry.mcp.toolName, notify: Boolean(usageStore), checkAs: entry.name }
    }
    gateway.setDirectRoutes(JSON.stringify(routes), registry[internals].native)
  }
  // Counted from the process's start, as a client's timeouts are from the spawn: loading Node,
  // the addon and the config is part of what the client waits for. `initialize` (whose
  // instructions follow from the servers' tools) waits for the servers up to half the
  // start-up wait, the first tools/list up to all of it (see STARTUP_WAIT_MS).
  const settled = Promise.allSettled(pending)
  const waits = new Set()
  await waitAtMost(settled, startupWaitMs / 2 - process.uptime() * 1000, waits)
  firstBuildSaw = listingsChanged
  // The first tools/list: every server that answered within the start-up wait is in it, so a
  // client that lists once sees them; one that joins later is announced with list_changed.
  const firstList = (async () => {
    await waitAtMost(settled, startupWaitMs - process.uptime() * 1000, waits)
    // The ones that neither answered nor failed by then are not waited for at the next start.
    if (!closing) for (const { config } of waitedFor) if (!listings.has(config.id)) rememberSlowStart(config)
    await gatewayExists
    await rebuilding // the servers that answered after the first build
    firstListed = true
  })()
  // The first build counts every definition's tokens, and the tokenizer takes a second or two
  // to build its tables in a fresh process: a start with the same inputs as an earlier one
  // answers from what that one served while the build runs.
  const saved = readGatewayAnswer(answerKey())
  const building = build().then(() => log(`toolreg serve: ${describeSummary(summary)}`))
  if (saved) {
    ;({ definitions, instructions } = saved)
    Promise.all([building, gatewayExists]).then(async () => {
      if (JSON.stringify(definitions) !== JSON.stringify(saved.definitions)) await gateway.notifyToolsChanged()
    }, (error) => log(`warning: could not build the tool list: ${error.message}`))
  } else {
    await building
  }

  const running = new Map()
  const host = {
    async list() {
      if (!firstListed) await firstList
      return definitions
    },
    async call({ id, name, arguments: args, progress: wantsProgress }) {
      await building // a start answered from an earlier one's tool list
      const target = exposed.get(name)
      if (!target) {
        // A tool its server changed since it was pinned (or added late, or poisoned) is held.
        const held = registry[internals].trust?.heldSentence(name)
        return held ? textResult(held, true) : { error: `no tool named ${JSON.stringify(name)} on this gateway` }
      }
      // A server's own tool is called by the gateway itself: every content type and isError
      // as sent, its progress passed on in order.
      if (target.entry?.mcp) {
        // The direct route's check, for a call that reached the host before the routes were set.
        const checked = await checkParams(registry[internals].native, target.entry.name, target.entry.tool.inputSchema, args ?? {})
        if (checked.problems !== undefined) return textResult(invalidParamsError(registry[internals].native, target.entry.name, checked.problems, name).message, true)
        // Forwarded by the native gateway, so recorded here (a no-op without --usage-store).
        registry.recordUse(target.entry.name)
        return { forward: { serverId: target.entry.mcp.serverId, tool: target.entry.mcp.toolName } }
      }
      const controller = new AbortController()
      running.set(id, controller)
      try {
        const toolCallId = `gateway-${id}`
        const served = { id, wantsProgress, progressSent: -Infinity }
        const output = await servedCall.run(served, () => target.tool.execute(args ?? {}, { toolCallId, messages: [], abortSignal: controller.signal }))
        return await callResultOf(target.tool, output, toolCallId, args ?? {})
      } catch (error) {
        // An MCP tool that failed (McpToolError) keeps its own result; anything else is its message.
        return isMcpResult(error?.result) ? { ...error.result, isError: true } : textResult(error?.message ?? String(error), true)
      } finally {
        running.delete(id)
      }
    },
    // A call of a listed server tool the native gateway forwarded by its direct route.
    forwarded({ name }) {
      const entry = exposed.get(name)?.entry
      if (entry?.mcp) registry.recordUse(entry.name)
      return null
    },
    cancel({ id }) {
      running.get(id)?.abort()
      return null
    },
    warn({ message }) {
      log(`warning: ${message}`)
      return null
    },
    // A server that did not start for a client's prompts or resources (LIST_TIMEOUT, 30 s).
    failed({ serverId, message, code }) {
      const config = configs.get(serverId)
      if (config && !closing && !hub.status().some((x) => x.id === serverId && x.state === 'connected')) serverFailed(config, { message, code }, 30_000)
      return null
    },
  }
  gateway = new native.NativeGateway(
    'toolreg',
    version,
    instructions,
    (json) =>
      Promise.resolve(JSON.parse(json))
        .then((request) => host[request.op](request))
        .then((answer) => JSON.stringify(answer ?? null)),
    McpHub.nativeOf(hub),
    callTimeoutMs,
    stateKey ?? null,
  )
  setDirectRoutes()
  gatewayReady()
  if (listingsChanged !== firstBuildSaw) rebuild()
  return {
    gateway,
    get summary() {
      return summary
    },
    async close() {
      closing = true
      for (const timer of [...retryTimers.values(), ...waits]) clearTimeout(timer)
      gateway.close()
      for (const controller of running.values()) controller.abort()
      await hub.close()
    },
  }
}

/**
 * Resolves when `promise` settles or after `ms` (at once when `ms` is not positive). The timer
 * is kept in `timers` meanwhile, for a close to clear: a gateway whose client went away is not
 * kept up by it.
 */
function waitAtMost(promise, ms, timers) {
  if (!(ms > 0)) return Promise.resolve()
  let timer
  const elapsed = new Promise((resolve) => timers.add((timer = setTimeout(resolve, ms))))
  return Promise.race([promise, elapsed]).finally(() => {
    clearTimeout(timer)
    timers.delete(timer)
  })
}

/**
 * The gateway's instructions: toolreg's own, then each server's as tool trust admits them
 * (pinned, stripped of hidden Unicode; none while a change is held), under the server's id.
 */
function withServerInstructions(own, reviewed) {
  const parts = own ? [own] : []
  const servers = reviewed.filter((entry) => entry.text)
  if (servers.length > 0) parts.push(`Instructions of the MCP servers behind this gateway:\n\n${servers.map((entry) => `## ${entry.serverId}\n${entry.text}`).join('\n\n')}`)
  return parts.length > 0 ? parts.join('\n\n') : null
}

/** A store file's size and time of change (usage store, trust file), or null when it is not there yet. */
function fileStamp(file) {
  try {
    const { size, mtimeMs } = statSync(file)
    return [size, mtimeMs]
  } catch {
    return null
  }
}

/** What the gateway serves, in a line for its log. */
export function describeSummary(summary) {
  const starting = summary.startingServers ? `, ${num(summary.startingServers)} still starting` : ''
  return `${plural(summary.tools, 'tool')} from ${num(summary.servers - summary.failedServers - summary.startingServers)} of ${num(summary.servers)} servers${starting}; ${num(summary.inline)} inline, ${num(summary.deferred)} behind tool_search (${plural(summary.listed, 'tool')} listed)`
}

/** Set in the environment of `toolreg serve` and so of every server it starts. */
export const SERVE_ACTIVE_ENV = 'TOOLREG_SERVE_ACTIVE'

/**
 * The servers a gateway fronts, without entries that run `toolreg serve` itself: a client's
 * config that lists the gateway is the one `serve` finds by default, and fronting itself would
 * start gateway after gateway. `{ servers, selves: [id] }`.
 */
export function withoutSelf(servers) {
  const runsGateway = ({ config }) => {
    const words = [config.command ?? '', ...(config.args ?? [])]
    return words.some((w) => /(^|[\\/@])toolreg(\.mjs|@[^/\\\s]*)?$/.test(w)) && words.includes('serve')
  }
  return { servers: servers.filter((s) => !runsGateway(s)), selves: servers.filter(runsGateway).map((s) => s.config.id) }
}

/**
 * The secret that signs the request state of input-required results (2026-07-28 clients): the
 * text of `--state-key-file`, else TOOLREG_STATE_KEY, else `undefined` (the gateway draws one
 * for its process, which other replicas cannot check).
 */
export function readStateKey(file, env = process.env) {
  if (file === undefined) return env.TOOLREG_STATE_KEY || undefined
  try {
    return readFileSync(file, 'utf8')
  } catch (error) {
    throw Object.assign(new Error(`could not read the state key file ${file}: ${error.message}`), { code: 'STATE_KEY_UNREADABLE' })
  }
}

/** A bearer token for HTTP mode: TOOLREG_SERVE_TOKEN, else 32 random bytes. */
export function serveToken(env = process.env) {
  return env.TOOLREG_SERVE_TOKEN || randomBytes(32).toString('base64url')
}
