#!/usr/bin/env node
// npm run lanes:latest — the strategy and wire tests against the newest published versions of
// the packages users install today (`ai`, `@ai-sdk/*`, `@modelcontextprotocol/sdk`, each major
// toolreg supports), not the ones the lock files pin. Each lane is a scratch folder beside
// lanes/ai7 (lanes/latest-*, ignored by git) with its own package.json naming the newest
// versions; the checkout's toolreg is installed into it as an app would have it.
//
// When every lane passes, js/tested-versions.json (which warns users of newer versions) and
// the table in docs/platforms.md between the `lanes:latest` markers are updated.
//
//   npm run lanes:latest                 resolve, install, test, record
//   npm run lanes:latest -- --dry-run    only print the versions it would test
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureNode22 } from './ensure-node22.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const require = createRequire(import.meta.url)
const { atLeast } = require('../js/versions.js')
const shell = process.platform === 'win32'

/** A lane's test files: lanes/ai6 holds the ai@6 side, lanes/ai7 is the ai@7 lane itself. */
const testsOf = (folder) => readdirSync(path.join(root, 'lanes', folder)).filter((f) => f.endsWith('.test.mjs')).map((f) => path.join(root, 'lanes', folder, f))

const LANES = [
  { name: 'latest-ai6', node: 20, majors: { ai: 6, '@ai-sdk/anthropic': 3, '@ai-sdk/openai': 3, '@modelcontextprotocol/sdk': 1, '@modelcontextprotocol/client': 2 }, tests: testsOf('ai6') },
  { name: 'latest-ai7', node: 22, majors: { ai: 7, '@ai-sdk/anthropic': 4, '@ai-sdk/openai': 4, '@ai-sdk/mcp': 2 }, tests: testsOf('ai7') },
]

/** Test-only dependencies every lane keeps at the checkout's versions. */
const KEPT = { vitest: lockedVersion('vitest'), zod: lockedVersion('zod') }

function lockedVersion(pkg) {
  return JSON.parse(readFileSync(path.join(root, 'node_modules', pkg, 'package.json'), 'utf8')).version
}

/** The newest published version of `pkg` with major `major` (pre-releases left out). */
function newest(pkg, major) {
  const out = execFileSync('npm', ['view', `${pkg}@^${major}`, 'version', '--json'], { encoding: 'utf8', shell })
  const versions = [].concat(JSON.parse(out)).filter((v) => /^\d+\.\d+\.\d+$/.test(v))
  if (versions.length === 0) throw new Error(`no published ${pkg} ${major}.x`)
  return versions.reduce((best, v) => (atLeast(v, best) ? v : best))
}

function prepare(lane, versions) {
  const dir = path.join(root, 'lanes', lane.name)
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  const devDependencies = { ...versions, ...KEPT }
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ name: `toolreg-lane-${lane.name}`, private: true, type: 'module', devDependencies }, null, 2)}\n`)
  copyFileSync(path.join(root, 'lanes', 'ai7', 'install-toolreg.mjs'), path.join(dir, 'install-toolreg.mjs'))
  copyFileSync(path.join(root, 'lanes', 'ai7', 'vitest.config.mjs'), path.join(dir, 'vitest.config.mjs'))
  // Beside lanes/ai6 and lanes/ai7, so their imports of ../../__tests__ resolve as there.
  for (const file of lane.tests) copyFileSync(file, path.join(dir, path.basename(file)))
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-package-lock', '--loglevel=error'], { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'], shell })
  return dir
}

function run(lane, dir) {
  const node = lane.node === 22 ? ensureNode22() : process.execPath
  const started = Date.now()
  const result = spawnSync(node, ['node_modules/vitest/vitest.mjs', 'run'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, CI: 'true', NO_COLOR: '1', FORCE_COLOR: '0' },
    maxBuffer: 64 * 1024 * 1024,
  })
  const output = `${result.stdout}\n${result.stderr}`
  const summary = /Tests\s+(\d+ passed[^\n]*)/.exec(output)?.[1]?.trim() ?? 'no test summary'
  return { ok: result.status === 0 && /Tests\s+\d+ passed/.test(output), output, summary, seconds: Math.round((Date.now() - started) / 1000) }
}

/** Raises the newest tested version of each package toolreg detects features in. */
function recordTested(results) {
  const file = path.join(root, 'js', 'tested-versions.json')
  const tested = JSON.parse(readFileSync(file, 'utf8'))
  for (const { versions } of results) {
    for (const [pkg, version] of Object.entries(versions)) {
      if (!(pkg in tested.packages)) continue
      const major = version.split('.')[0]
      const known = tested.packages[pkg][major]
      if (known === undefined || !atLeast(known, version)) tested.packages[pkg][major] = version
    }
  }
  writeFileSync(file, `${JSON.stringify(tested, null, 2)}\n`)
}

const BEGIN = '<!-- lanes:latest -->'
const END = '<!-- /lanes:latest -->'

function recordInDocs(results) {
  const file = path.join(root, 'docs', 'platforms.md')
  const text = readFileSync(file, 'utf8')
  const day = new Date().toISOString().slice(0, 10)
  const rows = results.map(({ lane, versions, summary, seconds }) => `| ${lane.name} (Node ${lane.node}) | ${Object.entries(versions).map(([p, v]) => `\`${p}@${v}\``).join(', ')} | ${summary}, ${seconds} s |`)
  const block = [BEGIN, `Last run ${day} (\`npm run lanes:latest\`, Linux x86_64):`, '', '| lane | newest published versions installed | result |', '|---|---|---|', ...rows, END].join('\n')
  const start = text.indexOf(BEGIN)
  const end = text.indexOf(END)
  if (start < 0 || end < 0) throw new Error(`docs/platforms.md has no ${BEGIN} … ${END} block to record the run in`)
  writeFileSync(file, text.slice(0, start) + block + text.slice(end + END.length))
}

function main() {
  const dryRun = process.argv.includes('--dry-run')
  if (!existsSync(path.join(root, 'binding.js'))) throw new Error('build the addon first (npm run build:debug)')
  const results = []
  for (const lane of LANES) {
    const versions = Object.fromEntries(Object.entries(lane.majors).map(([pkg, major]) => [pkg, newest(pkg, major)]))
    console.log(`${lane.name}: ${Object.entries(versions).map(([p, v]) => `${p}@${v}`).join(' ')}`)
    if (dryRun) continue
    const outcome = run(lane, prepare(lane, versions))
    console.log(`${lane.name}: ${outcome.ok ? 'passed' : 'FAILED'} (${outcome.summary}, ${outcome.seconds} s)`)
    if (!outcome.ok) {
      console.error(outcome.output)
      process.exitCode = 1
    }
    results.push({ lane, versions, ...outcome })
  }
  if (dryRun) return
  if (results.every((r) => r.ok)) {
    recordTested(results)
    recordInDocs(results)
    console.log('recorded in js/tested-versions.json and docs/platforms.md')
  } else {
    console.error('not recorded: a lane failed')
  }
}

try {
  main()
} catch (error) {
  console.error(`lanes:latest: ${error.message}`)
  process.exit(1)
}
