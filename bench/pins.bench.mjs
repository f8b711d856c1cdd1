// Pins learned from use, and what each tool-loading strategy costs per request, over replayed
// multi-turn conversations built from LiveMCPBench's annotated multi-step tasks, on the real
// @ai-sdk/anthropic 4 and @ai-sdk/openai 4 request builders (ai@7 lane, Node 22; started on
// another Node it starts itself there). No network: a scripted model plays the annotated tool
// sequence and a capturing fetch records every request body.
//
//   npm run bench:pins            (not part of npm test; skips when ../shared/data is absent)
//
// Conversations: the 4 LiveMCPBench task categories whose tools fit a 100-tool catalog (Travel,
// Finance, Shopping, Lifestyle); each category is one user; its tasks, shuffled with a fixed
// seed, are paired into 2-turn conversations (one task a turn). Learned on a seeded 60 % of each
// user's conversations (uses recorded by the registry's own execute path into a usage-store
// file), judged on the other 40 % (held out). Catalog at N tools: the conversations' tools
// (real MCP schemas from LiveMCPBench), then the rest of LiveMCPBench, then the Toucan + Docker
// MCP catalogs, every tool deferred. The scripted model, per planned tool: call it when it is
// loaded (pinned, or found earlier in the conversation), else search with its description's
// first line (then its name) and call it once found; with the meta-tools it inspects a found
// tool first and calls it through `tool_invoke` (their documented flow; a verbose search would
// save the inspect).
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { laneVersions, loadLane, onNode22, random } from './ai7-lane.mjs'
import { dataDir, haveSharedData, defaultCatalog } from '../cli/catalog.mjs'
import { firstLine, wireName } from './catalog.mjs'

const data = dataDir()
if (!haveSharedData(data)) {
  console.log(`bench:pins: skipped — the shared data set (LiveMCPBench annotations) is not at ${data} (set TOOLREG_DATA to its path).`)
  process.exit(0)
}

onNode22(import.meta.url)

const SIZES = (process.env.PINS_SIZES ?? '100,1000,10000').split(',').map(Number)
const CATEGORIES = ['Travel', 'Finance', 'Shopping', 'Lifestyle']
const TURNS = 2
const LEARN_SHARE = 0.6
const SEED = 20261203
const ASSISTANT = 'livemcpbench-assistant'

const lanePackages = await loadLane()
const { generateText, stepCountIs, tool, jsonSchema } = lanePackages.ai
const { createAnthropic } = lanePackages.anthropic
const { createOpenAI } = lanePackages.openai
const { ToolRegistry, applyDeferExposition, countTokens } = lanePackages.toolreg

function shuffle(items, next) {
  const out = items.slice()
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[out[i], out[j]] = [out[j], out[i]]
  }
  return out
}

// ---- data: LiveMCPBench tools and tasks ----
const live = JSON.parse(readFileSync(path.join(data, 'livemcpbench', 'tools.json'), 'utf8'))
const liveTools = new Map()
for (const server of live) {
  for (const listing of Object.values(server.tools ?? {})) {
    for (const t of listing.tools ?? []) {
      // 13 names occur on two servers: the first one serves the name, as LiveMCPBench matches by name.
      if (!liveTools.has(t.name) && /^[A-Za-z0-9_.-]{1,64}$/.test(t.name) && t.inputSchema?.type === 'object') {
        liveTools.set(t.name, { name: t.name, server: listing.server_name ?? server.name, description: t.description ?? '', inputSchema: t.inputSchema })
      }
    }
  }
}
const tasks = JSON.parse(readFileSync(path.join(data, 'livemcpbench', 'all_annotations.json'), 'utf8'))
  .filter((task) => CATEGORIES.includes(task.category))
  .map((task) => ({
    id: task.task_id,
    user: task.category,
    question: task.Question,
    plan: task['Annotator Metadata'].Tools.split('\n').map((l) => l.replace(/^\s*\d+\.\s*/, '').trim()).filter((name) => liveTools.has(name)),
  }))
  .filter((task) => task.plan.length > 0)

