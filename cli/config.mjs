// MCP config files as clients export them: `{ "mcpServers": { id: {...} } }` (Claude Desktop,
// Cursor, Cherry Studio, Cline) and VS Code's `{ "servers": { id: {...} } }`, turned into the
// server configs McpHub takes. Every error names the file and the key.
import { readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { basename, dirname, resolve, sep } from 'node:path'

export class ConfigError extends Error {
  constructor(file, key, message) {
    super(key ? `${file}: ${key}: ${message}` : `${file}: ${message}`)
    this.name = 'ConfigError'
    this.code = 'TOOLREG_CONFIG'
    this.file = file
    this.key = key
  }
}

/** `${name}` or `${kind:arg}`, as VS Code and Cursor write variables. */
const VARIABLE = /\$\{([^}:]*)(?::([^}]*))?\}/g

/** A variable this server cannot be started without: the server is skipped, the rest run. */
class Unresolved extends Error {}

const HTTP_TYPES = { http: 'streamableHttp', streamableHttp: 'streamableHttp', 'streamable-http': 'streamableHttp', streamable_http: 'streamableHttp', sse: 'sse' }

const isPlainObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value)

/**
 * Where `${workspaceFolder}` points: the project folder of a `.vscode/` or `.cursor/` config,
 * else the folder the command runs in (VS Code's workspace is the folder it opened).
 */
export function workspaceOf(file, cwd = process.cwd()) {
  const folder = dirname(file)
  return ['.vscode', '.cursor'].includes(basename(folder)) ? dirname(folder) : cwd
}

/**
 * Reads and converts one config file. `env` is where `${env:VAR}` is looked up, `home` is
 * `${userHome}`, `cwd` the workspace of a config that is not in a project folder.
 */
export function loadConfigFile(file, { env = process.env, home = homedir(), cwd = process.cwd() } = {}) {
  const path = resolve(file)
  return parseConfig(readConfigJson(path), path, { env, home, workspace: workspaceOf(path, cwd) })
}

export function readConfigJson(path) {
  let text
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new ConfigError(path, null, `cannot be read (${error.code ?? error.message})`)
  }
  try {
    return JSON.parse(text)
  } catch (error) {
    throw new ConfigError(path, null, `is not valid JSON (${error.message})`)
  }
}

/** `{ servers: hub configs with a `display` command line, skipped: [{ key, why }] }`. */
export function parseConfig(json, file, { env = process.env, home = homedir(), workspace = process.cwd() } = {}) {
  if (!isPlainObject(json)) throw new ConfigError(file, null, 'expected a JSON object')
  const rootKey = 'mcpServers' in json ? 'mcpServers' : 'servers' in json ? 'servers' : null
  if (!rootKey) {
    throw new ConfigError(file, null, 'expected a "mcpServers" object (Claude Desktop, Cursor, Cherry Studio) or a "servers" object (VS Code)')
  }
  const table = json[rootKey]
  if (!isPlainObject(table)) throw new ConfigError(file, rootKey, 'expected an object of servers by id')
  const servers = []
  const skipped = []
  for (const [id, raw] of Object.entries(table)) {
    const key = `${rootKey}.${id}`
    if (!isPlainObject(raw)) throw new ConfigError(file, key, 'expected an object with "command" or "url"')
    if (raw.disabled === true || raw.isActive === false) {
      skipped.push({ key, why: raw.disabled === true ? 'disabled: true' : 'isActive: false' })
      continue
    }
    try {
      servers.push(serverConfig(id, raw, { file, key, env, home, workspace }))
    } catch (error) {
      if (!(error instanceof Unresolved)) throw error
      skipped.push({ key, why: error.message })
    }
  }
  return { file, rootKey, servers, skipped }
}

function substitute(value, key, { env, home, workspace }) {
  return value.replace(VARIABLE, (whole, name, arg) => {
    if (arg !== undefined) {
      if (name === 'input') throw new Unresolved(`${key} uses ${whole}, which VS Code asks the user for; write the value (or \${env:VAR}) into the config to audit this server`)
      if (name !== 'env') throw new Unresolved(`${key} uses ${whole}, which only the editor can resolve`)
      if (env[arg] === undefined) throw new Unresolved(`${key} uses ${whole}, but ${arg} is not set`)
      return env[arg]
    }
    switch (name) {
      case 'workspaceFolder':
        return workspace
      case 'workspaceFolderBasename':
        return basename(workspace)
      case 'userHome':
        return home
      case 'pathSeparator':
      case '/':
        return sep
      default:
        throw new Unresolved(`${key} uses ${whole}, which toolreg cannot resolve outside the editor`)
    }
  })
}

