'use strict'

const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs')
const path = require('node:path')
const native = require('../binding.js')
const { fromNative, invalidArgument, ToolregError } = require('./errors')

/**
 * Tool trust: every MCP server's tool definitions are third-party input. Each listing passes
 * here before anything of it is registered (so before the index, the search, the exposition,
 * the token counts or the model): its tools are compared with the definitions pinned for the
 * server (`crates/toolreg-trust`: RFC 8785 canonical forms, so key order, whitespace and `1`
 * vs `1.0` are no change), scanned for poisoned descriptions, and stripped of hidden Unicode.
 * What changed since the pins, appeared after the server's first listing, or carries a
 * blocking finding is held — not registered, so not searchable, shown or callable — until
 * the host approves it; a call of a held tool gets one sentence naming what changed.
 *
 * Pins are keyed by the server's identity in the config (its command line or URL, see
 * `McpHub.servers`), never by the name a server gives itself.
 */

/** How `approve` and `reset` name a server's instructions among the tools they return. */
const INSTRUCTIONS = '(instructions)'

/** The trust store file's format tag. */
const STORE_FORMAT = 'toolreg-trust/1'

const DECISIONS = ['approve', 'keep-old', 'remove']

/** `trust` of `new ToolRegistry({ trust })` → the store it reads and writes. */
function trustStoreOf(option) {
  if (option === undefined) return memoryStore()
  if (typeof option === 'string') {
    if (option === '') throw invalidArgument('trust.store', 'expected a file path, got an empty string')
    return fileStore(option)
  }
  if (option !== null && typeof option === 'object' && typeof option.load === 'function' && typeof option.save === 'function') return option
  throw invalidArgument('trust.store', 'expected a file path or { load(): data | Promise<data>, save(data): void | Promise<void> }')
}

function memoryStore() {
  let data = null
  return { load: () => data, save: (next) => void (data = next) }
}

/** A JSON file, written whole through a temporary file, so a crash never leaves half a store. */
function fileStore(file) {
  return {
    load() {
      let text
      try {
        text = readFileSync(file, 'utf8')
      } catch (error) {
        if (error.code === 'ENOENT') return null
        throw error
      }
      return JSON.parse(text)
    },
    save(data) {
      mkdirSync(path.dirname(file), { recursive: true })
      const temporary = `${file}.${process.pid}.tmp`
      writeFileSync(temporary, `${JSON.stringify(data, null, 2)}\n`)
      renameSync(temporary, file)
    },
  }
}

/** A store's data checked: `{ format, servers: { [identity]: { name, tools: { [name]: pin } } } }`. */
function checkedData(data, where) {
  if (data == null) return { format: STORE_FORMAT, servers: {} }
  if (typeof data !== 'object' || data.format !== STORE_FORMAT || data.servers === null || typeof data.servers !== 'object') {
    throw new ToolregError(`the trust store ${where} is not a toolreg pin file (expected "format": "${STORE_FORMAT}" and "servers")`, 'TOOLREG_TRUST_STORE_INVALID')
  }
  return data
}

/**
 * The trust of one registry's MCP tools. `options`: `store` (a file path, `{ load, save }`,
 * or none: pins kept in memory for the registry's life), `onToolChange(change)` (answers
 * 'approve' | 'keep-old' | 'remove', or nothing to hold the tool), `pinOnFirstUse` (default
 * true: a server's first listing is trusted, except tools with a blocking finding),
 * `stripHidden` (default true), `holdBlocked` (default true).
 */
class ToolTrust {
  #store
  #where
  #onToolChange
  #pinOnFirstUse
  #stripHidden
  #holdBlocked
  #logger
  /** The store's data once loaded (a promise while loading). */
  #data = null
  /** Bumped by every change of the pins: a reviewed listing is reused only under the same pins. */
  #generation = 0
  /** serverId → { tools (the listing reviewed), generation, admitted }. */
  #reviewed = new Map()
  /** serverId → { server, tools: Map<toolName, status> }: what `list()` reports. */
  #status = new Map()
  /** serverId → the review of its `instructions`: what `instructions()` reports. */
  #instructions = new Map()
  /** Held tools by the names a caller may use (wire id, `server/tool`), → the sentence. */
  #held = new Map()
  /** Changes the host was asked about and left held (identity, tool, digest): asked once. */
  #asked = new Set()

