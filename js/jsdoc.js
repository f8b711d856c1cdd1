'use strict'

const native = require('../binding.js')
const { callNative, invalidArgument } = require('./errors')

/**
 * A tool's signature as a JSDoc stub: every parameter with its type, required/optional, enum
 * values, defaults, nested objects and array items.
 * @param {string} name
 * @param {string} description
 * @param {object} schema JSON Schema of the tool's input
 */
function schemaToJSDoc(name, description, schema) {
  if (typeof name !== 'string') throw invalidArgument('name', `expected a string, got ${typeof name}`)
  if (schema === null || typeof schema !== 'object') throw invalidArgument('schema', 'expected a JSON Schema object')
  return callNative(() => native.schemaToJsdoc(name, description ?? '', JSON.stringify(schema)))
}

module.exports = { schemaToJSDoc }
