'use strict'

/**
 * The local neural embedder: all-MiniLM-L6-v2 (English) or multilingual-e5-small run by the
 * addon's Rust BERT encoder, the weights from their optional packages
 * `@toolreg/model-minilm-l6-v2` and `@toolreg/model-multilingual-e5-small` (or any model folder
 * with the same files). Loading and embedding run on the worker pool; tool vectors are cached on
 * disk by text hash, so the next start reads them instead of running the model.
 */

const { existsSync } = require('node:fs')
const { join, resolve } = require('node:path')
const { defaultCacheDir } = require('./cacheDir')
const native = require('../binding.js')
const { ToolregError, fromNative, invalidArgument } = require('./errors')
const { userLanguage } = require('./language')

/** The models with a package, by the name `localModel: { model }` takes; the first is the default. */
const MODELS = {
  'all-MiniLM-L6-v2': { package: '@toolreg/model-minilm-l6-v2', size: '45 MB' },
  'multilingual-e5-small': { package: '@toolreg/model-multilingual-e5-small', size: '58 MB' },
}
const DEFAULT_MODEL = 'all-MiniLM-L6-v2'
const MODEL_PACKAGE = MODELS[DEFAULT_MODEL].package
/**
 * What the encoder cannot run without (src/embed/bert.rs); the tokenizer is either file:
 * WordPiece (bert: MiniLM) or SentencePiece (xlm-roberta: e5).
 */
const MODEL_FILES = ['config.json', ['vocab.txt', 'sentencepiece.safetensors'], 'model.safetensors']
const fileNames = (files) => files.map((f) => [f].flat().join(' or ')).join(', ')

function missing(message) {
  return new ToolregError(`toolreg: the local embedding model is missing: ${message}`, 'TOOLREG_LOCAL_MODEL_MISSING')
}

const installCommand = (model) => `npm install ${MODELS[model].package}`

/** A model's package folder, looked up from the app (cwd) and from toolreg itself. */
function packageModelDir(model) {
  let entry
  try {
    entry = require.resolve(MODELS[model].package, { paths: [process.cwd(), __dirname] })
  } catch {
    return null
  }
  return require(entry).modelDir
}

/**
 * Checks a `localModel` option (`true`, or `{ model?, path?, languages?, cacheDir? }`) and finds
 * the model folder, without reading the model: `path`; else with `model`, that model's package;
 * else `$TOOLREG_MODEL_DIR`; else an installed package, chosen by `languages` (default: the
 * user's, from the locale): the all-MiniLM-L6-v2 one when they are all English, the
 * multilingual-e5-small one when one is not (each model when it is the only one installed).
 * Throws `TOOLREG_LOCAL_MODEL_MISSING` (with the install command) when there is none.
 * @returns {{ dir: string, cacheDir: string | null, model: string | null }} `model`: the
 *   package's model, null for a folder given by path or `$TOOLREG_MODEL_DIR`
 */
