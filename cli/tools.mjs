// search, inspect and call over a session's registry.
import { createRequire } from 'node:module'
import { createInterface } from 'node:readline/promises'
import { Script } from 'node:vm'
import { CliError, EXIT } from './exitCodes.mjs'
import { paramsFromWords } from './params.mjs'
import { seconds } from './failures.mjs'
import { costsOf } from './audit.mjs'

const require = createRequire(import.meta.url)
const { ToolRegistry, schemaToJSDoc, mcpResultToText, repairToolCallLocally, createToolExecTool } = require('../index.js')
const { internals, hasApprovalGate } = require('../js/registry.js')
const { resolveJsonSchema } = require('../js/schema.js')
const { labelOf, closest, didYouMean } = require('../js/meta/names.js')

/** `filesystem` and `mcp:filesystem` both name the namespace `mcp:filesystem`. */
export function namespaceOf(ns) {
  return ns === undefined || ns.includes(':') ? ns : `mcp:${ns}`
}

/** Ranked hits; `hybrid` adds the built-in static embeddings (no model, no network). */
export async function searchTools(registry, query, { namespace, limit, hybrid }) {
  const opts = { namespace: namespaceOf(namespace), limit }
  if (!hybrid) return registry.search(query, opts)
  const semantic = new ToolRegistry({ builtinEmbeddings: true })
  semantic.registerMany(registry.getAll())
  await semantic.embeddingsReady()
  return semantic.searchAsync(query, opts)
}

/** `server/tool`: the one name the CLI shows and takes for a tool (the wire id works too). */
export { labelOf }

/** `[server, tool]` when NAME is `server/tool` (or `server:tool`). */
export function splitName(name) {
  const split = /^([^/:]+)[/:](.+)$/.exec(name)
  return split ? [split[1], split[2]] : null
}

/**
 * The entry NAME means: `server/tool`, a wire id, or a tool name that only one server has.
 * Anything else is a CliError with the closest names by edit distance; a server the config
 * skipped (`skipped`: `{ id, file, why }`) is named with the reason, and when the tool's server,
 * or any server it may be on (`failed`: the ids that did not start), did not start, that is the
 * error (exit 4), not a missing tool.
 */
export function resolveTool(registry, name, { configured = [], skipped = [], failed = [] } = {}) {
  const exact = registry.getByName(name)
  if (exact) return exact
  const all = registry.getAll().filter((e) => e.mcp)
  const split = splitName(name)
  if (split) {
    const [server, toolName] = split
    const own = all.filter((e) => e.mcp.serverId === server)
    if (!own.length) {
      const servers = [...new Set([...configured, ...all.map((e) => e.mcp.serverId)])]
      if (failed.includes(server)) throw new CliError(`No tools of ${server}: it did not start (the warning above says why).`, EXIT.SERVER_FAILED)
      const skip = skipped.find((s) => s.id === server)
      if (skip) throw new CliError(`${server} is skipped, so its tools are unknown: ${skip.why}${skip.file ? ` (in ${skip.file})` : ''}.`, EXIT.CONFIG)
      if (configured.includes(server)) throw new CliError(`${server} has no tools.`, EXIT.TOOL_NOT_FOUND)
      const known = configured.length ? ` (configured: ${configured.join(', ')})` : ''
      throw new CliError(`No tools of a server ${JSON.stringify(server)}${known}.${didYouMean(closest(server, servers))}`, EXIT.TOOL_NOT_FOUND)
    }
    const match = own.find((e) => e.mcp.toolName === toolName)
    if (match) return match
    throw new CliError(`${server} has no tool ${JSON.stringify(toolName)}.${didYouMean(closest(toolName, own, (e) => e.mcp.toolName).map(labelOf))}`, EXIT.TOOL_NOT_FOUND)
  }
  const matches = all.filter((e) => e.mcp.toolName === name)
  if (matches.length === 1) return matches[0]
  if (matches.length > 1) {
    throw new CliError(`${JSON.stringify(name)} is ambiguous: ${matches.length} servers have it. Use one of ${matches.slice(0, 10).map((e) => labelOf(e)).join(', ')}.`, EXIT.TOOL_NOT_FOUND)
  }
  const unknown = skipped.filter((s) => s.id).map((s) => s.id)
  const skippedNote = unknown.length ? ` The tools of skipped servers are unknown (${unknown.join(', ')}; toolreg audit says why).` : ''
  const suggestions = `${didYouMean(closest(name, all, (e) => e.mcp.toolName).map(labelOf))}${skippedNote}`
  if (failed.length) {
    throw new CliError(`No tool named ${JSON.stringify(name)} on the servers that started; ${failed.join(', ')} did not (the warnings above say why).${suggestions}`, EXIT.SERVER_FAILED)
  }
  throw new CliError(`No tool named ${JSON.stringify(name)}.${suggestions}`, EXIT.TOOL_NOT_FOUND)
}

export async function signatureOf(entry) {
  return schemaToJSDoc(entry.name, entry.tool.description ?? entry.description, await resolveJsonSchema(entry.tool))
}

