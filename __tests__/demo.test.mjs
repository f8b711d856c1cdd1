// The README's first command, run the way a newcomer runs it: a fresh clone has no ../shared,
// so the demo (toolreg audit + searches on the demo setup) must work on committed data alone.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const emptyData = mkdtempSync(join(tmpdir(), 'toolreg-no-data-'))
afterAll(() => rmSync(emptyData, { recursive: true, force: true }))

describe('npm run demo on a fresh clone (no shared data)', () => {
  it('exits 0 and prints every section it promises', () => {
    const started = Date.now()
    const run = spawnSync('npm', ['run', '--silent', 'demo'], {
      cwd: root,
      // A newcomer has no cached tool lists either: the audit starts every server.
      env: { ...process.env, TOOLREG_DATA: emptyData, TOOLREG_CACHE_DIR: mkdtempSync(join(tmpdir(), 'toolreg-demo-cache-')) },
      encoding: 'utf8',
      timeout: 120_000,
    })
    expect(run.stderr).not.toMatch(/Error/)
    expect(run.status).toBe(0)
    // Colours are on where the environment asks for them (CI=true does, for picocolors).
    const out = run.stdout.replace(/\x1b\[[0-9;]*m/g, '')
    // toolreg audit on the embedded default: the reference servers live, the committed excerpt.
    expect(out).toContain('$ toolreg audit --demo --context-window 200000')
    for (const id of ['everything', 'filesystem', 'memory']) expect(out).toMatch(new RegExp(`│ ${id} +│ stdio +│ connected`))
    expect(out).toContain('Catalog: the committed excerpt of the Toucan catalog')
    expect(out).toMatch(/decision +defer [\d,]+ tools: auto_pool_deferred/)
    expect(out).toMatch(/saved +[\d,]+ tokens per request/)
    // Then searches over the same tools, words only and hybrid.
    expect(out).toMatch(/\$ toolreg search "read a text file from disk" --demo --limit 3\n 1\. filesystem\/read_text_file /)
    expect(out).toMatch(/\$ toolreg search "current weather forecast for a city" --demo --limit 3\n 1\. toucan-\d+\/\S*weather/i)
    expect(out).toMatch(/\$ toolreg search "how is bitcoin trading today" --demo --limit 3 --hybrid\n 1\. toucan-\d+\/\S*bitcoin/i)
    // The goal is 30 s after the build on an idle machine; the bound leaves room for a loaded test run.
    expect(Date.now() - started).toBeLessThan(60_000)
  }, 120_000)
})