function resolveLocalModel(option, field = 'localModel') {
  if (option !== true && (option === null || typeof option !== 'object' || Array.isArray(option))) {
    throw invalidArgument(field, `expected true or { model?: string, path?: string, languages?: string[], cacheDir?: string | false }, got ${option === null ? 'null' : typeof option}`)
  }
  const opts = option === true ? {} : option
  for (const key of Object.keys(opts)) {
    if (!['model', 'path', 'languages', 'cacheDir'].includes(key)) throw invalidArgument(`${field}.${key}`, 'unknown option (expected model, path, languages or cacheDir)')
  }
  if (opts.languages !== undefined && (!Array.isArray(opts.languages) || opts.languages.length === 0 || opts.languages.some((l) => typeof l !== 'string' || !/^[A-Za-z]{2,3}(-|$)/.test(l)))) {
    throw invalidArgument(`${field}.languages`, `expected the users' languages as codes such as ['zh', 'en'], got ${JSON.stringify(opts.languages)}`)
  }
  if (opts.model !== undefined && !Object.hasOwn(MODELS, opts.model)) {
    throw invalidArgument(`${field}.model`, `expected one of ${Object.keys(MODELS).map((m) => `'${m}'`).join(', ')}, got ${JSON.stringify(opts.model)}`)
  }
  if (opts.path !== undefined && (typeof opts.path !== 'string' || opts.path === '')) {
    throw invalidArgument(`${field}.path`, 'expected the path of a model folder')
  }
  if (opts.path !== undefined && opts.model !== undefined) {
    throw invalidArgument(field, 'give model (a package) or path (a folder), not both')
  }
  if (opts.cacheDir !== undefined && opts.cacheDir !== false && (typeof opts.cacheDir !== 'string' || opts.cacheDir === '')) {
    throw invalidArgument(`${field}.cacheDir`, 'expected a folder path, or false for no disk cache')
  }
  let dir = opts.path ?? null
  let model = null
  let source = 'localModel.path'
  if (dir === null && opts.model === undefined && process.env.TOOLREG_MODEL_DIR) {
    dir = process.env.TOOLREG_MODEL_DIR
    source = 'TOOLREG_MODEL_DIR'
  }
  // English users get the English model (better on English: docs/search-ranking.md), anyone
  // else the multilingual one; either, when it is the only one installed.
  const languages = (opts.languages ?? [userLanguage()]).map((l) => l.split('-')[0].toLowerCase())
  const order = opts.model !== undefined ? [opts.model] : languages.every((l) => l === 'en') ? Object.keys(MODELS) : Object.keys(MODELS).reverse()
  if (dir === null) {
    for (const name of order) {
      dir = packageModelDir(name)
      if (dir) {
        model = name
        source = MODELS[name].package
        break
      }
    }
  }
  const wanted = order[0]
  if (!dir) {
    const other = opts.model === undefined ? ` (or \`${installCommand(order[1])}\`, ${MODELS[order[1]].size}, ${order[1] === DEFAULT_MODEL ? 'better on English requests' : 'for requests in other languages'})` : ''
    throw missing(`the optional package ${MODELS[wanted].package} is not installed. Install it with \`${installCommand(wanted)}\` (${MODELS[wanted].size})${other}, or pass localModel: { path } to a model folder.`)
  }
  // Inside an Electron app's asar archive the addon cannot read files: the model folder must be
  // unpacked (electron-builder: asarUnpack), and is read from its `.asar.unpacked` twin.
  dir = resolve(dir).replace(/\.asar([\\/])/, '.asar.unpacked$1')
  const absent = MODEL_FILES.filter((file) => ![file].flat().some((f) => existsSync(join(dir, f))))
  if (absent.length > 0) {
    throw missing(`${dir} (from ${source}) has no ${fileNames(absent)}. A model folder holds ${fileNames(MODEL_FILES)}; reinstall with \`${installCommand(model ?? wanted)}\`.`)
  }
  const cacheDir = opts.cacheDir === false ? null : opts.cacheDir !== undefined ? resolve(opts.cacheDir) : defaultCacheDir()
  return { dir, cacheDir, model }
}

/** A loaded local model. */
class LocalModel {
  #native
  #model

  constructor(nativeModel, model = null) {
    this.#native = nativeModel
    this.#model = model
  }

  /**
   * `{ model, languages, modelType, identity, dimensions, layers, maxTokens, weightsDtype,
   * weightsBytes, queryPrefix, passagePrefix }`; `model` is the package's model name (null for a
   * folder given by path), `languages` 'multilingual' for a SentencePiece (XLM-R) model, else 'en'.
   */
  get info() {
    const info = this.#native.info
    return { model: this.#model, languages: info.modelType === 'xlm-roberta' ? 'multilingual' : 'en', ...info }
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
   * Unit vectors of `texts` as texts searched (tools, documents: e5's `passage: ` prefix),
   * computed on the worker pool. With `{ cache: true }` the disk cache is used (for texts that
   * recur, such as tool descriptions; not for one-off queries).
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
   * of a multi-sentence request (as requests: e5's `query: ` prefix). The model reads the
   * sentences only, and the whole query's vector is their mean weighted by word count, so each
   * token runs through it once.
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
async function loadResolved({ dir, cacheDir, model }) {
  try {
    return new LocalModel(await native.loadLocalModel(dir, cacheDir ?? undefined), model)
  } catch (error) {
    throw fromNative(error)
  }
}

/**
 * Loads the local model for use outside a registry.
 * @param {{ model?: 'all-MiniLM-L6-v2' | 'multilingual-e5-small', path?: string, cacheDir?: string | false }} [options]
 */
async function loadLocalModel(options = {}) {
  return loadResolved(resolveLocalModel(options, 'options'))
}

module.exports = { LocalModel, loadLocalModel, loadResolved, resolveLocalModel, defaultCacheDir, MODEL_PACKAGE, MODELS }
