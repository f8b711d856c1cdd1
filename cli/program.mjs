// The toolreg command line: what your MCP servers cost in tokens, what would be deferred for
// your model's context window, and whether the right tool can still be found.
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { createRequire } from 'node:module'
import { Command, InvalidArgumentError, Option } from 'commander'
import pc from 'picocolors'
import { applyProfile, needsApprovalBySettings } from './profiles.mjs'
import { readCachedTools } from './cache.mjs'
import { createProgress, createToolProgress } from './progress.mjs'
import { clip, formatAudit, formatFailure, num, plural } from './format.mjs'
import { modelWindow, MODEL_WINDOWS } from './models.mjs'
import { CliError, EXIT, EXIT_HELP } from './exitCodes.mjs'
import { DEFAULT_TIMEOUT_MS, PACKAGE_RUNNER_TIMEOUT_MS, STARTUP_WAIT_MS } from './defaults.mjs'
import { checkWritable, describeFileError, readUserFile, writeUserFile } from './files.mjs'
import { cleanErrorText } from '../js/errors.js'

const require = createRequire(import.meta.url)

/**
 * A module that loads the addon or the AI SDK (about 2 s together), imported by the first
 * command that needs it, so that --help and --version answer at once. `loaded` resolves once
 * something has loaded it.
 */
function lazyModule(load) {
  let settle
  const loaded = new Promise((resolve) => (settle = resolve))
  let loading
  return { load: () => (loading ??= load().then((module) => (settle(module), module))), loaded }
}

export const sessionModule = lazyModule(() => import('./session.mjs'))
const toolsModule = lazyModule(() => import('./tools.mjs'))
const auditModule = lazyModule(() => import('./audit.mjs'))
const authModule = lazyModule(() => import('./auth.mjs'))
const featuresModule = lazyModule(() => import('./features.mjs'))
const trustModule = lazyModule(() => import('./trust.mjs'))
const openSession = async (opts) => (await sessionModule.load()).openSession(opts)
const { closest, didYouMean } = require('../js/meta/names.js')

function positiveInt(value) {
  const n = Number(value.replace(/[_,]/g, ''))
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive whole number')
  return n
}

const configOption = () => new Option('-c, --config <file>', 'MCP config: {"mcpServers": {...}} (Claude Desktop, Cursor, Claude Code, Cherry Studio) or {"servers": {...}} (VS Code); default: the project\'s .cursor/mcp.json, .vscode/mcp.json, .mcp.json, else your Claude Desktop / Cursor / Claude Code config')
const demoOption = () => new Option('--demo', 'use the demo setup (the MCP reference servers + a listed-only catalog) instead of any config')
const windowOption = () => new Option('-w, --context-window <n>', 'the model\'s context window in tokens (default: --model\'s, else 32,000)').argParser(positiveInt)
const modelOption = () => new Option('-m, --model <name>', `take the window from a known model id (${MODEL_WINDOWS.map(([m]) => m).join(', ')})`)
const timeoutOption = () => new Option('-t, --timeout <ms>', `per-server time to start and list tools (default ${num(DEFAULT_TIMEOUT_MS)}; ${num(PACKAGE_RUNNER_TIMEOUT_MS)} for npx, uvx and other package runners, whose first run downloads)`).argParser(positiveInt)
const refreshOption = () => new Option('--refresh', 'list every server live instead of using the cached tool lists (kept a day), and try servers that failed in the last 10 minutes again')
const verboseOption = () => new Option('-v, --verbose', 'show servers\' full errors and stderr')
const callTimeoutOption = (what) => new Option('--call-timeout <ms>', `how long ${what} may take (--timeout is the time to start the server)`).argParser((v) => {
  const ms = positiveInt(v)
  if (ms > 2 ** 32 - 1) throw new InvalidArgumentError('expected at most 4294967295 (about 49 days)')
  return ms
}).default(CALL_TIMEOUT_MS)

/** The time a tool call, prompt or resource request may take, unless --call-timeout says otherwise. */
const CALL_TIMEOUT_MS = 60_000

