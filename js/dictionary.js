'use strict'

/**
 * The bilingual dictionary the word search glosses requests with (src/search/bridge.rs): with
 * it, a Chinese request also searches with the English words of its terms, so tools described
 * only in English are found (Lark-zh-en R@5 0.033 → 0.62, docs/search-ranking.md, "Words across
 * languages"). The dictionary is the optional package `@toolreg/dict-zh-en` (CC-CEDICT, CC BY-SA
 * 4.0, 6 MB), or any `term<TAB>english words` file the host names.
 *
 * It is read on the worker pool when the first request that needs it arrives (most users never
 * type Chinese; those who do wait once: 0.1–0.2 s and ~23 MB for the package's 172k terms), and
 * shared by every registry of the process.
 */

const { statSync } = require('node:fs')
const native = require('../binding.js')
const { invalidArgument } = require('./errors')

const PACKAGE = '@toolreg/dict-zh-en'

/** Han characters: what the dictionary has terms for. */
const HAN = /[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]/

/** Whether `query` holds a term the dictionary could gloss. */
const needsDictionary = (query) => HAN.test(query)

/** The installed package's dictionary file, looked up from the app (cwd) and from toolreg itself. */
function packageDictionary() {
  let entry
  try {
    entry = require.resolve(PACKAGE, { paths: [process.cwd(), __dirname] })
  } catch {
    return null
  }
  return require(entry).dictionary
}

/**
 * Checks the `dictionary` option and finds the file, without reading it: `false`, none; a
 * string, that file (which must exist); `true` or absent, the installed package's, if any.
 * @returns {string | null}
 */
function resolveDictionary(option) {
  if (option === false) return null
  if (option === undefined || option === true) return packageDictionary()
  if (typeof option !== 'string' || option === '') {
    throw invalidArgument('dictionary', `expected a file path, true or false, got ${option === '' ? 'an empty string' : typeof option}`)
  }
  let isFile = false
  try {
    isFile = statSync(option).isFile()
  } catch {}
  if (!isFile) throw invalidArgument('dictionary', `${option} is not a file (expected a term<TAB>english words file, such as ${PACKAGE}'s)`)
  return option
}

/** One load per file, shared by every registry of the process. */
const loads = new Map()

/** The parsed dictionary at `path` (a `NativeLanguageBridge`), read and parsed on the worker pool. */
function loadDictionary(path) {
  let load = loads.get(path)
  if (!load) {
    load = native.loadLanguageBridge(path)
    // A failed load is not cached: the file may be fixed, and the next request tries again.
    load.catch(() => loads.delete(path))
    loads.set(path, load)
  }
  return load
}

module.exports = { needsDictionary, resolveDictionary, loadDictionary, DICTIONARY_PACKAGE: PACKAGE }
