// Loads the real MCP tool catalogs from ../shared/data (Toucan: Smithery servers' live
// tools/list; Docker MCP registry). Benchmarks and the demo read them in place; nothing is
// copied into the repository.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))

export function dataDir() {
  return resolve(process.env.TOOLREG_DATA ?? join(here, '..', '..', 'shared', 'data'))
}

/** Prints why the benchmark cannot run and exits cleanly when the shared data is absent. */
export function requireData(what) {
  const dir = dataDir()
  if (!existsSync(join(dir, 'toucan-mcp-servers', 'servers_with_tools.jsonl'))) {
    console.log(`${what}: skipped — the shared data set is not at ${dir} (set TOOLREG_DATA to its path).`)
    process.exit(0)
  }
  return dir
}

function readJsonl(path) {
  return readFileSync(path, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))
}

/** Docker's own tool format lists arguments without required-ness; map it to JSON Schema. */
function dockerSchema(tool) {
  if (tool.inputSchema) return tool.inputSchema
  const properties = {}
  for (const arg of tool.arguments ?? []) {
    properties[arg.name] = { type: arg.type ?? 'string', ...(arg.desc && { description: arg.desc }) }
  }
  return { type: 'object', properties }
}

/**
 * Every tool as `{ server, serverName, name, description, inputSchema }`, Toucan first.
 * @param {{ sources?: Array<'toucan' | 'docker'> }} [opts]
 */
export function loadCatalog(opts = {}) {
  const dir = dataDir()
  const sources = opts.sources ?? ['toucan', 'docker']
  const tools = []
  if (sources.includes('toucan')) {
    for (const server of readJsonl(join(dir, 'toucan-mcp-servers', 'servers_with_tools.jsonl'))) {
      for (const t of server.tools) {
        tools.push({
          server: `toucan-${server.server_id}`,
          serverName: server.server_name,
          name: t.name,
          description: t.description ?? '',
          inputSchema: t.inputSchema ?? { type: 'object', properties: {} },
        })
      }
    }
  }
  if (sources.includes('docker')) {
    for (const server of readJsonl(join(dir, 'docker-mcp-registry', 'servers_tools.jsonl'))) {
      for (const t of server.tools) {
        tools.push({
          server: `docker-${server.server}`,
          serverName: server.title ?? server.server,
          name: t.name,
          description: t.description ?? '',
          inputSchema: dockerSchema(t),
        })
      }
    }
  }
  return tools
}

/** A name every provider accepts, unique per server and tool. */
export function wireName(tool, index) {
  const clean = (s) => s.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 24) || 'x'
  return `mcp__${clean(tool.server)}__${clean(tool.name)}_${index}`.slice(0, 64)
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

export function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]
}

/** The one-liner tool_search shows: the first non-empty line, capped. */
export function firstLine(text, max = 200) {
  const line = (text ?? '').split('\n').map((l) => l.trim()).find(Boolean) ?? ''
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}
