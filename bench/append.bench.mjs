// Request bytes per turn of append-only tool loading against provider-native deferral, on the
// real @ai-sdk/anthropic 4 and @ai-sdk/openai 4 request builders (ai@7, so it runs in the ai@7
// lane's packages under Node 22; started on another Node, it starts itself there). No network:
// a scripted fetch plays the model and records every request body.
//
//   node bench/append.bench.mjs            (not part of npm test)
//
// Catalog: the Toucan + Docker MCP catalogs from ../shared/data, else the committed excerpt
// (fixtures/catalog-excerpt.json.br); sizes it cannot fill are skipped with a message.
// Per size N: N tools drawn with a fixed seed, 5 of them eager (`defer: 'never'`), the rest
// deferred (`defer: 'always'`). Conversations: CONVERSATIONS × TURNS, each turn asking for one
// more drawn deferred tool by its description's first line; the scripted model searches with
// that text, calls the first tool found with `{}`, then answers. Every turn replays the whole
// conversation so far (response messages kept, exposition rebuilt with `messages` and
// `conversation`), as a chat app does.
import { laneVersions, loadLane, onNode22, random } from './ai7-lane.mjs'
import { defaultCatalog } from '../cli/catalog.mjs'
import { wireName, firstLine } from './catalog.mjs'


onNode22(import.meta.url)

const SIZES = [100, 1_000, 10_000]
const EAGER = 5
const CONVERSATIONS = 3
const TURNS = 4
const SEED = 20261203

const lanePackages = await loadLane()
const { generateText, stepCountIs, tool, jsonSchema } = lanePackages.ai
const { createAnthropic } = lanePackages.anthropic
const { createOpenAI } = lanePackages.openai
const { ToolRegistry, applyDeferExposition } = lanePackages.toolreg


function sample(items, count, next) {
  const pool = items.slice()
  for (let i = 0; i < count; i++) {
    const j = i + Math.floor(next() * (pool.length - i))
    ;[pool[i], pool[j]] = [pool[j], pool[i]]
  }
  return pool.slice(0, count)
}

/** The catalog's tools with a description to search by and a schema the AI SDK takes. */
function usableTools(catalog) {
  return catalog.filter((t) => firstLine(t.description, 120).length >= 12 && t.inputSchema?.type === 'object')
}

function buildRegistry(drawn) {
  const registry = new ToolRegistry({ logger: { warn() {} } })
  const tools = {}
  const entries = drawn.map((t, i) => {
    const name = wireName(t, i)
    tools[name] = tool({ description: t.description, inputSchema: jsonSchema(t.inputSchema), execute: async () => ({ ok: true }) })
    return { name, namespace: `mcp:${t.server}`, description: firstLine(t.description), defer: i < EAGER ? 'never' : 'always', tool: tools[name] }
  })
  registry.registerMany(entries)
  return { registry, tools, entries }
}

const usage = { input_tokens: 100, output_tokens: 10 }
const anthropicReply = (content, stop) => ({ id: 'm', type: 'message', role: 'assistant', model: 'claude-opus-4-8', content, stop_reason: stop, stop_sequence: null, usage })
const openaiReply = (output) => ({
  id: 'r', object: 'response', created_at: 1_760_000_000, status: 'completed', model: 'gpt-5.4', output, incomplete_details: null,
  usage: { input_tokens: 100, output_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } },
})

/**
 * The scripted model, from the request alone: a user question → search with it; a search
 * result → call the first tool found; anything else → answer.
 */
