'use strict'

/**
 * Loads the native addon through napi-rs's generated loader (`binding.js`: a local build in the
 * package folder first, then the platform package `toolreg-<platform>`), and turns its generic
 * failure into one that says what to do.
 */
function loadNative() {
  try {
    return require('../binding.js')
  } catch (error) {
    const platform = `${process.platform}-${process.arch}`
    const wrapped = new Error(
      `toolreg: no native addon for ${platform} could be loaded. Installed from the registry, toolreg ` +
        `needs its platform package (for Linux x64 with glibc: toolreg-linux-x64-gnu), an optional ` +
        `dependency that npm installs by itself — reinstall without --no-optional / --omit=optional. ` +
        `In a checkout, build the addon with a Rust toolchain: npm run build (release) or npm run build:debug. ` +
        `Supported: Linux x64 (glibc), Node >= 20. Cause: ${error?.message ?? error}`,
      { cause: error },
    )
    wrapped.code = 'TOOLREG_NO_NATIVE_ADDON'
    throw wrapped
  }
}

module.exports = loadNative()