const examples = (...lines) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`

/** Where the servers come from, in a line for stderr; the demo says so loudly. */
function announce(source, { always = false } = {}) {
  if (source.notice) process.stderr.write(pc.yellow(`${source.notice}\n`))
  else if (always || process.stderr.isTTY) process.stderr.write(pc.dim(`servers from ${source.kind === 'demo' ? 'the demo setup' : source.files.join(', ')}\n`))
}

/** A skipped entry as a warning names it: the server's id, else the file that could not be read. */
const skippedLabel = (skip) => skip.id ?? skip.file

/**
 * Opens what a command needs. Failed servers are one warning line each on stderr (the full error
 * with --verbose); audit and report show them in their output instead.
 */
async function withSession(open, opts, run, { plainProgress = false, start = 'all', useCache = false, quietFailures = false, toolProgress = false, trust } = {}) {
  // The servers' progress of the tools a command runs (call, exec), on stderr.
  const tools = toolProgress ? createToolProgress(process.stderr) : undefined
  const s = await open({
    config: opts.config,
    demo: opts.demo,
    onSource: (source) => !plainProgress && announce(source),
    timeoutMs: opts.timeout ?? DEFAULT_TIMEOUT_MS,
    timeoutGiven: opts.timeout !== undefined,
    callTimeoutMs: opts.callTimeout,
    start,
    useCache: useCache && !opts.refresh,
    retryFailed: opts.refresh === true,
    progress: createProgress(process.stderr, { plain: plainProgress }),
    ...(tools && { onToolProgress: tools.report }),
    ...(trust && { trust }),
  })
  try {
    if (!quietFailures) {
      // Commands over every server say which ones they go without; call and inspect say it
      // only when the tool asked for is on a skipped server (resolveTool).
      if (start === 'all') for (const skip of s.skipped) process.stderr.write(pc.yellow(`warning: ${skippedLabel(skip)} is skipped: ${skip.why}\n`))
      for (const failed of s.servers.filter((x) => x.status === 'failed')) {
        const detail = opts.verbose ? `\n${formatFailure(failed, { verbose: true, indent: '  ' })}` : `${failed.hint ? `; ${failed.hint}` : ''} (--verbose for details)`
        process.stderr.write(pc.yellow(`warning: ${failed.id} is left out: ${failed.summary}${detail}\n`))
      }
    }
    return await run(s)
  } finally {
    tools?.done()
    await s.close()
  }
}

/**
 * The servers NAME can be on, so `call`/`inspect` start only those: `server/tool` names one; a
 * wire id's owner follows from the server names; a bare tool name is looked up in the cached
 * listings. A name no cached listing has starts every server, unless every server's listing is
 * cached (and `refresh` is not asked): then it is a typo, answered from the cache at once.
 */
async function serversFor(name, { refresh = false } = {}) {
  const { splitName } = await toolsModule.load()
  const { McpHub } = require('../index.js')
  return (source) => {
    const ids = source.servers.map((s) => s.config.id)
    const split = splitName(name)
    if (split && ids.includes(split[0])) return new Set([split[0]])
    if (name.startsWith('mcp__')) {
      const hub = new McpHub({ servers: source.servers.map((s) => s.config) })
      try {
        return new Set(hub.serversForToolIds([name]))
      } finally {
        hub.close()
      }
    }
    if (split) return new Set() // no such server, or a skipped one: resolveTool says which
    const listings = source.servers.map((s) => ({ id: s.config.id, tools: readCachedTools(s.config)?.tools }))
    const owners = listings.filter((l) => l.tools?.some((t) => t.name === name))
    if (owners.length) return new Set(owners.map((l) => l.id))
    // Skipped servers' tools are unknown: resolveTool says so after a full start.
    if (refresh || listings.length === 0 || listings.some((l) => !l.tools) || source.skipped.length) return 'all'
    const known = listings.flatMap((l) => l.tools.map((t) => `${l.id}/${t.name}`))
    const nearest = closest(name, known, (full) => full.slice(full.indexOf('/') + 1))
    throw new CliError(`No tool named ${JSON.stringify(name)}.${didYouMean(nearest)} (By the servers' cached tool lists; a tool a server added since is reached as SERVER/TOOL, which starts that server.)`, EXIT.TOOL_NOT_FOUND)
  }
}

