// The on-disk cache of each server's last tools/list, so `search` and `inspect` answer without
// starting servers whose tools are known. Keyed by a digest of everything that starts the server
// (command, args, env, cwd, url, headers), so an edited config entry is never served stale
// tools; the file holds the tool list only, never the env or headers themselves.
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

/** How long a listing is trusted without --refresh: servers rarely change tools within a day. */
export const CACHE_MAX_AGE_MS = 24 * 60 * 60 * 1000

export function cacheDir(env = process.env) {
  return join(env.TOOLREG_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'toolreg'), 'tools-list')
}

function keyOf({ type, command, args, env, cwd, url, headers }) {
  return createHash('sha256').update(JSON.stringify({ type, command, args, env, cwd, url, headers })).digest('hex').slice(0, 32)
}

/** `{ tools, savedAt }` of a fresh listing of this server config, or null. */
export function readCachedTools(config, { maxAgeMs = CACHE_MAX_AGE_MS, now = Date.now() } = {}) {
  try {
    const saved = JSON.parse(readFileSync(join(cacheDir(), `${keyOf(config)}.json`), 'utf8'))
    if (!Array.isArray(saved.tools) || !(now - saved.savedAt < maxAgeMs)) return null
    return saved
  } catch {
    return null // no cache yet, or an unreadable one: list live
  }
}

/** Saves a live listing; a cache that cannot be written only costs the next run a start-up. */
export function writeCachedTools(config, tools) {
  try {
    const dir = cacheDir()
    mkdirSync(dir, { recursive: true })
    const file = join(dir, `${keyOf(config)}.json`)
    // Written aside and renamed: a concurrent reader sees the old listing or the new, never half.
    writeFileSync(`${file}.${process.pid}`, JSON.stringify({ server: config.id, savedAt: Date.now(), tools }))
    renameSync(`${file}.${process.pid}`, file)
  } catch {
    // read-only home, full disk: carry on without a cache
  }
}
