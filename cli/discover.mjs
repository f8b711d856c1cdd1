// Which MCP config files the CLI reads when no --config is given: the project's (the nearest
// folder, from the current one up to the home folder, that has any), else the user's own
// client configs at their standard paths. Several files are read together.
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { parseConfig, readConfigJson, workspaceOf } from './config.mjs'
import { mergeToolregSettings } from './profiles.mjs'

/** Project config files, in the order their servers are taken. */
export const PROJECT_FILES = ['.cursor/mcp.json', '.vscode/mcp.json', '.mcp.json']

/** The user's client configs, by client. */
export function userConfigFiles({ home = homedir(), platform = process.platform, env = process.env } = {}) {
  const claudeDesktop = {
    darwin: join(home, 'Library', 'Application Support', 'Claude', 'claude_desktop_config.json'),
    win32: join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'Claude', 'claude_desktop_config.json'),
  }[platform] ?? join(env.XDG_CONFIG_HOME ?? join(home, '.config'), 'Claude', 'claude_desktop_config.json')
  return [
    { client: 'Claude Desktop', file: claudeDesktop },
    { client: 'Cursor', file: join(home, '.cursor', 'mcp.json') },
    { client: 'Claude Code', file: join(home, '.claude.json') },
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
  return { ...json.mcpServers, ...json.projects?.[resolve(cwd)]?.mcpServers }
}

/**
 * `{ files, servers, skipped, scope: 'project' | 'user' | null, looked }` for the discovered
 * configs; a server id defined in two files is taken from the first.
 */
export function discoverConfigs({ cwd = process.cwd(), home = homedir(), env = process.env, platform = process.platform } = {}) {
  const project = projectConfigFiles({ cwd, home })
  const user = project.length ? [] : userConfigFiles({ home, platform, env }).filter((u) => existsSync(u.file))
  const parsed = []
  for (const file of project) parsed.push(parseConfig(readConfigJson(file), file, { env, home, workspace: workspaceOf(file, cwd) }))
  for (const { client, file } of user) {
    const json = readConfigJson(file)
    // A client's settings file without servers (Claude Desktop keeps its preferences there too)
    // is not a config to audit.
    const table = { mcpServers: client === 'Claude Code' ? claudeCodeServers(json, cwd) : (json.mcpServers ?? {}), toolreg: json.toolreg }
    const config = parseConfig(table, file, { env, home, workspace: cwd })
    if (config.servers.length || config.skipped.length) parsed.push(config)
  }
  return merge(parsed, { scope: project.length ? 'project' : parsed.length ? 'user' : null, looked: lookedIn({ cwd, home, env, platform }) })
}

/** One server list from several files; the first file that defines an id wins. */
function merge(parsed, extra = {}) {
  const servers = []
  const skipped = []
  const owner = new Map()
  for (const config of parsed) {
    skipped.push(...config.skipped.map((s) => ({ ...s, file: config.file })))
    for (const server of config.servers) {
      const first = owner.get(server.config.id)
      if (first) {
        skipped.push({ key: server.key, file: config.file, why: `the id ${JSON.stringify(server.config.id)} is already taken by ${first}` })
        continue
      }
      owner.set(server.config.id, config.file)
      servers.push({ ...server, file: config.file })
    }
  }
  return { files: parsed.map((c) => c.file), servers, skipped, settings: mergeToolregSettings(parsed.map((c) => c.settings)), ...extra }
}

function lookedIn(opts) {
  return [`${PROJECT_FILES.join(', ')} in ${resolve(opts.cwd)} and its parents`, ...userConfigFiles(opts).map((u) => u.file)]
}
