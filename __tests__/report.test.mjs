// `toolreg report` opened in headless Chromium (Debian's package, installed by
// scripts/ensure-chromium.sh when absent): the treemap, the decisions and the search box.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { chromium } from 'playwright-core'
import { root, runCli, writeConfig } from './cliRun.mjs'

const ensure = spawnSync('sh', [join(root, 'scripts', 'ensure-chromium.sh')], { encoding: 'utf8', timeout: 600_000 })
const chromiumPath = ensure.status === 0 ? ensure.stdout.trim().split('\n').pop() : null
if (!chromiumPath) console.warn(`report.test: skipped — ${ensure.stderr.trim() || 'chromium is not available'}`)

const outDir = join(root, 'target', 'report')
const reportPath = join(outDir, 'toolreg-report.html')
const screenshotPath = join(root, 'target', 'toolreg-report.png')
const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

describe.skipIf(!chromiumPath)('toolreg report in headless Chromium', () => {
  let doc
  let context
  let page
  const requests = []
  const profile = mkdtempSync(join(tmpdir(), 'toolreg-chromium-'))

  beforeAll(async () => {
    mkdirSync(outDir, { recursive: true })
    const report = await runCli(['report', '--demo', '--out', reportPath])
    expect(report.code, report.stderr).toBe(0)
    doc = JSON.parse((await runCli(['audit', '--demo', '--json'])).stdout)
    context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath, headless: true, args: FLAGS, viewport: { width: 1280, height: 900 } })
    page = await context.newPage()
    page.on('request', (r) => requests.push(r.url()))
    await page.goto(pathToFileURL(reportPath).href)
  }, 180_000)

  afterAll(async () => {
    await context?.close()
    rmSync(profile, { recursive: true, force: true })
  })

  it('is one self-contained file: nothing is fetched', () => {
    const html = readFileSync(reportPath, 'utf8')
    expect(html).not.toMatch(/<(script|link|img)\b[^>]*\b(src|href)=/i)
    expect(requests.filter((u) => !u.startsWith('file:'))).toEqual([])
  })

  it('draws one rectangle per server, with areas proportional to tokens', async () => {
    const rects = await page.$$eval('rect.server', (els) =>
      els.map((e) => ({ id: e.getAttribute('data-server'), tokens: Number(e.getAttribute('data-tokens')), area: e.width.baseVal.value * e.height.baseVal.value })),
    )
    const servers = doc.servers.filter((s) => s.tokens > 0)
    expect(rects.map((r) => r.id).sort()).toEqual(servers.map((s) => s.id).sort())
    const tokensOf = new Map(servers.map((s) => [s.id, s.tokens]))
    const totalTokens = servers.reduce((sum, s) => sum + s.tokens, 0)
    const totalArea = rects.reduce((sum, r) => sum + r.area, 0)
    expect(totalArea).toBeCloseTo(1200 * 640, 0)
    for (const r of rects) {
      expect(r.tokens).toBe(tokensOf.get(r.id))
      expect(Math.abs(r.area / totalArea - r.tokens / totalTokens)).toBeLessThan(1e-6)
    }
    // The README's picture (docs/report.png): the treemap and the decisions, at a size worth committing.
    await page.screenshot({ path: join(root, 'target', 'toolreg-report-top.png'), clip: { x: 0, y: 0, width: 1280, height: 900 } })
  })

  it('shows the decision at 8k, 32k, 128k, 200k and 1M windows', async () => {
    const windows = await page.$$eval('#decisions tr[data-window]', (rows) => rows.map((r) => Number(r.getAttribute('data-window'))))
    expect(windows).toEqual([8_000, 32_000, 128_000, 200_000, 1_000_000])
    expect(await page.textContent('#decisions')).toContain('defer')
  })

  it('every legend swatch has the colour of its server\'s cell, and tools carry labels', async () => {
    const cells = new Map(await page.$$eval('rect.server', (els) => els.map((e) => [e.getAttribute('data-server'), getComputedStyle(e).fill])))
    const swatches = await page.$$eval('.legend .swatch', (els) => els.map((e) => [e.getAttribute('data-server'), getComputedStyle(e).backgroundColor]))
    expect(swatches.length).toBeGreaterThan(3)
    for (const [id, color] of swatches) expect(color, id).toBe(cells.get(id))
    const labels = await page.$$eval('text.tool-label', (els) => els.map((e) => e.getAttribute('data-tool')))
    const costliest = [...doc.tools].sort((a, b) => b.tokens - a.tokens).slice(0, 3).map((t) => t.tool)
    expect(labels).toEqual(expect.arrayContaining(costliest))
  })

  it('the search box finds a known tool', async () => {
    await page.fill('#search', 'read the contents of a text file')
    const tools = await page.$$eval('#results li', (items) => items.map((li) => li.getAttribute('data-tool')))
    expect(tools.slice(0, 5)).toContain('read_text_file')
    await page.screenshot({ path: screenshotPath, fullPage: true })
  })
})

describe.skipIf(!chromiumPath)('toolreg report when every server failed', () => {
  it('shows each failure on the page instead of an empty treemap', async () => {
    const file = writeConfig({
      mcpServers: {
        dies: { command: process.execPath, args: ['-e', "console.error('boom: no API key'); process.exit(3)"] },
        missing: { command: 'no-such-mcp-server-xyz' },
      },
    })
    const out = join(mkdtempSync(join(tmpdir(), 'toolreg-failed-report-')), 'report.html')
    const run = await runCli(['report', '--config', file, '--out', out])
    expect(run.code).toBe(4)
    const profile = mkdtempSync(join(tmpdir(), 'toolreg-chromium-'))
    const context = await chromium.launchPersistentContext(profile, { executablePath: chromiumPath, headless: true, args: FLAGS })
    try {
      const page = await context.newPage()
      await page.goto(pathToFileURL(out).href)
      const rows = await page.$$eval('#failed tbody tr', (trs) => trs.map((tr) => [tr.getAttribute('data-server'), tr.innerText]))
      expect(rows.map(([id]) => id)).toEqual(['dies', 'missing'])
      expect(rows[0][1]).toContain('exited with status 3')
      expect(rows[0][1]).toContain('boom: no API key')
      expect(rows[1][1]).toContain('the command "no-such-mcp-server-xyz" was not found')
      expect(await page.textContent('#no-tools')).toContain('every server failed')
      expect(await page.$('#treemap')).toBeNull()
    } finally {
      await context.close()
      rmSync(profile, { recursive: true, force: true })
    }
  }, 60_000)
})
