'use strict'

const { jsonSchema } = require('ai')
const native = require('../binding.js')
const { callNative, invalidArgument } = require('./errors')
const { jsonSchemaOf, schemaOf } = require('./schema')

const families = new Map()

function familyOf(provider, strict) {
  const key = `${strict}\0${provider}`
  let family = families.get(key)
  if (family === undefined) families.set(key, (family = native.providerFamily(provider, strict)))
  return family
}

/**
 * The request's target from `applyDeferExposition`'s options: `provider` (the AI SDK model's
 * `provider` string) and `strict` (OpenAI strict function tools for every tool). `undefined`
 * when no provider is named.
 */
function providerTarget(opts) {
  if (opts.provider === undefined) return undefined
  if (typeof opts.provider !== 'string') throw invalidArgument('opts.provider', 'expected the model\'s provider string, e.g. "google.generative-ai"')
  return { provider: opts.provider, strict: opts.strict === true }
}

/** The target for one tool: a tool marked `strict: true` is strict even when the request is not. */
function targetFor(target, tool) {
  const strict = target.strict || tool?.strict === true
  return { provider: target.provider, strict, family: familyOf(target.provider, strict) }
}

function convert(schema, provider, strict) {
  return callNative(() => native.providerSchema(JSON.stringify(schema ?? {}), provider, strict))
}

/**
 * `schema` rewritten into what the model provider accepts (Gemini/Vertex: no `$ref`/`$defs`,
 * no `anyOf` in `items`, ...; OpenAI with `{ strict: true }`: closed objects, every property
 * required). Constraints the provider cannot take are named in the descriptions.
 * @param {object} schema a JSON Schema
 * @param {string} provider the AI SDK model's `provider` string
 * @param {{ strict?: boolean }} [opts]
 */
function providerSchema(schema, provider, opts = {}) {
  if (typeof provider !== 'string') throw invalidArgument('provider', 'expected the model\'s provider string, e.g. "google.generative-ai"')
  return JSON.parse(convert(schema, provider, opts.strict === true).schemaJson)
}

/**
 * Converted schemas, keyed by the tool's `inputSchema` object (shared by every tool built on
 * it, e.g. each request's meta-tools), then by family: `{ schema, inputSchema }`, where
 * `inputSchema` is undefined when the schema needed no rewrite.
 */
const safeSchemas = new WeakMap()
/** tool → family → its provider-safe tool, so a repeated request reuses the same object. */
const safeTools = new WeakMap()

function cached(map, key, family, build) {
  let byFamily = map.get(key)
  if (!byFamily) map.set(key, (byFamily = new Map()))
  let value = byFamily.get(family)
  if (value === undefined) byFamily.set(family, (value = build()))
  return value
}

/**
 * The tool's schema in the target's form, and an AI SDK schema carrying it whose `validate`
 * still checks the model's input against the original (its own `validate`, e.g. Zod's); in
 * strict mode optional properties the model sent as `null` are removed first.
 */
async function safeSchemaEntry(tool, requestTarget) {
  const target = targetFor(requestTarget, tool)
  const key = tool.inputSchema !== null && typeof tool.inputSchema === 'object' ? tool.inputSchema : tool
  const known = safeSchemas.get(key)?.get(target.family)
  if (known) return known
  const original = (await jsonSchemaOf(tool)) ?? {}
  return cached(safeSchemas, key, target.family, () => {
    const converted = convert(original, target.provider, target.strict)
    const schema = JSON.parse(converted.schemaJson)
    if (Object.keys(converted.rewrites).length === 0) return { schema, inputSchema: undefined }
    const originalSchema = schemaOf(tool.inputSchema)
    const originalJson = target.family === 'openai-strict' ? JSON.stringify(original) : undefined
    const validate = async (value) => {
      const input = originalJson === undefined ? value : JSON.parse(native.stripStrictNulls(originalJson, JSON.stringify(value)))
      if (typeof originalSchema.validate !== 'function') return { success: true, value: input }
      return originalSchema.validate(input)
    }
    return { schema, inputSchema: jsonSchema(schema, { validate }) }
  })
}

/** A tool's JSON Schema in the target's form (cached per schema and family). */
async function safeSchemaOf(tool, target) {
  if (targetFor(target, tool).family === 'pass-through') return (await jsonSchemaOf(tool)) ?? {}
  return (await safeSchemaEntry(tool, target)).schema
}

/**
 * `tool` with a provider-safe `inputSchema` (the tool itself when nothing needed rewriting);
 * in OpenAI strict mode it is marked `strict: true`, which `@ai-sdk/openai` sends.
 */
async function safeToolOf(tool, requestTarget) {
  const { family } = targetFor(requestTarget, tool)
  if (family === 'pass-through') return tool
  const known = safeTools.get(tool)?.get(family)
  if (known) return known
  const { inputSchema } = await safeSchemaEntry(tool, requestTarget)
  return cached(safeTools, tool, family, () => {
    const strict = family === 'openai-strict'
    if (inputSchema === undefined && (!strict || tool.strict === true)) return tool
    const safe = { ...tool, inputSchema: inputSchema ?? tool.inputSchema }
    if (strict) safe.strict = true
    return safe
  })
}

module.exports = { providerSchema, providerTarget, safeToolOf, safeSchemaOf }
