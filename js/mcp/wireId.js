'use strict'

const native = require('../../binding.js')
const { invalidArgument } = require('../errors')

/**
 * The name the model sees for an MCP tool: `mcp__<server>__<tool>`, provider-safe
 * (`^[a-zA-Z0-9_-]{1,64}$`), transliterated to ASCII, and unique per server id and tool name
 * (a short digest of `serverId + "\0" + toolName`).
 */
function buildMcpToolWireId({ serverId, serverName, toolName }) {
  for (const [field, value] of [['serverId', serverId], ['toolName', toolName]]) {
    if (typeof value !== 'string' || value === '') throw invalidArgument(field, 'expected a non-empty string')
  }
  return native.buildMcpToolWireId(serverId, serverName ?? serverId, toolName)
}

module.exports = { buildMcpToolWireId }
