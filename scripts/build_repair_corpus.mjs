#!/usr/bin/env node
// Builds fixtures/repair_corpus.json: malformed tool calls against real MCP tool schemas, each
// with the input a correct repair produces, or null where no repair is allowed.
//
//   node scripts/build_repair_corpus.mjs [path/to/shared/data]
//
// The broken calls are written from the failure shapes models show (fences, prose, JS/Python
// literals, truncation, double encoding, envelopes, wrong scalar types, misspelt or re-prefixed
// tool names). The expected value of each case comes from how the case was built, never from
// running the repairer. Output is deterministic.

import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const data = process.argv[2] ?? join(root, '..', 'shared', 'data')

const readJson = (path) => JSON.parse(readFileSync(join(data, path), 'utf8'))
const reference = (server) => readJson(`reference-mcp-servers/${server}.tools_list.json`).tools
const livemcp = readJson('livemcpbench/tools.json')
const liveServer = (key) => {
  for (const server of livemcp) if (server.tools[key]) return server.tools[key].tools
  throw new Error(`livemcpbench has no server ${key}`)
}

// Tools that write, delete or run things: gated with needsApproval, as a host would.
const GATED = new Set([
  'write_file', 'edit_file', 'move_file', 'create_directory', 'delete_entities', 'delete_observations',
  'delete_relations', 'git_commit', 'git_reset', 'git_checkout', 'create_or_update_file', 'push_files',
  'merge_pull_request', 'create_repository', 'fork_repository', 'set_config_value', 'edit_block',
  'start_process', 'interact_with_process', 'force_terminate', 'kill_process',
])

const entry = (name, tool) => ({ name, needsApproval: GATED.has(tool.name), inputSchema: tool.inputSchema })
const toolsets = {
  // Built-in style: bare names from three servers.
  local: [...reference('filesystem'), ...reference('memory'), ...reference('git')].map((t) => entry(t.name, t)),
  // One MCP server behind wire ids.
  github: reference('github').map((t) => entry(`mcp__github__${t.name}`, t)),
  // Six MCP servers, several exposing the same tool name.
  workspace: ['desktop-commander', 'yfmcp', 'investor', 'hackernews', 'arxiv-mcp-server', 'mcp-simple-arxiv'].flatMap(
    (key) => liveServer(key).map((t) => entry(`mcp__${key.replaceAll('-', '_')}__${t.name}`, t)),
  ),
}

// ---------- plausible valid inputs ----------

const STRINGS = {
  path: '/home/ada/notes/todo.md', source: '/home/ada/a.txt', destination: '/home/ada/b.txt',
  repo_path: '/home/ada/project', pattern: '*.md', content: '# Todo\n- buy milk', owner: 'octocat',
  repo: 'hello-world', title: 'Fix login redirect', body: 'Steps:\n1. open /login', branch: 'feature/login',
  query: 'login redirect', q: 'login redirect', message: 'Fix login redirect\n\nCloses #12', symbol: 'AAPL',
  ticker: 'AAPL', sha: 'a1b2c3d', url: 'https://example.com/post', name: 'Ada Lovelace',
  entityType: 'person', from: 'Ada Lovelace', to: 'Charles Babbage', relationType: 'works_with',
  entityName: 'Ada Lovelace', target: 'main', revision: 'HEAD', commit_sha: 'a1b2c3d',
  base: 'main', head: 'feature/login', username: 'octocat', id: '12345', paper_id: '2401.00001',
}

