'use strict'

const { homedir } = require('node:os')
const { isAbsolute, join } = require('node:path')

/**
 * Where toolreg caches what is costly to build (tool vectors, the tokenizer's tables) by
 * default: the platform's per-user cache folder (never the temp folder, which is cleared behind
 * the app's back on some systems), or none when there is no home folder.
 */
function defaultCacheDir(env = process.env, platform = process.platform) {
  let home
  try {
    home = homedir()
  } catch {
    home = ''
  }
  if (platform === 'win32') {
    const base = env.LOCALAPPDATA || (home && join(home, 'AppData', 'Local'))
    return base ? join(base, 'toolreg', 'Cache') : null
  }
  if (platform === 'darwin') return home ? join(home, 'Library', 'Caches', 'toolreg') : null
  // XDG: a relative XDG_CACHE_HOME is invalid and ignored.
  const xdg = env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : home && join(home, '.cache')
  return xdg ? join(xdg, 'toolreg') : null
}

module.exports = { defaultCacheDir }
