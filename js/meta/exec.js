'use strict'

const { tool, jsonSchema } = require('ai')
const native = require('../../binding.js')
const { internals } = require('../registry')
const { callNative, invalidArgument, ToolInvocationError } = require('../errors')
const { mcpResultToModelOutput } = require('../mcp/content')
const { directMcpRoute, mcpCallOutput } = require('../mcp/sync')
const { MetaToolName, createLookup } = require('./shared')
const { admitCall } = require('./invoke')
const { signaturesWithin } = require('./execSignatures')
const { execHelperPath } = require('../native')

const DEFAULT_APPROVAL_TIMEOUT_MS = 5 * 60 * 1000
/** Tokens (o200k_base) the tool list may take in the description; see README for the measure. */
const DEFAULT_SIGNATURE_TOKEN_BUDGET = 2000
const META_TOOL_NAMES = new Set(Object.values(MetaToolName))

const INTRO = [
  'Run JavaScript in a sandbox (QuickJS, not Node). `code` is the body of an async function: use `await`, and `return` a JSON value.',
  'Inside: `await tools.<name>(params)` for the tools below, `tools.invoke(name, params)`, `parallel(...promises)` (all results, fails on the first error), `settle(...promises)` (every outcome), and `console.log/info/warn/error/debug`.',
  'Values cross as JSON. A failed or refused tool call throws an Error with `code` and `message`. Await every tool call before returning.',
  'No require, import, fetch, timers, eval or Function. Limits: {limits}.',
  'Tools:',
].join('\n')

const inputSchema = jsonSchema({
  type: 'object',
  properties: { code: { type: 'string', description: 'Body of an async JavaScript function' } },
  required: ['code'],
  additionalProperties: false,
})

/**
 * One pool of sandbox processes per size, created on first use; its processes start when a run
 * needs them and wait idle (no CPU) between runs.
 */
const pools = new Map()
function poolOf(size) {
  let pool = pools.get(size)
  if (!pool) {
    pool = new native.NativeExecPool(size, execHelperPath())
    pools.set(size, pool)
  }
  return pool
}

function checkOptions(options) {
  const { allowedNames, limits = {}, onApprovalRequest, approvalTimeoutMs = DEFAULT_APPROVAL_TIMEOUT_MS } = options
  if (allowedNames !== undefined && (allowedNames == null || typeof allowedNames[Symbol.iterator] !== 'function')) {
    throw invalidArgument('opts.allowedNames', 'expected an iterable of tool names')
  }
  if (limits === null || typeof limits !== 'object') throw invalidArgument('opts.limits', 'expected an object')
  if (onApprovalRequest !== undefined && typeof onApprovalRequest !== 'function') {
    throw invalidArgument('opts.onApprovalRequest', 'expected a function ({ toolName, input, toolCallId }) => Promise<boolean>')
  }
  if (!Number.isInteger(approvalTimeoutMs) || approvalTimeoutMs <= 0) {
    throw invalidArgument('opts.approvalTimeoutMs', 'expected a positive integer')
  }
  const poolSize = options.poolSize ?? 0
  if (!Number.isInteger(poolSize) || poolSize < 0) throw invalidArgument('opts.poolSize', 'expected a non-negative integer')
  const budget = options.signatureTokenBudget ?? DEFAULT_SIGNATURE_TOKEN_BUDGET
  if (!Number.isInteger(budget) || budget <= 0) {
    throw invalidArgument('opts.signatureTokenBudget', 'expected a positive integer')
  }
  // Validated (and defaults filled in) by Rust now, rather than on the model's first run.
  const limitsJson = callNative(() => native.execLimits(JSON.stringify(limits)))
  return { allowedNames, limitsJson, onApprovalRequest, approvalTimeoutMs, poolSize, budget }
}

function describeLimits(limitsJson) {
  const limits = JSON.parse(limitsJson)
  const mib = Math.round((limits.memoryLimitBytes / (1 << 20)) * 10) / 10
  return `${limits.timeoutMs / 1000} s, ${mib} MiB of memory, ${limits.maxBridgeRequests} tool calls (${limits.maxInFlightBridgeRequests} at once)`
}

/** Runs a tool to completion; an AsyncIterable (preliminary results) yields its last value. */
async function runTool(entry, params, options) {
  const output = await entry.tool.execute(params, options)
  if (output != null && typeof output[Symbol.asyncIterator] === 'function') {
    let last
    for await (const value of output) last = value
    return last
  }
  return output
}

