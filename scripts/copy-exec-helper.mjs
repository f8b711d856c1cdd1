#!/usr/bin/env node
// Puts the `toolreg-exec` sandbox executable next to the addon, as `toolreg-exec.<platform>` in
// the package folder, where js/native.js looks first. `napi build` compiles it (cargo builds
// every binary target of the crate) but copies only the addon.
//
//   node scripts/copy-exec-helper.mjs [--release | --debug] [--target <triple>]
//
// Without a profile flag it takes the newer of the two builds, so `npm test` after either
// `npm run build` or `npm run build:debug` uses what was built last.
import { chmodSync, copyFileSync, existsSync, statSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'

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
  console.error(`copy-exec-helper: no platform name for target ${triple}`)
  process.exit(1)
}
const exe = triple.includes('windows') ? '.exe' : ''
const built = (profile) => join(root, 'target', triple, profile, `toolreg-exec${exe}`)
const profiles = args.includes('--release') ? ['release'] : args.includes('--debug') ? ['debug'] : ['debug', 'release']
const candidates = profiles.map(built).filter(existsSync)
if (candidates.length === 0) {
  console.error(`copy-exec-helper: no build of toolreg-exec at ${profiles.map(built).join(' or ')}; run npm run build:debug`)
  process.exit(1)
}
const newest = candidates.reduce((a, b) => (statSync(a).mtimeMs >= statSync(b).mtimeMs ? a : b))
const destination = join(root, `toolreg-exec.${suffix}${exe}`)
copyFileSync(newest, destination)
chmodSync(destination, 0o755)
