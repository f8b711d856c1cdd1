'use strict'

const native = require('../binding.js')
const { callNative, invalidArgument } = require('./errors')
const { jsonSchemaOf, isThenable } = require('./schema')

const DEFER_VALUES = ['never', 'always', 'auto']

/** Key under which the package's own modules reach a registry's internals. */
const internals = Symbol('toolreg.internals')

function checkEntry(entry) {
  if (entry === null || typeof entry !== 'object') {
    throw invalidArgument('entry', `expected an object, got ${entry === null ? 'null' : typeof entry}`)
  }
  const { name, namespace, description, defer, tool, applies, namespaceLabel } = entry
  if (typeof name !== 'string') throw invalidArgument('name', `expected a string, got ${typeof name}`)
  if (typeof namespace !== 'string' || namespace === '') {
    throw invalidArgument('namespace', `expected a non-empty string for ${JSON.stringify(name)}`)
  }
  if (namespaceLabel !== undefined && typeof namespaceLabel !== 'string') {
    throw invalidArgument('namespaceLabel', `expected a string for ${JSON.stringify(name)}`)
  }
  if (typeof description !== 'string') {
    throw invalidArgument('description', `expected a string for ${JSON.stringify(name)}`)
  }
  if (!DEFER_VALUES.includes(defer)) {
    throw invalidArgument('defer', `${JSON.stringify(defer)} is not one of 'never', 'always', 'auto' (tool ${JSON.stringify(name)})`)
  }
  if (tool === null || typeof tool !== 'object') {
    throw invalidArgument('tool', `expected an AI SDK Tool object for ${JSON.stringify(name)}`)
  }
  if (tool.inputSchema == null) {
    throw invalidArgument('tool.inputSchema', `${JSON.stringify(name)} has no inputSchema; build it with tool({ inputSchema }) from 'ai'`)
  }
  if (applies !== undefined && typeof applies !== 'function') {
    throw invalidArgument('applies', `expected a function for ${JSON.stringify(name)}`)
  }
}

function labelOf(entry) {
  return entry.namespaceLabel ?? entry.namespace
}

function isMcpNamespace(namespace) {
  return namespace.startsWith('mcp:')
}

/**
 * One registry for every tool: built-in, MCP and meta-tools, declared once and queried per
 * request. Entries keep their AI SDK `Tool` untouched; search, schemas and validation live in
 * the native core.
 */
class ToolRegistry {
  #native = new native.NativeRegistry()
  #entries = new Map()
  #sorted = null
  #warnedApplies = new WeakSet()
  #logger

  /** @param {{ logger?: { warn(message: string): void } }} [options] */
  constructor(options = {}) {
    this.#logger = options.logger ?? console
  }

  register(entry) {
    checkEntry(entry)
    const schema = jsonSchemaOf(entry.tool)
    const ready = isThenable(schema)
    const previousNamespace = callNative(() =>
      this.#native.register(
        {
          name: entry.name,
          namespace: entry.namespace,
          namespaceLabel: entry.namespaceLabel,
          description: entry.description,
          defer: entry.defer,
        },
        ready ? undefined : JSON.stringify(schema ?? {}),
      ),
    )
    if (previousNamespace != null && previousNamespace !== entry.namespace &&
        !(isMcpNamespace(previousNamespace) && isMcpNamespace(entry.namespace))) {
      this.#logger.warn(
        `toolreg: tool ${JSON.stringify(entry.name)} from namespace ${JSON.stringify(entry.namespace)} replaces the one from ${JSON.stringify(previousNamespace)}. Built-in and meta-tool names must be unique; this is a programming error.`,
      )
    }
    this.#entries.set(entry.name, entry)
    this.#sorted = null
    if (ready) this.#attachLateSchema(entry, schema)
  }

  #attachLateSchema(entry, schemaPromise) {
    schemaPromise.then(
      (schema) => {
        // A newer registration under this name owns the index now.
        if (this.#entries.get(entry.name) !== entry) return
        try {
          callNative(() => this.#native.setSchema(entry.name, JSON.stringify(schema ?? {})))
        } catch (error) {
          this.#logger.warn(`toolreg: the input schema of ${JSON.stringify(entry.name)} is unusable: ${error.message}`)
        }
      },
      (error) => {
        this.#logger.warn(`toolreg: the input schema of ${JSON.stringify(entry.name)} failed to resolve: ${error?.message ?? error}`)
      },
    )
  }

  deregister(name) {
    if (!this.#entries.delete(name)) return false
    this.#native.deregister(name)
    this.#sorted = null
    return true
  }

  getByName(name) {
    return this.#entries.get(name)
  }

  has(name) {
    return this.#entries.has(name)
  }

  get size() {
    return this.#entries.size
  }

  #all() {
    if (!this.#sorted) {
      this.#sorted = [...this.#entries.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    }
    return this.#sorted
  }

  /** Name-sorted entries; `query` is a case-insensitive substring of name, description or namespace (label). */
  getAll(filter = {}) {
    const query = filter.query?.toLowerCase()
    const namespace = filter.namespace
    if (!query && !namespace) return [...this.#all()]
    return this.#all().filter((e) => {
      if (namespace && e.namespace !== namespace && e.namespaceLabel !== namespace) return false
      if (!query) return true
      return (
        e.name.toLowerCase().includes(query) ||
        e.description.toLowerCase().includes(query) ||
        e.namespace.toLowerCase().includes(query) ||
        (e.namespaceLabel?.toLowerCase().includes(query) ?? false)
      )
    })
  }

  /** `getAll(filter)` grouped by namespace, each group name-sorted. */
  getByNamespace(filter) {
    const groups = new Map()
    for (const entry of this.getAll(filter)) {
      const group = groups.get(entry.namespace)
      if (group) group.push(entry)
      else groups.set(entry.namespace, [entry])
    }
    return groups
  }

  /** Entries active for this request, name-sorted so the tool list is cache-stable. */
  selectActive(scope) {
    const active = []
    for (const entry of this.#all()) {
      if (!entry.applies) {
        active.push(entry)
        continue
      }
      try {
        if (entry.applies(scope)) active.push(entry)
      } catch (error) {
        if (!this.#warnedApplies.has(entry)) {
          this.#warnedApplies.add(entry)
          this.#logger.warn(`toolreg: applies() of tool ${JSON.stringify(entry.name)} threw; treating it as inactive: ${error?.message ?? error}`)
        }
      }
    }
    return active
  }

  /**
   * Ranked search over the catalog (BM25 over name parts, namespace, description and
   * parameters), or a regex over name/description with `mode: 'regex'`.
   */
  search(query, opts = {}) {
    if (typeof query !== 'string') throw invalidArgument('query', `expected a string, got ${typeof query}`)
    const allowed = opts.names === undefined ? undefined : new native.NameSet([...opts.names])
    const hits = callNative(() =>
      this.#native.search(query, { namespace: opts.namespace, limit: opts.limit ?? 5, mode: opts.mode }, allowed),
    )
    return hits.map(({ name, score }) => {
      const entry = this.#entries.get(name)
      return { name, namespace: entry.namespace, description: entry.description, score }
    })
  }

  /** Package-internal access for the meta-tools and the exposition. */
  get [internals]() {
    return {
      native: this.#native,
      logger: this.#logger,
      search: (query, opts, nameSet) =>
        callNative(() => this.#native.search(query, opts, nameSet)),
    }
  }
}

module.exports = { ToolRegistry, internals, labelOf, DEFER_VALUES }
