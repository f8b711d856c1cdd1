// The package as a user gets it: `npm pack` the main package and this machine's platform package
// (the npm/ folder whose os/cpu/libc fields select it, as npm picks one), install
// both tarballs into a fresh project offline with no Rust on the PATH, and run the README's
// first example there, as CommonJS and as an ES module. Also: the TypeScript host in
// __tests__/types/ compiles against index.d.ts, and its deliberate misuses do not.
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('..', import.meta.url))
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const libc = process.report.getReport().header.glibcVersionRuntime ? 'glibc' : 'musl'
const platformDirs = readdirSync(join(root, 'npm'))
  .map((dir) => join(root, 'npm', dir))
  .filter((dir) => {
    const { os, cpu, libc: libcs } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
    return os.includes(process.platform) && cpu.includes(process.arch) && (!libcs || libcs.includes(libc))
  })
if (platformDirs.length !== 1) throw new Error(`expected one platform package for this machine in npm/, found ${platformDirs.length}`)
const platformDir = platformDirs[0]
const platformPkg = JSON.parse(readFileSync(join(platformDir, 'package.json'), 'utf8'))

/** PATH without any folder that holds cargo or rustc: the install must not need Rust. */
function pathWithoutRust() {
  return process.env.PATH.split(delimiter)
    .filter((dir) => !/cargo|rustup/.test(dir) && spawnSync('sh', ['-c', `test -x "${dir}/cargo" || test -x "${dir}/rustc"`]).status !== 0)
    .join(delimiter)
}

function npm(args, cwd, env = process.env) {
  return execFileSync('npm', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 180_000 })
}

const example = (importLine) => `${importLine}
const registry = new ToolRegistry({ logger: { warn() {} } })
const schema = jsonSchema({ type: 'object', properties: { query: { type: 'string', description: 'What to look for' } }, required: ['query'] })
for (let i = 0; i < 8; i++) {
  registry.register({
    name: 'search_topic_' + i,
    namespace: i < 4 ? 'web' : 'mcp:docs',
    description: 'Search topic ' + i + (i === 5 ? ' weather forecasts' : ''),
    defer: 'auto',
    tool: tool({ description: 'Search topic ' + i + ' '.padEnd(2000, 'x'), inputSchema: schema, execute: async ({ query }) => ({ i, query }) }),
  })
}
const tools = registry.selectActiveTools({ mcpToolIds: new Set() })
const { tools: exposed, systemPrompt, decision } = await applyDeferExposition(tools, registry, 8_000)
const found = await exposed.tool_search.execute({ query: 'weather forecasts' }, { toolCallId: 'c', messages: [] })
console.log(JSON.stringify({ reason: decision.reasonCode, names: Object.keys(exposed).sort(), hasSection: Boolean(systemPrompt), first: found.matchedNamespaces[0].tools[0].name }))
`

