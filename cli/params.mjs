// Params typed on the command line as `key=value` words (HTTPie's form), typed by the tool's
// input schema, so `toolreg call everything/get-sum a=2 b=40` sends the numbers 2 and 40.
// `key:=json` gives a raw JSON value; `a.b=1` fills nested objects. One JSON object stays the
// other way to give params.
import { createRequire } from 'node:module'
import { CliError, EXIT } from './exitCodes.mjs'

const require = createRequire(import.meta.url)
const { closest, didYouMean } = require('../js/meta/names.js')

/** `key=value` → `{ key, value, raw: false }`, `key:=json` → `raw: true`; anything else null. */
export function keyValueOf(word) {
  const match = /^([^={[\s"'][^=]*?)(:?=)(.*)$/s.exec(word)
  return match && { key: match[1], value: match[3], raw: match[2] === ':=' }
}

/**
 * The words of a command that takes params, as one JSON text: none is `{}`, one that is not
 * `key=value` is taken as JSON (it may go through the repair), else every word must be
 * `key=value`, typed by `schema` (the tool's resolved input schema); `label` names the tool in
 * errors.
 */
export function paramsFromWords(words, { schema, label }) {
  if (words.length === 0) return '{}'
  const pairs = words.map((word) => ({ word, pair: keyValueOf(word) }))
  if (words.length === 1 && !pairs[0].pair) return words[0]
  const stray = pairs.find((p) => !p.pair)
  if (stray) {
    throw new CliError(`The word ${stray.word} is not key=value: give the params either as one JSON object or as key=value words (key:=JSON for a raw value), not both.`, EXIT.USAGE)
  }
  const params = {}
  for (const { pair } of pairs) setPath(params, pathOf(pair.key, schema), pair, { schema, label })
  return JSON.stringify(params)
}

/** `a.b.c` → `['a', 'b', 'c']`, unless the schema has a property named `a.b.c` itself. */
function pathOf(key, schema) {
  return key.includes('.') && !schema?.properties?.[key] ? key.split('.') : [key]
}

function setPath(params, path, pair, { schema, label }) {
  let target = params
  let sub = schema
  for (const [i, key] of path.entries()) {
    sub = propertySchema(sub, key, { path: path.slice(0, i + 1), label })
    const last = i === path.length - 1
    const taken = Object.hasOwn(target, key)
    if (last ? taken : taken && !isPlainObject(target[key])) throw new CliError(`${pair.key} is given twice.`, EXIT.USAGE)
    if (last) target[key] = valueOf(pair, sub)
    else target = target[key] ??= {}
  }
}

const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

/**
 * The schema of `key` in an object schema; `{}` when the object takes any key. A key the
 * schema does not declare (when it declares some and allows no others) is an error with the
 * declared ones: it is nearly always a typo.
 */
function propertySchema(schema, key, { path, label }) {
  const declared = schema?.properties ?? {}
  if (Object.hasOwn(declared, key)) return declared[key]
  const extra = schema?.additionalProperties
  if (isPlainObject(extra)) return extra
  if (extra === true || !Object.keys(declared).length) return {}
  const names = Object.keys(declared)
  const where = path.length > 1 ? ` inside ${path.slice(0, -1).join('.')}` : ''
  throw new CliError(`${label} takes no parameter ${JSON.stringify(key)}${where}.${didYouMean(closest(key, names).slice(0, 1))} It takes: ${names.join(', ')}.`, EXIT.INVALID_PARAMS)
}

/** The JSON types a schema allows (`type`, a list of types, anyOf/oneOf members, an enum's values). */
function typesOf(schema) {
  if (!isPlainObject(schema)) return new Set()
  const types = new Set([schema.type ?? []].flat())
  for (const member of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) for (const t of typesOf(member)) types.add(t)
  for (const v of schema.enum ?? []) types.add(v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'object' ? 'object' : typeof v)
  return types
}

/** A `key=value` word's value as the schema types it; `key:=json` is parsed as it is. */
function valueOf({ key, value, raw }, schema) {
  if (raw) return parseJson(value, `${key}:=`, 'a JSON value')
  const types = typesOf(schema)
  // A string parameter takes the text as typed, like an untyped one: "007" stays "007".
  if (types.size === 0 || types.has('string')) return value
  const n = value.trim() === '' ? NaN : Number(value)
  if (Number.isFinite(n) && (types.has('number') || (types.has('integer') && Number.isInteger(n)))) return n
  if (types.has('boolean') && (value === 'true' || value === 'false')) return value === 'true'
  if (types.has('null') && value === 'null') return null
  if (types.has('array') || types.has('object')) {
    const parsed = parseJson(value, `${key}=`, `a JSON ${types.has('array') ? 'array' : 'object'}`)
    if (types.has(Array.isArray(parsed) ? 'array' : parsed === null ? 'null' : typeof parsed)) return parsed
  }
  const expected = [...types].map((t) => (t === 'integer' ? 'a whole number' : t === 'array' || t === 'object' ? `a JSON ${t}` : t === 'null' ? 'null' : `a ${t}`))
  const enumNote = schema.enum ? ` (one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')})` : ''
  throw new CliError(`${key}=${value}: expected ${expected.join(' or ')}${enumNote}.`, EXIT.INVALID_PARAMS)
}

/** `assign` is the word's `key=` or `key:=`, to show how to quote the value. */
function parseJson(text, assign, what) {
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new CliError(`${assign}${text}: expected ${what}, and that is not JSON (${error.message}). Quote JSON for the shell: ${assign}'${what.endsWith('object') ? '{"name": 1}' : '["a", 1]'}'.`, EXIT.INVALID_PARAMS)
  }
}
