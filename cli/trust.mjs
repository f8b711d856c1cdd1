// `toolreg trust list|diff|approve|reset`: the pin file of tool trust (docs/security.md), the same
// file `toolreg serve --trust-file` keeps. list and reset read and write the file only; diff
// and approve start the servers they name and review their listings against it.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { configDir } from './auth.mjs'
import { CliError, EXIT } from './exitCodes.mjs'

/** How a server's instructions are named where tools are (`toolreg trust list rug/(instructions)`). */
const INSTRUCTIONS = '(instructions)'

/** The pin file: `--trust-file`, else `TOOLREG_TRUST_FILE`, else `trust.json` in toolreg's config folder. */
export function trustFileOf(opts, env = process.env) {
  return opts.trustFile ?? env.TOOLREG_TRUST_FILE ?? join(configDir(env), 'trust.json')
}

/** `server` or `server/tool` → `[server, tool?]`. */
export function splitRef(ref) {
  if (ref === undefined) return [undefined, undefined]
  const slash = ref.indexOf('/')
  return slash < 0 ? [ref, undefined] : [ref.slice(0, slash), ref.slice(slash + 1)]
}

function readPins(file) {
  if (!existsSync(file)) return { format: 'toolreg-trust/1', servers: {} }
  let data
  try {
    data = JSON.parse(readFileSync(file, 'utf8'))
  } catch (error) {
    throw new CliError(`The pin file ${file} is not JSON: ${error.message}`, EXIT.CONFIG)
  }
  if (data?.format !== 'toolreg-trust/1' || typeof data.servers !== 'object') throw new CliError(`${file} is not a toolreg pin file (no "format": "toolreg-trust/1").`, EXIT.CONFIG)
  return data
}

/**
 * The pins of the file, one row per tool: `{ serverId?, identity, server, tool, pinnedAt, source,
 * digest, rejected? }`; `serverId` where a config server has that identity. `ref` filters by
 * config id (or pinned server name) and tool.
 */
export function listPins(file, identities, ref) {
  const [server, tool] = splitRef(ref)
  const idOf = new Map([...identities].map(([id, identity]) => [identity, id]))
  const rows = []
  for (const [identity, pinned] of Object.entries(readPins(file).servers)) {
    const serverId = idOf.get(identity)
    if (server !== undefined && serverId !== server && pinned.name !== server) continue
    const pins = Object.entries(pinned.tools ?? {})
    if (pinned.instructions) pins.push([INSTRUCTIONS, pinned.instructions])
    for (const [name, pin] of pins) {
      if (tool !== undefined && name !== tool) continue
      rows.push({ ...(serverId && { serverId }), identity, server: pinned.name, tool: name, pinnedAt: pin.pinnedAt, source: pin.source, digest: pin.digest, ...(pin.rejected && { rejected: true }) })
    }
  }
  return rows
}

/** Forgets the pins of `ref` (a config server id, or `server/tool`); resolves to the tools forgotten. */
export function resetPins(file, identities, ref) {
  const [server, tool] = splitRef(ref)
  const identity = identities.get(server)
  if (identity === undefined) throw new CliError(`No server "${server}" in the config.`, EXIT.TOOL_NOT_FOUND)
  const data = readPins(file)
  const pinned = data.servers[identity]
  if (!pinned) return []
  const names = tool === undefined ? Object.keys(pinned.tools ?? {}) : Object.keys(pinned.tools ?? {}).filter((name) => name === tool)
  if (tool === undefined) delete data.servers[identity]
  else for (const name of names) delete pinned.tools[name]
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`)
  return names
}

/** What a review of the session's listings against the pins found: every tool not pinned as is. */
export function trustChanges(session, ref) {
  const [server, tool] = splitRef(ref)
  const instructions = session.registry.serverInstructions().map((entry) => ({ ...entry, toolName: INSTRUCTIONS }))
  return [...session.registry.trust(), ...instructions].filter((t) => t.state !== 'pinned' && (server === undefined || t.serverId === server) && (tool === undefined || t.toolName === tool))
}

export function formatChanges(rows) {
  if (!rows.length) return 'Every tool is as pinned.'
  return rows
    .map((t) => {
      const findings = t.findings.map((f) => `\n    ${f.level} ${f.rule} in ${f.field}: "${f.excerpt}" — ${f.explanation}`).join('')
      return `${t.serverId}/${t.toolName}  ${t.state}: ${t.change ?? 'flagged'}${findings}`
    })
    .join('\n')
}
