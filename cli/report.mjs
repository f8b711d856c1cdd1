// `toolreg report`: one self-contained HTML page (inline CSS, script and data; nothing fetched
// at view time) from an audit document and the decisions at several windows.
import { readFileSync } from 'node:fs'
import { clip, num, pct, plural } from './format.mjs'

const PAGE_SCRIPT = readFileSync(new URL('./report-page.js', import.meta.url), 'utf8')
const TOP_TOOLS = 25

const escapeHtml = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
/** JSON safe inside <script>: no `</script>` or `<!--` can end the element early. */
const scriptJson = (value) => JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029')

const CSS = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1d1d1f; background: #fafafa; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
.muted { color: #666; } .num { text-align: right; font-variant-numeric: tabular-nums; }
table { border-collapse: collapse; background: #fff; } th, td { padding: 4px 10px; border-bottom: 1px solid #e5e5e5; text-align: left; }
#treemap { width: 100%; max-width: 1200px; height: auto; background: #fff; border: 1px solid #ddd; display: block; }
rect.server { stroke: #fff; stroke-width: 1.5; } rect.tool { fill: rgba(255,255,255,.18); stroke: rgba(0,0,0,.18); stroke-width: .5; }
rect.tool.deferred { fill: rgba(0,0,0,.08); } text.label { font-size: 11px; fill: #fff; pointer-events: none; font-weight: 600; }
.legend .swatch { display: inline-block; width: 12px; height: 12px; vertical-align: middle; margin: 0 4px 0 12px; }
text.tool-label { font-size: 10px; fill: #fff; pointer-events: none; } #failed pre { margin: 0; font-size: 12px; white-space: pre-wrap; }
#search { font-size: 15px; padding: 6px 10px; width: min(600px, 90%); } #results li { margin: 4px 0; }
.deferred-yes { color: #a15c00; } .deferred-no { color: #1a7f37; }`

function decisionRows(decisions) {
  return decisions
    .map((d) => `<tr data-window="${d.contextWindow}"><td class="num">${num(d.contextWindow)}</td><td class="num">${num(d.threshold)}</td>` +
      `<td class="${d.deferred ? 'deferred-yes' : 'deferred-no'}">${d.deferred ? `defer ${plural(d.deferred, 'tool')}` : 'defer nothing'}</td>` +
      `<td class="num">${num(d.inlineTokens)}</td><td class="num">${num(d.savedTokens)}</td><td>${escapeHtml(d.reason)}</td></tr>`)
    .join('\n')
}

function topToolRows(doc) {
  const serverName = new Map(doc.servers.map((s) => [s.id, s.name]))
  return [...doc.tools]
    .sort((a, b) => b.tokens - a.tokens)
    .slice(0, TOP_TOOLS)
    .map((t) => `<tr><td>${escapeHtml(t.tool ?? t.name)}</td><td>${escapeHtml(serverName.get(t.server))}</td><td class="num">${num(t.tokens)}</td><td class="num">${pct(t.share)}</td><td>${escapeHtml(clip(t.description, 140))}</td></tr>`)
    .join('\n')
}

/**
 * The tools tool trust's scanner flags (docs/security.md): each finding with its level, rule,
 * field and the words matched, so the reader sees why without running another command.
 */
function flaggedSection(doc) {
  const flagged = doc.tools.filter((t) => t.findings?.length)
  if (!flagged.length) return ''
  const serverName = new Map(doc.servers.map((s) => [s.id, s.name]))
  const rows = flagged
    .flatMap((t) => t.findings.map((f) => `<tr><td>${escapeHtml(t.tool ?? t.name)}</td><td>${escapeHtml(serverName.get(t.server) ?? t.server)}</td><td class="${f.level === 'block' ? 'deferred-yes' : 'muted'}">${escapeHtml(f.level)}</td><td>${escapeHtml(f.rule)}</td><td>${escapeHtml(f.field)}: “${escapeHtml(f.excerpt)}”</td></tr>`))
    .join('\n')
  return `<h2>Tools whose description may address the model</h2>
<p class="muted">Found by tool trust's offline scanner. <b>block</b>: toolreg serve holds the tool until approved (toolreg trust approve SERVER/TOOL); <b>warn</b>: served, worth a look. toolreg tools SERVER explains each finding.</p>
<table id="flagged"><thead><tr><th>tool</th><th>server</th><th>level</th><th>rule</th><th>where and what</th></tr></thead><tbody>
${rows}
</tbody></table>`
}

/**
 * Each server's colour, shared by its treemap cell and its legend swatch: hues spread by the
 * golden angle, strong for live servers, pale for the listed-only catalog.
 */
export function serverColor(index, kind) {
  const hue = ((index * 137.508) % 360).toFixed(1)
  return kind === 'catalog' ? `hsl(${hue},35%,62%)` : `hsl(${hue},70%,45%)`
}

const LEGEND_SERVERS = 12

function legend(doc) {
  const swatch = (s, i) => `<span class="swatch" data-server="${escapeHtml(s.id)}" style="background:${serverColor(i, s.kind)}"></span>${escapeHtml(s.name)}`
  const ranked = doc.servers.map((s, i) => [s, i]).filter(([s]) => s.tokens > 0).sort((a, b) => b[0].tokens - a[0].tokens)
  const shown = ranked.slice(0, LEGEND_SERVERS).map(([s, i]) => swatch(s, i))
  const more = ranked.length > LEGEND_SERVERS ? ` and ${num(ranked.length - LEGEND_SERVERS)} more (hover a cell for its name)` : ''
  return `<p class="legend muted">Area is proportional to tokens; strong colours are live MCP servers, pale ones the listed-only catalog. Inner boxes are tools, darker when deferred at ${num(doc.contextWindow)}.<br>${shown.join(' ')}${more}</p>`
}

function failedSection(failed) {
  if (!failed.length) return ''
  const rows = failed
    .map((s) => `<tr data-server="${escapeHtml(s.id)}"><td>${escapeHtml(s.id)}</td><td>${escapeHtml(s.summary ?? s.error)}${s.hint ? `<br><span class="muted">hint: ${escapeHtml(s.hint)}</span>` : ''}</td><td><code>${escapeHtml(s.command)}</code></td><td><pre>${escapeHtml((s.stderrTail ?? '').trim().split('\n').slice(-10).join('\n'))}</pre></td></tr>`)
    .join('\n')
  return `<h2 class="deferred-yes">Servers that failed (${failed.length})</h2>
<table id="failed"><thead><tr><th>server</th><th>what happened</th><th>command or URL</th><th>stderr (last lines)</th></tr></thead><tbody>
${rows}
</tbody></table>`
}

function skippedSection(skipped) {
  if (!skipped.length) return ''
  const rows = skipped
    .map((s) => `<tr data-server="${escapeHtml(s.id ?? '')}"><td>${escapeHtml(s.id ?? '(the whole file)')}</td><td>${escapeHtml(s.why)}</td><td><code>${escapeHtml(s.file ?? '')}</code></td></tr>`)
    .join('\n')
  return `<h2 class="deferred-yes">Servers skipped (${skipped.length})</h2>
<p class="muted">Not started, so not counted.</p>
<table id="skipped"><thead><tr><th>server</th><th>why</th><th>config file</th></tr></thead><tbody>
${rows}
</tbody></table>`
}

/** Per config file, what its client sends; shown when there are several files or shared servers. */
function clientSection(doc) {
  if (doc.clients.length < 2 && !doc.summary.sharedServers) return ''
  const rows = doc.clients
    .map(({ file, client, servers, failedServers, summary: m }) => `<tr data-file="${escapeHtml(file)}"><td>${escapeHtml(client ?? '')} <span class="muted">${escapeHtml(file)}</span></td>` +
      `<td class="num">${num(servers.length)}${failedServers ? ` (${failedServers} failed)` : ''}</td><td class="num">${num(m.tools)}</td><td class="num">${num(m.tokens)}</td>` +
      `<td class="${m.deferredTools ? 'deferred-yes' : 'deferred-no'}">${m.deferredTools ? `defer ${num(m.deferredTools)} tools` : 'defer nothing'}</td><td class="num">${num(m.inlineTokens)}</td></tr>`)
    .join('\n')
  const shared = doc.servers.filter((s) => s.sameAs).map((s) => `${s.id} is the same server as ${s.sameAs}`)
  return `<h2>Per config file</h2>
<p class="muted">What each client sends with every request at a ${num(doc.contextWindow)}-token window. The other totals count every server once${shared.length ? ` (${escapeHtml(shared.join('; '))})` : ''}.</p>
<table id="clients"><thead><tr><th>config file</th><th>servers</th><th>tools</th><th>tokens</th><th>decision</th><th>tokens per request</th></tr></thead><tbody>
${rows}
</tbody></table>`
}

/** The page as a string. */
export function buildReport(doc, decisions) {
  // A server listed again under another id (`sameAs`) is drawn and ranked once, as the totals count it.
  const counted = doc.servers.filter((s) => !s.sameAs)
  const serverIndex = new Map(counted.map((s, i) => [s.id, i]))
  const view = { ...doc, servers: counted, tools: doc.tools.filter((t) => serverIndex.has(t.server)) }
  const data = {
    servers: counted.map((s, i) => ({ id: s.id, name: s.name, kind: s.kind, tokens: s.tokens, toolCount: s.toolCount, color: serverColor(i, s.kind) })),
    // Per tool only what the page draws and searches, as a row [server index, name, one-liner
    // cut at 120 characters, tokens, deferred 0/1]: the 11k-tool catalog's page was 2.2 MB with
    // wire ids, 200-character descriptions and a key per value.
    tools: view.tools.map((t) => [serverIndex.get(t.server), t.tool ?? t.name, clip(t.description, 120), t.tokens, t.deferred ? 1 : 0]),
  }
  const m = doc.summary
  const failed = doc.servers.filter((s) => s.status === 'failed')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>toolreg report: ${plural(m.tools, 'tool')}, ${plural(m.tokens, 'token')}</title>
<style>${CSS}</style></head><body>
<h1>toolreg report</h1>
${doc.notice ? `<p class="deferred-yes"><b>${escapeHtml(doc.notice)}</b></p>` : ''}
<p class="muted">${escapeHtml(doc.configFiles.length ? `Config: ${doc.configFiles.join(', ')}` : `The demo setup: the MCP reference servers, run live, and ${doc.catalog?.label ?? 'no catalog'}, listed but not callable`)}.<br>
${plural(doc.summary.mcpServers, 'MCP server')} (${m.failedServers} failed${doc.skipped.length ? `, ${doc.skipped.length} skipped` : ''}), ${plural(counted.filter((s) => s.kind === 'catalog').length, 'catalog server')}, ${plural(m.tools, 'tool')};
their definitions cost <b>${num(m.tokens)}</b> ${escapeHtml(doc.encoding)} tokens, sent with every request unless deferred.</p>
${failedSection(failed)}
${skippedSection(doc.skipped)}
${flaggedSection(view)}
${clientSection(doc)}
<h2>Token cost by server and tool</h2>
${m.tools ? `${legend(view)}
<svg id="treemap" viewBox="0 0 1200 640" role="img" aria-label="treemap of token cost"></svg>` : `<p id="no-tools" class="deferred-yes">No tools to draw: ${failed.length ? 'every server failed (see above)' : doc.servers.length ? 'the servers list none' : 'every server was skipped (see above)'}.</p>`}
<h2>Defer decision by context window</h2>
<table id="decisions"><thead><tr><th>window</th><th>threshold (10%)</th><th>decision</th><th>tokens per request</th><th>saved</th><th>reason</th></tr></thead><tbody>
${decisionRows(decisions)}
</tbody></table>
<h2>Costliest tools</h2>
<table id="top-tools"><thead><tr><th>tool</th><th>server</th><th>tokens</th><th>% of ${num(doc.contextWindow)}</th><th>description</th></tr></thead><tbody>
${topToolRows(view)}
</tbody></table>
<h2>Search the catalog</h2>
<p class="muted">BM25 over tool names, server names and descriptions, computed in this page (a simplified JavaScript version of toolreg's ranking: no parameter fields, no embeddings).</p>
<input id="search" type="search" placeholder="e.g. weather forecast, read a file, 天气" autocomplete="off">
<ol id="results"></ol>
<script type="application/json" id="toolreg-data">${scriptJson(data)}</script>
<script>${PAGE_SCRIPT}</script>
</body></html>
`
}
