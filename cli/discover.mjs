// Which MCP config files the CLI reads when no --config is given: the project's (the nearest
// folder, from the current one up to the home folder, that has any), else the user's own
// client configs at their standard paths. Several files are read together; a file that cannot
// be read is reported as skipped and the others are still read.
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { ConfigError, parseConfig, readConfigJson, workspaceOf } from './config.mjs'
import { mergeToolregSettings } from './profiles.mjs'

/** Project config files, in the order their servers are taken. */
export const PROJECT_FILES = ['.cursor/mcp.json', '.vscode/mcp.json', '.mcp.json']

/** The client that reads a config file, by where it is; null for a path no client uses. */
export function clientOf(file) {
  const path = file.replace(/\\/g, '/')
  const clients = [
    [/\/\.cursor\/mcp\.json$/, 'Cursor'],
    [/\/\.vscode\/mcp\.json$|\/Code\/User\/mcp\.json$/, 'VS Code'],
    [/\/\.mcp\.json$|\/\.claude\.json$/, 'Claude Code'],
    [/\/claude_desktop_config\.json$/, 'Claude Desktop'],
    [/\/windsurf\/mcp_config\.json$/, 'Windsurf'],
  ]
  return clients.find(([pattern]) => pattern.test(path))?.[1] ?? null
}

/** The user's client configs, by client. */
export function userConfigFiles({ home = homedir(), platform = process.platform, env = process.env } = {}) {
  // Where Claude Desktop and VS Code keep their per-user files on each system.
  const appData = {
    darwin: join(home, 'Library', 'Application Support'),
    win32: env.APPDATA ?? join(home, 'AppData', 'Roaming'),
  }[platform] ?? env.XDG_CONFIG_HOME ?? join(home, '.config')
  return [
    { client: 'Claude Desktop', file: join(appData, 'Claude', 'claude_desktop_config.json') },
    { client: 'Cursor', file: join(home, '.cursor', 'mcp.json') },
    { client: 'Claude Code', file: join(home, '.claude.json') },
    { client: 'VS Code', file: join(appData, 'Code', 'User', 'mcp.json') },
    { client: 'Windsurf', file: join(home, '.codeium', 'windsurf', 'mcp_config.json') },
  ]
}

/** The project files of the nearest folder (from `cwd` up, the home folder excluded) that has any. */
export function projectConfigFiles({ cwd = process.cwd(), home = homedir() } = {}) {
  for (let dir = resolve(cwd); dir !== resolve(home); dir = dirname(dir)) {
    const found = PROJECT_FILES.map((f) => join(dir, f)).filter((f) => existsSync(f))
    if (found.length) return found
    if (dirname(dir) === dir) break
  }
  return []
}

/**
 * Claude Code keeps its servers in `~/.claude.json`: user-wide `mcpServers` and per project
 * `projects[folder].mcpServers`, among many other settings.
 */
function claudeCodeServers(json, cwd) {
  return { mcpServers: { ...json.mcpServers, ...json.projects?.[resolve(cwd)]?.mcpServers }, toolreg: json.toolreg }
}

/** A client's settings file without servers (Claude Desktop keeps its preferences there too) is no config to audit. */
const hasServers = (json) => json !== null && typeof json === 'object' && ('mcpServers' in json || 'servers' in json)

/**
 * `{ files, servers, skipped, settings, scope: 'project' | 'user' | null, looked }` for the
 * discovered configs (see mergeConfigs). A file that cannot be read or parsed is one `skipped`
 * entry with its reason (and still in `files`); the other files are read.
 */
export function discoverConfigs({ cwd = process.cwd(), home = homedir(), env = process.env, platform = process.platform } = {}) {
  const project = projectConfigFiles({ cwd, home })
  const candidates = project.length
    ? project.map((file) => ({ file, client: clientOf(file), workspace: workspaceOf(file, cwd) }))
    : userConfigFiles({ home, platform, env }).filter((u) => existsSync(u.file)).map((u) => ({ ...u, workspace: cwd }))
  const parsed = []
  const unreadable = []
  const files = []
  for (const { file, client, workspace } of candidates) {
    try {
      const json = readConfigJson(file)
      const table = client === 'Claude Code' && !project.length ? claudeCodeServers(json, cwd) : json
      if (!project.length && !hasServers(table)) continue
      const config = parseConfig(table, file, { env, home, workspace })
      if (!project.length && !config.servers.length && !config.skipped.length) continue
      parsed.push(config)
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error
      unreadable.push({ id: null, key: null, file, why: error.detail })
    }
    files.push(file)
  }
  const merged = mergeConfigs(parsed)
  const scope = project.length ? 'project' : files.length ? 'user' : null
  return { ...merged, files, skipped: [...unreadable, ...merged.skipped], scope, looked: lookedIn({ cwd, home, env, platform }) }
}

/**
 * What makes two entries one server whatever their ids: the same URL, or the same command line,
 * environment and folder.
 */
export function serverIdentity(config) {
  if (config.type !== 'stdio') return `url ${config.url}`
  const env = Object.entries(config.env ?? {}).sort(([a], [b]) => (a < b ? -1 : 1))
  return `command ${JSON.stringify([config.command, config.args ?? [], env, config.cwd ?? null])}`
}

/**
 * One server list from parsed config files. An id defined the same way in several files is one
 * server listed by all of them (`files`); an id a later file gives a different server is skipped
 * there. A server with another id but the identity of an earlier one gets `sameAs` (that id): it
 * runs under both ids, but a combined total counts it once.
 */
export function mergeConfigs(parsed) {
  const servers = []
  const skipped = []
  const byId = new Map()
  const byIdentity = new Map()
  for (const config of parsed) {
    skipped.push(...config.skipped)
    for (const server of config.servers) {
      const identity = serverIdentity(server.config)
      const first = byId.get(server.config.id)
      if (first && serverIdentity(first.config) === identity) {
        first.files.push(config.file)
      } else if (first) {
        skipped.push({ id: server.config.id, key: server.key, file: config.file, why: `the id ${JSON.stringify(server.config.id)} is already taken by a different server in ${first.file}; rename one to audit both` })
      } else {
        const entry = { ...server, file: config.file, files: [config.file], sameAs: byIdentity.get(identity) ?? null }
        byId.set(server.config.id, entry)
        if (!byIdentity.has(identity)) byIdentity.set(identity, server.config.id)
        servers.push(entry)
      }
    }
  }
  return {
    files: parsed.map((c) => c.file),
    servers,
    skipped,
    settings: mergeToolregSettings(parsed.map((c) => c.settings)),
  }
}

function lookedIn(opts) {
  return [`${PROJECT_FILES.join(', ')} in ${resolve(opts.cwd)} and its parents`, ...userConfigFiles(opts).map((u) => u.file)]
}