/**
 * Asks `question` on the terminal; `--yes` answers it. Without a terminal, `refusal()` is thrown
 * (the CLI never guesses a yes).
 */
async function confirm(question, { yes, refusal, input = process.stdin, output = process.stderr }) {
  if (yes) return true
  if (!input.isTTY) throw refusal()
  const rl = createInterface({ input, output })
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim())
  } finally {
    rl.close()
  }
}

/** `reasons`: wire id → why the tool needs approval (the session's approvalReasons). */
function askApproval(entry, params, { yes, reasons }) {
  const why = reasons?.get(entry.name) ?? 'it is marked as needing approval'
  return confirm(`${labelOf(entry)} needs approval: ${why}. Run it with ${JSON.stringify(params)}?`, {
    yes,
    refusal: () => new CliError(`${labelOf(entry)} needs approval (${why}); there is no terminal to ask on, so pass --yes to approve it.`, EXIT.NOT_APPROVED),
  })
}

/**
 * Repairs that keep what was typed: syntax a model (or a shell) mangles, and "2" read as the
 * number 2. Any other repair (closing cut-off input, unwrapping, other coercions) guesses, so
 * the repaired call is shown and confirmed first.
 */
const FAITHFUL_STEPS = new Set([
  'json:code-fence', 'json:surrounding-text', 'json:trailing-comma', 'json:missing-comma', 'json:single-quotes', 'json:smart-quotes',
  'json:unquoted-key', 'json:comment', 'json:python-literal', 'json:raw-control-character', 'unwrap:double-encoded',
  'coerce:string-to-number', 'coerce:string-to-boolean',
])
const isFaithful = (step) => FAITHFUL_STEPS.has(step.replace(/ at \$.*$/, ''))

/**
 * The params `json` stands for, valid against the tool's schema (checked in Rust). Broken JSON
 * or params that do not match go through the local repair (`repairToolCallLocally`, no model);
 * what it fixes is said on stderr, and a repair that may change the values needs a yes.
 */
async function validParams(registry, entry, json, { yes }) {
  await resolveJsonSchema(entry.tool)
  let problem
  try {
    const check = registry[internals].native.checkInput(entry.name, JSON.stringify(JSON.parse(json)))
    if (check.status !== 'invalid') return check.status === 'valid' ? JSON.parse(check.valueJson) : JSON.parse(json)
    problem = `The params do not match ${labelOf(entry)}:\n${check.message}`
  } catch (error) {
    problem = `The params are not valid JSON: ${error.message}`
  }
  let steps = []
  const repaired = await repairToolCallLocally({
    toolCall: { type: 'tool-call', toolCallId: 'toolreg-cli', toolName: entry.name, input: json },
    tools: { [entry.name]: entry.tool },
    onRepair: (report) => (steps = report.steps),
  })
  if (!repaired) throw new CliError(`${problem}\nExpected:\n${await signatureOf(entry)}`, EXIT.INVALID_PARAMS)
  const how = `Repaired the params (${steps.join(', ')}): ${repaired.input}`
  if (steps.every(isFaithful)) {
    console.error(how)
  } else if (!(await confirm(`${how}\nThis repair may have changed what you typed. Run ${labelOf(entry)} with it?`, {
    yes,
    refusal: () => new CliError(`${how}\nThat repair may have changed what you typed, so it is not run without a terminal to confirm on: fix the params, or pass --yes to run the repaired call.`, EXIT.INVALID_PARAMS),
  }))) {
    throw new CliError(`Not run: the repaired params were declined.`, EXIT.NOT_APPROVED)
  }
  return JSON.parse(repaired.input)
}

/** How the sandbox wraps the code (a function body) before it parses it. */
const EXEC_WRAPPER = ['(async () => {', '\n})']

/**
 * The syntax error of `code` at the user's own line and column. The sandbox parses the code
 * wrapped in an async function, so its error can point at the wrapper's closing `}`; Node
 * parses the same wrapped text (compiling only, nothing runs) and its position is mapped back.
 * Null when Node finds no error.
 */
export function syntaxErrorIn(code) {
  try {
    new Script(`${EXEC_WRAPPER[0]}${code}${EXEC_WRAPPER[1]}`, { filename: 'code' })
    return null
  } catch (error) {
    // V8's stack of a compile error: `code:LINE`, the source line, a caret under the column.
    const [where, , caret = ''] = String(error.stack).split('\n')
    const line = Number(/:(\d+)$/.exec(where)?.[1])
    const lines = code.split('\n').length
    if (!(line <= lines)) return 'the code ends before something it opened (a bracket, a string, an expression) is closed'
    const column = caret.indexOf('^') + 1 - (line === 1 ? EXEC_WRAPPER[0].length : 0)
    return `${error.message} at line ${line}, column ${column}`
  }
}

/**
 * Runs model-style code in the `tool_exec` sandbox over the session's callable tools (the
 * listed-only catalog is left out), asking on the terminal before approval-gated tools.
 */
