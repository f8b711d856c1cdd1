#!/usr/bin/env node
// Packs an OpenAI tiktoken rank file (one base64 token and its rank per line, ranks 0..n-1 in
// order) into the compact form the addon embeds: for each rank in order, one length byte and the
// token's raw bytes, gzip-compressed. Raw bytes compress to 60 % of the gzipped base64 text; the
// test `shipped_rank_files_are_openais` in src/tokens.rs rebuilds the text from the packed file
// and checks it against the SHA-256 tiktoken publishes, so nothing is lost.
//
//   node scripts/pack-tiktoken-ranks.mjs o200k_base.tiktoken assets/tiktoken/o200k_base.ranks.gz
import { readFileSync, writeFileSync } from 'node:fs'
import { gzipSync, gunzipSync } from 'node:zlib'

const [input, output] = process.argv.slice(2)
if (!input || !output) {
  console.error('usage: pack-tiktoken-ranks.mjs <rank file (.tiktoken or .tiktoken.gz)> <output .ranks.gz>')
  process.exit(2)
}
let text = readFileSync(input)
if (input.endsWith('.gz')) text = gunzipSync(text)
const parts = []
text
  .toString('utf8')
  .split('\n')
  .filter(Boolean)
  .forEach((line, index) => {
    const [base64, rank] = line.split(' ')
    if (Number(rank) !== index) throw new Error(`${input}: line ${index + 1} has rank ${rank}; expected ranks 0..n-1 in order`)
    const token = Buffer.from(base64, 'base64')
    if (token.length === 0 || token.length > 255) throw new Error(`${input}: rank ${rank} has ${token.length} bytes; expected 1..255`)
    parts.push(Buffer.from([token.length]), token)
  })
writeFileSync(output, gzipSync(Buffer.concat(parts), { level: 9 }))
console.log(`${output}: ${parts.length / 2} tokens`)
