// toolreg's own settings in an MCP config file, under a top-level "toolreg" key (clients ignore
// keys they do not know, so the file stays the one the client reads):
//
//   "toolreg": {
//     "needsApproval": ["github/delete_*", "filesystem/write_file"],
//     "profiles": {
//       "cursor": { "servers": ["github", "filesystem"], "tools": ["github/*", "!github/delete_*"] }
//     }
//   }
//
// Tool patterns are `server/tool` with `*` for any run of characters; `!` in front of a
// profile's pattern leaves the tools it matches out. `needsApproval` marks tools that must stay
// inline for the client's own confirmation, like those a server marks destructive.
import { ConfigError } from './config.mjs'

const isPlainObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value)

/** `server/tool` with `*` wildcards, as a test of (serverId, toolName). */
function toolPattern(pattern, file, key) {
  const slash = pattern.indexOf('/')
  if (slash <= 0 || slash === pattern.length - 1) {
    throw new ConfigError(file, key, `expected "server/tool" (with * for any characters), got ${JSON.stringify(pattern)}`)
  }
  const glob = (text) => new RegExp(`^${text.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`)
  const server = glob(pattern.slice(0, slash))
  const tool = glob(pattern.slice(slash + 1))
  return {
    server: pattern.slice(0, slash),
    matchesServer: (serverId) => server.test(serverId),
    matches: (serverId, toolName) => server.test(serverId) && tool.test(toolName),
  }
}

function stringList(value, file, key) {
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.trim() === '')) {
    throw new ConfigError(file, key, `expected an array of non-empty strings, got ${JSON.stringify(value)}`)
  }
  return value
}

/** The "toolreg" section of a config file: `{ needsApproval: [pattern], profiles: { name: profile } }`. */
export function parseToolregSettings(raw, file) {
  const settings = { needsApproval: [], profiles: {} }
  if (raw === undefined) return settings
  if (!isPlainObject(raw)) throw new ConfigError(file, 'toolreg', 'expected an object with "needsApproval" and/or "profiles"')
  for (const key of Object.keys(raw)) {
    if (!['needsApproval', 'profiles'].includes(key)) throw new ConfigError(file, `toolreg.${key}`, 'is not a toolreg setting (known: needsApproval, profiles)')
  }
  if (raw.needsApproval !== undefined) {
    settings.needsApproval = stringList(raw.needsApproval, file, 'toolreg.needsApproval').map((p, i) => toolPattern(p, file, `toolreg.needsApproval[${i}]`))
  }
  if (raw.profiles !== undefined) {
    if (!isPlainObject(raw.profiles)) throw new ConfigError(file, 'toolreg.profiles', 'expected an object of profiles by name')
    for (const [name, profile] of Object.entries(raw.profiles)) {
      const key = `toolreg.profiles.${name}`
      if (!isPlainObject(profile)) throw new ConfigError(file, key, 'expected an object with "servers" and/or "tools"')
      for (const field of Object.keys(profile)) {
        if (!['servers', 'tools'].includes(field)) throw new ConfigError(file, `${key}.${field}`, 'is not a profile setting (known: servers, tools)')
      }
      const tools = profile.tools === undefined ? [] : stringList(profile.tools, file, `${key}.tools`)
      const patterns = tools.map((p, i) => {
        const excluding = p.startsWith('!')
        return { ...toolPattern(excluding ? p.slice(1) : p, file, `${key}.tools[${i}]`), excluding }
      })
      settings.profiles[name] = {
        file,
        key,
        servers: profile.servers === undefined ? undefined : stringList(profile.servers, file, `${key}.servers`),
        include: patterns.filter((p) => !p.excluding),
        exclude: patterns.filter((p) => p.excluding),
      }
    }
  }
  return settings
}

/** Several files' settings as one: approval patterns add up, a profile name is taken from the first file. */
export function mergeToolregSettings(all) {
  const merged = { needsApproval: [], profiles: {} }
  for (const settings of all) {
    merged.needsApproval.push(...settings.needsApproval)
    for (const [name, profile] of Object.entries(settings.profiles)) merged.profiles[name] ??= profile
  }
  return merged
}

/** Whether the settings ask for approval of this tool. */
export function needsApprovalBySettings(settings, serverId, toolName) {
  return settings.needsApproval.some((p) => p.matches(serverId, toolName))
}

/**
 * The servers of profile `name` and which of their tools it keeps: `{ servers, keeps(serverId,
 * toolName) }`. Without a name, every server and tool. A profile naming a server the config
 * does not have is an error, as is an unknown name (both name what there is).
 */
export function applyProfile(servers, settings, name) {
  if (name === undefined) return { servers, keeps: () => true }
  const profile = settings.profiles[name]
  if (!profile) {
    const known = Object.keys(settings.profiles)
    throw new ConfigError('--profile', null, `no profile named ${JSON.stringify(name)}; ${known.length ? `the config has ${known.map((k) => JSON.stringify(k)).join(', ')}` : 'the config has no "toolreg": { "profiles": ... } section'}`)
  }
  const ids = new Set(servers.map((s) => s.config.id))
  const named = [...(profile.servers ?? []), ...profile.include.map((p) => p.server).filter((s) => !s.includes('*'))]
  for (const id of named) {
    if (!ids.has(id)) throw new ConfigError(profile.file, profile.key, `names the server ${JSON.stringify(id)}, which the config does not have (it has ${[...ids].join(', ') || 'none'})`)
  }
  const keeps = (serverId, toolName) =>
    (profile.include.length === 0 || profile.include.some((p) => p.matches(serverId, toolName))) && !profile.exclude.some((p) => p.matches(serverId, toolName))
  // A server none of whose tools could be kept does not need to start or be listed.
  const chosen = servers.filter(
    ({ config: { id } }) => (profile.servers === undefined || profile.servers.includes(id)) && (profile.include.length === 0 || profile.include.some((p) => p.matchesServer(id))),
  )
  return { servers: chosen, keeps }
}
