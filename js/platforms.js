'use strict'

/**
 * The platforms toolreg ships a prebuilt addon for: napi-rs's platform name (the suffix of
 * `toolreg.<platform>.node`, `toolreg-exec.<platform>` and the package `toolreg-<platform>`) →
 * what to call it in a message. Kept equal to `napi.targets`, `optionalDependencies` and npm/
 * by __tests__/platforms.test.mjs.
 */
const SUPPORTED_PLATFORMS = {
  'linux-x64-gnu': 'Linux x64 (glibc)',
  'linux-arm64-gnu': 'Linux arm64 (glibc)',
  'win32-x64-msvc': 'Windows x64',
  'darwin-arm64': 'macOS on Apple silicon',
  'darwin-x64': 'macOS on Intel',
}

/**
 * napi-rs's name for a platform, as its generated loader computes it: `<os>-<arch>`, plus
 * `-msvc` on Windows (official Node is MSVC-built) and `-gnu`/`-musl` on Linux.
 */
function platformName(platform = process.platform, arch = process.arch, glibc = platform === 'linux' ? isGlibc() : undefined) {
  const base = `${platform}-${arch}`
  if (platform === 'win32') return `${base}-msvc`
  if (platform !== 'linux') return base
  return `${base}-${glibc ? 'gnu' : 'musl'}`
}

function isGlibc() {
  return Boolean(process.report?.getReport?.().header?.glibcVersionRuntime)
}

/** What to tell someone on `platform` (a napi-rs platform name) whose addon did not load. */
function noAddonAdvice(platform) {
  const supported = `Supported: ${Object.entries(SUPPORTED_PLATFORMS)
    .map(([name, label]) => `${label} (toolreg-${name})`)
    .join(', ')}; Node >= 20.`
  const build = 'In a checkout, build the addon with a Rust toolchain: npm run build (release) or npm run build:debug.'
  if (SUPPORTED_PLATFORMS[platform]) {
    return (
      `Installed from the registry, toolreg needs its platform package for ${SUPPORTED_PLATFORMS[platform]}, ` +
      `toolreg-${platform}: an optional dependency that npm installs by itself — reinstall without ` +
      `--no-optional / --omit=optional (and with the lockfile of this platform, not another's). ${build} ${supported}`
    )
  }
  return `toolreg ships no prebuilt addon for ${platform}. ${build} ${supported}`
}

module.exports = { SUPPORTED_PLATFORMS, platformName, noAddonAdvice }