function resolveRef(schema, rootSchema) {
  for (let hops = 0; schema?.$ref && hops < 8; hops++) {
    const path = schema.$ref.replace(/^#\//, '').split('/')
    schema = path.reduce((node, key) => node?.[key], rootSchema)
  }
  return schema ?? {}
}

function nonNullBranch(schema, rootSchema) {
  const branches = schema.anyOf ?? schema.oneOf
  if (!branches) return schema
  return resolveRef(branches.find((b) => resolveRef(b, rootSchema).type !== 'null') ?? branches[0], rootSchema)
}

function typeOf(schema, rootSchema) {
  const s = nonNullBranch(resolveRef(schema, rootSchema), rootSchema)
  if (Array.isArray(s.type)) return s.type.find((t) => t !== 'null')
  if (s.type) return s.type
  if (s.enum) return typeof s.enum[0]
  if (s.properties) return 'object'
  if (s.items) return 'array'
  return undefined
}

function example(schema, rootSchema, key, depth = 0) {
  const s = nonNullBranch(resolveRef(schema, rootSchema), rootSchema)
  if (s.enum) return s.enum[Math.min(1, s.enum.length - 1)]
  if (s.const !== undefined) return s.const
  switch (typeOf(s, rootSchema)) {
    case 'string':
      return STRINGS[key] ?? `${key ?? 'value'} example`
    case 'integer':
    case 'number': {
      let n = 5
      if (s.minimum != null && n < s.minimum) n = s.minimum
      if (s.maximum != null && n > s.maximum) n = s.maximum
      return n
    }
    case 'boolean':
      return true
    case 'array': {
      const count = Math.max(1, s.minItems ?? 1)
      const itemKey = key?.endsWith('s') ? key.slice(0, -1) : key
      return Array.from({ length: count }, (_, i) => {
        const item = example(s.items ?? {}, rootSchema, itemKey, depth + 1)
        return typeof item === 'string' && count > 1 ? `${item} ${i + 1}` : item
      })
    }
    case 'object': {
      if (depth > 4) return {}
      const out = {}
      const required = new Set(s.required ?? [])
      const optional = Object.keys(s.properties ?? {}).filter((k) => !required.has(k)).slice(0, 2)
      for (const k of [...required, ...optional]) out[k] = example(s.properties[k], rootSchema, k, depth + 1)
      if (!s.properties) out.key = 'value'
      return out
    }
    default:
      return STRINGS[key] ?? 'value'
  }
}

// ---------- serialisers for broken JSON ----------

function write(value, style) {
  const q = style.quote ?? '"'
  const close = style.closeQuote ?? q
  const str = (s) => {
    let body = JSON.stringify(s).slice(1, -1)
    if (style.rawNewlines) body = body.replaceAll('\\n', '\n').replaceAll('\\t', '\t')
    if (q !== '"') body = body.replaceAll('\\"', '"')
    return q + body + close
  }
  const key = (k) => (style.bareKeys && /^[A-Za-z_$][\w$]*$/.test(k) ? k : str(k))
  const trailing = style.trailingComma ? ',' : ''
  if (value === null) return style.python ? 'None' : 'null'
  if (value === true) return style.python ? 'True' : 'true'
  if (value === false) return style.python ? 'False' : 'false'
  if (typeof value === 'number') return String(value)
  if (typeof value === 'string') return str(value)
  if (Array.isArray(value)) return `[${value.map((v) => write(v, style)).join(', ')}${value.length ? trailing : ''}]`
  const members = Object.entries(value).map(([k, v]) => `${key(k)}: ${write(v, style)}`)
  return `{${members.join(', ')}${members.length ? trailing : ''}}`
}

const json = (v) => JSON.stringify(v)
const hasString = (v, test) =>
  typeof v === 'string' ? test(v) : v && typeof v === 'object' && Object.values(v).some((x) => hasString(x, test))
const hasBoolean = (v) => typeof v === 'boolean' || (v && typeof v === 'object' && Object.values(v).some(hasBoolean))

// ---------- tool-name variants ----------

const camel = (name) => name.replace(/[_-]+([a-z0-9])/g, (_, c) => c.toUpperCase())
const bare = (name) => name.split('__').at(-1)

function osa(a, b) {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)])
  for (let j = 0; j <= b.length; j++) d[0][j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1)
    }
  }
  return d[a.length][b.length]
}

/** A one-letter slip inside the last word (swap of two letters), e.g. `list_isseus`. */
function typo(name) {
  const at = name.length - 3
  return name.slice(0, at) + name[at + 1] + name[at] + name.slice(at + 2)
}

// ---------- the cases ----------

const cases = []
const add = (toolset, shape, toolName, input, expected) => {
  cases.push({ id: `${toolset}/${shape}/${cases.length}`, toolset, shape, toolName, input, expected })
}

