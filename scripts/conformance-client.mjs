#!/usr/bin/env node
// The MCP client that the official conformance suite drives:
//   conformance client --command "node scripts/conformance-client.mjs" --scenario <name>
// The suite starts the scenario's test server, appends its URL to the command and sets
// MCP_CONFORMANCE_SCENARIO (and MCP_CONFORMANCE_CONTEXT: a pre-registered OAuth client's
// client_id and client_secret, or the tool calls a scenario wants made). This client uses McpHub exactly
// as a host would, with no path of its own per scenario: it lists the server's tools and calls
// each one with arguments built from its input schema, accepting any elicitation, then closes.
// Its "browser" for OAuth is a user who approves at once: it follows the authorization page's
// redirects until they reach the redirect URI, as a browser would, and hands that URL back.
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const { McpHub } = require('../index.js')

/** A value of the schema's type: its default or first enum value when it has one. */
function sample(schema = {}) {
  if (schema.default !== undefined) return schema.default
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case 'number':
    case 'integer':
      return 1
    case 'boolean':
      return true
    case 'array':
      return []
    case 'object':
      return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([key, property]) => [key, sample(property)]))
    default:
      return 'test'
  }
}

const REDIRECT_URI = 'http://127.0.0.1:33418/callback'

/** The browser step: follows redirects from the authorization page to the redirect URI. */
async function approveInBrowser(authorizationUrl) {
  let next = authorizationUrl
  for (let hop = 0; hop < 10; hop++) {
    if (next.startsWith(REDIRECT_URI)) return next
    const response = await fetch(next, { redirect: 'manual' })
    const location = response.headers.get('location')
    if (!location) throw new Error(`the authorization page answered HTTP ${response.status} without a redirect`)
    next = new URL(location, next).href
  }
  throw new Error('too many redirects on the authorization page')
}

const url = process.argv.at(-1)
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}')
const oauth = context.client_id ? { clientId: context.client_id, clientSecret: context.client_secret } : undefined
const hub = new McpHub({
  servers: [{ id: 'scenario', name: 'scenario', type: 'streamableHttp', url, oauth }],
  // A user who accepts what a server asks with the values it proposes: the hub fills in the
  // schema's defaults (SEP-1034).
  onElicitation: async () => ({ action: 'accept', content: {} }),
  auth: {
    redirectUri: REDIRECT_URI,
    onAuthorizationUrl: approveInBrowser,
    clientMetadataUrl: 'https://conformance-test.local/client-metadata.json',
  },
})
let failed = false
try {
  // A scenario may name the calls to make and their exact arguments (`toolCalls` in its
  // context: values that need header encoding, parameters left out); a host would have them
  // from its model. Without that, every tool is called with arguments built from its schema.
  const planned = Array.isArray(context.toolCalls) ? new Map(context.toolCalls.map((call) => [call.name, call.arguments ?? {}])) : null
  for (const tool of await hub.listTools('scenario')) {
    if (planned && !planned.has(tool.name)) continue
    const args = planned ? planned.get(tool.name) : sample({ type: 'object', ...tool.inputSchema })
    try {
      const result = await hub.callTool('scenario', tool.name, args)
      console.log(JSON.stringify({ tool: tool.name, args, isError: result.isError === true }))
    } catch (error) {
      // A server that answers a call with a JSON-RPC error (a scenario that offers a tool only
      // to be listed) answered it: the client did its part. Anything else is the client's.
      if (error.code !== 'TOOLREG_MCP_CALL') failed = true
      console.error(`${tool.name}: ${error.code ?? ''} ${error.message}`)
    }
  }
} catch (error) {
  failed = true
  console.error(`${error.code ?? 'error'}: ${error.message}`)
} finally {
  await hub.close()
}
process.exit(failed ? 1 : 0)