/**
 * The MCP tools among `entries` whose calls Rust makes straight through their hub: the run
 * does not wait for the JS thread (busy in an Electron main process) between calls.
 */
function directRoutes(registryNative, entries) {
  let routes
  for (const entry of entries) {
    const route = directMcpRoute(entry.tool)
    if (!route) continue
    routes ??= new native.NativeExecRoutes(registryNative)
    routes.addMcp(entry.name, route.hub, route.serverId, route.toolName, route.timeoutMs)
  }
  return routes
}

/**
 * Other names for the MCP tools among `entries`, flattened as [alias, name, …]: `server/tool`
 * (as the CLI names them) and the tool's own name (as `toolreg serve` lists a tool only one
 * server has); an alias two tools would share, or that is another tool's name, is left out.
 */
function serverToolAliases(entries) {
  const names = new Set(entries.map((entry) => entry.name))
  const byAlias = new Map()
  for (const entry of entries) {
    if (!entry.mcp) continue
    for (const alias of [`${entry.mcp.serverId}/${entry.mcp.toolName}`, entry.mcp.toolName]) {
      byAlias.set(alias, byAlias.has(alias) || names.has(alias) ? null : entry.name)
    }
  }
  return [...byAlias].filter(([, name]) => name !== null).flat()
}

/** Media parts of an MCP result (images, audio, blobs), which the code only sees as base64. */
function mediaParts(entry, output) {
  if (!entry.namespace?.startsWith('mcp:')) return []
  const shaped = mcpResultToModelOutput(output)
  return shaped.type === 'content' ? shaped.value.filter((part) => part.type !== 'text') : []
}

function withTimeout(promise, ms, onTimeout) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/**
 * `tool_exec`: runs model-written JavaScript in QuickJS in a pool of sandbox processes. Tool calls from
 * the code go through the checks `tool_invoke` makes (allow-list, approval, validation) and
 * run with `toolCallId` `${outer}::exec::${n}`.
 */