/** Only the server `id`, or an error saying it is skipped (and why) or naming the configured ones. */
/** `serve --http` could not bind: what to do about it, in words (the OS's reason kept). */
function cannotListen(error, host, port) {
  const reason = /could not listen on \S+: (.*)$/.exec(String(error?.message))?.[1]
  if (reason === undefined) return error
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`
  if (/in use/i.test(reason)) return new CliError(`toolreg serve cannot listen on ${where}: another program already uses that port. Pick another with --http PORT (--http 0 takes a free one), or stop that program.`, EXIT.USAGE)
  if (/permission|denied/i.test(reason)) return new CliError(`toolreg serve cannot listen on ${where}: ${reason}. Ports below 1024 need extra rights; pick a port from 1024 up with --http PORT.`, EXIT.USAGE)
  return new CliError(`toolreg serve cannot listen on ${where}: ${reason}. Check --host (an address of this machine) and --http.`, EXIT.USAGE)
}

function serverNamed(id) {
  return (source) => {
    const ids = source.servers.map((s) => s.config.id)
    if (ids.includes(id)) return new Set([id])
    const skip = source.skipped.find((s) => s.id === id)
    if (skip) throw new CliError(`${id} is skipped: ${skip.why}${skip.file ? ` (in ${skip.file})` : ''}.`, EXIT.CONFIG)
    throw new CliError(`No server ${JSON.stringify(id)} in the config.${didYouMean(closest(id, ids))} Servers: ${ids.join(', ') || 'none'}.`, EXIT.TOOL_NOT_FOUND)
  }
}

function windowOf(opts) {
  if (opts.contextWindow) return { contextWindow: opts.contextWindow, model: opts.model }
  if (!opts.model) return {}
  const window = modelWindow(opts.model)
  if (!window) {
    throw new CliError(`Unknown model ${JSON.stringify(opts.model)}: pass --context-window N, or one of ${MODEL_WINDOWS.map(([m]) => m).join(', ')}.`, EXIT.USAGE)
  }
  return { modelWindow: window, model: opts.model }
}

/** What resolveTool needs to explain a server it has no tools of: the configured, skipped and failed ones. */
const knownServers = (s) => ({ configured: s.source.servers.map((x) => x.config.id), skipped: s.skipped, failed: s.servers.filter((x) => x.status === 'failed').map((x) => x.id) })
/** The end of a server's stderr, for --verbose after a call its server did not survive. */
const stderrOf = (s) => (serverId) => s.hub.status().find((x) => x.id === serverId)?.stderrTail ?? ''
/**
 * Audit and report end non-zero when a server failed (4), or when nothing could be audited
 * because every server was skipped or the config lists none (3, said on stderr with the
 * reasons unless the output in the terminal already lists them).
 */
function auditExitCode(doc, { reasonsShown }) {
  if (doc.summary.failedServers) return EXIT.SERVER_FAILED
  if (doc.servers.length) return EXIT.OK
  const where = doc.configFiles.join(', ') || 'the demo setup'
  const reasons = reasonsShown ? [] : doc.skipped.map((skip) => `\n  ${skip.key ?? skip.file}: ${skip.why}`)
  process.stderr.write(pc.red(`${doc.skipped.length ? `Nothing was audited: every server in ${where} was skipped.` : `Nothing was audited: ${where} lists no MCP servers.`}${reasons.join('')}\n`))
  return EXIT.CONFIG
}

const printJson = (value) => process.stdout.write(`${JSON.stringify(value)}\n`)

/**
 * The commander program and the exit code its action settles on. `open` opens a session for a
 * command; the demo passes one that runs several commands on one session.
 */
export function createProgram({ open = openSession } = {}) {
  const session = (opts, run, settings) => withSession(open, opts, run, settings)
  const outcome = { exitCode: EXIT.OK }
  const program = new Command('toolreg')
    .description('Audit what your MCP servers cost in tokens, decide what to defer for a context window, and search, inspect and call their tools.')
    .version(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version)
    .exitOverride()
    .addHelpText('after', `${examples('toolreg audit --model claude-sonnet-4', 'toolreg tools filesystem', 'toolreg search "read a file"', 'toolreg call filesystem/read_text_file path=README.md')}\n${EXIT_HELP}`)
  // A usage error is one line and where to read more, never the whole help again.
  const usageErrors = (command, path) =>
    command.configureOutput({ outputError: (text, write) => write(`${text.trim()}\nRun "${path} --help" for usage.\n`) })
  usageErrors(program, 'toolreg')
  const command = (name) => {
    const c = program.command(name)
    usageErrors(c, `toolreg ${name}`)
    return c
  }

  /** `run(session)` with only the server `id` (from its cached listing when it has one), which must have started. */
  const onServer = (id, opts, run) => session(opts, async (s) => {
    ;(await sessionModule.load()).namedServer(s, id)
    return run(s)
  }, { useCache: true, start: serverNamed(id) })

  command('audit')
    .description('start every server (concurrently, each within --timeout) and report each tool\'s token cost, the defer decision and the savings')
    .addOption(configOption())
    .addOption(demoOption())
    .addOption(windowOption())
    .addOption(modelOption())
    .option('--json', 'print one JSON document instead of tables')
    .option('--all', 'list every catalog server and tool, not only the costliest')
    .addOption(refreshOption())
    .addOption(timeoutOption())
    .addOption(verboseOption())
    .addHelpText('after', examples('toolreg audit', 'toolreg audit --config ~/.cursor/mcp.json --model gpt-4o', 'toolreg audit --json | jq .summary'))
    .action(async (opts) => {
      const window = windowOf(opts)
      const { audit } = await auditModule.load()
      const doc = await session(opts, (s) => audit(s, window), { plainProgress: true, quietFailures: true, useCache: true })
      process.stdout.write(opts.json ? `${JSON.stringify(doc)}\n` : `${formatAudit(doc, { all: opts.all, verbose: opts.verbose })}\n`)
      outcome.exitCode = auditExitCode(doc, { reasonsShown: !opts.json })
    })

  command('tools')
    .description('list the servers (tool count; cached, started, failed or skipped, and why), or one server\'s tools with the tokens of each definition; uses the cached tool lists like search, starting only servers with none')
    .argument('[server]', 'the server\'s id in the config')
    .addOption(configOption())
    .addOption(demoOption())
    .option('--json', 'print the servers ([{ id, status, tools, reason?, hint?, cachedAt?, file? }]) or the tools ([{ id, name, description, tokens, needsApproval, findings? }]) as JSON')
    .addOption(refreshOption())
    .addOption(timeoutOption())
    .addOption(verboseOption())
    .addHelpText('after', examples('toolreg tools', 'toolreg tools filesystem', 'toolreg tools github --refresh --json'))
    .action(async (server, opts) => {
      const { serverOverview, toolsOf } = await toolsModule.load()
      if (server === undefined) {
        const { servers, catalog } = await session(opts, (s) => serverOverview(s), { useCache: true, quietFailures: true })
        if (servers.some((s) => s.status === 'failed')) outcome.exitCode = EXIT.SERVER_FAILED
        if (opts.json) return printJson(servers)
        const width = Math.max(0, ...servers.map((s) => s.id?.length ?? 0))
        for (const s of servers) {
          const count = s.tools === null ? '' : plural(s.tools, 'tool')
          const why = s.reason ? `: ${s.reason}${s.hint ? `; ${s.hint}` : ''}${s.file ? ` (in ${s.file})` : ''}` : ''
          const status = s.status === 'failed' ? pc.red(s.status) : s.status === 'skipped' ? pc.yellow(s.status) : pc.green(s.status)
          console.log(`${(s.id ?? s.file).padEnd(width)}  ${count.padStart(10)}  ${status}${why}`)
        }
        if (catalog) console.log(pc.dim(`and the demo's catalog: ${plural(catalog.tools, 'tool')} on ${plural(catalog.servers, 'server')}, listed only`))
        if (!servers.length) console.log('The config lists no MCP servers.')
        return
      }
      const tools = await onServer(server, opts, (s) => toolsOf(s, server))
      if (opts.json) return printJson(tools)
      if (!tools.length) return console.log(`${server} lists no tools.`)
      const width = Math.max(...tools.map((t) => t.id.length))
      for (const t of tools) {
        console.log(`${pc.bold(t.id.padEnd(width))}  ${pc.dim(`${num(t.tokens).padStart(6)} tokens`)}  ${clip(t.description, 100)}${t.needsApproval ? pc.magenta(' (needs approval)') : ''}`)
        for (const f of t.findings ?? []) console.log(pc.yellow(`${''.padEnd(width)}  ${f.level}: ${f.rule} in ${f.field}: "${clip(f.excerpt, 80)}" — ${f.explanation}`))
      }
    })

  command('search')
    .description('ranked tool search (BM25 over names, descriptions and parameters; --hybrid adds the built-in embeddings); uses the cached tool lists, starting only servers with none')
    .argument('<query>', 'what the tool should do')
    .addOption(configOption())
    .addOption(demoOption())
    .option('-n, --namespace <server>', 'only this server')
    .option('-k, --limit <k>', 'how many hits', positiveInt, 5)
    .option('--hybrid', 'fuse word ranking with the built-in static embeddings (no model download, no network)')
    .option('--json', 'print the hits as JSON')
    .addOption(refreshOption())
    .addOption(timeoutOption())
    .addOption(verboseOption())
    .addHelpText('after', examples('toolreg search "read a text file"', 'toolreg search "create an issue" --namespace github --limit 3', 'toolreg search "how is bitcoin trading" --hybrid --json'))
    .action(async (query, opts) => {
      const { searchTools, labelOf } = await toolsModule.load()
      const hits = await session(opts, async (s) => (await searchTools(s.registry, query, opts)).map((h) => ({ id: labelOf(s.registry.getByName(h.name)), ...h })), { useCache: true, start: opts.namespace === undefined ? 'all' : serverNamed(opts.namespace.replace(/^mcp:/, '')) })
      if (opts.json) return printJson(hits)
      if (!hits.length) return console.log(`No tool matches ${JSON.stringify(query)}.`)
      hits.forEach((h, i) => console.log(`${String(i + 1).padStart(2)}. ${pc.bold(h.id)}  ${pc.dim(`score ${h.score.toFixed(3)}`)}\n    ${clip(h.description, 160)}`))
    })

  command('inspect')
    .description('print a tool\'s signature as JSDoc (what tool_inspect shows the model); starts only that tool\'s server, or none when its tool list is cached')
    .argument('<name>', 'server/tool (a wire id mcp__…, or a tool name only one server has, also works)')
    .addOption(configOption())
    .addOption(demoOption())
    .option('--json', 'print { id, name, server, tool, description, inputSchema, signature }')
    .addOption(refreshOption())
    .addOption(timeoutOption())
    .addOption(verboseOption())
    .addHelpText('after', examples('toolreg inspect filesystem/read_text_file', 'toolreg inspect memory/create_entities --json'))
    .action(async (name, opts) => {
      const { resolveTool, signatureOf, labelOf } = await toolsModule.load()
      const { resolveJsonSchema } = require('../js/schema.js')
      const out = await session(opts, async (s) => {
        const entry = resolveTool(s.registry, name, knownServers(s))
        return { id: labelOf(entry), name: entry.name, server: entry.mcp?.serverId ?? null, tool: entry.mcp?.toolName ?? null, description: entry.tool.description ?? entry.description, inputSchema: await resolveJsonSchema(entry.tool), signature: await signatureOf(entry) }
      }, { start: await serversFor(name, opts), useCache: true })
      if (opts.json) return printJson(out)
      console.log(out.signature)
    })

  command('call')
    .description('validate the params against the tool\'s schema, ask before a tool that needs approval or a repair that changed the params, run it and print the result; starts only that tool\'s server')
    .argument('<name>', 'server/tool (a wire id mcp__…, or a tool name only one server has, also works)')
    .argument('[params...]', 'the tool\'s input: key=value words, typed by the tool\'s schema (key:=JSON for a raw JSON value, a.b=1 for a nested one), or one JSON object')
    .addOption(configOption())
    .addOption(demoOption())
    .option('-y, --yes', 'approve tools that need approval (destructive, or listed in the config\'s toolreg.needsApproval) and repaired params without asking')
    .option('--json', 'print the raw MCP result as JSON')
    .addOption(timeoutOption())
    .addOption(callTimeoutOption('the call'))
    .addOption(verboseOption())
    .addHelpText('after', examples('toolreg call everything/get-sum a=2 b=40', 'toolreg call filesystem/write_file path=/tmp/x content=hi --yes', 'toolreg call memory/create_entities entities:=\'[{"name": "Ada", "entityType": "person", "observations": []}]\'', 'toolreg call everything/get-sum \'{"a": 2, "b": 40}\'', 'toolreg call everything/trigger-long-running-operation duration=90 --call-timeout 120000'))
    .action(async (name, params, opts) => {
      const { callTool } = await toolsModule.load()
      const out = await session(opts, (s) => callTool(s.registry, name, params, { ...opts, ...knownServers(s), reasons: s.approvalReasons, stderrOf: opts.verbose && stderrOf(s), callTimeoutMs: opts.callTimeout }), { start: await serversFor(name), toolProgress: true })
      console.log(opts.json ? JSON.stringify(out.result) : out.text)
    })

  command('exec')
    .description('run JavaScript that calls tools (tools.<name>(params), parallel, settle, console) in the tool_exec sandbox; prints the returned value as JSON')
    .argument('[code]', 'an async function body')
    .option('-f, --file <file>', 'read the code from a file')
    .addOption(configOption())
    .addOption(demoOption())
    .option('-y, --yes', 'approve tools that need approval (destructive, or listed in the config\'s toolreg.needsApproval) without asking')
    .option('--json', 'print { result, logs } on one line (logs are not echoed to stderr)')
    .addOption(refreshOption())
    .addOption(timeoutOption())
    .addOption(verboseOption())
    .addHelpText('after', examples('toolreg exec "return await tools.invoke(\'mcp__everything__get_sum_9dd64e7f5e\', { a: 2, b: 40 })"', 'toolreg exec --file script.js --json'))
    .action(async (code, opts) => {
      if ((code === undefined) === (opts.file === undefined)) throw new CliError('Give the code either as an argument or with --file, not both.', EXIT.USAGE)
      const source = code ?? readUserFile(opts.file)
      const { execCode } = await toolsModule.load()
      const out = await session(opts, (s) => execCode(s.registry, source, { ...opts, reasons: s.approvalReasons }), { useCache: true, toolProgress: true })
      if (opts.json) return printJson(out)
      for (const line of out.logs) console.error(line)
      console.log(JSON.stringify(out.result, null, 2))
    })

  /**
   * `prompts` and `resources`: `list(session, servers, opts)` over the server named, else every
   * one that started; `print(listed, answered)` gets the servers that answered. Servers missing
   * from the list are warnings and exit 4, as in audit.
   */
  const listFeature = async (server, opts, list, print) => {
    const [{ namedServer }, { askedServers }] = await Promise.all([sessionModule.load(), featuresModule.load()])
    const { listed, asked, startFailed } = await session(opts, async (s) => {
      if (server !== undefined) namedServer(s, server)
      const asked = askedServers(s, server)
      const listed = await list(s, asked, { timeoutMs: opts.timeout ?? DEFAULT_TIMEOUT_MS, named: server !== undefined })
      return { listed, asked, startFailed: s.servers.some((x) => x.status === 'failed') }
    }, { useCache: true, start: server === undefined ? 'all' : serverNamed(server) })
    for (const f of listed.failed) process.stderr.write(pc.yellow(`warning: ${f.why}\n`))
    if (listed.failed.length || startFailed) outcome.exitCode = EXIT.SERVER_FAILED
    print(listed, asked.filter((id) => !listed.failed.some((f) => f.server === id)))
  }

  command('prompts')
    .description('the prompts of every server, or of one: server/name, the arguments (* required) and the description; starts the servers it asks')
    .argument('[server]', 'only this server')
    .addOption(configOption())
    .addOption(demoOption())
    .option('--json', 'print [{ id, server, name, title?, description?, arguments: [{ name, description?, required? }] }]')
    .addOption(refreshOption())
    .addOption(timeoutOption())
    .addOption(verboseOption())
    .addHelpText('after', examples('toolreg prompts', 'toolreg prompts everything --json'))
    .action(async (server, opts) => {
      const { listPrompts, formatPrompts } = await featuresModule.load()
      await listFeature(server, opts, listPrompts, ({ prompts }, answered) => (opts.json ? printJson(prompts) : console.log(formatPrompts({ prompts }, { servers: answered }))))
    })

  command('prompt')
    .description('get a prompt with its arguments and print its messages (role, then content); starts only that server')
    .argument('<name>', 'server/prompt, as toolreg prompts lists them')
    .argument('[arguments...]', 'the prompt\'s arguments as key=value words (or one JSON object of strings)')
    .addOption(configOption())
    .addOption(demoOption())
    .option('--json', 'print the MCP result { id, description?, messages }')
    .addOption(refreshOption())
    .addOption(timeoutOption())
    .addOption(callTimeoutOption('getting the prompt'))
    .addOption(verboseOption())
    .addHelpText('after', examples('toolreg prompt everything/simple-prompt', 'toolreg prompt everything/args-prompt city=Paris state=Texas', 'toolreg prompt everything/args-prompt city=Paris --json'))
    .action(async (name, words, opts) => {
      const [{ splitName }, { getPrompt, formatPromptMessages }] = await Promise.all([toolsModule.load(), featuresModule.load()])
      const split = splitName(name)
      if (!split) throw new CliError(`Name the prompt as server/prompt (toolreg prompts lists them), not ${JSON.stringify(name)}.`, EXIT.USAGE)
      const result = await onServer(split[0], opts, (s) => getPrompt(s, name, words, { timeoutMs: opts.timeout ?? DEFAULT_TIMEOUT_MS, callTimeoutMs: opts.callTimeout }))
      console.log(opts.json ? JSON.stringify(result) : formatPromptMessages(result))
    })

  command('resources')
    .description('the resources of every server, or of one (server, URI, type, name and description), then the resource templates; starts the servers it asks')
    .argument('[server]', 'only this server')
    .addOption(configOption())
    .addOption(demoOption())
    .option('--json', 'print { resources: [{ server, uri, name, mimeType?, … }], templates: [{ server, uriTemplate, name, … }] }')
    .addOption(refreshOption())
    .addOption(timeoutOption())
    .addOption(verboseOption())
    .addHelpText('after', examples('toolreg resources', 'toolreg resources everything --json | jq \'.resources[].uri\''))
    .action(async (server, opts) => {
      const { listResources, formatResources } = await featuresModule.load()
      await listFeature(server, opts, listResources, ({ resources, templates }, answered) => (opts.json ? printJson({ resources, templates }) : console.log(formatResources({ resources, templates }, { servers: answered }))))
    })

  command('read')
    .description('read a resource: text to stdout; a binary one is named with its type and size unless --out writes it; starts only that server')
    .argument('<server>', 'the server\'s id in the config')
    .argument('<uri>', 'the resource\'s URI, as toolreg resources lists them (a template\'s with its {variables} filled in)')
    .addOption(configOption())
    .addOption(demoOption())
    .option('-o, --out <file>', 'write the content there (binary as its bytes) instead of printing it')
    .option('--json', 'print the MCP result { contents: [{ uri, mimeType?, text | blob }] } (blob in base64)')
    .addOption(refreshOption())
    .addOption(timeoutOption())
    .addOption(callTimeoutOption('the read'))
    .addOption(verboseOption())
    .addHelpText('after', examples('toolreg read everything demo://resource/static/document/architecture.md', 'toolreg read everything demo://resource/dynamic/blob/1 --out blob.bin', 'toolreg read filesystem file:///tmp/notes.txt --json'))
    .action(async (server, uri, opts) => {
      const { readResource, readOutput } = await featuresModule.load()
      const result = await onServer(server, opts, (s) => readResource(s, server, uri, { timeoutMs: opts.timeout ?? DEFAULT_TIMEOUT_MS, callTimeoutMs: opts.callTimeout }))
      console.log(opts.json ? JSON.stringify(result) : readOutput(result, { uri, out: opts.out }))
    })

  command('report')
    .description('write one self-contained HTML page: treemap of token cost, decisions at 8k-1M windows, top tools, search')
    .addOption(configOption())
    .addOption(demoOption())
    .option('-o, --out <file>', 'where to write the page', 'toolreg-report.html')
    .addOption(windowOption())
    .addOption(modelOption())
    .option('--json', 'print { file, bytes, servers, tools, failedServers } instead of a sentence')
    .addOption(refreshOption())
    .addOption(timeoutOption())
    .addOption(verboseOption())
    .addHelpText('after', examples('toolreg report --out report.html', 'toolreg report --config .vscode/mcp.json --model gemini-2.5-pro'))
    .action(async (opts) => {
      const window = windowOf(opts)
      const out = resolve(opts.out)
      checkWritable(out)
      const [{ audit, decisionsAt }, { buildReport }] = await Promise.all([auditModule.load(), import('./report.mjs')])
      const { doc, html } = await session(opts, async (s) => {
        const doc = await audit(s, window)
        return { doc, html: buildReport(doc, await decisionsAt(s)) }
      }, { plainProgress: true, quietFailures: true, useCache: true })
      writeUserFile(out, html)
      const summary = { file: out, bytes: Buffer.byteLength(html), servers: doc.servers.length, tools: doc.summary.tools, failedServers: doc.summary.failedServers }
      if (opts.json) printJson(summary)
      else console.log(`Wrote ${out} (${plural(summary.bytes, 'byte')}): ${plural(summary.tools, 'tool')} on ${plural(summary.servers, 'server')}. Open it in any browser; it needs no network.`)
      outcome.exitCode = auditExitCode(doc, { reasonsShown: false })
    })
  command('serve')
    .description('run one MCP server in front of your servers for any MCP client: tools that fit the context window stay inline under their own names, the rest behind tool_search / tool_inspect / tool_invoke (tool_exec with --exec); the servers\' prompts and resources pass through. A server with a cached tool list starts when a call, or a client\'s first look at prompts or resources, needs it; the others are listed in the background and join as they answer, so a slow or broken server never holds the client')
    .addOption(configOption())
    .addOption(demoOption())
    .option('--stdio', 'serve on stdin/stdout (the default)')
    .option('--http <port>', 'serve Streamable HTTP at http://<host>:<port>/mcp (0: a free port)', (v) => (v === '0' ? 0 : positiveInt(v)))
    .option('--host <address>', 'the address --http binds', '127.0.0.1')
    .option('--no-auth', 'with --http, serve without the bearer token (local testing only)')
    .addOption(windowOption())
    .addOption(modelOption())
    .option('--exec', 'add tool_exec (sandboxed JavaScript that calls tools)')
    .option('--profile <name>', 'serve only the servers and tools of this profile ("toolreg": { "profiles": ... } in the config)')
    .addOption(timeoutOption())
    .option('--startup-wait <ms>', 'how long after its start serve may wait for servers with no cached tool list before its first tools/list answer (initialize waits up to half of it); later ones join with a tools/list_changed notification (for a client that ignores it, raise this to --timeout, within the client\'s own timeouts)', (v) => (v === '0' ? 0 : positiveInt(v)), STARTUP_WAIT_MS)
    .addOption(callTimeoutOption('a tool call, prompt or resource request forwarded to a server'))
    .option('--state-key-file <file>', 'the secret (32 bytes or more) that signs the request state handed to 2026-07-28 clients with input-required results; give every replica behind one address the same (else TOOLREG_STATE_KEY, else one per process)')
    .option('--trust-file <file>', 'pin every server\'s tool definitions in this JSON file (a pin file you can commit; made on first use): a tool its server changes, adds later or that looks poisoned is held, not served, until approved with toolreg trust approve; without it pins are kept in memory for this run')
    .addOption(verboseOption())
    .option('--usage-store <file>', 'learn pins from use: record each tool call (name, server, time; no arguments or results) in this JSON Lines file, and keep the tools used most recently and most often loaded (tools/list _meta anthropic/alwaysLoad) within 2,000 tokens of definitions')
    .addHelpText('after', examples('toolreg serve --model claude-sonnet-4', 'toolreg serve --http 3939 --exec', 'toolreg serve --profile cursor', 'TOOLREG_SERVE_TOKEN=secret toolreg serve --http 3939 --config ~/.cursor/mcp.json'))
    .action(async (opts) => {
      const [{ resolveSource, startTimeoutOf, trackOpen }, { SERVE_ACTIVE_ENV, createGateway, readStateKey, serveToken, withoutSelf }] = await Promise.all([sessionModule.load(), import('./serve.mjs')])
      if (opts.stdio && opts.http !== undefined) throw new CliError('Pick one of --stdio and --http.', EXIT.USAGE)
      // A server started by a gateway that runs a gateway again: the config lists toolreg itself
      // in a form withoutSelf does not recognise (a wrapper script, say).
      if (process.env[SERVE_ACTIVE_ENV]) {
        throw new CliError('toolreg serve was started by another toolreg serve: the config it reads lists toolreg itself. Remove that entry, or give serve the config of the servers to front with --config FILE.', EXIT.USAGE)
      }
      process.env[SERVE_ACTIVE_ENV] = '1'
      const window = windowOf(opts)
      const source = resolveSource({ config: opts.config, demo: opts.demo })
      announce(source, { always: true })
      const say = (line) => process.stderr.write(`${line}\n`)
      const fronted = withoutSelf(source.servers)
      for (const skip of source.skipped) say(`leaving out ${skippedLabel(skip)}: ${skip.why}`)
      for (const id of fronted.selves) say(`leaving out ${id}: it runs toolreg serve itself`)
      const profile = applyProfile(fronted.servers, source.settings, opts.profile)
      let stateKey
      try {
        stateKey = readStateKey(opts.stateKeyFile)
      } catch (error) {
        throw new CliError(`${error.message}.`, EXIT.USAGE)
      }
      const served = await createGateway(profile.servers, {
        contextWindow: window.contextWindow ?? window.modelWindow,
        exec: opts.exec,
        timeoutMs: opts.timeout ?? DEFAULT_TIMEOUT_MS,
        timeoutOf: (config) => startTimeoutOf(config, { timeoutMs: opts.timeout ?? DEFAULT_TIMEOUT_MS, timeoutGiven: opts.timeout !== undefined }),
        callTimeoutMs: opts.callTimeout,
        stateKey,
        startupWaitMs: opts.startupWait,
        log: say,
        keeps: profile.keeps,
        needsApproval: (serverId, toolName) => needsApprovalBySettings(source.settings, serverId, toolName),
        usageStore: opts.usageStore,
        trustFile: opts.trustFile,
      })
      const untrack = trackOpen(served)
      if (opts.profile !== undefined) say(`profile ${JSON.stringify(opts.profile)}: ${num(profile.servers.length)} of ${plural(source.servers.length, 'server')}`)
      try {
        if (opts.http === undefined) {
          say('serving MCP on stdio')
          await served.gateway.serveStdio()
          return
        }
        const token = opts.auth ? serveToken() : null
        const port = await served.gateway.serveHttp(opts.host, opts.http, token).catch((error) => {
          throw cannotListen(error, opts.host, opts.http)
        })
        say(`serving MCP at http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}/mcp`)
        // A token the operator set is not echoed: under systemd or a container runtime this
        // stderr goes to a log that others read. A generated one must be shown to be usable.
        if (token && process.env.TOOLREG_SERVE_TOKEN) say('every request needs the header  Authorization: Bearer <the token in TOOLREG_SERVE_TOKEN>')
        else if (token) say(`every request needs the header  Authorization: Bearer ${token}`)
        else say(pc.yellow('warning: --no-auth: any local process and any web page you visit can call these tools'))
        // The listener lives in the addon, which holds no event-loop handle: this timer keeps
        // the process up until SIGINT/SIGTERM closes the gateway and exits.
        await new Promise(() => setInterval(() => {}, 2 ** 30))
      } finally {
        untrack()
        await served.close()
      }
    })

  const trustFileOption = () => new Option('--trust-file <file>', 'the pin file (default: $TOOLREG_TRUST_FILE, else trust.json in toolreg\'s config folder); toolreg serve --trust-file keeps the same file')
  /** Config server id → the identity its pins are kept under (command line or URL); nothing starts. */
  const identitiesOf = async (opts) => {
    const { McpHub } = require('../index.js')
    const { servers } = (await sessionModule.load()).resolveSource({ config: opts.config })
    const hub = new McpHub({ servers: servers.map((s) => s.config) })
    try {
      return new Map(hub.servers.map((s) => [s.id, s.identity]))
    } finally {
      await hub.close()
    }
  }
  const trust = program.command('trust').description('the pins of your servers\' tool definitions: a tool its server changes, adds later, renames or that looks poisoned is held (not served by toolreg serve --trust-file) until approved here')
  usageErrors(trust, 'toolreg trust')
  trust
    .command('list')
    .description('the pinned tools (server, tool, when, from where); reads the pin file only')
    .argument('[ref]', 'SERVER or SERVER/TOOL')
    .addOption(configOption())
    .addOption(trustFileOption())
    .option('--json', 'print the rows as JSON')
    .addHelpText('after', examples('toolreg trust list', 'toolreg trust list github --trust-file ./mcp-pins.json'))
    .action(async (ref, opts) => {
      const { trustFileOf, listPins } = await trustModule.load()
      const file = trustFileOf(opts)
      const rows = listPins(file, await identitiesOf(opts), ref)
      if (opts.json) return printJson(rows)
      if (!rows.length) return console.log(`Nothing is pinned in ${file}${ref ? ` for ${ref}` : ''}.`)
      for (const r of rows) console.log(`${pc.bold(`${r.serverId ?? r.server}/${r.tool}`)}  ${r.rejected ? 'removed' : 'pinned'} ${r.pinnedAt} (${r.source})  ${r.digest.slice(0, 12)}`)
    })
  trust
    .command('diff')
    .description('start the servers and compare what they list with the pins: what changed (field by field), what is new, renamed or gone, and what the scanner flags; nothing is pinned (exit 10 when anything would be held)')
    .argument('[ref]', 'SERVER or SERVER/TOOL')
    .addOption(configOption())
    .addOption(trustFileOption())
    .addOption(timeoutOption())
    .option('--json', 'print the tools that are not as pinned as JSON')
    .addHelpText('after', examples('toolreg trust diff', 'toolreg trust diff github/create_issue'))
    .action(async (ref, opts) => {
      const { trustFileOf, trustChanges, formatChanges, splitRef } = await trustModule.load()
      const [server] = splitRef(ref)
      const trust = { store: trustFileOf(opts), pinOnFirstUse: false }
      const rows = await session(opts, (s) => trustChanges(s, ref), { trust, quietFailures: false, start: server === undefined ? 'all' : serverNamed(server) })
      if (opts.json) printJson(rows)
      else console.log(formatChanges(rows))
      if (rows.some((r) => r.state === 'held')) outcome.exitCode = EXIT.HELD
    })
  trust
    .command('approve')
    .description('start the server and pin what it lists now for SERVER or SERVER/TOOL: its held tools are served again (a server never pinned is pinned whole)')
    .argument('<ref>', 'SERVER or SERVER/TOOL')
    .addOption(configOption())
    .addOption(trustFileOption())
    .addOption(timeoutOption())
    .addHelpText('after', examples('toolreg trust approve github/create_issue', 'toolreg trust approve filesystem --trust-file ./mcp-pins.json'))
    .action(async (ref, opts) => {
      const { trustFileOf, splitRef } = await trustModule.load()
      const [server] = splitRef(ref)
      const file = trustFileOf(opts)
      const approved = await session(opts, (s) => s.registry.approveTool(ref), { trust: { store: file }, start: serverNamed(server) })
      console.log(approved.length ? `Approved ${approved.map((name) => `${server}/${name}`).join(', ')} in ${file}.` : `Nothing of ${ref} was held; ${file} pins it as listed.`)
    })
  trust
    .command('reset')
    .description('forget the pins of SERVER or SERVER/TOOL: a server\'s next listing is pinned afresh; a tool\'s is new, held until approved; reads and writes the pin file only')
    .argument('<ref>', 'SERVER or SERVER/TOOL')
    .addOption(configOption())
    .addOption(trustFileOption())
    .addHelpText('after', examples('toolreg trust reset github', 'toolreg trust reset github/create_issue'))
    .action(async (ref, opts) => {
      const { trustFileOf, resetPins } = await trustModule.load()
      const file = trustFileOf(opts)
      const names = resetPins(file, await identitiesOf(opts), ref)
      console.log(names.length ? `Forgot the pins of ${names.length} tool${names.length === 1 ? '' : 's'} of ${ref} in ${file}.` : `Nothing of ${ref} was pinned in ${file}.`)
    })

  const auth = program.command('auth').description('sign in to MCP servers that ask for OAuth (GitHub, Linear, Notion, Sentry, …); tokens are kept in a file only you can read')
  usageErrors(auth, 'toolreg auth')
  /** The remote server `id` of the config, or a usage error naming the ones there are. */
  const remoteServer = async (opts, id) => {
    const source = (await sessionModule.load()).resolveSource({ config: opts.config })
    const remote = source.servers.filter((s) => s.config.type !== 'stdio')
    const found = remote.find((s) => s.config.id === id)
    if (found) return found
    const known = remote.map((s) => s.config.id)
    throw new CliError(`No remote MCP server ${JSON.stringify(id)} in ${source.files.join(', ') || 'the config'}${known.length ? `; remote servers: ${known.join(', ')}` : ' (it has no remote servers)'}.`, EXIT.AUTH)
  }
  auth
    .command('login')
    .description('open the server\'s sign-in page in your browser ($BROWSER if set; the URL is printed when none opens), wait on a loopback redirect, and store the token')
    .argument('<server>', 'the server\'s id in the config')
    .addOption(configOption())
    .option('--port <n>', 'the loopback port to listen on (for a client registered with a fixed redirect URI); default: the config\'s oauth.callbackPort, else a free one', positiveInt)
    .option('--timeout <ms>', 'how long to wait for the sign-in to finish', positiveInt, 300_000)
    .addHelpText('after', examples('toolreg auth login github', 'BROWSER=firefox toolreg auth login linear --config ~/.cursor/mcp.json'))
    .action(async (id, opts) => {
      const server = await remoteServer(opts, id)
      const { fileTokenStore, signIn } = await authModule.load()
      const store = fileTokenStore()
      let signedIn
      try {
        signedIn = await signIn(server.config, { store, timeoutMs: opts.timeout, port: opts.port ?? server.callbackPort })
      } catch (error) {
        throw new CliError(`Sign-in to ${id} did not complete: ${error.message}`, EXIT.AUTH)
      }
      console.log(signedIn.askedToSignIn ? `Signed in to ${id}: ${plural(signedIn.tools, 'tool')}. The token is stored in ${store.file}.` : `${id} did not ask for a sign-in (${plural(signedIn.tools, 'tool')}); nothing was stored.`)
    })
  auth
    .command('logout')
    .description('forget the stored token of a server (sign in again with auth login)')
    .argument('<server>', 'the server\'s id in the config')
    .addOption(configOption())
    .action(async (id, opts) => {
      await remoteServer(opts, id)
      const { fileTokenStore } = await authModule.load()
      console.log(fileTokenStore().delete(id) ? `Signed out of ${id}: its token was removed.` : `No token was stored for ${id}.`)
    })
  auth
    .command('status')
    .description('where you are signed in: each remote server of the config, its scopes and when its token expires (never the token itself)')
    .argument('[server]', 'only this server')
    .addOption(configOption())
    .option('--json', 'print the list as JSON')
    .action(async (id, opts) => {
      const servers = id ? [await remoteServer(opts, id)] : (await sessionModule.load()).resolveSource({ config: opts.config }).servers.filter((s) => s.config.type !== 'stdio')
      const { fileTokenStore, tokenStatus } = await authModule.load()
      const store = fileTokenStore()
      const rows = servers.map((s) => tokenStatus(s.config, store))
      if (opts.json) return printJson(rows)
      if (!rows.length) return console.log('The config has no remote servers.')
      for (const r of rows) {
        const expiry = r.expiresInSeconds == null ? '' : r.expiresInSeconds > 0 ? `, expires in ${Math.ceil(r.expiresInSeconds / 60)} min` : ', expired'
        const fromHeaders = r.headerCredentials && `its config sends credentials in ${r.headerCredentials.join(', ')}`
        const detail = r.signedIn
          ? `signed in${r.scopes.length ? ` (scopes: ${r.scopes.join(' ')})` : ''}${expiry}${r.refreshable ? ', renews itself' : ''}`
          : r.needsNoSignIn ? `needs no sign-in: ${fromHeaders}`
            : r.staleFor ? `not signed in (the stored token is for ${r.staleFor})`
              : fromHeaders ? `not signed in; ${fromHeaders}, so it may need none`
                : 'not signed in'
        console.log(`${pc.bold(r.id)}  ${detail}`)
      }
    })
  return { program, outcome }
}

/** Runs one command line (`argv` without node and the script); resolves to the exit code. */
export async function main(argv, options) {
  try {
    const { program, outcome } = createProgram(options)
    await program.parseAsync(argv, { from: 'user' })
    return outcome.exitCode
  } catch (error) {
    if (error.code?.startsWith('commander.')) return error.exitCode === 0 ? EXIT.OK : EXIT.USAGE
    const say = (text) => console.error(pc.red(cleanErrorText(text)))
    if (error instanceof CliError) {
      say(error.message)
      return error.exitCode
    }
    if (error.code === 'TOOLREG_CONFIG') {
      say(`Config error: ${error.message}`)
      return EXIT.CONFIG
    }
    const fileProblem = describeFileError(error)
    if (fileProblem) {
      say(fileProblem)
      return EXIT.INTERNAL
    }
    // The action's options are gone with the exception; the command line still says.
    const verbose = argv.slice(0, argv.includes('--') ? argv.indexOf('--') : undefined).some((arg) => arg === '--verbose' || arg === '-v')
    if (verbose) console.error(pc.red(error.stack ?? String(error)))
    else say(`Unexpected error: ${String(error?.message ?? error).split('\n')[0]} (run with --verbose for the stack)`)
    return EXIT.INTERNAL
  }
}