const models = {
  anthropic: {
    create: (fetch) => createAnthropic({ apiKey: 'bench', fetch })('claude-opus-4-8'),
    history: (body) => body.messages,
    /** Tools a request's history loads: by-value additions (append) or tool_reference blocks (native). */
    loaded: (history) => (JSON.stringify(history).match(/"type":"(tool_addition|tool_reference)"/g) ?? []).length,
    reply(body, n) {
      const last = body.messages.filter((m) => m.role !== 'system').at(-1)
      const part = Array.isArray(last.content) ? last.content.at(-1) : { type: 'text', text: last.content }
      if (last.role === 'user' && part.type === 'text') return anthropicReply([{ type: 'tool_use', id: `tu_${n}`, name: 'tool_search', input: { query: part.text } }], 'tool_use')
      const found = part.type !== 'tool_result' ? [] : Array.isArray(part.content) ? part.content.filter((c) => c.type === 'tool_reference').map((c) => c.tool_name) : (safeJson(part.content)?.tools ?? [])
      if (found.length > 0) return anthropicReply([{ type: 'tool_use', id: `tu_${n}`, name: found[0], input: {} }], 'tool_use')
      return anthropicReply([{ type: 'text', text: 'Done.' }], 'end_turn')
    },
  },
  openai: {
    create: (fetch) => createOpenAI({ apiKey: 'bench', fetch }).responses('gpt-5.4'),
    history: (body) => body.input,
    loaded: (history) => history.filter((item) => item.type === 'additional_tools' || item.type === 'tool_search_output').reduce((sum, item) => sum + item.tools.length, 0),
    reply(body, n) {
      const items = body.input.filter((item) => item.type !== 'additional_tools')
      const last = items.at(-1)
      const searchCall = (query) => ({ type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: 'tool_search', arguments: JSON.stringify({ query }), status: 'completed' })
      if (last.role === 'user') {
        const query = typeof last.content === 'string' ? last.content : last.content.at(-1).text
        // The native strategy's search is OpenAI's own tool_search, which the model calls as such.
        if (body.tools.some((t) => t.type === 'tool_search')) return openaiReply([{ type: 'tool_search_call', id: `ts_${n}`, call_id: `call_${n}`, execution: 'client', status: 'completed', arguments: { query } }])
        return openaiReply([searchCall(query)])
      }
      const found = last.type === 'tool_search_output' ? last.tools.map((t) => t.name) : last.type === 'function_call_output' ? (safeJson(last.output)?.tools ?? []) : []
      if (found.length > 0) return openaiReply([{ type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: found[0], arguments: '{}', status: 'completed' }])
      return openaiReply([{ type: 'message', id: `msg_${n}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Done.', annotations: [] }] }])
    },
  },
}

function safeJson(text) {
  try {
    return typeof text === 'string' ? JSON.parse(text) : undefined
  } catch {
    return undefined
  }
}

/** One replayed conversation: per turn, every request's bytes, tools bytes and history. */
async function conversationRun(family, strategy, setup, questions) {
  const spec = models[family]
  const requests = []
  const fetch = async (_url, init) => {
    const body = JSON.parse(init.body)
    requests.push({ bytes: Buffer.byteLength(init.body), tools: JSON.stringify(body.tools ?? []), history: JSON.stringify(spec.history(body)), historyItems: spec.history(body) })
    return new Response(JSON.stringify(spec.reply(body, requests.length)), { status: 200, headers: { 'content-type': 'application/json' } })
  }
  const model = spec.create(fetch)
  const conversation = {}
  const messages = []
  let turnIndex = 0
  for (; turnIndex < questions.length; turnIndex++) {
    messages.push({ role: 'user', content: questions[turnIndex] })
    const exposition = await applyDeferExposition(setup.tools, setup.registry, 200_000, {
      strategy, provider: model.provider, modelId: model.modelId, messages, conversation,
    })
    if (!exposition.strategy.startsWith(family)) throw new Error(`expected a ${family} strategy, got ${exposition.strategy}: ${exposition.warnings.join('; ')}`)
    const result = await generateText({
      model, messages, tools: exposition.tools, prepareStep: exposition.prepareStep, stopWhen: stepCountIs(4),
      ...(family === 'openai' && { providerOptions: { openai: { store: false } } }),
    })
    messages.push(...(result.responseMessages ?? result.response.messages))
  }
  const toolsStable = requests.every((r) => r.tools === requests[0].tools)
  // Each request's history starts with the previous request's, item for item.
  const prefixStable = requests.slice(1).every((r, i) => {
    const before = requests[i].historyItems
    return JSON.stringify(r.historyItems.slice(0, before.length)) === JSON.stringify(before)
  })
  return { requests, toolsStable, prefixStable }
}

const catalog = defaultCatalog()
const usable = usableTools(catalog.tools)
console.log(`# append-only vs native deferral, request bytes (catalog: ${catalog.label}; ${usable.length} usable tools)\n`)
console.log(`packages: ${Object.entries(laneVersions()).map(([name, version]) => `${name} ${version}`).join(', ')}\n`)
console.log(`${CONVERSATIONS} conversations × ${TURNS} turns per size, seed ${SEED}; bytes are the JSON request bodies as sent (mean over conversations).\n`)
console.log('| tools | strategy | `tools` per request | request, turn 1 (first) | request, turn 4 (last) | all requests of a conversation | tools loaded in the history (last request) | `tools` identical in every request | history only appended |')
console.log('|---:|---|---:|---:|---:|---:|---:|---|---|')
const kb = (bytes) => (bytes >= 1e6 ? `${(bytes / 1e6).toFixed(2)} MB` : `${(bytes / 1e3).toFixed(1)} kB`)
const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length
for (const size of SIZES) {
  if (usable.length < size) {
    console.log(`| ${size.toLocaleString('en')} | skipped: the catalog has ${usable.length} usable tools | | | | | | | |`)
    continue
  }
  const next = random(SEED + size)
  const setup = buildRegistry(sample(usable, size, next))
  const deferred = setup.entries.slice(EAGER)
  const conversations = Array.from({ length: CONVERSATIONS }, () => sample(deferred, TURNS, next).map((e) => firstLine(e.tool.description, 120)))
  for (const [family, strategies] of [['anthropic', ['native', 'append']], ['openai', ['native', 'append']]]) {
    for (const strategy of strategies) {
      const runs = []
      for (const questions of conversations) runs.push(await conversationRun(family, strategy, setup, questions))
      const first = mean(runs.map((r) => r.requests[0].bytes))
      const last = mean(runs.map((r) => r.requests.at(-1).bytes))
      const total = mean(runs.map((r) => r.requests.reduce((sum, q) => sum + q.bytes, 0)))
      const tools = mean(runs.map((r) => Buffer.byteLength(r.requests[0].tools)))
      const requests = runs.reduce((sum, r) => sum + r.requests.length, 0)
      const loaded = mean(runs.map((r) => models[family].loaded(r.requests.at(-1).historyItems)))
      const yes = (key) => (runs.every((r) => r[key]) ? `yes (${requests} requests)` : `no (${runs.filter((r) => !r[key]).length} of ${runs.length} conversations)`)
      console.log(`| ${size.toLocaleString('en')} | ${family}-${strategy} | ${kb(tools)} | ${kb(first)} | ${kb(last)} | ${kb(total)} | ${loaded.toFixed(1)} | ${yes('toolsStable')} | ${yes('prefixStable')} |`)
    }
  }
}
