#!/usr/bin/env node
// What building `toolreg-exec` needs besides Rust: the wasm32-unknown-unknown target and a
// clang and llvm-ar that target WebAssembly, for tool_exec's engine (QuickJS compiled to
// WebAssembly, crates/exec-guest). Installs what is missing (rustup, Debian's clang-19 and
// llvm-19); idempotent and quick when all is there.
//
//   node scripts/exec-toolchain.mjs
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureApt, ensureRustTarget } from './cross/tools.mjs'

const has = (command) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0

/** The same names, in the same order, that crates/toolreg-exec/build.rs looks for. */
const CLANGS = ['clang-19', 'clang-20', 'clang-18', 'clang']
const ARS = ['llvm-ar-19', 'llvm-ar-20', 'llvm-ar-18', 'llvm-ar']

export function ensureExecToolchain() {
  ensureRustTarget('wasm32-unknown-unknown')
  const wanted = []
  if (!process.env.TOOLREG_WASM_CC && !CLANGS.some(has)) wanted.push('clang-19')
  if (!process.env.TOOLREG_WASM_AR && !ARS.some(has)) wanted.push('llvm-ar-19')
  if (wanted.length > 0) ensureApt(wanted)
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) ensureExecToolchain()
