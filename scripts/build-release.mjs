#!/usr/bin/env node
// The release addon, with link-time optimisation (`npm run build`, after a debug `napi build`
// that writes the loader and the types, which do not depend on the profile).
//
// Cargo silently skips LTO for a library built as both `cdylib` and `rlib` (rust-lang/cargo#4611),
// and toolreg's is both: the sandbox executable, the integration tests and the examples link the
// rlib. Without LTO the addon kept whatever of its dependencies the linker did not collect:
// Linux's `--gc-sections` dropped most of it, MinGW's ld and Zig's Mach-O linker far less
// (docs/platforms.md has the numbers). So the addon is built on its own as a `cdylib`
// (`cargo rustc --crate-type cdylib`, which LTO applies to) and `toolreg-exec` by `cargo build`.
//
//   node scripts/build-release.mjs
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, copyFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/**
 * The two cargo runs of a release build for `triple`: the addon alone as a cdylib, then the
 * sandbox executable. `rustc` and `build` are the commands for cargo's `rustc` and `build`
 * (cargo-zigbuild names the latter `zigbuild`).
 */
export function releaseBuildSteps(triple, { rustc = ['cargo', 'rustc'], build = ['cargo', 'build'] } = {}) {
  return [
    [...rustc, '--release', '--target', triple, '--lib', '--crate-type', 'cdylib'],
    [...build, '--release', '--target', triple, '--bin', 'toolreg-exec'],
  ]
}

/** Cargo's file name of the addon for a target. */
export function cdylibFileName(triple) {
  if (triple.includes('windows')) return 'toolreg.dll'
  return triple.includes('apple') ? 'libtoolreg.dylib' : 'libtoolreg.so'
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const host = /^host: (.+)$/m.exec(execFileSync('rustc', ['-vV'], { encoding: 'utf8' }))[1]
  for (const [command, ...args] of releaseBuildSteps(host)) {
    console.error(`build-release: ${command} ${args.join(' ')}`)
    const run = spawnSync(command, args, { cwd: root, stdio: 'inherit' })
    if (run.status !== 0) process.exit(run.status ?? 1)
  }
  const { platformName } = createRequire(import.meta.url)('../js/platforms.js')
  const addon = path.join(root, `toolreg.${platformName()}.node`)
  copyFileSync(path.join(root, 'target', host, 'release', cdylibFileName(host)), addon)
  chmodSync(addon, 0o755)
  console.error(`build-release: ${path.relative(root, addon)}`)
  const helper = spawnSync(process.execPath, [path.join(root, 'scripts', 'copy-exec-helper.mjs'), '--release'], { stdio: 'inherit' })
  process.exit(helper.status ?? 1)
}
