// What the bilingual dictionary costs: query p50/p90 over the real ~11k-tool MCP catalog
// (Toucan + Docker, ../shared/data) joined by Lark's 1,288 tools described in Chinese, words
// only, without and with @toolreg/dict-zh-en, for Chinese requests (the Chinese API titles of
// Lark-zh-en, 500) and English ones (the English titles of Lark-en-zh, 500); the dictionary's
// load time; and what glossing the Chinese-described tools costs at registration.
// Sets: target/zh/ (`python3 scripts/fetch_zh.py`).
//
//   npm run dict:build && node bench/dictionary.bench.mjs
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { tool, jsonSchema } from 'ai'
import { loadCatalog, requireData, timeQueries, wireName } from './catalog.mjs'

const require = createRequire(import.meta.url)
const { ToolRegistry } = require('../index.js')
const root = join(import.meta.dirname, '..')
const dictionary = join(root, 'npm-optional', 'dict-zh-en', 'zh-en.tsv')
const set = (name) => join(root, 'target', 'zh', `${name}.json`)

requireData('dictionary bench')
for (const [file, how] of [[dictionary, 'npm run dict:build'], [set('Lark-zh-en'), 'python3 scripts/fetch_zh.py'], [set('Lark-zh'), 'python3 scripts/fetch_zh.py']]) {
  if (!existsSync(file)) {
    console.log(`dictionary bench: skipped — ${file} is missing (${how}).`)
    process.exit(0)
  }
}
const read = (name) => JSON.parse(readFileSync(set(name), 'utf8'))
const requests = {
  Chinese: read('Lark-zh-en').queries.map((q) => q.text).slice(0, 500),
  English: read('Lark-en-zh').queries.map((q) => q.text).slice(0, 500),
}
const entry = (name, namespace, description) => ({
  name,
  namespace,
  description,
  defer: 'always',
  tool: tool({ description, inputSchema: jsonSchema({ type: 'object' }) }),
})
const catalog = loadCatalog().map((t, i) => entry(wireName(t, i), `mcp:${t.server}`, t.description ?? ''))
const chinese = read('Lark-zh').tools.map((t) => entry(`lark_${t.name.replace(/[^A-Za-z0-9_-]/g, '_')}`.slice(0, 64), 'mcp:lark', t.description))

/** A registry of the whole catalog; with the dictionary, once its Chinese tools are glossed. */
async function registry(option) {
  const r = new ToolRegistry({ dictionary: option })
  r.registerMany(catalog)
  const t = performance.now()
  r.registerMany(chinese)
  const registerMs = performance.now() - t
  // Registering Chinese-described tools starts the dictionary's load; an asynchronous search
  // waits for it and for the tools' glossing.
  await r.searchAsync('')
  return { r, registerMs, readyMs: performance.now() - t }
}

const plain = await registry(false)
const glossed = await registry(dictionary)
// The file is parsed once per process: a second registry measures the glossing alone.
const again = await registry(dictionary)
// Registering them into a registry that has the dictionary already: glossed as they are
// indexed, on the calling (JS) thread, as registerMany always indexes.
const installed = new ToolRegistry({ dictionary })
installed.registerMany([...catalog, chinese[0]])
await installed.searchAsync('')
let t = performance.now()
installed.registerMany(chinese.slice(1))
const inlineMs = performance.now() - t
const rows = []
for (const [language, queries] of Object.entries(requests)) {
  for (const [mode, { r }] of [['words', plain], ['words + dictionary', glossed]]) {
    const { p50, p90 } = await timeQueries(queries, (q) => r.searchAsync(q, { limit: 5 }))
    rows.push(`| ${language} | ${mode} | ${p50.toFixed(2)} | ${p90.toFixed(2)} |`)
  }
}
console.log(`${catalog.length} tools + ${chinese.length} described in Chinese; 500 requests in each language\n`)
console.log('| requests | search | p50 ms | p90 ms |\n|---|---|---:|---:|')
console.log(rows.join('\n'))
console.log(`\nregistering the ${chinese.length} Chinese-described tools: ${plain.registerMs.toFixed(0)} ms without the dictionary;`)
console.log(`with it, until they are searchable with their glosses: ${glossed.readyMs.toFixed(0)} ms the first time (reading and parsing the file included), ${again.readyMs.toFixed(0)} ms once it is loaded (glossing on the worker pool)`)
console.log(`into a registry that has the dictionary: registerMany takes ${inlineMs.toFixed(0)} ms (glossing on the calling thread)`)