for (const [setName, tools] of Object.entries(toolsets)) {
  const names = tools.map((t) => t.name)
  tools.forEach((t, index) => {
    const schema = t.inputSchema
    const good = example(schema, schema)
    const ok = (input, toolName = t.name) => ({ toolName, input })
    const props = schema.properties ?? {}
    const required = schema.required ?? []
    const text = json(good)
    const objectIsEmpty = Object.keys(good).length === 0
    // An envelope around arguments of a schema with nothing required and extra properties
    // allowed is itself a valid call: the SDK never asks for a repair.
    const envelopeIsValid = !required.length && schema.additionalProperties !== false

    // JSON-level shapes: rotate through them so every tool gets several and every shape many.
    const jsonShapes = [
      ['code-fence', () => '```json\n' + JSON.stringify(good, null, 2) + '\n```'],
      ['prose-around', () => `I'll call ${bare(t.name)} with these arguments:\n${text}\nThat should do it.`],
      ['trailing-comma', () => !objectIsEmpty && write(good, { trailingComma: true })],
      ['single-quotes', () => !hasString(good, (s) => s.includes("'")) && write(good, { quote: "'" })],
      ['js-object-literal', () => !hasString(good, (s) => s.includes("'")) && write(good, { quote: "'", bareKeys: true, trailingComma: true })],
      ['python-literals', () => hasBoolean(good) && write(good, { python: true })],
      ['comments', () => `// arguments for ${bare(t.name)}\n${text.replace('{', '{ /* generated */')}`],
      ['smart-quotes', () => !hasString(good, (s) => /["“”]/.test(s)) && write(good, { quote: '“', closeQuote: '”' })],
      ['raw-newlines', () => hasString(good, (s) => s.includes('\n')) && write(good, { rawNewlines: true })],
      ['truncated-brackets', () => !objectIsEmpty && text.replace(/[}\]]+$/, '')],
      ['double-encoded', () => JSON.stringify(text)],
      ['arguments-envelope', () => !envelopeIsValid && !props.arguments && json({ arguments: good })],
      ['parameters-envelope', () => !envelopeIsValid && !props.parameters && json({ parameters: good })],
      ['named-envelope', () => !envelopeIsValid && !props.arguments && !props.name && json({ name: t.name, arguments: good })],
    ]
    for (let k = 0; k < 4; k++) {
      const [shape, build] = jsonShapes[(index + k * 3) % jsonShapes.length]
      const input = build()
      // Some shapes leave `{}` as it was: not a broken call.
      if (input && input !== text) add(setName, shape, t.name, input, ok(good))
    }
    for (const [shape, build] of jsonShapes.filter(([shape]) => shape === 'python-literals' || shape === 'raw-newlines')) {
      const input = build()
      if (input) add(setName, shape, t.name, input, ok(good))
    }

    // A string cut off mid-value: the repair keeps what arrived (and that still validates).
    const lastKey = Object.keys(good).at(-1)
    if (typeof good[lastKey] === 'string' && good[lastKey].length > 6 && !/["\\]/.test(good[lastKey])) {
      const half = good[lastKey].slice(0, Math.floor(good[lastKey].length / 2))
      const cut = text.slice(0, text.lastIndexOf(JSON.stringify(good[lastKey])) + JSON.stringify(half).length - 1)
      add(setName, 'truncated-string', t.name, cut, ok({ ...good, [lastKey]: half }))
    }

    // Type coercions, one property at a time, each kind once per tool.
    const seen = new Set()
    for (const [key, sub] of Object.entries(props)) {
      if (!(key in good)) continue
      const kind = typeOf(sub, schema) + (nonNullBranch(resolveRef(sub, schema), schema).enum ? ':enum' : '')
      if (seen.has(kind)) continue
      seen.add(kind)
      const type = typeOf(sub, schema)
      const s = nonNullBranch(resolveRef(sub, schema), schema)
      const broken = (value) => json({ ...good, [key]: value })
      if ((type === 'number' || type === 'integer') && typeof good[key] === 'number') {
        add(setName, 'number-as-string', t.name, broken(String(good[key])), ok(good))
        add(setName, 'must-not:word-for-number', t.name, broken('five'), null)
      } else if (type === 'boolean') {
        add(setName, 'boolean-as-string', t.name, broken(good[key] ? 'True' : 'false'), ok(good))
        add(setName, 'must-not:yes-for-boolean', t.name, broken('yes'), null)
      } else if (type === 'array' && good[key].length === 1) {
        add(setName, 'scalar-for-array', t.name, broken(good[key][0]), ok(good))
        if (typeof good[key][0] === 'object') add(setName, 'array-as-json-string', t.name, broken(json(good[key])), ok(good))
      } else if (type === 'string' && s.enum && s.enum.length > 1) {
        const value = good[key]
        add(setName, 'enum-case', t.name, broken(value.toUpperCase() === value ? value.toLowerCase() : value.toUpperCase()), value.toUpperCase() === value.toLowerCase() ? null : ok(good))
        add(setName, 'must-not:enum-misspelt', t.name, broken(`${value}x`), null)
      } else if (type === 'string' && !s.enum && typeof good[key] === 'string' && !s.pattern && !s.format) {
        add(setName, 'string-in-array', t.name, broken([good[key]]), ok(good))
        if (/^\d+$/.test(good[key])) add(setName, 'number-for-string', t.name, broken(Number(good[key])), ok(good))
      } else if (type === 'object' && s.properties) {
        add(setName, 'object-as-json-string', t.name, broken(json(good[key])), ok(good))
      }
    }

    // An optional property sent as null: left out.
    const optional = Object.keys(props).find((k) => !required.includes(k) && typeOf(props[k], schema) !== undefined && !(props[k].anyOf ?? []).some((b) => b.type === 'null') && props[k].type !== 'null' && !(Array.isArray(props[k].type) && props[k].type.includes('null')))
    if (optional) {
      const input = { ...good }
      delete input[optional]
      add(setName, 'null-optional', t.name, json({ ...input, [optional]: null }), ok(input))
    }

    // Nothing may be invented: a required property that is missing stays missing.
    if (required.length) {
      const input = { ...good }
      delete input[required[0]]
      add(setName, 'must-not:missing-required', t.name, write(input, { trailingComma: true }), null)
      const cutBeforeRequired = text.slice(0, text.indexOf(`"${required.at(-1)}"`) + 3)
      if (required.at(-1) === Object.keys(good).at(-1) && Object.keys(good).length > 1) {
        add(setName, 'must-not:truncated-before-required', t.name, cutBeforeRequired, null)
      }
    }
    if (index % 4 === 0) add(setName, 'must-not:prose-only', t.name, `I could not find ${bare(t.name)} arguments for that.`, null)
    if (index % 5 === 0) add(setName, 'must-not:already-valid', t.name, text, null)

    // Name shapes (only for names the model did not get exactly right).
    const others = names.filter((n) => n !== t.name)
    const allVariants = [
      ['name-camel-case', camel(bare(t.name))],
      ['name-kebab-case', bare(t.name).replaceAll('_', '-')],
      ['name-upper-case', bare(t.name).toUpperCase()],
      ['name-functions-prefix', `functions.${bare(t.name)}`],
      t.name !== bare(t.name) ? ['name-prefix-dropped', bare(t.name)] : ['name-server-prefix', `mcp__${setName}__${t.name}`],
    ]
    const variants = [allVariants[index % 5], allVariants[(index + 2) % 5]]
    // Case- and separator-free form of the last segment: `read-File` and `READ_FILE` are one name.
    const wordsOf = (n) => bare(n.split('.').at(-1)).toLowerCase().replace(/[^a-z0-9]/g, '')
    for (const [shape, variant] of variants) {
      if (variant === t.name) continue
      // Another tool with the same words (e.g. the same tool on another server) makes it ambiguous.
      const clash = others.some((n) => wordsOf(n) === wordsOf(variant))
      const expected = clash || t.needsApproval ? null : ok(good)
      const prefix = expected ? '' : t.needsApproval && !clash ? 'must-not:gated-' : 'must-not:ambiguous-'
      add(setName, prefix + shape, variant, index % 2 ? text : write(good, { trailingComma: true }), expected)
    }
    const slip = typo(bare(t.name))
    if (slip !== bare(t.name) && wordsOf(slip).length >= 5) {
      const distances = names.map((n) => osa(wordsOf(slip), wordsOf(n))).sort((a, b) => a - b)
      const mine = osa(wordsOf(slip), wordsOf(t.name))
      const limit = wordsOf(slip).length >= 10 ? 2 : 1
      const clear = mine === distances[0] && mine <= limit && (distances[1] ?? Infinity) >= mine + 2
      if (clear && !t.needsApproval) add(setName, 'name-typo', slip, text, ok(good))
      else if (clear) add(setName, 'must-not:gated-name-typo', slip, text, null)
      else if (mine <= limit) add(setName, 'must-not:ambiguous-name-typo', slip, text, null)
    }
  })
  add(setName, 'must-not:unknown-tool', 'send_slack_message', '{"channel": "#general", "text": "hi"}', null)
  add(setName, 'must-not:unknown-tool', 'weather', '{"city": "Paris"}', null)
}

// Envelopes that name another tool are not unwrapped.
add('local', 'must-not:envelope-for-other-tool', 'read_text_file', json({ name: 'write_file', arguments: { path: '/tmp/x', content: 'x' } }), null)

const used = new Set(cases.map((c) => c.toolset))
const out = {
  about:
    'Malformed tool calls for toolreg repair tests, built by scripts/build_repair_corpus.mjs from the schemas below. ' +
    'expected is the repaired call, or null where the call must not be repaired locally. See fixtures/README.md for sources and licenses.',
  toolsets: Object.fromEntries(Object.entries(toolsets).filter(([k]) => used.has(k))),
  cases,
}
// One tool and one case per line: readable diffs, small file.
const lines = [
  '{',
  `"about": ${JSON.stringify(out.about)},`,
  '"toolsets": {',
  Object.entries(out.toolsets)
    .map(([name, tools]) => `${JSON.stringify(name)}: [\n${tools.map((t) => JSON.stringify(t)).join(',\n')}\n]`)
    .join(',\n'),
  '},',
  '"cases": [',
  out.cases.map((c) => JSON.stringify(c)).join(',\n'),
  ']',
  '}',
]
writeFileSync(join(root, 'fixtures', 'repair_corpus.json'), lines.join('\n') + '\n')
const shapes = {}
for (const c of cases) shapes[c.shape] = (shapes[c.shape] ?? 0) + 1
console.log(`${cases.length} cases (${cases.filter((c) => c.expected === null).length} must not be repaired)`)
console.log(shapes)