  constructor(options = {}, logger = console) {
    if (options === null || typeof options !== 'object') throw invalidArgument('trust', 'expected false or an options object')
    const { store, onToolChange, pinOnFirstUse = true, stripHidden = true, holdBlocked = true } = options
    if (onToolChange !== undefined && typeof onToolChange !== 'function') throw invalidArgument('trust.onToolChange', 'expected a function (change) => "approve" | "keep-old" | "remove" | undefined')
    for (const [key, value] of Object.entries({ pinOnFirstUse, stripHidden, holdBlocked })) {
      if (typeof value !== 'boolean') throw invalidArgument(`trust.${key}`, `expected a boolean, got ${typeof value}`)
    }
    this.#store = trustStoreOf(store)
    this.#where = typeof store === 'string' ? store : '(host store)'
    this.#onToolChange = onToolChange
    this.#pinOnFirstUse = pinOnFirstUse
    this.#stripHidden = stripHidden
    this.#holdBlocked = holdBlocked
    this.#logger = logger
  }

  async #load() {
    this.#data ??= Promise.resolve(this.#store.load()).then((data) => checkedData(data, this.#where))
    try {
      return await this.#data
    } catch (error) {
      this.#data = null
      if (error?.code === 'TOOLREG_TRUST_STORE_INVALID') throw error
      throw new ToolregError(`the trust store ${this.#where} could not be read: ${error?.message ?? error}`, 'TOOLREG_TRUST_STORE_INVALID', { cause: error })
    }
  }

  async #save(data) {
    this.#generation++
    await this.#store.save(data)
  }

  /**
   * Reviews one server's listing: resolves to `{ tools, held }`, the descriptors to register
   * (hidden Unicode stripped; a kept old definition in place of its change) and the names of
   * the tools held, which must not stay registered.
   * `server`: `{ id, name, identity? }`; `wireIdOf(toolName)`: the name the tool is registered
   * under; `otherTools`: `[serverId, toolName]` of the other servers, for shadowing findings;
   * `instructions`: the server's `instructions` (a string, or null when it sent none; left out
   * when the host cannot tell, and then not reviewed).
   */
  async review(server, tools, { wireIdOf, otherTools = [], instructions }) {
    const data = await this.#load()
    const known = this.#reviewed.get(server.id)
    if (known && known.generation === this.#generation && known.instructions === instructions) {
      if (known.tools === tools) return known.result
      // A re-list of the same tools (list_changed without a change, a TTL expiry, a reconnect)
      // is the same review: comparing them costs far less than reviewing them again.
      if (sameJson(known.tools, tools)) {
        known.tools = tools
        return known.result
      }
    }
    const identity = identityOf(server)
    const listed = uniqueByName(tools)
    const pins = data.servers[identity]
    const reviewsInstructions = typeof instructions === 'string' || instructions === null
    const request = {
      tools: listed,
      pins: pins ? Object.fromEntries(Object.entries(pins.tools).map(([name, pin]) => [name, pin.definition])) : null,
      ...(typeof instructions === 'string' && { instructions }),
      // Instructions pinned (as a text, or as none) are compared; never pinned, they are new.
      ...(reviewsInstructions && pins && 'instructions' in pins && { pinnedInstructions: pins.instructions?.text ?? null }),
      server: server.id,
      otherTools,
    }
    let review
    try {
      review = JSON.parse(await native.trustReview(JSON.stringify(request)))
    } catch (error) {
      throw fromNative(error)
    }
    const outcome = pins ? await this.#reviewChanges(server, identity, pins, review, listed) : this.#firstSight(server, review)
    const instructionsOutcome = reviewsInstructions ? await this.#reviewInstructions(server, identity, data, outcome.pins ?? pins, review, instructions) : null
    const status = new Map()
    for (const [wireId, sentence] of this.#held) if (sentence.serverId === server.id) this.#held.delete(wireId)
    const admitted = []
    const held = []
    for (const [index, tool] of review.tools.entries()) {
      const decided = outcome.get(tool.name)
      const wireId = wireIdOf(tool.name)
      const pin = (pins ?? outcome.pins)?.tools[tool.name]
      status.set(tool.name, {
        name: wireId,
        serverId: server.id,
        toolName: tool.name,
        state: decided.state,
        ...(pin && { pinnedAt: pin.pinnedAt, source: pin.source }),
        findings: tool.findings,
        ...(decided.sentence && { change: decided.sentence }),
        ...(tool.hidden > 0 && { hiddenCharactersRemoved: tool.hidden }),
      })
      if (decided.state === 'held' || decided.state === 'removed') {
        const sentence = { serverId: server.id, text: `Tool "${wireId}" is held until the user approves it: ${decided.sentence}` }
        for (const name of [wireId, `${server.id}/${tool.name}`]) this.#held.set(name, sentence)
        // The bare name a gateway lists a server's tool under, when no other server claimed it.
        if (!this.#held.has(tool.name)) this.#held.set(tool.name, sentence)
        held.push(wireId)
        continue
      }
      const shown = decided.definition ?? (this.#stripHidden ? tool.shown : listed[index])
      admitted.push(shown)
    }
    for (const change of outcome.gone) status.set(change.name, { name: wireIdOf(change.name), serverId: server.id, toolName: change.name, state: 'gone', change: change.sentence, findings: [] })
    if (outcome.pins) {
      data.servers[identity] = outcome.pins
      await this.#save(data)
    } else if (outcome.changed || instructionsOutcome?.changed) {
      await this.#save(data)
    }
    if (instructionsOutcome) this.#instructions.set(server.id, instructionsOutcome.status)
    for (const [name, entry] of status) if (entry.findings.some((f) => f.level === 'warn') && entry.state !== 'held') this.#warnOnce(server, name, entry)
    this.#status.set(server.id, { server, identity, tools: status })
    const forms = new Map(review.tools.map((tool) => [tool.name, { digest: tool.digest, form: tool.form }]))
    const result = { tools: admitted, held }
    const reviewedInstructions = review.instructions && { text: instructions, digest: review.instructions.digest }
    this.#reviewed.set(server.id, { tools, instructions, generation: this.#generation, result, forms, reviewedInstructions })
    return result
  }

  /**
   * The server's instructions against their pin: pinned on first sight (unless a finding
   * blocks them), a change held until the host approves it, as a tool's. Resolves to
   * `{ status, changed }`; `status.text` is what may reach a model (null while held).
   * `pins`: the server's pins, new or loaded (written to by this review).
   */
  async #reviewInstructions(server, identity, data, pins, review, instructions) {
    const reviewed = review.instructions
    const shown = reviewed ? (this.#stripHidden ? reviewed.shown : instructions) : null
    const base = { serverId: server.id, findings: reviewed?.findings ?? [], ...(reviewed?.hidden > 0 && { hiddenCharactersRemoved: reviewed.hidden }) }
    const pinOf = (source) => (reviewed ? { text: instructions, digest: reviewed.digest, pinnedAt: new Date().toISOString(), source } : null)
    const pinned = (pin) => ({ status: { ...base, state: 'pinned', text: shown, ...(pin && { pinnedAt: pin.pinnedAt, source: pin.source }) } })
    const held = (sentence) => ({ status: { ...base, state: 'held', text: null, change: sentence } })
    if (!pins) return held(`the instructions of ${server.id}: not pinned yet, and this registry pins only what is approved (pinOnFirstUse: false)`)
    if (!('instructions' in pins)) {
      if (reviewed?.level === 'block' && this.#holdBlocked) return held(blockedSentence({ name: `the instructions of ${server.id}`, findings: reviewed.findings }))
      pins.instructions = pinOf('first-use')
      return { ...pinned(pins.instructions), changed: true }
    }
    const change = review.changes?.find((c) => c.kind === 'instructions')
    if (!change) return pins.instructions?.rejected ? held(`the instructions of ${server.id}: removed by the user`) : pinned(pins.instructions)
    const digest = reviewed?.digest ?? null
    if (pins.instructions?.rejected !== undefined && pins.instructions.rejected === digest) return held(`the instructions of ${server.id}: removed by the user`)
    const asked = `${identity}\0\0instructions\0${digest}`
    const before = pins.instructions?.text ?? null
    const decision = this.#asked.has(asked) ? undefined : await this.#decide({ serverId: server.id, serverName: server.name, identity, toolName: null, kind: 'instructions', sentence: change.sentence, fields: [], findings: base.findings, before, after: instructions })
    if (decision === 'approve') {
      pins.instructions = pinOf('approved')
      return { ...pinned(pins.instructions), changed: true }
    }
    if (decision === 'keep-old') return { status: { ...base, state: 'kept-old', text: before, change: change.sentence } }
    if (decision === 'remove') {
      pins.instructions = { ...(pins.instructions ?? { text: null, digest: null, pinnedAt: new Date().toISOString(), source: 'approved' }), rejected: digest }
      return { ...held(`the instructions of ${server.id}: removed by the user`), changed: true }
    }
    this.#asked.add(asked)
    return held(change.sentence)
  }

  /** A server seen for the first time: its tools pinned as listed, blocked ones held. */
  #firstSight(server, review) {
    const pinnedAt = new Date().toISOString()
    const pins = { name: server.name, tools: {} }
    const outcome = new Map()
    for (const tool of review.tools) {
      if (!this.#pinOnFirstUse) {
        outcome.set(tool.name, { state: 'held', sentence: `${tool.name}: not pinned yet, and this registry pins only what is approved (pinOnFirstUse: false)` })
        continue
      }
      if (tool.level === 'block' && this.#holdBlocked) {
        outcome.set(tool.name, { state: 'held', sentence: blockedSentence(tool) })
        continue
      }
      pins.tools[tool.name] = { digest: tool.digest, pinnedAt, source: 'first-use', definition: tool.form }
      outcome.set(tool.name, { state: 'pinned' })
    }
    outcome.gone = []
    outcome.pins = this.#pinOnFirstUse ? pins : null
    return outcome
  }

  /** A server with pins: unchanged tools pass, changes go to the host's `onToolChange`. */
  async #reviewChanges(server, identity, pins, review, listed) {
    const byName = new Map(review.tools.map((tool, index) => [tool.name, { tool, descriptor: listed[index] }]))
    const outcome = new Map()
    outcome.gone = []
    outcome.changed = false
    for (const name of review.unchanged) {
      outcome.set(name, pins.tools[name].rejected ? { state: 'removed', sentence: `${name}: removed by the user` } : { state: 'pinned' })
    }
    for (const change of review.changes) {
      if (change.kind === 'removed') {
        outcome.gone.push(change)
        continue
      }
      if (change.kind === 'instructions') continue
      const { tool } = byName.get(change.name)
      const pin = pins.tools[change.name]
      if (pin?.rejected === tool.digest) {
        outcome.set(change.name, { state: 'removed', sentence: `${change.name}: removed by the user` })
        continue
      }
      const asked = `${identity}\0${change.name}\0${tool.digest}`
      const decision = this.#asked.has(asked) ? undefined : await this.#decide({ serverId: server.id, serverName: server.name, identity, toolName: change.name, kind: change.kind, ...(change.from && { from: change.from }), sentence: change.sentence, fields: change.fields ?? [], findings: tool.findings, before: pin?.definition ?? pins.tools[change.from]?.definition, after: tool.form })
      if (decision === undefined && tool.level === 'block') change.sentence = `${change.sentence}; ${blockedSentence(tool)}`
      if (decision === 'approve') {
        pins.tools[change.name] = { digest: tool.digest, pinnedAt: new Date().toISOString(), source: 'approved', definition: tool.form }
        if (change.kind === 'renamed') delete pins.tools[change.from]
        outcome.set(change.name, { state: 'pinned', sentence: change.sentence })
        outcome.changed = true
      } else if (decision === 'keep-old' && change.kind === 'changed') {
        outcome.set(change.name, { state: 'kept-old', sentence: change.sentence, definition: withPinnedForm(byName.get(change.name).descriptor, pin.definition) })
      } else if (decision === 'remove') {
        pins.tools[change.name] = { ...(pin ?? { definition: tool.form, pinnedAt: new Date().toISOString(), source: 'approved' }), rejected: tool.digest }
        outcome.set(change.name, { state: 'removed', sentence: `${change.name}: removed by the user` })
        outcome.changed = true
      } else {
        this.#asked.add(asked)
        outcome.set(change.name, { state: 'held', sentence: change.sentence })
      }
    }
    outcome.pins = null
    return outcome
  }

  /** The host's answer for one change; a callback that throws or answers something else holds it. */
  async #decide(change) {
    if (!this.#onToolChange) return undefined
    try {
      const answer = await this.#onToolChange(change)
      if (answer === undefined || DECISIONS.includes(answer)) return answer
      this.#logger.warn(`toolreg: onToolChange answered ${JSON.stringify(answer)} for ${change.serverId}/${change.toolName}; expected ${DECISIONS.map((d) => `"${d}"`).join(', ')} or nothing. Holding the tool.`)
    } catch (error) {
      this.#logger.warn(`toolreg: onToolChange threw for ${change.serverId}/${change.toolName}; holding the tool: ${error?.message ?? error}`)
    }
    return undefined
  }

  #warned = new Set()
  #warnOnce(server, name, entry) {
    const key = `${server.id}\0${name}\0${entry.findings.map((f) => f.rule).join()}`
    if (this.#warned.has(key)) return
    this.#warned.add(key)
    const rules = entry.findings.filter((f) => f.level === 'warn').map((f) => `${f.rule} in ${f.field} ("${f.excerpt}")`)
    this.#logger.warn(`toolreg: MCP tool ${server.id}/${name} may address the model: ${rules.join('; ')}`)
  }

  /** The sentence for a call of a held tool, by any name a caller may use, or undefined. */
  heldSentence(name) {
    return this.#held.get(name)?.text
  }

  /** Every reviewed tool: `{ name, serverId, toolName, state, pinnedAt?, source?, findings, change? }`. */
  list() {
    return [...this.#status.values()].flatMap(({ tools }) => [...tools.values()])
  }

  /**
   * Every reviewed server's instructions: `{ serverId, state, text, pinnedAt?, source?,
   * findings, change? }`; `text` is what may reach a model (hidden Unicode stripped; null while
   * held or when the server sent none).
   */
  instructions() {
    return [...this.#instructions.values()]
  }

  /**
   * Approves `ref` (`serverId`, or `serverId/toolName`) as the server lists it now: each held
   * or removed tool of it is pinned with source 'approved'. The next sync registers them.
   * Resolves to the names of the tools approved.
   */
  async approve(ref) {
    const { entry, names } = this.#select(ref, (status) => status.state === 'held' || status.state === 'removed' || status.state === 'kept-old')
    const data = await this.#load()
    const pins = (data.servers[entry.identity] ??= { name: entry.server.name, tools: {} })
    const reviewed = this.#reviewed.get(entry.server.id)
    const pinnedAt = new Date().toISOString()
    for (const name of names) {
      const { digest, form } = reviewed.forms.get(name)
      pins.tools[name] = { digest, pinnedAt, source: 'approved', definition: form }
    }
    // A server's approval covers its instructions as listed now.
    const [, toolName] = splitRef(ref)
    const instructionsState = this.#instructions.get(entry.server.id)?.state
    const approvesInstructions = toolName === undefined && (instructionsState === 'held' || instructionsState === 'kept-old')
    if (approvesInstructions) {
      const current = reviewed.reviewedInstructions
      pins.instructions = current ? { text: current.text, digest: current.digest, pinnedAt, source: 'approved' } : null
      names.push(INSTRUCTIONS)
    }
    if (names.length > 0) await this.#save(data)
    return names
  }

  /**
   * Forgets the pins of `ref` (`serverId`, or `serverId/toolName`): a server's next listing is
   * its first again; a tool's is a new tool, held until approved. Resolves to the names reset.
   */
  async reset(ref) {
    const { entry, names } = this.#select(ref, () => true)
    const data = await this.#load()
    const [, toolName] = splitRef(ref)
    if (toolName === undefined) delete data.servers[entry.identity]
    else for (const name of names) delete data.servers[entry.identity]?.tools[name]
    await this.#save(data)
    return names
  }

  #select(ref, keep) {
    const [serverId, toolName] = splitRef(ref)
    const entry = this.#status.get(serverId)
    if (!entry) throw invalidArgument('ref', `no server ${JSON.stringify(serverId)} has been listed yet`)
    if (toolName !== undefined && !entry.tools.has(toolName)) throw invalidArgument('ref', `server ${JSON.stringify(serverId)} lists no tool ${JSON.stringify(toolName)}`)
    const names = [...entry.tools.values()].filter((status) => (toolName === undefined || status.toolName === toolName) && keep(status)).map((status) => status.toolName)
    return { entry, names }
  }
}

/** `descriptor` with the pinned fields as `form` has them (a field the old form lacked is dropped). */
function withPinnedForm(descriptor, form) {
  const out = { ...descriptor }
  for (const field of PINNED_FIELDS) {
    if (field in form) out[field] = form[field]
    else delete out[field]
  }
  return out
}

/** What a pin covers (crates/toolreg-trust's `PINNED_FIELDS`). */
const PINNED_FIELDS = ['name', 'title', 'description', 'inputSchema', 'outputSchema', 'annotations', 'execution']

/** Whether two JSON values are equal, keys in the same order (anything else takes the full review). */
function sameJson(a, b) {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const keys = Object.keys(a)
  const other = Object.keys(b)
  if (keys.length !== other.length) return false
  for (let i = 0; i < keys.length; i++) if (keys[i] !== other[i] || !sameJson(a[keys[i]], b[keys[i]])) return false
  return true
}

function splitRef(ref) {
  if (typeof ref !== 'string' || ref === '') throw invalidArgument('ref', 'expected "server" or "server/tool"')
  const slash = ref.indexOf('/')
  return slash < 0 ? [ref, undefined] : [ref.slice(0, slash), ref.slice(slash + 1)]
}

function identityOf(server) {
  return typeof server.identity === 'string' && server.identity !== '' ? server.identity : `id:${server.id}`
}

/** The listing's tools, one per name (the first wins, as the sync registers them). */
function uniqueByName(tools) {
  const seen = new Set()
  return tools.filter((tool) => tool !== null && typeof tool === 'object' && typeof tool.name === 'string' && !seen.has(tool.name) && seen.add(tool.name))
}

function blockedSentence(tool) {
  const reasons = tool.findings.filter((f) => f.level === 'block').map((f) => `${f.explanation} ("${f.excerpt}" in ${f.field})`)
  return `${tool.name}: its definition looks poisoned: ${reasons.join('; ')}`
}

module.exports = { ToolTrust, trustStoreOf, STORE_FORMAT, INSTRUCTIONS }
