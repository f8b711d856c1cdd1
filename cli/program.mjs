// The toolreg command line: what your MCP servers cost in tokens, what would be deferred for
// your model's context window, and whether the right tool can still be found.
import { readFileSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { Command, InvalidArgumentError, Option } from 'commander'
import pc from 'picocolors'
import { openSession } from './session.mjs'
import { createProgress } from './progress.mjs'
import { audit, decisionsAt } from './audit.mjs'
import { clip, formatAudit, num } from './format.mjs'
import { searchTools, resolveTool, signatureOf, callTool, execCode } from './tools.mjs'
import { buildReport } from './report.mjs'
import { modelWindow, MODEL_WINDOWS } from './models.mjs'
import { CliError, EXIT, EXIT_HELP } from './exitCodes.mjs'

const DEFAULT_TIMEOUT_MS = 30_000

function positiveInt(value) {
  const n = Number(value.replace(/[_,]/g, ''))
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive whole number')
  return n
}

const configOption = () => new Option('-c, --config <file>', 'MCP config: {"mcpServers": {...}} (Claude Desktop, Cursor, Cherry Studio) or {"servers": {...}} (VS Code); default: the embedded reference servers + catalog')
const windowOption = () => new Option('-w, --context-window <n>', 'the model\'s context window in tokens (default: --model\'s, else 32,000)').argParser(positiveInt)
const modelOption = () => new Option('-m, --model <name>', `take the window from a known model id (${MODEL_WINDOWS.map(([m]) => m).join(', ')})`)
const timeoutOption = () => new Option('-t, --timeout <ms>', 'per-server time to connect and list tools').argParser(positiveInt).default(DEFAULT_TIMEOUT_MS)

/** Opens the configured servers; progress lines on stderr only where asked. */
async function session(open, opts, { progress = false } = {}) {
  const bar = progress ? createProgress() : undefined
  const s = await open({ config: opts.config, timeoutMs: opts.timeout, progress: bar })
  if (!progress) {
    for (const failed of s.servers.filter((x) => x.status === 'failed')) {
      process.stderr.write(pc.yellow(`warning: ${failed.id} failed (${failed.error}); its tools are left out\n`))
    }
  }
  return s
}

async function withSession(open, opts, run, settings) {
  const s = await session(open, opts, settings)
  try {
    return await run(s)
  } finally {
    await s.close()
  }
}

function windowOf(opts) {
  if (opts.contextWindow) return { contextWindow: opts.contextWindow, model: opts.model }
  if (!opts.model) return {}
  const window = modelWindow(opts.model)
  if (!window) {
    throw new CliError(`Unknown model ${JSON.stringify(opts.model)}: pass --context-window N, or one of ${MODEL_WINDOWS.map(([m]) => m).join(', ')}`, EXIT.USAGE)
  }
  return { modelWindow: window, model: opts.model }
}

/**
 * The commander program and the exit code its action settles on. `open` opens a session for
 * a command; the demo passes one that runs several commands on one session.
 */
export function createProgram({ open = openSession } = {}) {
  const outcome = { exitCode: EXIT.OK }
  const program = new Command('toolreg')
    .description('Audit what your MCP servers cost in tokens, decide what to defer for a context window, and search, inspect and call their tools.')
    .version(JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version)
    .exitOverride()
    .showHelpAfterError()
    .addHelpText('after', `\n${EXIT_HELP}`)

  program
    .command('audit')
    .description('connect to every server (concurrently, each within --timeout) and report each tool\'s exact token cost, the defer decision and the savings')
    .addOption(configOption())
    .addOption(windowOption())
    .addOption(modelOption())
    .option('--json', 'print one JSON document instead of tables')
    .option('--all', 'list every catalog server and tool, not only the costliest')
    .addOption(timeoutOption())
    .addHelpText('after', `\n${EXIT_HELP}`)
    .action(async (opts) => {
      const window = windowOf(opts)
      const doc = await withSession(open, opts, (s) => audit(s, window), { progress: true })
      process.stdout.write(opts.json ? `${JSON.stringify(doc)}\n` : `${formatAudit(doc, { all: opts.all })}\n`)
      if (doc.summary.failedServers) outcome.exitCode = EXIT.SERVER_FAILED
    })

  program
    .command('search')
    .description('ranked tool search (BM25 over names, descriptions and parameters; --hybrid adds the built-in embeddings)')
    .argument('<query>', 'what the tool should do')
    .addOption(configOption())
    .option('-n, --namespace <ns>', 'only this server (id or mcp:id)')
    .option('-k, --limit <k>', 'how many hits', positiveInt, 5)
    .option('--hybrid', 'fuse word ranking with the built-in static embeddings (no model download, no network)')
    .option('--json', 'print the hits as JSON')
    .addOption(timeoutOption())
    .addHelpText('after', `\n${EXIT_HELP}`)
    .action(async (query, opts) => {
      const hits = await withSession(open, opts, (s) => searchTools(s.registry, query, opts))
      if (opts.json) return process.stdout.write(`${JSON.stringify(hits)}\n`)
      if (!hits.length) return console.log(`No tool matches ${JSON.stringify(query)}.`)
      hits.forEach((h, i) => console.log(`${String(i + 1).padStart(2)}. ${pc.bold(h.name)}  ${pc.dim(h.namespace)}  ${pc.dim(`score ${h.score.toFixed(3)}`)}\n    ${clip(h.description, 160)}`))
    })

  program
    .command('inspect')
    .description('print a tool\'s signature as JSDoc (what tool_inspect shows the model)')
    .argument('<name>', 'wire id (mcp__server__tool_…), server/tool, or a tool name only one server has')
    .addOption(configOption())
    .addOption(timeoutOption())
    .addHelpText('after', `\n${EXIT_HELP}`)
    .action(async (name, opts) => {
      console.log(await withSession(open, opts, (s) => signatureOf(resolveTool(s.registry, name))))
    })

  program
    .command('call')
    .description('validate JSON params against the tool\'s schema, ask for approval if the tool is destructive, run it and print the result')
    .argument('<name>', 'wire id, server/tool, or a tool name only one server has')
    .argument('[params]', 'the tool\'s input as JSON', '{}')
    .addOption(configOption())
    .option('-y, --yes', 'approve destructive tools without asking')
    .option('--json', 'print the raw MCP result as JSON')
    .addOption(timeoutOption())
    .addHelpText('after', `\n${EXIT_HELP}`)
    .action(async (name, params, opts) => {
      const out = await withSession(open, opts, (s) => callTool(s.registry, name, params, opts))
      console.log(opts.json ? JSON.stringify(out.result) : out.text)
    })

  program
    .command('exec')
    .description('run JavaScript that calls tools (tools.<name>(params), parallel, settle, console) in the tool_exec sandbox; prints the returned value as JSON')
    .argument('[code]', 'an async function body')
    .option('-f, --file <file>', 'read the code from a file')
    .addOption(configOption())
    .option('-y, --yes', 'approve destructive tools without asking')
    .addOption(timeoutOption())
    .addHelpText('after', `\n${EXIT_HELP}`)
    .action(async (code, opts) => {
      if ((code === undefined) === (opts.file === undefined)) throw new CliError('Give the code either as an argument or with --file, not both.', EXIT.USAGE)
      const source = code ?? readFileSync(opts.file, 'utf8')
      const result = await withSession(open, opts, (s) => execCode(s.registry, source, opts))
      console.log(JSON.stringify(result, null, 2))
    })

  program
    .command('report')
    .description('write one self-contained HTML page: treemap of token cost, decisions at 8k-1M windows, top tools, search')
    .addOption(configOption())
    .option('-o, --out <file>', 'where to write the page', 'toolreg-report.html')
    .addOption(windowOption())
    .addOption(modelOption())
    .addOption(timeoutOption())
    .addHelpText('after', `\n${EXIT_HELP}`)
    .action(async (opts) => {
      const window = windowOf(opts)
      const { doc, html } = await withSession(open, opts, async (s) => {
        const doc = await audit(s, window)
        return { doc, html: buildReport(doc, await decisionsAt(s.registry)) }
      }, { progress: true })
      const out = resolve(opts.out)
      writeFileSync(out, html)
      console.log(`Wrote ${out} (${num(Buffer.byteLength(html))} bytes): ${num(doc.summary.tools)} tools on ${num(doc.servers.length)} servers. Open it in any browser; it needs no network.`)
      if (doc.summary.failedServers) outcome.exitCode = EXIT.SERVER_FAILED
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
    if (error instanceof CliError) {
      console.error(pc.red(error.message))
      return error.exitCode
    }
    if (error.code === 'TOOLREG_CONFIG') {
      console.error(pc.red(`Config error: ${error.message}`))
      return EXIT.CONFIG
    }
    console.error(pc.red(error.stack ?? String(error)))
    return EXIT.INTERNAL
  }
}
