'use strict'

const { asSchema } = require('ai')
const { invalidArgument } = require('./errors')

/** tool → { value } | { promise }: AI SDK schemas may be lazy or async; convert each once. */
const schemaCache = new WeakMap()

function isThenable(value) {
  return value != null && typeof value.then === 'function'
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
    raw = asSchema(tool.inputSchema).jsonSchema
  } catch (error) {
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

module.exports = { jsonSchemaOf, resolveJsonSchema, definitionText, isThenable }
