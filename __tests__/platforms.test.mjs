// The platform table the loader names in its errors is the one the package publishes: each
// entry has an npm/<platform>/ package with matching os/cpu/libc, a `napi.targets` triple and an
// optional dependency of the main package. (Cross builds and their checks: npm run cross.)
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const require = createRequire(import.meta.url)
const { SUPPORTED_PLATFORMS, platformName, noAddonAdvice } = require('../js/platforms.js')
const root = fileURLToPath(new URL('..', import.meta.url))
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const readPkg = (dir) => JSON.parse(readFileSync(join(root, 'npm', dir, 'package.json'), 'utf8'))

/** napi-rs's platform name of a Rust target triple (the targets toolreg lists). */
const TRIPLES = {
  'x86_64-unknown-linux-gnu': 'linux-x64-gnu',
  'aarch64-unknown-linux-gnu': 'linux-arm64-gnu',
  'x86_64-pc-windows-msvc': 'win32-x64-msvc',
  'aarch64-apple-darwin': 'darwin-arm64',
  'x86_64-apple-darwin': 'darwin-x64',
}

describe('platform packages', () => {
  const names = Object.keys(SUPPORTED_PLATFORMS).sort()

  it('npm/, napi.targets and optionalDependencies list the same platforms as the loader', () => {
    expect(readdirSync(join(root, 'npm')).sort()).toEqual(names)
    expect(pkg.napi.targets.map((triple) => TRIPLES[triple]).sort()).toEqual(names)
    expect(pkg.optionalDependencies).toEqual(Object.fromEntries(names.map((name) => [`toolreg-${name}`, pkg.version])))
  })

  it.each(Object.keys(SUPPORTED_PLATFORMS))('%s: os/cpu/libc select it, and it ships the addon and toolreg-exec', (name) => {
    const platformPkg = readPkg(name)
    const [os, cpu, abi] = name.split('-')
    expect(platformPkg).toMatchObject({ name: `toolreg-${name}`, version: pkg.version, os: [os], cpu: [cpu], main: `toolreg.${name}.node` })
    expect(platformPkg.libc).toEqual(abi === 'gnu' ? ['glibc'] : undefined)
    // What the loader computes on a machine those fields select is this package's name.
    expect(platformName(os, cpu, abi === 'gnu')).toBe(name)
    expect(platformPkg.files).toEqual([`toolreg.${name}.node`, `toolreg-exec.${name}${os === 'win32' ? '.exe' : ''}`])
  })

  it('the loader names the package to install, or the supported list where there is none', () => {
    expect(noAddonAdvice('win32-x64-msvc')).toContain('toolreg-win32-x64-msvc')
    const unsupported = noAddonAdvice(platformName('freebsd', 'x64'))
    expect(unsupported).toContain('no prebuilt addon for freebsd-x64')
    for (const name of names) expect(unsupported).toContain(`toolreg-${name}`)
    expect(platformName('linux', 'arm64', false)).toBe('linux-arm64-musl')
    expect(noAddonAdvice('linux-arm64-musl')).toContain('no prebuilt addon for linux-arm64-musl')
  })
})
