// The large real tool catalog: the Toucan (Smithery) and Docker MCP registry tool lists in
// ../shared/data (or $TOOLREG_DATA) when present, else the committed excerpt in fixtures/.
// These tools are listed, not callable: no server behind them is started.
import { existsSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliDecompressSync } from 'node:zlib'

const here = dirname(fileURLToPath(import.meta.url))

export const EXCERPT_PATH = join(here, '..', 'fixtures', 'catalog-excerpt.json.br')

export function dataDir() {
  return resolve(process.env.TOOLREG_DATA ?? join(here, '..', '..', 'shared', 'data'))
}

export function haveSharedData(dir = dataDir()) {
  return existsSync(join(dir, 'toucan-mcp-servers', 'servers_with_tools.jsonl'))
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

/** Toucan's server lines as they are in the shared data (the excerpt script filters them). */
export function readToucanServers(dir = dataDir()) {
  return readJsonl(join(dir, 'toucan-mcp-servers', 'servers_with_tools.jsonl'))
}

export function toucanTools(server) {
  return server.tools.map((t) => ({
    server: `toucan-${server.server_id}`,
    serverName: server.server_name,
    name: t.name,
    description: t.description ?? '',
    inputSchema: t.inputSchema ?? { type: 'object', properties: {} },
  }))
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
    for (const server of readToucanServers(dir)) tools.push(...toucanTools(server))
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

/** The one-liner tool_search shows: the first non-empty line, capped. */
export function firstLine(text, max = 200) {
  const line = (text ?? '').split('\n').map((l) => l.trim()).find(Boolean) ?? ''
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/** The committed excerpt (see scripts/make-catalog-excerpt.mjs), in `loadCatalog`'s shape. */
export function loadExcerpt(path = EXCERPT_PATH) {
  const { tools } = JSON.parse(brotliDecompressSync(readFileSync(path)).toString('utf8'))
  return tools
}

/**
 * The catalog the CLI audits with no --config: the whole shared data set when present, else
 * the committed excerpt. `label` says which, for the output.
 */
export function defaultCatalog() {
  const dir = dataDir()
  if (haveSharedData(dir)) {
    return { tools: loadCatalog(), label: `the Toucan + Docker MCP catalogs from ${dir}`, source: 'shared-data' }
  }
  return {
    tools: loadExcerpt(),
    label: 'the committed excerpt of the Toucan catalog (its permissively licensed servers; see fixtures/README.md)',
    source: 'excerpt',
  }
}
