// Runs the toolreg CLI as a child process, the way a user does.
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = fileURLToPath(new URL('..', import.meta.url))
export const bin = join(root, 'bin', 'toolreg.mjs')
/** An empty data folder: the CLI must fall back to the committed catalog excerpt. */
export const emptyData = mkdtempSync(join(tmpdir(), 'toolreg-cli-no-data-'))
/** A home folder with no client configs, so discovery never finds the machine user's. */
export const emptyHome = mkdtempSync(join(tmpdir(), 'toolreg-cli-home-'))
/** The tools/list cache of the runs of one test file. */
export const cacheDir = mkdtempSync(join(tmpdir(), 'toolreg-cli-cache-'))

export function cliEnv(extra = {}) {
  const { XDG_CONFIG_HOME, XDG_CACHE_HOME, APPDATA, ...env } = process.env
  return { ...env, HOME: emptyHome, TOOLREG_CACHE_DIR: cacheDir, TOOLREG_DATA: emptyData, NO_COLOR: '1', FORCE_COLOR: '0', ...extra }
}

/**
 * Starts the CLI; `done` resolves to `{ code, signal, stdout, stderr, ms }`. `input` is written to
 * stdin, which is then closed unless `keepStdinOpen` (a command that serves while its client is
 * connected).
 */
export function startCli(args, { env = cliEnv(), input, cwd = root, keepStdinOpen = false } = {}) {
  const started = Date.now()
  const child = spawn(process.execPath, [bin, ...args], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] })
  const out = { stdout: '', stderr: '' }
  child.stdout.on('data', (d) => (out.stdout += d))
  child.stderr.on('data', (d) => (out.stderr += d))
  if (!keepStdinOpen) child.stdin.end(input ?? '')
  const done = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, ...out, ms: Date.now() - started })))
  return { child, out, done }
}

/**
 * Starts `toolreg serve --http 0` with `args`; resolves to `{ url, token, child, stderr() }` once
 * it listens and, unless its token comes from the environment, has printed it (`token`: the
 * printed one, else undefined). `onStart(child)` is called at once (to stop it after the test).
 */
export function startServeHttp(args, { env = cliEnv(), onStart = () => {} } = {}) {
  const child = spawn(process.execPath, [bin, 'serve', '--http', '0', ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] })
  onStart(child)
  let stderr = ''
  return new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      stderr += d
      // serve says one line after its address, on how requests authenticate (the token, where
      // the token is, or the --no-auth warning); it may arrive in a later chunk than the address.
      const started = /serving MCP at (\S+)\n(.*)\n/.exec(stderr)
      if (!started) return
      const token = /Bearer ([^<\s]\S*)/.exec(started[2])?.[1]
      resolve({ url: started[1], token, child, stderr: () => stderr })
    })
    child.once('exit', (code) => reject(new Error(`toolreg serve exited with ${code}: ${stderr}`)))
  })
}

export function runCli(args, opts) {
  return startCli(args, opts).done
}

export function writeConfig(json, name = 'mcp.json') {
  const file = join(mkdtempSync(join(tmpdir(), 'toolreg-cli-config-')), name)
  writeFileSync(file, typeof json === 'string' ? json : JSON.stringify(json, null, 2))
  return file
}

/** util-linux `script`, to give the CLI a terminal. */
export const hasScript = spawnSync('script', ['--version']).status === 0

const shellWord = (word) => `'${word.replace(/'/g, `'\\''`)}'`

/**
 * Runs the CLI on a pseudo-terminal (`script`), typing `answer` once a `[y/N]` question shows;
 * resolves to `{ code, out }` with stdout and stderr as the terminal showed them.
 */
export function runOnTerminal(args, { answer, env = cliEnv(), cwd = root } = {}) {
  const command = [process.execPath, bin, ...args].map(shellWord).join(' ')
  const child = spawn('script', ['-qec', command, '/dev/null'], { env, cwd, stdio: ['pipe', 'pipe', 'pipe'] })
  let out = ''
  let answered = false
  child.stdout.on('data', (d) => {
    out += d
    if (answer !== undefined && !answered && out.includes('[y/N]')) {
      answered = true
      child.stdin.write(`${answer}\n`)
    }
  })
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out })))
}