export async function execCode(registry, code, { yes, reasons } = {}) {
  const callable = registry.getAll().filter((e) => typeof e.tool.execute === 'function')
  const exec = createToolExecTool(registry, {
    allowedNames: callable.map((e) => e.name),
    onApprovalRequest: async ({ toolName, input }) => {
      try {
        return await askApproval(registry.getByName(toolName), input, { yes, reasons })
      } catch {
        return false // no terminal and no --yes: the call is denied, the code may catch it
      }
    },
  })
  const out = await exec.execute({ code }, { toolCallId: 'toolreg-cli', messages: [] })
  const logs = (out.logs ?? []).map((line) => (typeof line === 'string' ? line : JSON.stringify(line)))
  if (out.isError) {
    for (const line of logs) console.error(line)
    const error = (out.errorCode === 'TOOLREG_EXEC_SYNTAX' && syntaxErrorIn(code)) || out.error
    throw new CliError(`The code failed${out.errorCode ? ` (${out.errorCode})` : ''}: ${error}`, EXIT.TOOL_FAILED)
  }
  return { result: out.result, logs }
}

/**
 * Validates the params (`words`: one JSON object, or key=value words typed by the schema)
 * against the tool's schema (in Rust), asks for approval when the tool is approval-gated, runs
 * it, and returns the MCP result. `callTimeoutMs` is only for the message when the call ran out:
 * the session's entries carry the limit. `stderrOf(serverId)` (with --verbose) gives the end of
 * the server's stderr, shown when the server died during the call.
 */
export async function callTool(registry, name, words, { yes, configured, skipped, failed, reasons, stderrOf, callTimeoutMs } = {}) {
  const entry = resolveTool(registry, name, { configured, skipped, failed })
  if (typeof entry.tool.execute !== 'function') {
    throw new CliError(`${labelOf(entry)} is in the demo's listed-only catalog: no server behind it runs, so it cannot be called.`, EXIT.TOOL_NOT_FOUND)
  }
  const json = paramsFromWords(words, { schema: await resolveJsonSchema(entry.tool), label: labelOf(entry) })
  const params = await validParams(registry, entry, json, { yes })
  if (hasApprovalGate(entry.tool) && !(await askApproval(entry, params, { yes, reasons }))) {
    throw new CliError(`Not approved: ${labelOf(entry)} was not run.`, EXIT.NOT_APPROVED)
  }
  try {
    const result = await entry.tool.execute(params, { toolCallId: 'toolreg-cli', messages: [] })
    return { entry, params, result, text: mcpResultToText(result) }
  } catch (error) {
    if (error.code === 'TOOLREG_MCP_TIMEOUT') throw callTimedOut(labelOf(entry), callTimeoutMs)
    const text = error.result ? mcpResultToText(error.result) : error.message
    const stderr = error.code === 'TOOLREG_MCP_CLOSED' && stderrOf ? stderrOf(entry.mcp.serverId).trimEnd() : ''
    const tail = stderr ? `\nThe server's stderr ended with:\n${stderr.split('\n').slice(-20).map((line) => `  | ${line}`).join('\n')}` : ''
    throw new CliError(`${labelOf(entry)} failed: ${text}${tail}`, EXIT.TOOL_FAILED)
  }
}

/** A request to a server that ran out of --call-timeout: it was cancelled, and how to give more. */
export function callTimedOut(what, callTimeoutMs) {
  return new CliError(`${what} did not answer within ${seconds(callTimeoutMs)}, so it was cancelled; give it longer with --call-timeout ${callTimeoutMs * 4}.`, EXIT.TOOL_FAILED)
}

/** How `toolreg tools` words a session's server status. */
const STATUS_WORDS = { connected: 'started', cached: 'cached', failed: 'failed', listed: 'listed only' }

/**
 * Every configured server with its tool count and how its tools are known (started, cached,
 * failed or skipped, with the reason), in the config's order, skipped entries last.
 */
export function serverOverview(session) {
  const servers = session.servers.filter((s) => s.kind === 'mcp').map((s) => ({
    id: s.id,
    status: STATUS_WORDS[s.status],
    tools: s.status === 'failed' ? null : s.tools.length,
    ...(s.status === 'failed' && { reason: s.summary, hint: s.hint ?? null }),
    ...(s.cachedAt && { cachedAt: new Date(s.cachedAt).toISOString() }),
  }))
  const skipped = session.skipped.map((skip) => ({ id: skip.id, status: 'skipped', tools: null, reason: skip.why, file: skip.file ?? null }))
  return { servers: [...servers, ...skipped], catalog: session.catalog }
}

/** The tools of the server `id`: `server/tool`, the wire id, the one-line description and the tokens of its definition. */
export async function toolsOf(session, id) {
  const entries = session.registry.getAll().filter((e) => e.mcp?.serverId === id)
  const cost = await costsOf(entries)
  // Tool trust's scan of each definition (docs/security.md): what it flags, and why.
  const trust = new Map(session.registry.trust().filter((t) => t.serverId === id).map((t) => [t.name, t]))
  return entries.map((e) => {
    const findings = trust.get(e.name)?.findings ?? []
    return { id: labelOf(e), name: e.name, description: e.description, tokens: cost.get(e.name), needsApproval: hasApprovalGate(e.tool), ...(findings.length && { findings }) }
  })
}
