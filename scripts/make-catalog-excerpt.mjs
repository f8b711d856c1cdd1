#!/usr/bin/env node
// Writes fixtures/catalog-excerpt.json.br, the catalog the CLI audits when ../shared/data is
// absent (a fresh clone, the published package): the Toucan servers whose reported license is
// permissive (MIT, Apache-2.0, BSD, ISC), their tools unchanged, brotli-compressed.
// Usage: node scripts/make-catalog-excerpt.mjs   (reads $TOOLREG_DATA or ../shared/data)
import { writeFileSync } from 'node:fs'
import { brotliCompressSync, constants } from 'node:zlib'
import { EXCERPT_PATH, dataDir, haveSharedData, readToucanServers, toucanTools } from '../cli/catalog.mjs'

const PERMISSIVE = new Set(['MIT', 'Apache-2.0', 'BSD-3-Clause', 'BSD-2-Clause', 'ISC'])
const MAX_BYTES = 2 * 1024 * 1024

const dir = dataDir()
if (!haveSharedData(dir)) {
  console.error(`The shared data set is not at ${dir}; set TOOLREG_DATA to its path.`)
  process.exit(1)
}
const servers = readToucanServers(dir).filter((s) => PERMISSIVE.has(s.server_license))
const tools = servers.flatMap(toucanTools)
const document = {
  source: 'Toucan (github.com/TheAgentArk/Toucan, MIT), mcp_servers/ filtered to servers with a permissive server_license',
  licenses: Object.fromEntries(servers.map((s) => [`toucan-${s.server_id}`, s.server_license])),
  tools,
}
const packed = brotliCompressSync(Buffer.from(JSON.stringify(document)), {
  params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_LGWIN]: 24 },
})
if (packed.length > MAX_BYTES) {
  console.error(`The excerpt is ${packed.length} bytes, over the ${MAX_BYTES}-byte budget.`)
  process.exit(1)
}
writeFileSync(EXCERPT_PATH, packed)
console.log(`${EXCERPT_PATH}: ${servers.length} servers, ${tools.length} tools, ${packed.length} bytes`)
