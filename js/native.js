'use strict'

const { existsSync, readFileSync } = require('node:fs')
const { dirname, join } = require('node:path')
const { noAddonAdvice, platformName } = require('./platforms')
const { defaultCacheDir } = require('./cacheDir')

/**
 * Checks that the native addon loads through napi-rs's generated loader (`binding.js`: a local build in the
 * package folder first, then the platform package `toolreg-<platform>`), and turns its generic
 * failure into one that says what to do.
 */
function loadNative() {
  try {
    return require('../binding.js')
  } catch (error) {
    const wrapped = new Error(
      `toolreg: no native addon for ${platformName()} could be loaded. ${noAddonAdvice(platformName())} ` +
        `Cause: ${error?.message ?? error}`,
      { cause: error },
    )
    wrapped.code = 'TOOLREG_NO_NATIVE_ADDON'
    throw wrapped
  }
}

/**
 * Where the `toolreg-exec` sandbox executable is: `TOOLREG_EXEC_HELPER`, else beside a local
 * build in the package folder, else in the platform package. Inside an Electron app's asar
 * archive the file must be unpacked (executables cannot run from the archive), so the
 * `.asar.unpacked` twin of the path is used.
 */
let foundHelper
function execHelperPath() {
  if (process.env.TOOLREG_EXEC_HELPER) return process.env.TOOLREG_EXEC_HELPER
  // Found once per process: platformName reads a diagnostic report to tell glibc from musl.
  foundHelper ??= findExecHelper()
  return foundHelper
}

function findExecHelper() {
  const suffix = platformName()
  const file = `toolreg-exec.${suffix}${process.platform === 'win32' ? '.exe' : ''}`
  const folders = [join(__dirname, '..')]
  try {
    folders.push(dirname(require.resolve(`toolreg-${suffix}/package.json`)))
  } catch {
    // No platform package: only a local build can serve.
  }
  for (const folder of folders) {
    const path = join(folder, file).replace(/\.asar([\\/])/, '.asar.unpacked$1')
    if (existsSync(path)) return path
  }
  const error = new Error(
    `toolreg: the tool_exec sandbox executable ${file} was not found (looked in ${folders.join(', ')}). ` +
      `It ships in the platform package toolreg-${suffix} next to the addon; in a checkout, npm run build ` +
      `or npm run build:debug puts it in the package folder. In a packaged Electron app, unpack it from ` +
      `the asar archive (electron-builder: asarUnpack).`,
  )
  error.code = 'TOOLREG_NO_EXEC_HELPER'
  throw error
}

// The tokenizer's tables are read from the per-user cache (or built and saved there) on another
// thread as the addon loads, so the first token count does not wait for them.
const cacheDir = defaultCacheDir()
loadNative().warmUpTokenizer(cacheDir ? join(cacheDir, 'tokenizer') : undefined)
let builtinEmbeddingsInstalled = false

/**
 * Gives the addon the built-in static-embedding table: four files of the main package
 * (`assets/static-embeddings`, 2.4 MB), shipped once for every platform instead of inside each
 * platform's addon. Read on first use with Node's fs, which also reads inside an asar archive.
 */
function installBuiltinEmbeddings(native) {
  if (builtinEmbeddingsInstalled) return
  const dir = join(__dirname, '..', 'assets', 'static-embeddings')
  let files
  try {
    files = ['vocab.txt', 'table.q4', 'scales.f32', 'weights.f32'].map((name) => readFileSync(join(dir, name)))
  } catch (error) {
    const missing = new Error(`toolreg: the built-in embeddings could not be read from ${dir} (${error.code ?? error.message}); reinstall toolreg`, { cause: error })
    missing.code = 'TOOLREG_NOT_AVAILABLE'
    throw missing
  }
  const [vocab, table, scales, weights] = files
  native.installBuiltinEmbeddings(vocab.toString('utf8'), table, scales, weights)
  builtinEmbeddingsInstalled = true
}

module.exports = { execHelperPath, installBuiltinEmbeddings }
