'use strict'

/**
 * The versions of the AI SDK packages toolreg detects features in, and the newest of each
 * major that its lanes passed with (`tested-versions.json`, written by `npm run lanes:latest`
 * when its tests pass). A newer installed version may have changed what a feature detection
 * relies on (as `@ai-sdk/openai` 4.0.119 did for `additionalTools`): toolreg says so once.
 */
const TESTED = require('./tested-versions.json')

const installed = new Map()

/** The installed version of a package toolreg resolves, or undefined. */
function installedVersion(pkg) {
  if (!installed.has(pkg)) {
    let version
    try {
      version = require(`${pkg}/package.json`).version
    } catch {
      version = undefined
    }
    installed.set(pkg, version)
  }
  return installed.get(pkg)
}

/** `a >= b` for `major.minor.patch` versions (a pre-release counts as its release). */
function atLeast(a, b) {
  const [x, y] = [a, b].map((v) => v.split(/[.-]/).slice(0, 3).map(Number))
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] > y[i]
  return true
}

const warned = new Set()

/**
 * Warns once per package (a `process` warning, code `TOOLREG_UNTESTED_VERSION`) when the
 * installed version is newer than the newest of its major toolreg was tested with, or of a
 * major it was never tested with. Returns the installed version.
 */
function checkTested(pkg) {
  const version = installedVersion(pkg)
  if (version === undefined || warned.has(pkg)) return version
  const newest = TESTED.packages[pkg]?.[version.split('.')[0]]
  if (newest !== undefined && atLeast(newest, version)) return version
  warned.add(pkg)
  const tested = newest === undefined ? `no ${pkg} ${version.split('.')[0]}.x` : `${pkg} up to ${newest}`
  process.emitWarning(
    `toolreg was tested with ${tested}, and ${version} is installed: the features toolreg detects in it (tool deferral and loading) may behave differently. Run toolreg's \`npm run lanes:latest\` to check, or pin ${pkg} to a tested version.`,
    { code: 'TOOLREG_UNTESTED_VERSION' },
  )
  return version
}

module.exports = { installedVersion, atLeast, checkTested, TESTED }
