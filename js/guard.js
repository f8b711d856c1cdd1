'use strict'

const { jsonSchema } = require('ai')
const { callNative, ToolInvocationError } = require('./errors')
const { schemaOf } = require('./schema')
const { discoveredIn } = require('./strategy')

/**
 * One check for every call of a registered tool, whichever path it takes: `tool_invoke` and
 * `tool_exec` run it before `execute`, and the tools `applyDeferExposition` and the MCP sync
 * hand to the AI SDK carry it as their schema's `validate`, which the SDK runs before
 * `needsApproval` and `execute` (inline, native and append strategies alike). Toolreg's
 * compiled JSON-Schema validator first (defaults filled in), then the schema's own validator
 * (Zod's transforms and refinements) on what it returned.
 *
 * Resolves to `{ value }`, the params that will run, or `{ problems }`, the issues in words.
 */
async function checkParams(native, name, inputSchema, params) {
  const check = callNative(() => native.checkInput(name, JSON.stringify(params ?? {})))
  if (check.status === 'invalid') return { problems: check.message }
  let value = check.status === 'valid' ? JSON.parse(check.valueJson) : params
  const own = schemaOf(inputSchema)
  if (typeof own.validate === 'function' && !own[CHECKED]) {
    const result = await own.validate(value)
    if (!result.success) return { problems: result.error?.message ?? String(result.error) }
    value = result.value
  }
  return { value }
}

/**
 * What the model is told when its params do not fit: the issues and the tool's signature,
 * under `shown`, the name the caller knows the tool by, when that is not the registered one.
 */
function invalidParamsError(native, name, problems, shown = name) {
  const signature = callNative(() => native.signature(name, shown))
  return new ToolInvocationError(`Invalid params for "${shown}":\n${problems}\nExpected signature:\n${signature}`, 'TOOLREG_INVALID_PARAMS')
}

/** Marks a schema whose `validate` is `checkParams`, so it is neither wrapped nor run twice. */
const CHECKED = Symbol('toolreg.checkedSchema')

/** A tool's schema → its checked schema, per registry native and name. */
const checkedSchemas = new WeakMap()

/**
 * `inputSchema` as an AI SDK schema that sends the same JSON Schema and validates with
 * `checkParams` under the registered `name`.
 */
function checkedSchemaOf(native, name, inputSchema) {
  const own = schemaOf(inputSchema)
  if (own[CHECKED]) return own
  const key = inputSchema !== null && typeof inputSchema === 'object' ? inputSchema : own
  let byNative = checkedSchemas.get(key)
  if (!byNative) checkedSchemas.set(key, (byNative = new WeakMap()))
  const byName = byNative.get(native) ?? new Map()
  byNative.set(native, byName)
  let schema = byName.get(name)
  if (!schema) {
    schema = jsonSchema(() => own.jsonSchema, {
      validate: async (value) => {
        const checked = await checkParams(native, name, inputSchema, value)
        return checked.problems === undefined ? { success: true, value: checked.value } : { success: false, error: invalidParamsError(native, name, checked.problems) }
      },
    })
    schema[CHECKED] = true
    byName.set(name, schema)
  }
  return schema
}

/**
 * A deferred tool's call that no search of the conversation loaded: the model never saw its
 * definition (it guessed the name), so the call is refused and the model told how to load it.
 */
function notLoadedError(name) {
  return new ToolInvocationError(
    `Tool "${name}" is not loaded in this conversation: call tool_search to find it, then call it with the params its definition asks for.`,
    'TOOLREG_TOOL_NOT_LOADED',
  )
}

/** (tool → (variant key → handed-out tool)): one wrapper per tool and way of handing it out. */
const handedOut = new WeakMap()

/**
 * The tools of an exposition as the AI SDK gets them: each registered tool (not the
 * meta-tools, which check their own calls) with the checked schema; with `usage`, its
 * successful `execute` recorded in the usage store; with `loadedOnly` (the deferred names of
 * a strategy whose provider loads definitions on a search), a call of a deferred tool that no
 * `tool_search` result in the call's messages found is refused before it runs.
 */
function guardedTools(tools, registry, { native, usage, loadedOnly, isMetaTool, generation }) {
  const usageKey = usage ? `${usage.userId ?? ''}\0${usage.assistantId ?? ''}` : undefined
  const names = Object.keys(tools)
  // Requests pass the same ToolSet again and again: the same set comes back while its tools,
  // the registry and the way of handing out are unchanged (a pointer compare per tool).
  const known = handedOutSets.get(tools)
  if (known && known.usageKey === usageKey && known.loadedOnly === loadedOnly && known.generation === generation && known.native === native && sameTools(known, names, tools)) {
    return known.out
  }
  const out = {}
  const values = new Array(names.length)
  for (let i = 0; i < names.length; i++) {
    const name = names[i]
    const tool = (values[i] = tools[name])
    if (isMetaTool(name) || tool === null || typeof tool !== 'object' || !registry.has(name)) {
      out[name] = tool
      continue
    }
    const gated = loadedOnly?.has(name) === true
    const key = `${gated ? 'L' : ''}\0${usageKey ?? ''}`
    let variants = handedOut.get(tool)
    if (!variants) handedOut.set(tool, (variants = new Map()))
    let wrapped = variants.get(key)
    if (!wrapped || wrapped[NATIVE] !== native) {
      wrapped = guardedTool(registry, native, name, tool, { usage, gated })
      variants.set(key, wrapped)
    }
    out[name] = wrapped
  }
  handedOutSets.set(tools, { names, values, usageKey, loadedOnly, generation, native, out })
  return out
}

/** ToolSet → the last set handed out for it (`guardedTools`). */
const handedOutSets = new WeakMap()

function sameTools(known, names, tools) {
  if (known.names.length !== names.length) return false
  for (let i = 0; i < names.length; i++) if (known.names[i] !== names[i] || known.values[i] !== tools[names[i]]) return false
  return true
}

const NATIVE = Symbol('toolreg.guardedFor')

function guardedTool(registry, native, name, tool, { usage, gated }) {
  const guarded = { ...tool, inputSchema: checkedSchemaOf(native, name, tool.inputSchema) }
  Object.defineProperty(guarded, NATIVE, { value: native })
  const { execute } = tool
  if (typeof execute !== 'function' || (!usage && !gated)) return guarded
  guarded.execute = async (input, options = {}) => {
    if (gated && !discoveredIn(options.messages).discovered.has(name)) throw notLoadedError(name)
    const output = await execute.call(tool, input, options)
    if (usage) registry.recordUse(name, usage)
    return output
  }
  return guarded
}

module.exports = { checkParams, invalidParamsError, checkedSchemaOf, guardedTools }
