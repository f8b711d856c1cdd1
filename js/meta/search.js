'use strict'

const { tool, jsonSchema } = require('ai')
const { internals, labelOf } = require('../registry')
const { invalidArgument } = require('../errors')
const { MetaToolName, DeferredView, schemaFor } = require('./shared')
const { providerTarget, safeSchemaOf } = require('../provider')

const DEFAULT_LIMIT = 5
const MAX_LIMIT = 50

const DESCRIPTION =
  'Discover the tools that are not loaded inline. This is tool discovery (NOT web search). ' +
  'Results are ranked and grouped by namespace (web, kb, mcp:<server>, ...). ' +
  'Omit `query` to browse namespaces; use `select:name1,name2` for exact names; ' +
  '`verbose: true` includes each tool\'s input schema.'

const inputSchema = jsonSchema({
  type: 'object',
  properties: {
    query: { type: 'string', description: 'Words describing the task or tool; omit to browse' },
    namespace: { type: 'string', description: 'Only tools of this namespace, e.g. mcp:github' },
    limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, description: `Most tools to return (default ${DEFAULT_LIMIT})` },
    verbose: { type: 'boolean', description: 'Include input schemas (counts as inspecting them)' },
    mode: { type: 'string', enum: ['bm25', 'regex'], description: 'regex: treat query as a regular expression' },
  },
  additionalProperties: false,
})

function groupByNamespace(entries) {
  const groups = new Map()
  for (const entry of entries) {
    const label = labelOf(entry)
    if (!groups.has(label)) groups.set(label, [])
    groups.get(label).push(entry)
  }
  return groups
}

/** Browsing: every namespace with its first `limit` tools by name and its total count. */
function browse(deferred, namespace, limit) {
  const entries = [...deferred.values()]
    .filter((e) => !namespace || e.namespace === namespace || labelOf(e) === namespace)
    .sort((a, b) => labelOf(a).localeCompare(labelOf(b)) || a.name.localeCompare(b.name))
  return [...groupByNamespace(entries)].map(([label, group]) => ({
    namespace: label,
    total: group.length,
    entries: group.slice(0, limit),
  }))
}

function formatModelOutput({ matchedNamespaces }) {
  if (matchedNamespaces.length === 0) {
    return 'No tools matched. Broaden `query`, or omit it to browse all namespaces.'
  }
  const lines = []
  for (const group of matchedNamespaces) {
    const more = group.total !== undefined && group.total > group.tools.length ? ` (${group.tools.length} of ${group.total})` : ''
    lines.push(`${group.namespace}${more}`)
    for (const t of group.tools) {
      lines.push(`  - ${t.name} — ${t.description}`)
      if (t.inputSchema) lines.push(`    input: ${JSON.stringify(t.inputSchema)}`)
    }
  }
  return lines.join('\n')
}

/**
 * `tool_search`: ranked search over this request's deferred tools only.
 * @param {import('../registry').ToolRegistry} registry
 * @param {Iterable<string>} deferredNames
 * @param {Set<string>} [inspectedNames] shared with tool_inspect/tool_invoke of the same request
 * @param {Map<string, object>} [requestEntries] this request's copies of entries (request-scoped tools)
 * @param {{ provider?: string, strict?: boolean }} [opts] verbose schemas in the form this provider accepts
 */
function createToolSearchTool(registry, deferredNames, inspectedNames = new Set(), requestEntries, opts = {}) {
  const view = DeferredView.of(registry, deferredNames, requestEntries)
  const target = providerTarget(opts)
  const deferred = view.entries
  const search = registry[internals].searchAsync

  return tool({
    description: DESCRIPTION,
    inputSchema,
    inputExamples: [{ input: { query: 'create a github issue' } }, { input: { namespace: 'web', verbose: true } }],
    async execute({ query = '', namespace, limit = DEFAULT_LIMIT, verbose = false, mode = 'bm25' }) {
      if (!Number.isInteger(limit) || limit < 1) throw invalidArgument('limit', 'expected a positive integer')
      limit = Math.min(limit, MAX_LIMIT)
      let groups
      if (query.trim() === '') {
        groups = browse(deferred, namespace, limit)
      } else {
        const hits = await search(query, { namespace, limit, mode }, view.nameSet)
        const entries = hits.map((h) => deferred.get(h.name)).filter(Boolean)
        groups = [...groupByNamespace(entries)].map(([label, group]) => ({ namespace: label, entries: group }))
      }
      const matchedNamespaces = await Promise.all(
        groups.map(async ({ namespace: label, total, entries }) => ({
          namespace: label,
          ...(total !== undefined && { total }),
          tools: await Promise.all(
            entries.map(async (entry) => {
              const found = { name: entry.name, description: entry.description }
              if (verbose) {
                found.inputSchema = target ? await safeSchemaOf(entry.tool, target) : await schemaFor(entry)
                inspectedNames.add(entry.name)
              }
              return found
            }),
          ),
        })),
      )
      return { matchedNamespaces }
    },
    toModelOutput: ({ output }) => ({ type: 'text', value: formatModelOutput(output) }),
  })
}

createToolSearchTool.toolName = MetaToolName.Search

module.exports = { createToolSearchTool, DEFAULT_LIMIT, MAX_LIMIT }
