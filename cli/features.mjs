// The servers' prompts and resources (MCP's server features besides tools) for `toolreg
// prompts`, `prompt`, `resources` and `read`. A server whose tool list is cached is not running:
// the hub starts it on its first request.
import { writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { createRequire } from 'node:module'
import { CliError, EXIT } from './exitCodes.mjs'
import { paramsFromWords } from './params.mjs'
import { callTimedOut, splitName } from './tools.mjs'
import { clip, plural } from './format.mjs'
import { seconds } from './failures.mjs'

const require = createRequire(import.meta.url)
const { closest, didYouMean } = require('../js/meta/names.js')

/** The servers a listing asks: the one named, else every MCP server that did not fail. */
export const askedServers = (session, id) => (id === undefined ? session.servers.filter((s) => s.kind === 'mcp' && s.status !== 'failed').map((s) => s.id) : [id])

/**
 * The server's answer to a request, or a CliError in words: a timeout says which option gives
 * more time; a refusal is the server's own words (without the hub's and JSON-RPC's prefixes),
 * then what `afterRefusal()` adds.
 */
async function ask(request, { what, timeoutMs, option, afterRefusal = async () => '' }) {
  try {
    return await request()
  } catch (error) {
    if (error.code === 'TOOLREG_MCP_TIMEOUT') {
      if (option === '--call-timeout') throw callTimedOut(what, timeoutMs)
      throw new CliError(`${what} did not answer within ${seconds(timeoutMs)}; give it longer with ${option} ${timeoutMs * 4}.`, EXIT.TOOL_FAILED)
    }
    const said = error.message.replace(/^MCP server "[^"]*" rejected \S+( "(?:[^"\\]|\\.)*")?: /, '').replace(/^MCP error -?\d+: /, '').replace(/[^.?!]$/, '$&.')
    throw new CliError(`${what} failed: ${said}${await afterRefusal()}`, EXIT.TOOL_FAILED)
  }
}

/**
 * `ask(serverId)` on each server, concurrently: `{ results: [{ server, value }], failed: [{ server,
 * why }] }`. With one server named, its failure is thrown instead.
 */
async function askEach(servers, request, { named }) {
  const settled = await Promise.allSettled(servers.map(async (server) => ({ server, value: await request(server) })))
  const failed = settled.flatMap((s, i) => (s.status === 'rejected' ? [{ server: servers[i], why: s.reason.message }] : []))
  if (named && failed.length) throw settled[0].reason
  return { results: settled.filter((s) => s.status === 'fulfilled').map((s) => s.value), failed }
}

/** Every prompt of `servers`: `{ prompts: [{ id: 'server/name', server, name, title?, description?, arguments }], failed }`. */
export async function listPrompts(session, servers, { timeoutMs, named }) {
  const { results, failed } = await askEach(servers, (server) => ask(() => session.hub.listPrompts(server, { timeoutMs }), { what: `Listing the prompts of ${server}`, timeoutMs, option: '--timeout' }), { named })
  const prompts = results.flatMap(({ server, value }) => value.map((p) => ({ id: `${server}/${p.name}`, server, ...p, arguments: p.arguments ?? [] })))
  return { prompts, failed }
}

/** Every resource and resource template of `servers`: `{ resources, templates, failed }`, each entry with its `server`. */
export async function listResources(session, servers, { timeoutMs, named }) {
  const both = (server) => {
    const opts = { what: `Listing the resources of ${server}`, timeoutMs, option: '--timeout' }
    return Promise.all([ask(() => session.hub.listResources(server, { timeoutMs }), opts), ask(() => session.hub.listResourceTemplates(server, { timeoutMs }), opts)])
  }
  const { results, failed } = await askEach(servers, both, { named })
  const tagged = (index) => results.flatMap(({ server, value }) => value[index].map((r) => ({ server, ...r })))
  return { resources: tagged(0), templates: tagged(1), failed }
}

/**
 * `prompts/get` of `server/name` with `words` (key=value, or one JSON object) as its arguments,
 * checked against the prompt's list entry first so a typo gets "did you mean".
 */
export async function getPrompt(session, name, words, { timeoutMs, callTimeoutMs }) {
  const [server, promptName] = splitName(name)
  const { prompts } = await listPrompts(session, [server], { timeoutMs, named: true })
  const prompt = prompts.find((p) => p.name === promptName)
  if (!prompts.length) throw new CliError(`${server} has no prompts.`, EXIT.TOOL_NOT_FOUND)
  if (!prompt) {
    const near = didYouMean(closest(promptName, prompts, (p) => p.name).map((p) => p.id))
    throw new CliError(`${server} has no prompt ${JSON.stringify(promptName)}.${near} Its prompts: ${prompts.map((p) => p.name).join(', ')}.`, EXIT.TOOL_NOT_FOUND)
  }
  const args = promptArguments(prompt, words)
  const result = await ask(() => session.hub.getPrompt(server, promptName, args, { timeoutMs: callTimeoutMs }), { what: `Getting the prompt ${prompt.id}`, timeoutMs: callTimeoutMs, option: '--call-timeout' })
  return { id: prompt.id, ...result }
}

/** A prompt's arguments are text: the words typed as strings, every required one given. */
function promptArguments(prompt, words) {
  const schema = { type: 'object', properties: Object.fromEntries(prompt.arguments.map((a) => [a.name, { type: 'string' }])), additionalProperties: false }
  let args
  try {
    args = JSON.parse(paramsFromWords(words, { schema, label: prompt.id }))
  } catch (error) {
    if (error instanceof CliError) throw error
    throw new CliError(`The arguments of ${prompt.id} are not valid JSON: ${error.message}. Give them as key=value.`, EXIT.INVALID_PARAMS)
  }
  const notText = Object.entries(args).find(([, v]) => typeof v !== 'string')
  if (notText) throw new CliError(`${notText[0]}: a prompt's arguments are text, give it as ${notText[0]}=${JSON.stringify(notText[1])}.`, EXIT.INVALID_PARAMS)
  const missing = prompt.arguments.filter((a) => a.required && !Object.hasOwn(args, a.name))
  if (missing.length) {
    throw new CliError(`${prompt.id} needs ${missing.map((a) => `${a.name}=…${a.description ? ` (${a.description})` : ''}`).join(', ')}.`, EXIT.INVALID_PARAMS)
  }
  return Object.keys(args).length ? args : undefined
}

/** `resources/read` of `uri`; when the server refuses it, the closest URIs it lists are named. */
export function readResource(session, server, uri, { timeoutMs, callTimeoutMs }) {
  const nearest = async () => didYouMean(closest(uri, (await listResources(session, [server], { timeoutMs, named: false })).resources.map((r) => r.uri)).slice(0, 1))
  return ask(() => session.hub.readResource(server, uri, { timeoutMs: callTimeoutMs }), { what: `Reading ${uri} from ${server}`, timeoutMs: callTimeoutMs, option: '--call-timeout', afterRefusal: nearest })
}

/** The size in bytes of a read content: its text's UTF-8 bytes, or its blob's decoded bytes. */
const bytesOf = (content) => (content.text !== undefined ? Buffer.from(content.text, 'utf8') : Buffer.from(content.blob ?? '', 'base64'))

/** A blob of this type is text all the same (a server may send any content as a blob). */
const isTextType = (mimeType) => /^text\/|[/+](json|xml)$/.test(mimeType ?? '')

/**
 * What `read` prints: text contents as they are (a blob of a text type decoded); a binary one
 * as its type and size, since a terminal cannot show it (`--out` writes it). With `out`, the one
 * content is written there.
 */
export function readOutput({ contents }, { uri, out }) {
  if (out !== undefined) {
    if (contents.length !== 1) throw new CliError(`${uri} has ${plural(contents.length, 'content')}: --out writes one; --json prints them all.`, EXIT.USAGE)
    const file = resolve(out)
    const bytes = bytesOf(contents[0])
    writeFileSync(file, bytes)
    return `Wrote ${file} (${plural(bytes.length, 'byte')}${contents[0].mimeType ? `, ${contents[0].mimeType}` : ''}).`
  }
  const shown = (c) => {
    if (c.text !== undefined || isTextType(c.mimeType)) return bytesOf(c).toString('utf8')
    return `(${c.uri ?? uri} is binary: ${c.mimeType ?? 'no type given'}, ${plural(bytesOf(c).length, 'byte')}; --out FILE writes it)`
  }
  return contents.map(shown).join('\n')
}

/** A message's content as a terminal shows it: text as it is, anything else named with its type and size. */
function contentText(block) {
  const size = (base64) => plural(Buffer.from(base64 ?? '', 'base64').length, 'byte')
  switch (block?.type) {
    case 'text':
      return block.text
    case 'image':
    case 'audio':
      return `[${block.type}: ${block.mimeType}, ${size(block.data)}; --json has it]`
    case 'resource':
      return block.resource.text ?? `[resource ${block.resource.uri}: ${block.resource.mimeType ?? 'binary'}, ${size(block.resource.blob)}; --json has it]`
    case 'resource_link':
      return `[resource ${block.uri}: toolreg read <server> ${block.uri}]`
    default:
      return JSON.stringify(block)
  }
}

/** `prompt`'s messages as text: each message's role, then its content. */
export function formatPromptMessages({ description, messages }) {
  const lines = description ? [`# ${description}`, ''] : []
  for (const m of messages) lines.push(`${m.role}:`, contentText(m.content), '')
  return lines.join('\n').trimEnd()
}

/** `prompts` as text: one line a prompt, its arguments (`*` required) after the description. */
export function formatPrompts({ prompts }, { servers }) {
  const lines = prompts.map((p) => {
    const args = p.arguments.length ? `  (${p.arguments.map((a) => `${a.name}${a.required ? '*' : ''}`).join(', ')})` : ''
    return `${p.id}${args}  ${clip(p.description ?? p.title ?? '', 100)}`
  })
  const none = servers.filter((s) => !prompts.some((p) => p.server === s))
  if (none.length) lines.push(`${servers.length === 1 ? `${none[0]} has no prompts.` : `No prompts: ${none.join(', ')}.`}`)
  return lines.join('\n')
}

/** `resources` as text: the resources, then the templates to fill in; who has none. */
export function formatResources({ resources, templates }, { servers }) {
  const line = (server, uri, r) => `${server}  ${uri}${r.mimeType ? `  ${r.mimeType}` : ''}  ${clip(r.title ?? r.name ?? '', 40)}${r.description && r.description !== r.name ? `: ${clip(r.description, 80)}` : ''}`
  const lines = resources.map((r) => line(r.server, r.uri, r))
  if (templates.length) lines.push(`${lines.length ? '\n' : ''}Templates (read one with its {variables} filled in):`, ...templates.map((t) => line(t.server, t.uriTemplate, t)))
  const none = servers.filter((s) => !resources.some((r) => r.server === s) && !templates.some((t) => t.server === s))
  if (none.length) lines.push(`${servers.length === 1 ? `${none[0]} has no resources.` : `No resources: ${none.join(', ')}.`}`)
  return lines.join('\n')
}
