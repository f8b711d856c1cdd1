// The README's first command, run the way a newcomer runs it: a fresh clone has no ../shared,
// so the demo must work on the committed fixtures alone.
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
    const run = spawnSync('npm', ['run', '--silent', 'demo'], {
      cwd: root,
      env: { ...process.env, TOOLREG_DATA: emptyData },
      encoding: 'utf8',
      timeout: 120_000,
    })
    expect(run.stderr).not.toMatch(/Error/)
    expect(run.status).toBe(0)
    const out = run.stdout
    expect(out).toContain('Catalog: 62 reference-server tools')
    expect(out).toMatch(/Token cost of the reference servers/)
    for (const server of ['mcp:everything', 'mcp:filesystem', 'mcp:memory', 'mcp:github']) expect(out).toContain(server)
    expect(out).toMatch(/Whole catalog \(62 tools\) for a \d+k window: auto_pool_deferred/)
    expect(out).toMatch(/tool_search "create a github issue"[\s\S]*create_issue/)
    expect(out).toMatch(/Words alone vs built-in embeddings/)
  })
})