function createToolExecTool(registry, options = {}) {
  const opts = checkOptions(options)
  const lookup = createLookup(registry, opts.allowedNames)
  const candidates = opts.allowedNames === undefined ? registry.getAll().map((e) => e.name) : [...new Set(opts.allowedNames)]
  const entries = candidates
    .filter((name) => !META_TOOL_NAMES.has(name))
    .map((name) => lookup.get(name))
    .filter((entry) => entry && typeof entry.tool.execute === 'function')
  const toolNames = entries.map((entry) => entry.name)
  const aliasPairs = serverToolAliases(entries)
  const description = `${INTRO.replace('{limits}', describeLimits(opts.limitsJson))}\n${signaturesWithin(entries, opts.budget)}`
  const pool = poolOf(opts.poolSize)
  const { native: registryNative } = registry[internals]
  const routes = directRoutes(registryNative, entries)
  /** Media from MCP results, by outer toolCallId, until toModelOutput picks them up. */
  const mediaByCall = new Map()

  async function execute({ code }, callOptions = {}) {
    const outerId = callOptions.toolCallId
    const controllers = new Map()
    const media = []
    let run

    /** A run that has ended, been aborted or timed out starts no call and asks for nothing. */
    function ensureOpen(toolName) {
      if (!run.isOpen()) {
        throw new ToolInvocationError(`The tool_exec run ended before "${toolName}" could run.`, 'TOOLREG_EXEC_RUN_ENDED')
      }
    }

    async function requestApproval(callNumber, toolName, input, toolCallId, abortSignal) {
      if (!opts.onApprovalRequest) {
        throw new ToolInvocationError(
          `Tool "${toolName}" requires user approval, which code cannot ask for here; call it directly instead of from tool_exec.`,
          'TOOLREG_APPROVAL_REQUIRED',
        )
      }
      ensureOpen(toolName)
      run.approvalWait(callNumber, true)
      try {
        const approved = await withTimeout(
          // abortSignal fires when the run ends meanwhile: the host may close its dialog.
          Promise.resolve(opts.onApprovalRequest({ toolName, input, toolCallId, abortSignal })),
          opts.approvalTimeoutMs,
          () => new ToolInvocationError(`No approval answer for "${toolName}" within ${opts.approvalTimeoutMs} ms`, 'TOOLREG_APPROVAL_TIMEOUT'),
        )
        if (approved !== true) {
          throw new ToolInvocationError(`The user denied the call to "${toolName}".`, 'TOOLREG_APPROVAL_DENIED')
        }
        ensureOpen(toolName)
      } finally {
        run.approvalWait(callNumber, false)
      }
    }

    function fail(callNumber, error) {
      run.respond(callNumber, false, String(error?.message ?? error), typeof error?.code === 'string' ? error.code : undefined)
    }

    /** A direct MCP call the hub answered with something to shape here (an error, media). */
    function shapeMcpResult(callNumber, toolName, resultJson) {
      const entry = lookup.get(toolName)
      const output = mcpCallOutput(JSON.parse(resultJson), entry.mcp?.toolName ?? toolName)
      media.push(...mediaParts(entry, output))
      run.respond(callNumber, true, JSON.stringify(output ?? null))
    }

    async function callTool(callNumber, toolName, inputJson) {
      const toolCallId = `${outerId}::exec::${callNumber}`
      const controller = new AbortController()
      controllers.set(callNumber, controller)
      try {
        const innerOptions = { ...callOptions, toolCallId, abortSignal: controller.signal }
        const context = {
          lookup,
          native: registryNative,
          trust: registry[internals].trust,
          requestApproval: (name, input) => requestApproval(callNumber, name, input, toolCallId, controller.signal),
        }
        ensureOpen(toolName)
        const admitted = await admitCall(context, toolName, JSON.parse(inputJson), innerOptions)
        ensureOpen(toolName)
        const output = await runTool(admitted.entry, admitted.params, innerOptions)
        if (options.usage) registry.recordUse(admitted.name, options.usage)
        media.push(...mediaParts(admitted.entry, output))
        run.respond(callNumber, true, JSON.stringify(output ?? null))
      } catch (error) {
        fail(callNumber, error)
      } finally {
        controllers.delete(callNumber)
      }
    }

    const signal = callOptions.abortSignal
    signal?.throwIfAborted()
    run = callNative(() =>
      pool.start(
        code,
        toolNames,
        aliasPairs,
        opts.limitsJson,
        (callNumber, toolName, inputJson, mcpResultJson) => {
          if (mcpResultJson == null) {
            callTool(callNumber, toolName, inputJson)
            return
          }
          try {
            shapeMcpResult(callNumber, toolName, mcpResultJson)
            // Called on the direct route (Rust to the MCP server): recorded here, as it returns.
            if (options.usage) registry.recordUse(toolName, options.usage)
          } catch (error) {
            fail(callNumber, error)
          }
        },
        routes,
      ),
    )
    const onAbort = () => run.abort()
    signal?.addEventListener('abort', onAbort, { once: true })
    let outcome
    try {
      outcome = await run.outcome()
    } finally {
      signal?.removeEventListener('abort', onAbort)
      for (const controller of controllers.values()) controller.abort(new Error('tool_exec run ended'))
    }
    if (media.length > 0 && outerId !== undefined) mediaByCall.set(outerId, media)
    const output = { result: outcome.resultJson === undefined || outcome.resultJson === null ? undefined : JSON.parse(outcome.resultJson) }
    if (outcome.logs.length > 0) output.logs = outcome.logs.map((line) => line.entry)
    if (outcome.errorCode) {
      output.error = outcome.errorMessage
      output.errorCode = outcome.errorCode
      output.isError = true
    }
    return output
  }

  return tool({
    description,
    inputSchema,
    inputExamples: [{ input: { code: 'const [a, b] = await parallel(tools.a({}), tools.b({}))\nreturn { a, b }' } }],
    execute,
    toModelOutput({ toolCallId, output }) {
      const media = mediaByCall.get(toolCallId) ?? []
      mediaByCall.delete(toolCallId)
      if (media.length === 0) return { type: output?.isError ? 'error-json' : 'json', value: output ?? null }
      return { type: 'content', value: [{ type: 'text', text: JSON.stringify(output ?? null) }, ...media] }
    },
  })
}

module.exports = { createToolExecTool, DEFAULT_APPROVAL_TIMEOUT_MS, DEFAULT_SIGNATURE_TOKEN_BUDGET }
