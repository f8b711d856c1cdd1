#!/usr/bin/env node
// Builds the `toolreg-exec` sandbox executable (crates/toolreg-exec, with tool_exec's engine
// compiled to WebAssembly inside it) and puts it next to the addon, as
// `toolreg-exec.<platform>` in the package folder, where js/native.js looks first. Installs the
// engine's toolchain first when it is missing (scripts/exec-toolchain.mjs).
//
//   node scripts/build-exec-helper.mjs [--release | --debug] [--target <triple>] [--no-build]
//
// `--no-build` only copies; without a profile flag it then takes the newer of the two builds.
import { chmodSync, copyFileSync, existsSync, statSync } from 'node:fs'
import { execFileSync, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'
import { ensureExecToolchain } from './exec-toolchain.mjs'

const root = fileURLToPath(new URL('..', import.meta.url))
const args = process.argv.slice(2)
const targetFlag = args.indexOf('--target')
const triple =
  targetFlag >= 0 ? args[targetFlag + 1] : /^host: (.+)$/m.exec(execFileSync('rustc', ['-vV'], { encoding: 'utf8' }))[1]

/** napi-rs's platform names of the targets toolreg builds for. */
const SUFFIXES = {
  'x86_64-unknown-linux-gnu': 'linux-x64-gnu',
  'aarch64-unknown-linux-gnu': 'linux-arm64-gnu',
  'x86_64-pc-windows-msvc': 'win32-x64-msvc',
  'x86_64-pc-windows-gnu': 'win32-x64-gnu',
  'aarch64-apple-darwin': 'darwin-arm64',
  'x86_64-apple-darwin': 'darwin-x64',
}
const suffix = SUFFIXES[triple]
if (!suffix) {
  console.error(`build-exec-helper: no platform name for target ${triple}`)
  process.exit(1)
}
const exe = triple.includes('windows') ? '.exe' : ''
if (!args.includes('--no-build')) {
  ensureExecToolchain()
  const profile = args.includes('--release') ? ['--release'] : []
  const build = spawnSync('cargo', ['build', '-p', 'toolreg-exec', '--target', triple, ...profile], { cwd: root, stdio: 'inherit' })
  if (build.status !== 0) process.exit(build.status ?? 1)
}
const built = (profile) => join(root, 'target', triple, profile, `toolreg-exec${exe}`)
const profiles = args.includes('--release') ? ['release'] : args.includes('--debug') || !args.includes('--no-build') ? ['debug'] : ['debug', 'release']
const candidates = profiles.map(built).filter(existsSync)
if (candidates.length === 0) {
  console.error(`build-exec-helper: no build of toolreg-exec at ${profiles.map(built).join(' or ')}; run node scripts/build-exec-helper.mjs`)
  process.exit(1)
}
const newest = candidates.reduce((a, b) => (statSync(a).mtimeMs >= statSync(b).mtimeMs ? a : b))
const destination = join(root, `toolreg-exec.${suffix}${exe}`)
copyFileSync(newest, destination)
chmodSync(destination, 0o755)
