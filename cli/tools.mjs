// search, inspect and call over a session's registry.
import { createRequire } from 'node:module'
import { createInterface } from 'node:readline/promises'
import { CliError, EXIT } from './exitCodes.mjs'

const require = createRequire(import.meta.url)
const { ToolRegistry, schemaToJSDoc, mcpResultToText, repairToolCallLocally, createToolExecTool } = require('../index.js')
const { internals, hasApprovalGate } = require('../js/registry.js')
const { resolveJsonSchema } = require('../js/schema.js')

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

/**
 * The entry NAME means: a wire id, `server/tool` (or `server:tool`), or a tool name that only
 * one server has. Anything else is a CliError listing the candidates.
 */
export function resolveTool(registry, name) {
  const exact = registry.getByName(name)
  if (exact) return exact
  const split = /^([^/:]+)[/:](.+)$/.exec(name)
  const all = registry.getAll()
  const matches = split
    ? all.filter((e) => e.namespace === `mcp:${split[1]}` && e.mcp?.toolName === split[2])
    : all.filter((e) => e.mcp?.toolName === name)
  if (matches.length === 1) return matches[0]
  if (matches.length > 1) {
    const list = matches.slice(0, 10).map((e) => `  ${e.name}  (${e.namespace})`).join('\n')
    throw new CliError(`${JSON.stringify(name)} is ambiguous; ${matches.length} servers have it. Use one of:\n${list}`, EXIT.TOOL_NOT_FOUND)
  }
  const near = registry.search(name, { limit: 3 }).map((h) => `  ${h.name}  (${h.namespace})`)
  throw new CliError(`No tool named ${JSON.stringify(name)}.${near.length ? ` Closest by search:\n${near.join('\n')}` : ''}`, EXIT.TOOL_NOT_FOUND)
}

export async function signatureOf(entry) {
  return schemaToJSDoc(entry.name, entry.tool.description ?? entry.description, await resolveJsonSchema(entry.tool))
}

async function askApproval(entry, params, { yes, input = process.stdin, output = process.stderr }) {
  if (yes) return true
  if (!input.isTTY) {
    throw new CliError(`${entry.name} needs approval (the server marks it destructive); no terminal to ask on, so pass --yes to approve it.`, EXIT.NOT_APPROVED)
  }
  const rl = createInterface({ input, output })
  try {
    const answer = await rl.question(`${entry.name} (${entry.namespace}) is marked destructive. Run it with ${JSON.stringify(params)}? [y/N] `)
    return /^y(es)?$/i.test(answer.trim())
  } finally {
    rl.close()
  }
}

/**
 * The params `json` stands for, valid against the tool's schema (checked in Rust). Broken JSON
 * or params that do not match go through the local repair (`repairToolCallLocally`, no model);
 * what it fixes is said on stderr, what it cannot fix is an error with the signature.
 */
async function validParams(registry, entry, json) {
  await resolveJsonSchema(entry.tool)
  let problem
  try {
    const check = registry[internals].native.checkInput(entry.name, JSON.stringify(JSON.parse(json)))
    if (check.status !== 'invalid') return check.status === 'valid' ? JSON.parse(check.valueJson) : JSON.parse(json)
    problem = `Invalid params for ${entry.name}:\n${check.message}`
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
  console.error(`Repaired the params (${steps.join(', ')}): ${repaired.input}`)
  return JSON.parse(repaired.input)
}

/**
 * Runs model-style code in the `tool_exec` sandbox over the session's callable tools (the
 * listed-only catalog is left out), asking on the terminal before approval-gated tools.
 */
export async function execCode(registry, code, { yes } = {}) {
  const callable = registry.getAll().filter((e) => typeof e.tool.execute === 'function')
  const exec = createToolExecTool(registry, {
    allowedNames: callable.map((e) => e.name),
    onApprovalRequest: async ({ toolName, input }) => {
      try {
        return await askApproval(registry.getByName(toolName), input, { yes })
      } catch {
        return false // no terminal and no --yes: the call is denied, the code may catch it
      }
    },
  })
  const out = await exec.execute({ code }, { toolCallId: 'toolreg-cli', messages: [] })
  for (const line of out.logs ?? []) console.error(typeof line === 'string' ? line : JSON.stringify(line))
  if (out.isError) throw new CliError(`The code failed${out.errorCode ? ` (${out.errorCode})` : ''}: ${out.error}`, EXIT.TOOL_FAILED)
  return out.result
}

/**
 * Validates `json` against the tool's schema (in Rust), asks for approval when the tool is
 * approval-gated, runs it, and returns the MCP result.
 */
export async function callTool(registry, name, json, { yes } = {}) {
  const entry = resolveTool(registry, name)
  if (typeof entry.tool.execute !== 'function') {
    throw new CliError(`${entry.name} is in the listed-only catalog: its server is not running here, so it cannot be called.`, EXIT.TOOL_NOT_FOUND)
  }
  const params = await validParams(registry, entry, json)
  if (hasApprovalGate(entry.tool) && !(await askApproval(entry, params, { yes }))) {
    throw new CliError(`Not approved: ${entry.name} was not run.`, EXIT.NOT_APPROVED)
  }
  try {
    const result = await entry.tool.execute(params, { toolCallId: 'toolreg-cli', messages: [] })
    return { entry, params, result, text: mcpResultToText(result) }
  } catch (error) {
    const text = error.result ? mcpResultToText(error.result) : error.message
    throw new CliError(`${entry.name} failed: ${text}`, EXIT.TOOL_FAILED)
  }
}
