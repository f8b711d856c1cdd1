// MCP config files as clients export them: `{ "mcpServers": { id: {...} } }` (Claude Desktop,
// Cursor, Claude Code, Windsurf, Cherry Studio, Cline) and VS Code's `{ "servers": { id: {...} } }`,
// with comments and trailing commas, turned into the server configs McpHub takes. An entry
// toolreg cannot run skips that server with the reason; only a file it cannot read at all is an
// error. Every error names the file and the key.
import { readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { basename, dirname, resolve, sep } from 'node:path'
import { parseToolregSettings } from './profiles.mjs'
import { parseJsonc } from './jsonc.mjs'

export class ConfigError extends Error {
  constructor(file, key, message) {
    super(key ? `${file}: ${key}: ${message}` : `${file}: ${message}`)
    this.name = 'ConfigError'
    this.code = 'TOOLREG_CONFIG'
    this.file = file
    this.key = key
    /** The message without the file: what a skipped server's reason says. */
    this.detail = key ? `${key}: ${message}` : message
  }
}

/** `${name}`, `${kind:arg}` (VS Code, Cursor) and `${VAR:-default}` (Claude Code). */
const VARIABLE = /\$\{([^}]*)\}/g
const WITH_DEFAULT = /^([A-Za-z_][A-Za-z0-9_]*):-(.*)$/s
/** VS Code's predefined variables that name the editor's state (the open file, the selection). */
const EDITOR_ONLY = new Set(['file', 'fileWorkspaceFolder', 'relativeFile', 'relativeFileDirname', 'fileBasename', 'fileBasenameNoExtension', 'fileExtname', 'fileDirname', 'fileDirnameBasename', 'cwd', 'lineNumber', 'columnNumber', 'selectedText', 'execPath', 'defaultBuildTask'])

/** A server toolreg cannot start as written: it is skipped with this reason, the rest run. */
class Unrunnable extends Error {}

const HTTP_TYPES = { http: 'streamableHttp', streamableHttp: 'streamableHttp', 'streamable-http': 'streamableHttp', streamable_http: 'streamableHttp', sse: 'sse' }
/** Where clients put a remote server's address: `url`, Cherry Studio's `baseUrl`, Windsurf's `serverUrl`. */
const URL_FIELDS = ['url', 'baseUrl', 'serverUrl']

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
 * Reads and converts one config file. `env` is where `${env:VAR}` and `${VAR}` are looked up,
 * `home` is `${userHome}`, `cwd` the workspace of a config that is not in a project folder.
 */
export function loadConfigFile(file, { env = process.env, home = homedir(), cwd = process.cwd() } = {}) {
  const path = resolve(file)
  return parseConfig(readConfigJson(path), path, { env, home, workspace: workspaceOf(path, cwd) })
}

/** The file's JSON, comments and trailing commas allowed (VS Code accepts them in every config). */
export function readConfigJson(path) {
  let text
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw new ConfigError(path, null, `cannot be read (${error.code ?? error.message})`)
  }
  try {
    return parseJsonc(text)
  } catch (error) {
    throw new ConfigError(path, null, `is not valid JSON at ${error.message}`)
  }
}

/**
 * `{ file, rootKey, servers: hub configs with a `display` command line, skipped: [{ id, key, file,
 * why }], settings }`. A server entry that cannot run is skipped, never the whole file.
 */
export function parseConfig(json, file, { env = process.env, home = homedir(), workspace = process.cwd() } = {}) {
  if (!isPlainObject(json)) throw new ConfigError(file, null, 'expected a JSON object')
  const rootKey = 'mcpServers' in json ? 'mcpServers' : 'servers' in json ? 'servers' : null
  if (!rootKey) {
    throw new ConfigError(file, null, 'expected a "mcpServers" object (Claude Desktop, Cursor, Claude Code, Windsurf) or a "servers" object (VS Code)')
  }
  const table = json[rootKey]
  if (!isPlainObject(table)) throw new ConfigError(file, rootKey, 'expected an object of servers by id')
  const servers = []
  const skipped = []
  for (const [id, raw] of Object.entries(table)) {
    const key = `${rootKey}.${id}`
    const skip = (why) => skipped.push({ id, key, file, why })
    if (!isPlainObject(raw)) skip(`${key}: expected an object with "command" or "url", got ${JSON.stringify(raw)}`)
    else if (raw.disabled === true) skip('"disabled": true in the config (the client does not start it either)')
    else if (raw.isActive === false) skip('"isActive": false in the config (the client does not start it either)')
    else {
      try {
        servers.push(serverConfig(id, raw, { file, key, env, home, workspace }))
      } catch (error) {
        if (error instanceof Unrunnable) skip(error.message)
        else if (error instanceof ConfigError) skip(error.detail)
        else throw error
      }
    }
  }
  return { file, rootKey, servers, skipped, settings: parseToolregSettings(json.toolreg, file) }
}

