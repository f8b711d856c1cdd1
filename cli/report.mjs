// `toolreg report`: one self-contained HTML page (inline CSS, script and data; nothing fetched
// at view time) from an audit document and the decisions at several windows.
import { readFileSync } from 'node:fs'
import { clip, num, pct } from './format.mjs'

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
.legend span { display: inline-block; width: 12px; height: 12px; vertical-align: middle; margin: 0 4px 0 12px; }
#search { font-size: 15px; padding: 6px 10px; width: min(600px, 90%); } #results li { margin: 4px 0; }
.deferred-yes { color: #a15c00; } .deferred-no { color: #1a7f37; }`

function decisionRows(decisions) {
  return decisions
    .map((d) => `<tr data-window="${d.contextWindow}"><td class="num">${num(d.contextWindow)}</td><td class="num">${num(d.threshold)}</td>` +
      `<td class="${d.deferred ? 'deferred-yes' : 'deferred-no'}">${d.deferred ? `defer ${num(d.deferred)} tools` : 'defer nothing'}</td>` +
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

/** The page as a string. */
export function buildReport(doc, decisions) {
  const serverIndex = new Map(doc.servers.map((s, i) => [s.id, i]))
  const data = {
    servers: doc.servers.map((s) => ({ id: s.id, name: s.name, kind: s.kind, tokens: s.tokens, toolCount: s.toolCount })),
    tools: doc.tools.map((t) => ({ n: t.name, s: serverIndex.get(t.server), t: t.tool ?? t.name, d: t.description, k: t.tokens, x: t.deferred })),
  }
  const m = doc.summary
  const failed = doc.servers.filter((s) => s.status === 'failed')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>toolreg report: ${num(m.tools)} tools, ${num(m.tokens)} tokens</title>
<style>${CSS}</style></head><body>
<h1>toolreg report</h1>
<p class="muted">${escapeHtml(doc.config ? `Config: ${doc.config}` : `Embedded default: the MCP reference servers, run live, and ${doc.catalog?.label ?? 'no catalog'}, listed but not callable`)}.<br>
${num(doc.summary.mcpServers)} MCP servers (${m.failedServers} failed), ${num(doc.servers.length - doc.summary.mcpServers)} catalog servers, ${num(m.tools)} tools;
their definitions cost <b>${num(m.tokens)}</b> ${escapeHtml(doc.encoding)} tokens, sent with every request unless deferred.</p>
${failed.length ? `<p class="deferred-yes">Failed: ${failed.map((s) => `${escapeHtml(s.id)} (${escapeHtml(s.error)})`).join('; ')}</p>` : ''}
<h2>Token cost by server and tool</h2>
<p class="legend muted">Area is proportional to tokens. <span style="background:hsl(200,70%,45%)"></span>live MCP server <span style="background:hsl(200,35%,62%)"></span>catalog server (listed only); inner boxes are tools, darker when deferred at ${num(doc.contextWindow)}. Hover for names.</p>
<svg id="treemap" viewBox="0 0 1200 640" role="img" aria-label="treemap of token cost"></svg>
<h2>Defer decision by context window</h2>
<table id="decisions"><thead><tr><th>window</th><th>threshold (10%)</th><th>decision</th><th>tokens per request</th><th>saved</th><th>reason</th></tr></thead><tbody>
${decisionRows(decisions)}
</tbody></table>
<h2>Costliest tools</h2>
<table id="top-tools"><thead><tr><th>tool</th><th>server</th><th>tokens</th><th>% of ${num(doc.contextWindow)}</th><th>description</th></tr></thead><tbody>
${topToolRows(doc)}
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