function stringField(raw, field, ctx, { required = false } = {}) {
  const value = raw[field]
  if (value === undefined) {
    if (required) throw new ConfigError(ctx.file, `${ctx.key}.${field}`, 'is required')
    return undefined
  }
  if (typeof value !== 'string' || value.trim() === '') throw new ConfigError(ctx.file, `${ctx.key}.${field}`, `expected a non-empty string, got ${JSON.stringify(value)}`)
  return substitute(value, `${ctx.key}.${field}`, ctx)
}

function stringMap(raw, field, ctx) {
  const value = raw[field]
  if (value === undefined) return undefined
  if (!isPlainObject(value)) throw new ConfigError(ctx.file, `${ctx.key}.${field}`, 'expected an object of strings')
  const out = {}
  for (const [name, v] of Object.entries(value)) {
    const key = `${ctx.key}.${field}.${name}`
    if (typeof v !== 'string') throw new ConfigError(ctx.file, key, `expected a string, got ${JSON.stringify(v)}`)
    out[name] = substitute(v, key, ctx)
  }
  return out
}

function serverConfig(id, raw, ctx) {
  const name = typeof raw.name === 'string' && raw.name.trim() ? raw.name : id
  const hasCommand = raw.command !== undefined
  const hasUrl = raw.url !== undefined || raw.baseUrl !== undefined
  if (hasCommand === hasUrl) {
    throw new ConfigError(ctx.file, ctx.key, hasCommand ? 'has both "command" and "url"; pick one' : 'needs "command" (a local server) or "url" (a remote one)')
  }
  if (hasCommand) {
    if (raw.type !== undefined && raw.type !== 'stdio') throw new ConfigError(ctx.file, `${ctx.key}.type`, `${JSON.stringify(raw.type)} does not go with "command"; use "stdio" or leave it out`)
    const command = stringField(raw, 'command', ctx, { required: true })
    const args = raw.args ?? []
    if (!Array.isArray(args) || args.some((a) => typeof a !== 'string')) throw new ConfigError(ctx.file, `${ctx.key}.args`, 'expected an array of strings')
    const cwd = stringField(raw, 'cwd', ctx)
    const config = {
      id,
      name,
      type: 'stdio',
      command,
      args: args.map((a, i) => substitute(a, `${ctx.key}.args[${i}]`, ctx)),
      env: stringMap(raw, 'env', ctx) ?? {},
      ...(cwd && { cwd: resolve(dirname(ctx.file), cwd) }),
    }
    return { config, key: ctx.key, display: [command, ...config.args].map(shellQuote).join(' ') }
  }
  const urlField = raw.url !== undefined ? 'url' : 'baseUrl'
  const url = stringField(raw, urlField, ctx, { required: true })
  const type = raw.type === undefined ? 'streamableHttp' : HTTP_TYPES[raw.type]
  if (!type) throw new ConfigError(ctx.file, `${ctx.key}.type`, `${JSON.stringify(raw.type)} is not one of ${Object.keys(HTTP_TYPES).join(', ')}`)
  const config = { id, name, type, url, headers: stringMap(raw, 'headers', ctx) ?? {} }
  // Claude Code's `oauth`: a pre-registered client, and the loopback port it was registered with.
  const oauth = isPlainObject(raw.oauth) ? raw.oauth : {}
  const clientId = stringField(oauth, 'clientId', { ...ctx, key: `${ctx.key}.oauth` })
  if (clientId) config.oauth = { clientId, ...(typeof oauth.clientSecret === 'string' && { clientSecret: oauth.clientSecret }) }
  const callbackPort = Number.isInteger(oauth.callbackPort) ? oauth.callbackPort : undefined
  return { config, key: ctx.key, display: `${type} ${url}`, callbackPort }
}

export function shellQuote(word) {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`
}
