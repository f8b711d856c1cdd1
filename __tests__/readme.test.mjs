// Every ```js block of the README, run as a user would paste it: an ES module importing
// 'toolreg' (this checkout, linked into node_modules), in its own Node process. The MCP block
// starts the real reference server with `npx` (installed as a devDependency, so offline).
import { describe, expect, it } from 'vitest'
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { root } from './cliRun.mjs'

/** `{ heading, code }` for each ```js block (or ```lang), with the section it is in. */
export function codeBlocks(markdown, lang = 'js') {
  const blocks = []
  let heading = ''
  const lines = markdown.split('\n')
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].startsWith('#')) heading = lines[i].replace(/^#+\s*/, '')
    const open = /^```(\w*)/.exec(lines[i])
    if (!open) continue
    const end = lines.indexOf('```', i + 1)
    if (open[1] === lang) blocks.push({ heading, line: i + 1, code: lines.slice(i + 1, end).join('\n') })
    i = end
  }
  return blocks
}

const dir = join(root, 'target', 'readme-blocks')
rmSync(dir, { recursive: true, force: true })
mkdirSync(join(dir, 'node_modules'), { recursive: true })
symlinkSync(root, join(dir, 'node_modules', 'toolreg'))

function run(file) {
  return new Promise((resolve) => {
    // The local-model block caches vectors in the per-user cache folder: here, a test folder.
    const env = { ...process.env, XDG_CACHE_HOME: join(dir, 'cache') }
    const child = spawn(process.execPath, [file], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

const blocks = codeBlocks(readFileSync(join(root, 'README.md'), 'utf8'))

describe('README code blocks', () => {
  // Guards the extractor (a block it misses is a block nobody runs); new blocks just run too.
  it('finds at least the blocks it knows of', () => {
    expect(blocks.map((b) => b.heading)).toEqual(expect.arrayContaining([
      'Quick start',
      'Registry and search',
      'Local neural embeddings (optional)',
      'Token math and the defer decision',
      'Meta-tools and exposition',
      'Provider-safe schemas',
      'MCP',
      'Tool-call repair',
    ]))
  })

  for (const [i, block] of blocks.entries()) {
    it(`runs as written: ${block.heading} (README.md:${block.line})`, async () => {
      const file = join(dir, `block-${i + 1}.mjs`)
      writeFileSync(file, block.code)
      const out = await run(file)
      // A warning is a silent failure too (an entry deactivated, a fallback taken).
      expect(out.stderr, out.stdout).toBe('')
      expect(out.code).toBe(0)
      // The outputs the blocks promise in their comments.
      for (const [, expected] of block.code.matchAll(/\/\/ (The sum of 2 and 40 is 42\.|\{ city: 'Paris', days: 3 \}|\{ city: 'Paris', temperature: 21 \}|'meta-tools')/g)) {
        expect(out.stdout).toContain(expected.replace(/^'(.*)'$/, '$1'))
      }
    }, 60_000)
  }
})

describe('README config blocks', () => {
  const configs = codeBlocks(readFileSync(join(root, 'README.md'), 'utf8'), 'json')

  it('are MCP configs the CLI reads as written, toolreg settings included', async () => {
    const { parseConfig } = await import('../cli/config.mjs')
    const { applyProfile } = await import('../cli/profiles.mjs')
    expect(configs.length).toBeGreaterThanOrEqual(2)
    for (const block of configs) {
      const parsed = parseConfig(JSON.parse(block.code), `README.md:${block.line}`, { env: {} })
      expect(parsed.servers.length, `README.md:${block.line}`).toBeGreaterThan(0)
      for (const name of Object.keys(parsed.settings.profiles)) {
        expect(applyProfile(parsed.servers, parsed.settings, name).servers.length).toBeGreaterThan(0)
      }
    }
  })
})

describe('README size', () => {
  // The README is the user's manual; measurements, transcripts and the full reference live in
  // docs/, so it stays short enough to read through.
  it('is at most 500 lines', () => {
    const text = readFileSync(join(root, 'README.md'), 'utf8')
    expect(text.split('\n').length - (text.endsWith('\n') ? 1 : 0)).toBeLessThanOrEqual(500)
  })
})