describe('the packed package, installed offline without Rust', () => {
  let dir
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'toolreg-consumer-'))
    const staged = join(dir, 'platform')
    mkdirSync(staged)
    copyFileSync(join(platformDir, 'package.json'), join(staged, 'package.json'))
    for (const file of platformPkg.files) copyFileSync(join(root, file), join(staged, file))
    npm(['pack', '--pack-destination', dir], staged)
    npm(['pack', '--ignore-scripts', '--pack-destination', dir], root)
  }, 240_000)
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  // A private npm cache: what the offline installs find is exactly what this test put there.
  const cacheEnv = () => ({ ...process.env, npm_config_cache: join(dir, 'npm-cache') })
  const offlineEnv = () => ({ ...cacheEnv(), PATH: pathWithoutRust(), npm_config_offline: 'true' })
  let cached = false

  /**
   * A fresh project with the main tarball (and `extra` tarballs) installed offline. The package's
   * registry dependencies (the lockfile's non-dev packages, at their locked versions) are put in
   * the private cache first, the one step that reaches the registry; `ai`, the peer a host
   * already has, is this checkout's copy.
   */
  function consumer(name, extra, flags = []) {
    if (!cached) {
      const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'))
      const specs = Object.entries(lock.packages)
        .filter(([path, info]) => path.startsWith('node_modules/') && !info.dev && !info.devOptional && info.version && !info.link)
        .map(([path, info]) => `${path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${info.version}`)
      npm(['cache', 'add', ...new Set(specs)], dir, cacheEnv())
      cached = true
    }
    const app = join(dir, name)
    mkdirSync(join(app, 'node_modules'), { recursive: true })
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true }))
    npm(['install', '--offline', '--legacy-peer-deps', '--no-audit', '--no-fund', ...flags, `../toolreg-${pkg.version}.tgz`, ...extra], app, offlineEnv())
    symlinkSync(join(root, 'node_modules', 'ai'), join(app, 'node_modules', 'ai'), 'dir')
    return app
  }

  it("names this machine's platform package as an optional dependency of the same version", () => {
    expect(pkg.optionalDependencies[platformPkg.name]).toBe(pkg.version)
    expect(platformPkg.version).toBe(pkg.version)
  })

  it('ships the JS, the types and the loader in the main tarball, and the addon only in the platform one', () => {
    const list = (file) => execFileSync('tar', ['tzf', join(dir, file)], { encoding: 'utf8' }).split('\n')
    const main = list(`toolreg-${pkg.version}.tgz`)
    for (const file of ['index.js', 'index.d.ts', 'binding.js', 'js/native.js', 'js/registry.js', 'js/defer.js']) expect(main).toContain(`package/${file}`)
    // The built-in embeddings ship once, in the main package, for every platform's addon.
    for (const file of ['vocab.txt', 'table.q4', 'scales.f32', 'weights.f32']) expect(main).toContain(`package/assets/static-embeddings/${file}`)
    expect(main.some((f) => f.endsWith('.node'))).toBe(false)
    expect(main.some((f) => f.includes('__tests__') || f.startsWith('package/src/'))).toBe(false)
    const platform = list(`${platformPkg.name}-${pkg.version}.tgz`)
    expect(platform).toContain(`package/${platformPkg.main}`)
    for (const file of platformPkg.files) expect(platform).toContain(`package/${file}`)
    expect(main.some((f) => f.includes('toolreg-exec.'))).toBe(false)
  })

  it('runs tool_exec code in the sandbox executable of the installed platform package', () => {
    const app = consumer('exec', [`../${platformPkg.name}-${pkg.version}.tgz`])
    writeFileSync(
      join(app, 'exec.cjs'),
      `const { ToolRegistry, createToolExecTool } = require('toolreg')
const { tool, jsonSchema } = require('ai')
const registry = new ToolRegistry({ logger: { warn() {} } })
registry.register({ name: 'add', namespace: 'math', description: 'Adds', defer: 'auto', tool: tool({ description: 'Adds', inputSchema: jsonSchema({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } }), execute: async ({ a, b }) => a + b }) })
createToolExecTool(registry).execute({ code: 'return await tools.add({ a: 2, b: 3 })' }, { toolCallId: 'c', messages: [] }).then((out) => console.log(JSON.stringify(out)))
`,
    )
    const out = execFileSync(process.execPath, ['exec.cjs'], { cwd: app, env: offlineEnv(), encoding: 'utf8' })
    expect(JSON.parse(out)).toEqual({ result: 5 })
  }, 180_000)

  it('installs from the two tarballs offline and runs the README example as CommonJS and as an ES module', () => {
    const app = consumer('app', [`../${platformPkg.name}-${pkg.version}.tgz`])
    const env = offlineEnv()
    expect(spawnSync('sh', ['-c', 'command -v cargo'], { env }).status).not.toBe(0)
    writeFileSync(join(app, 'example.cjs'), `(async () => {\n${example("const { ToolRegistry, applyDeferExposition } = require('toolreg')\nconst { tool, jsonSchema } = require('ai')")}\n})()`)
    writeFileSync(join(app, 'example.mjs'), example("import { ToolRegistry, applyDeferExposition } from 'toolreg'\nimport { tool, jsonSchema } from 'ai'"))
    for (const file of ['example.cjs', 'example.mjs']) {
      const out = JSON.parse(execFileSync(process.execPath, [file], { cwd: app, env, encoding: 'utf8' }))
      expect(out).toEqual({ reason: 'auto_pool_deferred', names: ['tool_inspect', 'tool_invoke', 'tool_search'], hasSection: true, first: 'search_topic_5' })
    }
    // Hybrid search with the built-in embeddings, read from the installed main package.
    const hybrid = `const { ToolRegistry } = require('toolreg')
      const { tool, jsonSchema } = require('ai')
      const registry = new ToolRegistry({ builtinEmbeddings: true })
      for (const [name, description] of [['send_mail', 'Send an email message'], ['read_file', 'Read a text file from disk']]) {
        registry.register({ name, namespace: 'x', description, defer: 'auto', tool: tool({ description, inputSchema: jsonSchema({ type: 'object' }) }) })
      }
      // No word in common with the answer: only the embeddings can find it.
      registry.embeddingsReady().then(() => registry.searchAsync('write a letter to a colleague', { limit: 1 })).then((hits) => console.log(hits[0]?.name))`
    expect(execFileSync(process.execPath, ['-e', hybrid], { cwd: app, env, encoding: 'utf8' }).trim()).toBe('send_mail')
  }, 180_000)

  it('without its platform package, says what to install', () => {
    const bare = consumer('bare', [], ['--omit=optional'])
    const run = spawnSync(process.execPath, ['-e', "require('toolreg')"], { cwd: bare, env: offlineEnv(), encoding: 'utf8' })
    expect(run.status).not.toBe(0)
    expect(run.stderr).toContain(platformPkg.name)
    expect(run.stderr).toContain('TOOLREG_NO_NATIVE_ADDON')
  }, 180_000)
})

describe('TypeScript hosts', () => {
  it('compile the README examples with tsc --strict; the misuses marked @ts-expect-error stay errors', () => {
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(root, '__tests__', 'types', 'tsconfig.json')], { encoding: 'utf8', timeout: 120_000 })
    expect(tsc.stdout + tsc.stderr).toBe('')
    expect(tsc.status).toBe(0)
  }, 180_000)
})
