#!/usr/bin/env node
// The release addon, with link-time optimisation (`npm run build`, after a debug `napi build`
// that writes the loader and the types, which do not depend on the profile).
//
// Cargo silently skips LTO for a library built as both `cdylib` and `rlib` (rust-lang/cargo#4611),
// and toolreg's is both: the integration tests and the examples link the rlib. Without LTO the
// addon kept whatever of its dependencies the linker did not collect: Linux's `--gc-sections`
// dropped most of it, MinGW's ld and Zig's Mach-O linker far less (docs/platforms.md has the
// numbers). So the addon is built on its own as a `cdylib` (`cargo rustc --crate-type cdylib`,
// which LTO applies to), after `toolreg-exec` (a package of its own, crates/toolreg-exec).
//
//   node scripts/build-release.mjs
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureExecToolchain } from './exec-toolchain.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/**
 * A release build for `triple`: `toolreg-exec`, then the addon alone as a cdylib. `run` runs one
 * command (an argv array) and throws when it fails. `rustc` and `build` are the commands for
 * cargo's `rustc` and `build` (cargo-zigbuild names the latter `zigbuild`).
 */
export function buildRelease(triple, run, { rustc = ['cargo', 'rustc'], build = ['cargo', 'build'] } = {}) {
  ensureExecToolchain()
  run([...build, '--release', '--target', triple, '-p', 'toolreg-exec'])
  run([...rustc, '--release', '--target', triple, '--lib', '--crate-type', 'cdylib'])
}

/** Cargo's file name of the addon for a target. */
export function cdylibFileName(triple) {
  if (triple.includes('windows')) return 'toolreg.dll'
  return triple.includes('apple') ? 'libtoolreg.dylib' : 'libtoolreg.so'
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const host = /^host: (.+)$/m.exec(execFileSync('rustc', ['-vV'], { encoding: 'utf8' }))[1]
  buildRelease(host, ([command, ...args]) => {
    console.error(`build-release: ${command} ${args.join(' ')}`)
    const run = spawnSync(command, args, { cwd: root, stdio: 'inherit' })
    if (run.status !== 0) process.exit(run.status ?? 1)
  })
  const { platformName } = createRequire(import.meta.url)('../js/platforms.js')
  const addon = path.join(root, `toolreg.${platformName()}.node`)
  copyFileSync(path.join(root, 'target', host, 'release', cdylibFileName(host)), addon)
  chmodSync(addon, 0o755)
  console.error(`build-release: ${path.relative(root, addon)}`)
  const helper = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-exec-helper.mjs'), '--release', '--no-build'], { stdio: 'inherit' })
  process.exit(helper.status ?? 1)
}
