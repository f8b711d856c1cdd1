'use strict'

/**
 * The local neural embedder: all-MiniLM-L6-v2 run by the addon's Rust BERT encoder, its
 * weights from the optional package `@toolreg/model-minilm-l6-v2` (or any model folder with
 * the same files). Loading and embedding run on the worker pool; tool vectors are cached on
 * disk by text hash, so the next start reads them instead of running the model.
 */

const { existsSync } = require('node:fs')
const { join, resolve } = require('node:path')
const { defaultCacheDir } = require('./cacheDir')
const native = require('../binding.js')
const { ToolregError, fromNative, invalidArgument } = require('./errors')

const MODEL_PACKAGE = '@toolreg/model-minilm-l6-v2'
const INSTALL_COMMAND = `npm install ${MODEL_PACKAGE}`
/** What the encoder cannot run without (src/embed/bert.rs). */
const MODEL_FILES = ['config.json', 'vocab.txt', 'model.safetensors']

function missing(message) {
  return new ToolregError(`toolreg: the local embedding model is missing: ${message}`, 'TOOLREG_LOCAL_MODEL_MISSING')
}


/** The optional package's model folder, looked up from the app (cwd) and from toolreg itself. */
function packageModelDir() {
  let entry
  try {
    entry = require.resolve(MODEL_PACKAGE, { paths: [process.cwd(), __dirname] })
  } catch {
    return null
  }
  return require(entry).modelDir
}

/**
 * Checks a `localModel` option (`true`, or `{ path?, cacheDir? }`) and finds the model folder,
 * without reading the model: `path`, else `$TOOLREG_MODEL_DIR`, else the optional package.
 * Throws `TOOLREG_LOCAL_MODEL_MISSING` (with the install command) when there is none.
 * @returns {{ dir: string, cacheDir: string | null }}
 */
function resolveLocalModel(option, field = 'localModel') {
  if (option !== true && (option === null || typeof option !== 'object' || Array.isArray(option))) {
    throw invalidArgument(field, `expected true or { path?: string, cacheDir?: string | false }, got ${option === null ? 'null' : typeof option}`)
  }
  const opts = option === true ? {} : option
  for (const key of Object.keys(opts)) {
    if (key !== 'path' && key !== 'cacheDir') throw invalidArgument(`${field}.${key}`, 'unknown option (expected path or cacheDir)')
  }
  if (opts.path !== undefined && (typeof opts.path !== 'string' || opts.path === '')) {
    throw invalidArgument(`${field}.path`, 'expected the path of a model folder')
  }
  if (opts.cacheDir !== undefined && opts.cacheDir !== false && (typeof opts.cacheDir !== 'string' || opts.cacheDir === '')) {
    throw invalidArgument(`${field}.cacheDir`, 'expected a folder path, or false for no disk cache')
  }
  let dir = opts.path ?? process.env.TOOLREG_MODEL_DIR ?? packageModelDir()
  if (!dir) {
    throw missing(`the optional package ${MODEL_PACKAGE} is not installed. Install it with \`${INSTALL_COMMAND}\` (45 MB), or pass localModel: { path } to a model folder.`)
  }
  // Inside an Electron app's asar archive the addon cannot read files: the model folder must be
  // unpacked (electron-builder: asarUnpack), and is read from its `.asar.unpacked` twin.
  dir = resolve(dir).replace(/\.asar([\\/])/, '.asar.unpacked$1')
  const absent = MODEL_FILES.filter((file) => !existsSync(join(dir, file)))
  if (absent.length > 0) {
    const source = opts.path !== undefined ? 'localModel.path' : process.env.TOOLREG_MODEL_DIR ? 'TOOLREG_MODEL_DIR' : MODEL_PACKAGE
    throw missing(`${dir} (from ${source}) has no ${absent.join(', ')}. A model folder holds ${MODEL_FILES.join(', ')}; reinstall with \`${INSTALL_COMMAND}\`.`)
  }
  const cacheDir = opts.cacheDir === false ? null : opts.cacheDir !== undefined ? resolve(opts.cacheDir) : defaultCacheDir()
  return { dir, cacheDir }
}

/** A loaded local model. */
class LocalModel {
  #native

  constructor(nativeModel) {
    this.#native = nativeModel
  }

  /** `{ identity, dimensions, layers, maxTokens, weightsDtype, weightsBytes }` */
  get info() {
    return this.#native.info
  }

  /**
   * `{ encoderLoaded, computed, cached, cacheFile, cacheLoaded, cacheWritten, cacheSkippedBytes,
   * cacheErrors, cachePruned }`
   */
  get stats() {
    const stats = this.#native.stats
    return { ...stats, cacheFile: stats.cacheFile ?? null }
  }

  /**
   * Unit vectors of `texts`, computed on the worker pool. With `{ cache: true }` the disk cache
   * is used (for texts that recur, such as tool descriptions; not for one-off queries).
   * @param {string[]} texts
   * @param {{ cache?: boolean }} [opts]
   * @returns {Promise<Float32Array[]>}
   */
  async embed(texts, opts = {}) {
    if (!Array.isArray(texts) || !texts.every((t) => typeof t === 'string')) {
      throw invalidArgument('texts', 'expected an array of strings')
    }
    try {
      return await this.#native.embed(texts, opts.cache === true)
    } catch (error) {
      throw fromNative(error)
    }
  }

  /**
   * What the hybrid search embeds for `query`: the whole query's vector, then one per sentence
   * of a multi-sentence request. The model reads the sentences only, and the whole query's
   * vector is their mean weighted by word count, so each token runs through it once.
   * @param {string} query
   * @returns {Promise<Float32Array[]>}
   */
  async embedQuery(query) {
    if (typeof query !== 'string') throw invalidArgument('query', `expected a string, got ${typeof query}`)
    try {
      return await this.#native.embedQuery(query)
    } catch (error) {
      throw fromNative(error)
    }
  }

  /** The disk cache's warnings since the last call (a failed read or write; never fatal). */
  takeWarnings() {
    return this.#native.takeWarnings()
  }
}

/** Loads a resolved model folder on the worker pool. */
async function loadResolved({ dir, cacheDir }) {
  try {
    return new LocalModel(await native.loadLocalModel(dir, cacheDir ?? undefined))
  } catch (error) {
    throw fromNative(error)
  }
}

/**
 * Loads the local model for use outside a registry.
 * @param {{ path?: string, cacheDir?: string | false }} [options]
 */
async function loadLocalModel(options = {}) {
  return loadResolved(resolveLocalModel(options, 'options'))
}

module.exports = { LocalModel, loadLocalModel, loadResolved, resolveLocalModel, defaultCacheDir, MODEL_PACKAGE }
