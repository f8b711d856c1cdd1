// What the bilingual dictionary costs a search: query p50/p90 of Chinese requests over the real
// ~11k-tool MCP catalog (Toucan + Docker, ../shared/data), words only, without and with
// @toolreg/dict-zh-en, and the dictionary's load time. Requests: the Chinese API titles of
// Lark-zh-en (target/zh/, `python3 scripts/fetch_zh.py`), 500 of them.
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
const requests = join(root, 'target', 'zh', 'Lark-zh-en.json')

requireData('dictionary bench')
for (const [file, how] of [[dictionary, 'npm run dict:build'], [requests, 'python3 scripts/fetch_zh.py']]) {
  if (!existsSync(file)) {
    console.log(`dictionary bench: skipped — ${file} is missing (${how}).`)
    process.exit(0)
  }
}
const queries = JSON.parse(readFileSync(requests, 'utf8')).queries.map((q) => q.text).slice(0, 500)
const tools = loadCatalog()

function registry(option) {
  const r = new ToolRegistry({ dictionary: option })
  r.registerMany(tools.map((t, i) => ({
    name: wireName(t, i),
    namespace: `mcp:${t.server}`,
    description: t.description ?? '',
    defer: 'always',
    tool: tool({ description: t.description ?? '', inputSchema: jsonSchema({ type: 'object' }) }),
  })))
  return r
}

const plain = registry(false)
const glossed = registry(dictionary)
const t = performance.now()
await glossed.searchAsync('天气') // the first request that needs the dictionary loads it
const loadMs = performance.now() - t
const rows = []
for (const [mode, r] of [['words', plain], ['words + dictionary', glossed]]) {
  const { p50, p90 } = await timeQueries(queries, (q) => r.searchAsync(q, { limit: 5 }))
  rows.push(`| ${mode} | ${p50.toFixed(2)} | ${p90.toFixed(2)} |`)
}
console.log(`${tools.length} tools, ${queries.length} Chinese requests; dictionary loaded in ${loadMs.toFixed(0)} ms\n`)
console.log('| search | p50 ms | p90 ms |\n|---|---:|---:|')
console.log(rows.join('\n'))
