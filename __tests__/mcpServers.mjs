// Real MCP servers for the tests: the official reference servers installed as devDependencies,
// and our own rmcp test server (examples/mcp_test_server/, built by `cargo test`).
import { existsSync, mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { execFileSync, spawn } from 'node:child_process'
import { binOf } from '../cli/defaults.mjs'

export function referenceServer(kind, id = kind, name = kind) {
  const base = { id, name, type: 'stdio', command: process.execPath }
  switch (kind) {
    case 'everything':
      return { ...base, args: [binOf('@modelcontextprotocol/server-everything'), 'stdio'] }
    case 'memory':
      return { ...base, args: [binOf('@modelcontextprotocol/server-memory')], env: { MEMORY_FILE_PATH: join(mkdtempSync(join(tmpdir(), 'toolreg-memory-')), 'memory.jsonl') } }
    case 'filesystem': {
      const root = mkdtempSync(join(tmpdir(), 'toolreg-fs-'))
      return { ...base, args: [binOf('@modelcontextprotocol/server-filesystem'), root], root }
    }
    case 'github':
      return { ...base, args: [binOf('@modelcontextprotocol/server-github')] }
    default:
      throw new Error(`unknown reference server ${kind}`)
  }
}

const host = /^host: (.+)$/m.exec(execFileSync('rustc', ['-vV'], { encoding: 'utf8' }))[1]
const testServerPath = new URL(`../target/${host}/debug/examples/mcp_test_server`, import.meta.url).pathname

/** Our rmcp test server over stdio, with fault flags (see examples/mcp_test_server/). */
export function testServer(id, args = [], name = id) {
  if (!existsSync(testServerPath)) {
    throw new Error(`${testServerPath} is missing: run \`npm test\` (cargo test builds it) or \`node scripts/cargo.mjs build --example mcp_test_server\``)
  }
  return { id, name, type: 'stdio', command: testServerPath, args: ['--transport', 'stdio', ...args] }
}

export { testServerPath }

/**
 * Our test server over HTTP on a free port of 127.0.0.1: Streamable HTTP at `/mcp`, legacy SSE at
 * `/sse`. Resolves to `{ origin, stop }` once it listens.
 */
export function startHttpTestServer(args = []) {
  testServer('http') // says how to build it when it is missing
  const child = spawn(testServerPath, ['--transport', 'http', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'ignore'] })
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (chunk) => {
      out += chunk
      const port = /LISTENING (\d+)/.exec(out)?.[1]
      if (port) resolve({ origin: `http://127.0.0.1:${port}`, stop: () => child.kill() })
    })
    child.once('exit', (code) => reject(new Error(`the HTTP test server exited with ${code}`)))
  })
}

/** True when no process with this pid exists; a zombie (exited, not reaped) still counts as present. */
export function processGone(pid) {
  try {
    process.kill(pid, 0)
    return false
  } catch {
    return true
  }
}

/** A tool result's text parts, joined. */
export const textOf = (result) => result.content.map((c) => c.text ?? '').join('\n')

/**
 * What a model does with a gateway's meta-tools, through any MCP client (`callTool({ name,
 * arguments })`): searches for server-everything's adding tool, inspects and invokes it.
 * Resolves to `{ sum, inspected, invoked }` (its wire name, the inspection's text, the result).
 */
export async function searchInspectInvokeSum(client) {
  const found = textOf(await client.callTool({ name: 'tool_search', arguments: { query: 'add two numbers' } }))
  const sum = /mcp__everything__get_sum_[0-9a-f]{10}/.exec(found)?.[0]
  if (!sum) return { sum, found }
  const inspected = textOf(await client.callTool({ name: 'tool_inspect', arguments: { name: sum } }))
  const invoked = await client.callTool({ name: 'tool_invoke', arguments: { name: sum, params: { a: 2, b: 40 } } })
  return { sum, inspected, invoked }
}
