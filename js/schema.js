'use strict'

const { asSchema, jsonSchema } = require('ai')
const { invalidArgument } = require('./errors')

/** The marker `jsonSchema()` puts on AI SDK schema objects. */
const AI_SDK_SCHEMA = Symbol.for('vercel.ai.schema')

/** tool → { value } | { promise }: AI SDK schemas may be lazy or async; convert each once. */
const schemaCache = new WeakMap()

function isThenable(value) {
  return value != null && typeof value.then === 'function'
}

/**
 * The AI SDK `Schema` for a tool's `inputSchema`, read the way the reference registry reads it:
 * none is an empty-object schema (what `asSchema` makes of it), a plain object is raw JSON Schema,
 * and AI SDK, Zod and Standard schemas go through `asSchema`. Anything else throws a TypeError.
 */
function schemaOf(inputSchema) {
  if (inputSchema == null) return asSchema(undefined)
  if (Array.isArray(inputSchema) || (typeof inputSchema !== 'object' && typeof inputSchema !== 'function')) {
    throw invalidArgument('tool.inputSchema', `expected a schema (Zod, jsonSchema() or a JSON Schema object), got ${Array.isArray(inputSchema) ? 'an array' : typeof inputSchema}`)
  }
  if (typeof inputSchema === 'object' && !(AI_SDK_SCHEMA in inputSchema) && !('~standard' in inputSchema)) {
    return jsonSchema(inputSchema)
  }
  return asSchema(inputSchema)
}

/**
 * The JSON Schema the provider receives for `tool`, as the AI SDK computes it
 * (`asSchema(inputSchema).jsonSchema`). Returns the object itself when it is available
 * synchronously and a promise otherwise, so registration stays synchronous for Zod and
 * plain `jsonSchema()` tools.
 */
function jsonSchemaOf(tool) {
  const cached = schemaCache.get(tool)
  if (cached) return 'value' in cached ? cached.value : cached.promise
  let raw
  try {
    raw = schemaOf(tool.inputSchema).jsonSchema
  } catch (error) {
    if (error.code === 'TOOLREG_INVALID_ARGUMENT') throw error
    throw invalidArgument('tool.inputSchema', `cannot be converted to JSON Schema (${error.message})`)
  }
  if (isThenable(raw)) {
    const promise = Promise.resolve(raw).then((value) => {
      schemaCache.set(tool, { value })
      return value
    })
    schemaCache.set(tool, { promise })
    return promise
  }
  schemaCache.set(tool, { value: raw })
  return raw
}

async function resolveJsonSchema(tool) {
  return jsonSchemaOf(tool)
}

/** What a provider is sent for one tool; its token count is the tool's cost. */
function definitionText(name, tool, schema) {
  return JSON.stringify({ name, description: tool.description, input_schema: schema })
}

module.exports = { schemaOf, jsonSchemaOf, resolveJsonSchema, definitionText, isThenable }
