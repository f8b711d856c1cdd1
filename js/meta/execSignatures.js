'use strict'

/**
 * `tool_exec`'s description lists the callable tools as short TypeScript-like signatures built
 * from their JSON Schemas, within a token budget: full detail when it fits, then shallower
 * types without descriptions, then names only.
 */

const { jsonSchemaOf, isThenable } = require('../schema')
const { countTokens } = require('../tokens')

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/
const MAX_ENUM_VALUES = 8
const MAX_UNION_VARIANTS = 4
const MAX_DESCRIPTION_CHARS = 100

function key(name) {
  return IDENTIFIER.test(name) ? name : JSON.stringify(name)
}

function accessor(name) {
  return IDENTIFIER.test(name) ? `tools.${name}` : `tools[${JSON.stringify(name)}]`
}

function union(types) {
  return [...new Set(types)].join(' | ')
}

/** A JSON Schema as a TypeScript type; objects deeper than `depth` become `object`. */
function typeOf(schema, depth) {
  if (schema === true || schema == null || typeof schema !== 'object') return 'unknown'
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.slice(0, MAX_ENUM_VALUES).map((v) => JSON.stringify(v))
    if (schema.enum.length > MAX_ENUM_VALUES) values.push('…')
    return union(values)
  }
  if ('const' in schema) return JSON.stringify(schema.const)
  const variants = schema.anyOf ?? schema.oneOf
  if (Array.isArray(variants)) return union(variants.slice(0, MAX_UNION_VARIANTS).map((v) => typeOf(v, depth)))
  if (Array.isArray(schema.type)) return union(schema.type.map((type) => typeOf({ ...schema, type }, depth)))
  switch (schema.type) {
    case 'string':
      return 'string'
    case 'number':
    case 'integer':
      return 'number'
    case 'boolean':
      return 'boolean'
    case 'null':
      return 'null'
    case 'array': {
      const item = typeOf(schema.items, depth)
      return /[|{ ]/.test(item) ? `Array<${item}>` : `${item}[]`
    }
    case 'object':
    case undefined:
      return schema.properties || schema.type === 'object' ? objectType(schema, depth) : 'unknown'
    default:
      return 'unknown'
  }
}

function objectType(schema, depth) {
  const properties = Object.entries(schema.properties ?? {})
  if (properties.length === 0) return schema.properties || schema.additionalProperties === false ? '{}' : 'Record<string, unknown>'
  if (depth <= 0) return 'object'
  const required = new Set(Array.isArray(schema.required) ? schema.required : [])
  const fields = properties.map(([name, sub]) => `${key(name)}${required.has(name) ? '' : '?'}: ${typeOf(sub, depth - 1)}`)
  return `{ ${fields.join('; ')} }`
}

function firstLine(text) {
  const line = String(text ?? '').trim().split('\n')[0]
  return line.length > MAX_DESCRIPTION_CHARS ? `${line.slice(0, MAX_DESCRIPTION_CHARS - 1)}…` : line
}

/** One tool's line at a detail level: 2 = nested types and description, 1 = top-level types. */
function signatureLine(entry, detail) {
  const schema = jsonSchemaOf(entry.tool)
  const params = isThenable(schema) ? 'object' : typeOf(schema, detail === 2 ? 3 : 1)
  const line = `${accessor(entry.name)}(params: ${params})`
  const description = detail === 2 ? firstLine(entry.tool.description ?? entry.description) : ''
  return description ? `${line} // ${description}` : line
}

/**
 * The tool list for the description, at the richest detail whose token count (o200k_base) fits
 * `budget`. Names that do not fit even alone are summarised; they stay callable.
 */
function signaturesWithin(entries, budget) {
  for (const detail of [2, 1]) {
    const text = entries.map((entry) => signatureLine(entry, detail)).join('\n')
    if (countTokens(text) <= budget) return text
  }
  const lines = []
  let used = 0
  for (const [index, entry] of entries.entries()) {
    const line = accessor(entry.name)
    const cost = countTokens(line) + 1
    if (used + cost > budget) {
      lines.push(`… and ${entries.length - index} more; call any allowed tool with tools.invoke(name, params)`)
      break
    }
    used += cost
    lines.push(line)
  }
  return lines.join('\n')
}

module.exports = { signaturesWithin, typeOf }