const next = random(SEED)
const learn = []
const heldOut = []
for (const user of CATEGORIES) {
  const mine = shuffle(tasks.filter((t) => t.user === user), next)
  const conversations = []
  for (let i = 0; i + TURNS <= mine.length; i += TURNS) conversations.push({ user, turns: mine.slice(i, i + TURNS) })
  const cut = Math.round(conversations.length * LEARN_SHARE)
  learn.push(...conversations.slice(0, cut))
  heldOut.push(...conversations.slice(cut))
}
const usedNames = [...new Set(tasks.flatMap((t) => t.plan))].sort()

/** Tools for a catalog of `size`: the conversations' first, then LiveMCPBench's others, then the big catalogs. */
function catalogOf(size) {
  const out = usedNames.map((name) => liveTools.get(name))
  const seen = new Set(usedNames)
  const add = (t) => {
    if (out.length >= size || seen.has(t.name)) return
    seen.add(t.name)
    out.push(t)
  }
  for (const t of shuffle([...liveTools.values()], random(SEED + 1))) add(t)
  if (out.length < size) {
    const others = shuffle(defaultCatalog().tools, random(SEED + 2))
    for (let i = 0; i < others.length; i++) {
      const t = others[i]
      if (t.inputSchema?.type !== 'object' || firstLine(t.description ?? '', 120).length < 12) continue
      // Many servers share tool names: the filler tools get a wire id unique per server and tool.
      add({ name: wireName(t, i), server: t.server, description: t.description, inputSchema: t.inputSchema })
    }
  }
  return out.slice(0, size)
}

function buildTools(drawn) {
  const tools = {}
  const entries = drawn.map((t) => {
    tools[t.name] = tool({ description: t.description, inputSchema: jsonSchema(t.inputSchema), execute: async () => ({ ok: true }) })
    return { name: t.name, namespace: `mcp:${t.server}`, description: firstLine(t.description), defer: 'always', tool: tools[t.name] }
  })
  return { tools, entries }
}

function registryOf(entries, usageStore) {
  const registry = new ToolRegistry({ logger: { warn() {} }, ...(usageStore && { usageStore }) })
  registry.registerMany(entries)
  return registry
}

/** Arguments that satisfy a schema's required fields: the scripted model's calls must be valid. */
function exampleArgs(schema) {
  const out = {}
  for (const key of schema?.required ?? []) out[key] = exampleValue(schema.properties?.[key])
  return out
}
function exampleValue(s = {}) {
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum[0]
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type
  switch (type) {
    case 'integer':
    case 'number':
      return s.minimum ?? 1
    case 'boolean':
      return true
    case 'array':
      return s.minItems ? Array.from({ length: s.minItems }, () => exampleValue(s.items)) : []
    case 'object':
      return exampleArgs(s)
    default:
      return 'x'.repeat(Math.max(1, s.minLength ?? 1))
  }
}

// ---- the scripted model ----
/** Tool names a search result shows: our JSON `{ tools }`, Anthropic `tool_reference`s, OpenAI `tool_search_output`, the meta-tools' text. */
function namesIn(content) {
  if (Array.isArray(content)) return content.flatMap((c) => (c.type === 'tool_reference' ? [c.tool_name] : c.type === 'text' ? namesIn(c.text) : c.name ? [c.name] : []))
  if (typeof content !== 'string') return []
  try {
    const parsed = JSON.parse(content)
    if (Array.isArray(parsed?.tools)) return parsed.tools.map((t) => (typeof t === 'string' ? t : t.name))
  } catch {}
  return [...content.matchAll(/^\s*- (\S+) — /gm)].map((m) => m[1])
}

