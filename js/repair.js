'use strict'

/**
 * Tool-call repair for the AI SDK's `experimental_repairToolCall` hook: a local pass in Rust
 * first (names, JSON, envelopes, coercion, all validated), then at most `maxAttempts` model
 * calls with structured output, whose result must validate too.
 */

const { generateText, Output, jsonSchema, NoSuchToolError, InvalidToolInputError } = require('ai')
const { NativeRepairToolset } = require('../binding.js')
const { jsonSchemaOf } = require('./schema')
const { invalidArgument, callNative } = require('./errors')

/** ToolSet object → { names, tools, native }: the native toolset is built once per ToolSet. */
const toolsetCache = new WeakMap()

/** A tool with `needsApproval` (a flag or a function) is gated; only its exact name reaches it. */
function needsApproval(tool) {
  return tool.needsApproval != null && tool.needsApproval !== false
}

async function schemaJsonOf(tool) {
  try {
    return JSON.stringify((await jsonSchemaOf(tool)) ?? {})
  } catch {
    // A schema the SDK cannot convert: the tool still competes for its name, but no repaired
    // input can ever validate against it.
    return 'false'
  }
}

/** The native toolset for `tools`, rebuilt when a name or a tool object changed. */
async function nativeToolsetFor(tools) {
  const names = Object.keys(tools)
  const cached = toolsetCache.get(tools)
  if (cached && cached.names.length === names.length && names.every((n, i) => cached.names[i] === n && cached.tools[i] === tools[n])) {
    return cached.native
  }
  const entries = await Promise.all(
    names.map(async (name) => ({
      name,
      schemaJson: await schemaJsonOf(tools[name]),
      needsApproval: needsApproval(tools[name]),
    })),
  )
  const native = callNative(() => new NativeRepairToolset(entries))
  toolsetCache.set(tools, { names, tools: names.map((n) => tools[n]), native })
  return native
}

/** Only these errors are ours to repair; anything else is left to the SDK. */
function isRepairable(error) {
  return error == null || NoSuchToolError.isInstance(error) || InvalidToolInputError.isInstance(error)
}

function checkToolCall(toolCall, tools) {
  if (toolCall == null || typeof toolCall.toolName !== 'string' || typeof toolCall.input !== 'string') {
    throw invalidArgument('toolCall', 'must be a tool call with string `toolName` and `input`')
  }
  if (tools == null || typeof tools !== 'object') {
    throw invalidArgument('tools', 'must be the ToolSet of the call')
  }
}

function report(onRepair, toolCall, repaired, how, steps) {
  onRepair?.({
    toolName: repaired.toolName,
    from: { toolName: toolCall.toolName, input: toolCall.input },
    to: { toolName: repaired.toolName, input: repaired.input },
    how,
    steps,
  })
}

/**
 * The local pass on its own, with the hook's signature: returns the repaired tool call, or
 * `null` when the call cannot be repaired without a model.
 */
async function repairToolCallLocally({ toolCall, tools, error, onRepair } = {}) {
  checkToolCall(toolCall, tools)
  if (!isRepairable(error)) return null
  const native = await nativeToolsetFor(tools)
  const outcome = native.repair(toolCall.toolName, toolCall.input)
  if (outcome.inputJson == null) return null
  const repaired = { ...toolCall, toolName: outcome.toolName, input: outcome.inputJson }
  report(onRepair, toolCall, repaired, 'local', outcome.steps)
  return repaired
}

/** Local reasons after which a model may still help: the tool is known, its arguments are not. */
const MODEL_REPAIRABLE = new Set(['unreadable', 'still-invalid', 'nothing-to-repair'])

const SYSTEM =
  'You repair the arguments of tool calls. Reply with the corrected arguments only, as one JSON object that matches the schema. ' +
  'Keep every value the original arguments give; never invent values they do not imply.'

function repairPrompt(toolName, input, problem) {
  return [
    'The previous tool call had invalid arguments. Produce a corrected JSON object that matches the schema, preserving the original intent.',
    `Tool: ${toolName}`,
    `Original arguments: ${input}`,
    `Validation error: ${problem}`,
  ].join('\n')
}

/**
 * Builds an `experimental_repairToolCall` function: the local pass first; else, when a
 * `model` (any AI SDK language model) or a `generate` function is given, up to `maxAttempts`
 * structured-output calls whose result must validate against the tool's schema.
 */
function createAiRepair({ model, generate, maxAttempts = 1, onRepair } = {}) {
  if (generate != null && typeof generate !== 'function') throw invalidArgument('generate', 'must be a function')
  if (onRepair != null && typeof onRepair !== 'function') throw invalidArgument('onRepair', 'must be a function')
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw invalidArgument('maxAttempts', 'must be a positive integer')
  const ask =
    generate ??
    (model == null
      ? null
      : async ({ system, prompt, schema }) => {
          const result = await generateText({ model, system, prompt, output: Output.object({ schema: jsonSchema(schema) }) })
          return result.output
        })

  return async function repairToolCall({ toolCall, tools, error }) {
    checkToolCall(toolCall, tools)
    if (!isRepairable(error)) return null
    const native = await nativeToolsetFor(tools)
    const local = native.repair(toolCall.toolName, toolCall.input)
    if (local.inputJson != null) {
      const repaired = { ...toolCall, toolName: local.toolName, input: local.inputJson }
      report(onRepair, toolCall, repaired, 'local', local.steps)
      return repaired
    }
    if (ask == null || !MODEL_REPAIRABLE.has(local.reason)) return null

    const toolName = local.toolName
    const tool = tools[toolName]
    const schema = await jsonSchemaOf(tool)
    const steps = local.steps.filter((step) => step.startsWith('name:'))
    let problem = error?.message ? `${local.message}\n${error.message}` : local.message
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      let output
      try {
        output = await ask({ system: SYSTEM, prompt: repairPrompt(toolName, toolCall.input, problem), schema, toolName })
      } catch {
        // A failed repair call leaves the original error to the SDK, as an unrepaired call.
        return null
      }
      if (output == null) return null
      const answer = JSON.stringify(output)
      const issues = native.validate(toolName, answer)
      // Models wrap their answer as the call they were shown (`{ arguments: {...} }`) or encode
      // it twice: those two are undone. Nothing else is: an answer that still breaks the schema
      // is refused, not coerced (the model was asked for valid arguments; coercion is for the
      // original call).
      const fixed = issues == null ? null : native.repair(toolName, answer)
      const unwrappedOnly = fixed?.inputJson != null && fixed.steps.every((step) => step.startsWith('unwrap:'))
      const input = issues == null ? answer : unwrappedOnly ? fixed.inputJson : null
      if (input != null) {
        const repaired = { ...toolCall, toolName, input }
        report(onRepair, toolCall, repaired, 'model', [...steps, `model:attempt ${attempt + 1}`, ...(fixed?.steps ?? [])])
        return repaired
      }
      problem = issues
    }
    return null
  }
}

module.exports = { repairToolCallLocally, createAiRepair }
