// Terminal rendering of the audit document.
import Table from 'cli-table3'
import pc from 'picocolors'
import { clientOf } from './discover.mjs'

export const num = (n) => n.toLocaleString('en-US')
/** `1 tool`, `2 tools`, `1,000 tools`: a count and its noun. */
export const plural = (n, noun, nouns = `${noun}s`) => `${num(n)} ${n === 1 ? noun : nouns}`
/** `text` cut to `max` characters, with an ellipsis when cut. */
export const clip = (text, max) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)
export const pct = (x) => `${(x * 100).toFixed(x < 0.01 ? 2 : 1)}%`
const TOP = 10
/** No rule between body rows: a table per screen, not per page. */
const COMPACT = { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' }

function table(head, rows, align) {
  const t = new Table({ head: head.map((h) => pc.bold(h)), colAligns: align, chars: COMPACT, style: { head: [], border: [] } })
  t.push(...rows)
  return t.toString()
}

const decisionText = (t) => (t.deferred ? pc.yellow('deferred') : t.approvalGated ? pc.magenta('inline (approval)') : pc.green('inline'))
const shortReason = (t) => (t.approvalGated ? 'approval-gated' : t.reason.split(':')[0])

/** A config file as tables name it: its client ("Cursor"), else the file's path. */
const fileLabel = (file) => clientOf(file) ?? file

function serverRows(servers, { files = false } = {}) {
  return servers.map((s) => [
    s.kind === 'catalog' ? `${s.name} ${pc.dim(`(${s.id})`)}` : s.id,
    ...(files ? [s.files.map(fileLabel).join(', ')] : []),
    s.transport,
    s.status === 'failed' ? pc.red('failed') : s.status === 'listed' ? pc.dim('listed only') : pc.green(s.status),
    num(s.toolCount),
    num(s.tokens),
    pct(s.share),
    `${num(s.deferredTools)}/${num(s.toolCount)}`,
    num(s.deferredTokens),
  ])
}

const SERVER_HEAD = ['server', 'transport', 'status', 'tools', 'tokens', '% window', 'deferred', 'tokens deferred']
const SERVER_ALIGN = ['left', 'left', 'left', 'right', 'right', 'right', 'right', 'right']
const TOOL_HEAD = ['tool', 'tokens', '% window', 'decision', 'reason']
const TOOL_ALIGN = ['left', 'right', 'right', 'left', 'left']
const toolRow = (t, label = t.tool) => [label, num(t.tokens), pct(t.share), decisionText(t), shortReason(t)]

/** "Exact o200k_base tokens" where that is what the model counts, else what it is for it. */
export function tokenLabel(doc) {
  return doc.tokensExact ? `Exact ${doc.encoding} tokens` : `${doc.encoding} tokens (an estimate for ${doc.model}, whose tokenizer differs; exact for OpenAI models)`
}

/** Lines of stderr worth showing: the last ten, plus earlier ones that name an error. */
function stderrLines(tail, verbose) {
  const lines = tail.trimEnd().split('\n').filter((l) => l.trim())
  if (verbose || lines.length <= 10) return lines
  const cause = /error|exception|cannot|can't|failed|not found|denied|missing|ERR_/i
  const earlier = lines.slice(0, -10).filter((l) => cause.test(l)).slice(-5)
  return [...earlier, ...(earlier.length ? ['…'] : []), ...lines.slice(-10)]
}

/**
 * A failed server: its id, one sentence, a hint, the command or URL, and its stderr; with
 * `verbose` also the hub's full error and every stderr line it kept.
 */
export function formatFailure(s, { verbose = false, indent = '' } = {}) {
  const stdio = s.transport === 'stdio'
  const out = [`${s.id}${s.key ? ` ${pc.dim(`(${s.key})`)}` : ''}: ${s.summary}`]
  if (s.hint) out.push(`${indent}hint:    ${s.hint}`)
  out.push(`${indent}${stdio ? 'command:' : 'url:    '} ${s.command}`)
  if (verbose) out.push(`${indent}error:   ${s.details ?? s.error}`)
  if (stdio) {
    const lines = stderrLines(s.stderrTail ?? '', verbose)
    // A remembered failure keeps no stderr (it may hold secrets); the server ran in an earlier command.
    const none = s.rememberedAt ? '(not kept from the earlier command: --refresh runs the server again)' : '(empty)'
    out.push(lines.length ? `${indent}stderr:\n${lines.map((l) => `${indent}  | ${l}`).join('\n')}` : `${indent}stderr:  ${none}`)
  }
  if (!verbose) out.push(`${indent}${pc.dim('(--verbose shows the full error)')}`)
  return out.join('\n')
}

const decisionWords = (m) => (m.deferredTools ? pc.yellow(`defer ${num(m.deferredTools)} tools`) : pc.green('defer nothing'))

/** One row per config file: what that client sends with every request, and what deferring saves. */
function clientTable(doc) {
  const rows = doc.clients.map((c) => [
    c.client ? `${c.client} ${pc.dim(c.file)}` : c.file,
    `${num(c.servers.length)}${c.failedServers ? pc.red(` (${c.failedServers} failed)`) : ''}${c.skipped ? pc.yellow(` +${c.skipped} skipped`) : ''}`,
    num(c.summary.tools),
    num(c.summary.tokens),
    pct(c.summary.share),
    decisionWords(c.summary),
    num(c.summary.inlineTokens),
  ])
  return table(['config file', 'servers', 'tools', 'tokens', '% window', 'decision', 'inline per request'], rows, ['left', 'left', 'right', 'right', 'right', 'left', 'right'])
}

/** Why a server's numbers are not what they seem: counted under another id, or a guessed transport. */
function serverNotes(servers) {
  return servers.flatMap((s) => [
    ...(s.sameAs ? [`${s.id} is the same server as ${s.sameAs} (same ${s.transport === 'stdio' ? 'command line' : 'URL'}): the combined total counts it once`] : []),
    ...(s.transportGuess ? [`${s.id} is taken as legacy SSE: ${s.transportGuess}`] : []),
  ]).map((line) => pc.dim(line))
}

/** The audit as tables and a summary; `all` lists every catalog server and tool. */
export function formatAudit(doc, { all = false, verbose = false } = {}) {
  const out = []
  const mcp = doc.servers.filter((s) => s.kind === 'mcp')
  const catalog = doc.servers.filter((s) => s.kind === 'catalog')
  if (doc.notice) out.push(pc.bold(pc.yellow(doc.notice)), '')
  out.push(pc.bold(`toolreg audit: ${doc.configFiles.length ? doc.configFiles.join(', ') : 'the demo setup (MCP reference servers + catalog)'}`))
  out.push(`${tokenLabel(doc)} of each tool definition as a provider receives it; context window ${num(doc.contextWindow)}${doc.model ? ` (${doc.model})` : ''}.`)
  const several = doc.configFiles.length > 1
  for (const s of doc.skipped) out.push(pc.yellow(`skipped ${s.key ?? 'the file'}${several || !s.key ? ` in ${s.file}` : ''}: ${s.why}`))

  if (mcp.length) {
    const [head, align] = several ? [[SERVER_HEAD[0], 'config', ...SERVER_HEAD.slice(1)], [SERVER_ALIGN[0], 'left', ...SERVER_ALIGN.slice(1)]] : [SERVER_HEAD, SERVER_ALIGN]
    out.push('', pc.bold('MCP servers'), table(head, serverRows(mcp, { files: several }), align), ...serverNotes(mcp))
    for (const s of mcp.filter((x) => x.status !== 'failed' && !x.sameAs)) {
      const rows = doc.tools.filter((t) => t.server === s.id).sort((a, b) => b.tokens - a.tokens).map((t) => toolRow(t))
      out.push('', pc.bold(`Tools of ${s.id}`), table(TOOL_HEAD, rows, TOOL_ALIGN))
    }
  }
  if (catalog.length) {
    const c = doc.catalog
    const shown = all ? catalog : [...catalog].sort((a, b) => b.tokens - a.tokens).slice(0, TOP)
    out.push('', pc.bold(`Catalog: ${c.label}`), `${plural(c.servers, 'server')}, ${plural(c.tools, 'tool')}, listed but not callable (no server behind them runs).`)
    out.push(all ? '' : `Costliest ${shown.length} of ${plural(catalog.length, 'catalog server')} (--all lists every one):`, table(SERVER_HEAD, serverRows(shown), SERVER_ALIGN))
    const catalogIds = new Set(catalog.map((s) => s.id))
    const tools = doc.tools.filter((t) => catalogIds.has(t.server)).sort((a, b) => b.tokens - a.tokens)
    out.push(all ? '' : `Costliest ${plural(Math.min(TOP, tools.length), 'catalog tool')}:`, table(['server', ...TOOL_HEAD], (all ? tools : tools.slice(0, TOP)).map((t) => [t.server, ...toolRow(t)]), ['left', ...TOOL_ALIGN]))
  }
  const failed = doc.servers.filter((s) => s.status === 'failed')
  if (failed.length) {
    out.push('', pc.bold(pc.red(`Failed servers (${failed.length})`)))
    for (const s of failed) out.push(`${pc.red('✘')} ${formatFailure(s, { verbose, indent: '    ' })}`)
  }
  const m = doc.summary
  if (several || m.sharedServers) out.push('', pc.bold('Per config file (what each client sends)'), clientTable(doc))
  out.push(
    '',
    pc.bold(several || m.sharedServers ? 'Summary (every config together, each server counted once)' : 'Summary'),
    `  servers    ${num(m.mcpServers)} MCP (${m.failedServers ? pc.red(`${m.failedServers} failed`) : '0 failed'})${m.sharedServers ? `, ${num(m.sharedServers)} listed again under another id` : ''}${doc.skipped.length ? pc.yellow(`, ${num(doc.skipped.length)} skipped`) : ''}${catalog.length ? `, ${num(catalog.length)} catalog` : ''}`,
    `  tools      ${plural(m.tools, 'definition')} = ${plural(m.tokens, 'token')}, ${pct(m.share)} of the window`,
    `  threshold  ${plural(m.threshold, 'token')} (10% of the window)`,
    `  decision   ${decisionWords(m)}: ${m.reason}`,
    `  inline     ${plural(m.inlineTokens, 'token')} per request${m.deferredTools ? ` (incl. ${num(m.overheadTokens)} for the meta-tools and <deferred-tools> section)` : ''}`,
    `  saved      ${pc.bold(plural(m.savedTokens, 'token'))} per request`,
  )
  // Tool trust's scan (docs/security.md): a definition that seems to address the model.
  const flagged = doc.tools.filter((t) => t.findings)
  if (flagged.length) {
    const names = flagged.slice(0, 3).map((t) => `${t.server}/${t.tool ?? t.name}`).join(', ')
    out.push(pc.yellow(`  flagged    ${plural(flagged.length, 'tool')} whose description may address the model (${names}${flagged.length > 3 ? ', …' : ''}): toolreg tools SERVER shows why`))
  }
  if (doc.notice) out.push('', pc.bold(pc.yellow(doc.notice)))
  return out.join('\n')
}