const ANSWER = 'Done.'
const families = {
  anthropic: {
    create: (fetch) => createAnthropic({ apiKey: 'bench', fetch })('claude-opus-4-8'),
    history: (body) => [body.system ?? null, ...body.messages],
    loaded: (body) => new Set((body.tools ?? []).filter((t) => !t.defer_loading && t.name).map((t) => t.name)),
    /** The last message's search results and whether it is a new user question. */
    last(body) {
      // Append: the tool additions come as a system message after the search's result.
      const last = body.messages.filter((m) => m.role !== 'system').at(-1)
      const parts = Array.isArray(last.content) ? last.content : [{ type: 'text', text: last.content }]
      return { question: parts.some((p) => p.type === 'text') && !parts.some((p) => p.type === 'tool_result'), found: parts.filter((p) => p.type === 'tool_result').flatMap((p) => namesIn(p.content)) }
    },
    call: (n, name, input) => ({ id: 'm', type: 'message', role: 'assistant', model: 'claude-opus-4-8', content: [{ type: 'tool_use', id: `tu_${n}`, name, input }], stop_reason: 'tool_use', stop_sequence: null, usage }),
    answer: () => ({ id: 'm', type: 'message', role: 'assistant', model: 'claude-opus-4-8', content: [{ type: 'text', text: ANSWER }], stop_reason: 'end_turn', stop_sequence: null, usage }),
  },
  openai: {
    create: (fetch) => createOpenAI({ apiKey: 'bench', fetch }).responses('gpt-5.4'),
    history: (body) => [body.instructions ?? null, ...body.input],
    loaded: (body) => new Set((body.tools ?? []).filter((t) => !t.defer_loading && t.name).map((t) => t.name)),
    last(body) {
      const items = body.input.filter((i) => i.type !== 'additional_tools')
      const last = items.at(-1)
      if (last.role === 'user') return { question: true, found: [] }
      if (last.type === 'tool_search_output') return { question: false, found: last.tools.map((t) => t.name) }
      return { question: false, found: last.type === 'function_call_output' ? namesIn(last.output) : [] }
    },
    call(n, name, input, body) {
      // The native strategy's search is OpenAI's own tool_search, called as such.
      if (name === 'tool_search' && body.tools.some((t) => t.type === 'tool_search')) {
        return openaiReply([{ type: 'tool_search_call', id: `ts_${n}`, call_id: `call_${n}`, execution: 'client', status: 'completed', arguments: { query: input.query } }])
      }
      return openaiReply([{ type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name, arguments: JSON.stringify(input), status: 'completed' }])
    },
    answer: (n) => openaiReply([{ type: 'message', id: `msg_${n}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: ANSWER, annotations: [] }] }]),
  },
}
const usage = { input_tokens: 100, output_tokens: 10 }
const openaiReply = (output) => ({
  id: 'r', object: 'response', created_at: 1_760_000_000, status: 'completed', model: 'gpt-5.4', output, incomplete_details: null,
  usage: { input_tokens: 100, output_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
})

const tokenCache = new Map()
function tokensOf(text) {
  let n = tokenCache.get(text)
  if (n === undefined) {
    n = countTokens(text)
    if (text.length > 10_000) tokenCache.set(text, n)
  }
  return n
}

/**
 * One replayed conversation. Returns per request its bytes, the parts a provider caches in
 * order (tools, then the history items), and per tool use how it was reached.
 */
async function replay({ family, strategy, meta }, setup, registry, conversation, pinsOn) {
  const spec = families[family]
  const requests = []
  const uses = []
  const found = new Set()
  /** Meta-tools: signatures read (tool_inspect, or a call through tool_invoke). */
  const inspected = new Set()
  let plan = []
  let pinnedNow = new Set()
  let step = 0
  let attempts = 0
  let searchedThis = false
  let turnRequests = 0
  const fetch = async (_url, init) => {
    const body = JSON.parse(init.body)
    requests.push({ bytes: Buffer.byteLength(init.body), tools: JSON.stringify(body.tools ?? []), items: spec.history(body).map((item) => JSON.stringify(item)) })
    turnRequests++
    const n = requests.length
    const last = spec.last(body)
    for (const name of last.found) found.add(name)
    const loaded = spec.loaded(body)
    while (step < plan.length) {
      const target = plan[step]
      const direct = loaded.has(target)
      if (meta && !direct && found.has(target) && !inspected.has(target)) {
        // The meta-tools' documented flow: search, inspect, invoke.
        inspected.add(target)
        return json(spec.call(n, 'tool_inspect', { name: target }, body))
      }
      if (direct || found.has(target)) {
        uses.push({ tool: target, searched: searchedThis, pinned: direct && pinnedNow.has(target) })
        step++
        attempts = 0
        searchedThis = false
        const input = exampleArgs(setup.schemas.get(target))
        const reply = direct || !meta ? spec.call(n, target, input, body) : spec.call(n, 'tool_invoke', { name: target, params: input }, body)
        return json(reply)
      }
      if (attempts < 2) {
        const query = attempts === 0 ? firstLine(setup.descriptions.get(target), 120) : target.replace(/[_.-]+/g, ' ')
        attempts++
        searchedThis = true
        return json(spec.call(n, 'tool_search', { query }, body))
      }
      // Not found by either search: the model goes on without it.
      uses.push({ tool: target, searched: true, missed: true })
      step++
      attempts = 0
      searchedThis = false
    }
    return json(spec.answer(n))
  }
  const model = spec.create(fetch)
  const state = {}
  const messages = []
  const perTurn = []
  for (const turn of conversation.turns) {
    plan = turn.plan
    step = 0
    attempts = 0
    searchedThis = false
    turnRequests = 0

    const usesBefore = uses.length
    messages.push({ role: 'user', content: turn.question })
    const exposition = await applyDeferExposition(setup.tools, registry, 200_000, {
      strategy: meta ? 'meta-tools' : strategy, provider: model.provider, modelId: model.modelId, messages, conversation: state,
      userId: conversation.user, assistantId: ASSISTANT, ...(!pinsOn && { pins: false }),
    })
    pinnedNow = new Set(exposition.pinned ?? [])
    const expected = meta ? 'meta-tools' : `${family}-${strategy === 'append' ? 'append' : 'native'}`
    if (exposition.strategy !== expected) throw new Error(`expected ${expected}, got ${exposition.strategy}: ${exposition.warnings.join('; ')}`)
    const result = await generateText({
      model, messages, tools: exposition.tools, prepareStep: exposition.prepareStep, stopWhen: stepCountIs(4 * plan.length + 2),
      ...(meta && exposition.systemPrompt && { system: exposition.systemPrompt }),
      ...(family === 'openai' && { providerOptions: { openai: { store: false } } }),
    })
    messages.push(...(result.responseMessages ?? result.response.messages))
    perTurn.push({ requests: turnRequests, uses: uses.length - usesBefore, pinned: exposition.pinned ?? [] })
  }
  return { requests, uses, perTurn }
}

const json = (body) => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } })

/** Input tokens of a request, and of its prefix shared with the previous request (what a provider cache hits). */
function cacheFigures(requests) {
  let input = 0
  let hit = 0
  let extended = 0
  const perRequest = []
  for (let i = 0; i < requests.length; i++) {
    const r = requests[i]
    const toolTokens = tokensOf(r.tools)
    const historyTokens = tokensOf(r.items.join(','))
    const total = toolTokens + historyTokens
    perRequest.push(total)
    if (i === 0) continue
    const before = requests[i - 1]
    input += total
    if (before.tools !== r.tools) continue
    let k = 0
    while (k < before.items.length && k < r.items.length && before.items[k] === r.items[k]) k++
    if (k === before.items.length) extended++
    hit += toolTokens + (k > 0 ? tokensOf(r.items.slice(0, k).join(',')) : 0)
  }
  return { input, hit, extended, pairs: requests.length - 1, perRequest }
}

const STRATEGIES = [
  { label: 'meta-tools', family: 'anthropic', strategy: 'meta-tools', meta: true },
  { label: 'anthropic-native (defer_loading)', family: 'anthropic', strategy: 'native' },
  { label: 'anthropic-append', family: 'anthropic', strategy: 'append' },
  { label: 'openai-native', family: 'openai', strategy: 'native' },
  { label: 'openai-append', family: 'openai', strategy: 'append' },
]

const kb = (bytes) => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(2)} MB` : `${(bytes / 1e3).toFixed(1)} kB`)
const pct = (x) => `${(100 * x).toFixed(1)} %`
const sum = (xs) => xs.reduce((a, b) => a + b, 0)

console.log(`# Tool loading per strategy, with and without learned pins (LiveMCPBench multi-step tasks)\n`)
console.log(`packages: ${Object.entries(laneVersions()).map(([name, version]) => `${name} ${version}`).join(', ')}\n`)
console.log(`Users (task categories): ${CATEGORIES.join(', ')}; ${tasks.length} tasks with annotated tools, ${usedNames.length} distinct tools; ${TURNS}-turn conversations, seed ${SEED}: ${learn.length} learned from, ${heldOut.length} held out (${sum(heldOut.flatMap((c) => c.turns.map((t) => t.plan.length)))} tool uses). Figures are over the held-out conversations.\n`)
console.log('| tools | strategy | pins | pinned (tokens) | bytes / request | tokens / request | requests extending the previous | input tokens a cache hits | model round trips / tool use | uses without a search | missed |')
console.log('|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|')
for (const size of SIZES) {
  const drawn = catalogOf(size)
  if (drawn.length < size) {
    console.log(`| ${size.toLocaleString('en')} | skipped: the catalogs hold ${drawn.length} usable tools | | | | | | | | | |`)
    continue
  }
  const { tools, entries } = buildTools(drawn)
  const setup = { tools, schemas: new Map(drawn.map((t) => [t.name, t.inputSchema])), descriptions: new Map(drawn.map((t) => [t.name, t.description])) }
  // Learning: the learn conversations, replayed once, record their uses through the registry's execute path.
  const storeFile = path.join(mkdtempSync(path.join(tmpdir(), 'toolreg-pins-bench-')), 'usage.jsonl')
  const learner = registryOf(entries, storeFile)
  for (const conversation of learn) await replay(STRATEGIES[2], setup, learner, conversation, false)
  await learner.pins()
  const learned = readFileSync(storeFile, 'utf8')
  // Judging: the learned store, read-only (held-out uses do not feed back).
  const judge = registryOf(entries, { load: () => learned, record: () => {} })
  const pinTokens = new Map()
  for (const user of CATEGORIES) pinTokens.set(user, await judge.pins({ userId: user, assistantId: ASSISTANT }))
  for (const s of STRATEGIES) {
    for (const pinsOn of [false, true]) {
      const runs = []
      for (const conversation of heldOut) runs.push(await replay(s, setup, judge, conversation, pinsOn))
      const requests = runs.flatMap((r) => r.requests)
      const cache = runs.map((r) => cacheFigures(r.requests))
      const uses = runs.flatMap((r) => r.uses)
      const turns = runs.flatMap((r) => r.perTurn)
      const roundTrips = sum(turns.map((t) => t.requests - 1)) / Math.max(1, sum(turns.map((t) => t.uses)))
      const pins = pinsOn ? [...pinTokens.values()] : []
      const pinned = pinsOn ? `${(sum(pins.map((p) => p.length)) / pins.length).toFixed(1)} (${Math.round(sum(pins.map((p) => sum(p.map((x) => x.tokens)))) / pins.length)})` : '—'
      console.log(
        `| ${size.toLocaleString('en')} | ${s.label} | ${pinsOn ? 'learned' : 'off'} | ${pinned} | ${kb(sum(requests.map((r) => r.bytes)) / requests.length)} | ${Math.round(sum(cache.flatMap((c) => c.perRequest)) / requests.length).toLocaleString('en')} | ${pct(sum(cache.map((c) => c.extended)) / sum(cache.map((c) => c.pairs)))} | ${pct(sum(cache.map((c) => c.hit)) / sum(cache.map((c) => c.input)))} | ${roundTrips.toFixed(2)} | ${pct(uses.filter((u) => !u.searched && !u.missed).length / uses.length)} (pins: ${pct(uses.filter((u) => u.pinned).length / uses.length)}) | ${uses.filter((u) => u.missed).length} |`,
      )
    }
  }
}