function substitute(value, key, { env, home, workspace }) {
  const fromEnv = (whole, name) => {
    if (env[name] === undefined) {
      throw new Unrunnable(`${key} uses ${whole}, but ${name} is not set: set it in the environment toolreg runs in, or give a default as \${${name}:-value}`)
    }
    return env[name]
  }
  return value.replace(VARIABLE, (whole, inner) => {
    // Claude Code's `${VAR:-default}`: the default when VAR is not set.
    const withDefault = WITH_DEFAULT.exec(inner)
    if (withDefault) return env[withDefault[1]] ?? withDefault[2]
    const colon = inner.indexOf(':')
    if (colon >= 0) {
      const [kind, arg] = [inner.slice(0, colon), inner.slice(colon + 1)]
      if (kind === 'input') throw new Unrunnable(`${key} uses ${whole}, which VS Code asks the user for; write the value (or \${env:VAR}) into the config to audit this server`)
      if (kind !== 'env') throw new Unrunnable(`${key} uses ${whole}, which only the editor can resolve; write the value into the config to audit this server`)
      return fromEnv(whole, arg)
    }
    switch (inner) {
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
        if (EDITOR_ONLY.has(inner)) throw new Unrunnable(`${key} uses ${whole}, which only the editor can resolve; write the value into the config to audit this server`)
        // Any other name is an environment variable, as Claude Code reads `${VAR}`.
        return fromEnv(whole, inner)
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

/** The transport a remote entry asks for: its `type` (Cline's `transportType`), else by the URL. */
function remoteType(raw, url, ctx) {
  const given = raw.type ?? raw.transportType
  const field = raw.type === undefined ? 'transportType' : 'type'
  if (given === undefined) {
    // Legacy HTTP+SSE servers conventionally serve at /sse; clients that guess do the same.
    return URL.canParse(url) && /\/sse\/?$/.test(new URL(url).pathname) ? { type: 'sse', guessed: 'the URL ends in /sse and no "type" is given' } : { type: 'streamableHttp' }
  }
  if (HTTP_TYPES[given]) return { type: HTTP_TYPES[given] }
  const which = ['ws', 'websocket'].includes(given) ? '(WebSocket) is not an MCP transport toolreg speaks' : 'is not a transport toolreg knows'
  throw new ConfigError(ctx.file, `${ctx.key}.${field}`, `${JSON.stringify(given)} ${which}; use one of ${Object.keys(HTTP_TYPES).join(', ')}`)
}

function serverConfig(id, raw, ctx) {
  const name = typeof raw.name === 'string' && raw.name.trim() ? raw.name : id
  const hasCommand = raw.command !== undefined
  const urlField = URL_FIELDS.find((f) => raw[f] !== undefined)
  if (hasCommand === Boolean(urlField)) {
    throw new ConfigError(ctx.file, ctx.key, hasCommand
      ? `has both "command" and "${urlField}"; pick one`
      : `needs "command" (a local server) or "url" (a remote one); it has ${Object.keys(raw).map((k) => JSON.stringify(k)).join(', ') || 'no fields'}`)
  }
  if (hasCommand) {
    if (raw.type !== undefined && raw.type !== 'stdio') throw new ConfigError(ctx.file, `${ctx.key}.type`, `${JSON.stringify(raw.type)} does not go with "command"; use "stdio" or leave it out`)
    const command = stringField(raw, 'command', ctx, { required: true })
    const args = raw.args ?? []
    if (!Array.isArray(args) || args.some((a) => typeof a !== 'string')) throw new ConfigError(ctx.file, `${ctx.key}.args`, 'expected an array of strings')
    const cwd = stringField(raw, 'cwd', ctx)
    const protocolVersion = stringField(raw, 'protocolVersion', ctx)
    const config = {
      id,
      name,
      type: 'stdio',
      command,
      args: args.map((a, i) => substitute(a, `${ctx.key}.args[${i}]`, ctx)),
      env: stringMap(raw, 'env', ctx) ?? {},
      ...(cwd && { cwd: resolve(dirname(ctx.file), cwd) }),
      // Pins the MCP revision (the hub checks the value); without it the hub chooses.
      ...(protocolVersion && { protocolVersion }),
    }
    return { config, key: ctx.key, display: [command, ...config.args].map(shellQuote).join(' ') }
  }
  const url = stringField(raw, urlField, ctx, { required: true })
  const { type, guessed } = remoteType(raw, url, ctx)
  if (!/^https?:$/.test(URL.canParse(url) ? new URL(url).protocol : '')) {
    throw new ConfigError(ctx.file, `${ctx.key}.${urlField}`, `${JSON.stringify(url)} is not an http:// or https:// URL`)
  }
  const config = { id, name, type, url, headers: stringMap(raw, 'headers', ctx) ?? {} }
  const protocolVersion = stringField(raw, 'protocolVersion', ctx)
  // The legacy SSE transport has one revision only (2024-11-05): nothing to pin.
  if (protocolVersion && type !== 'sse') config.protocolVersion = protocolVersion
  // Claude Code's `oauth`: a pre-registered client, and the loopback port it was registered with.
  const oauth = isPlainObject(raw.oauth) ? raw.oauth : {}
  const clientId = stringField(oauth, 'clientId', { ...ctx, key: `${ctx.key}.oauth` })
  if (clientId) config.oauth = { clientId, ...(typeof oauth.clientSecret === 'string' && { clientSecret: oauth.clientSecret }) }
  const callbackPort = Number.isInteger(oauth.callbackPort) ? oauth.callbackPort : undefined
  return { config, key: ctx.key, display: `${type} ${url}`, callbackPort, ...(guessed && { transportGuess: guessed }) }
}

export function shellQuote(word) {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`
}
