// Start-up progress, one line per server, on stderr (stdout stays clean for --json): redrawn
// in place on a terminal; elsewhere (CI logs, pipes, tests) plain lines as events happen when
// `plain` is set (audit and report, whose progress is part of their story), else nothing.
import pc from 'picocolors'
import { clip } from './format.mjs'

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']

/**
 * A tool's progress while `call` or `exec` waits for it, on stderr: one line redrawn in place on
 * a terminal (cleared by `done()`), elsewhere a plain line per notification.
 */
export function createToolProgress(stream = process.stderr, { live = stream.isTTY === true } = {}) {
  let shown = false
  return {
    report({ serverId, toolName, progress, total, message }) {
      const line = `${serverId}/${toolName}: ${progress}${total != null ? `/${total}` : ''}${message ? ` ${message}` : ''}`
      if (!live) return stream.write(`${line}\n`)
      stream.write(`\r\x1b[2K${pc.dim(clip(line, Math.max(10, (stream.columns || 100) - 1)))}`)
      shown = true
    },
    done() {
      if (shown) stream.write('\r\x1b[2K')
      shown = false
    },
  }
}

export function createProgress(stream = process.stderr, { live = stream.isTTY === true, plain = true } = {}) {
  const rows = new Map()
  let drawn = 0
  let frame = 0
  let timer

  const text = (id, row) => {
    const elapsed = ((row.doneAt ?? Date.now()) - row.startedAt) / 1000
    const mark = row.state === 'ok' ? pc.green('✔') : row.state === 'failed' ? pc.red('✘') : pc.cyan(FRAMES[frame % FRAMES.length])
    // One screen line per server, or moving the cursor up by the row count would go wrong.
    const room = Math.max(10, (stream.columns || 100) - id.length - 26)
    return `${mark} ${id.padEnd(16)} ${row.state === 'failed' ? pc.red(clip(row.message, room)) : clip(row.message, room)} ${pc.dim(`${elapsed.toFixed(1)}s`)}`
  }
  const redraw = () => {
    if (drawn > 0) stream.write(`\x1b[${drawn}A`)
    for (const [id, row] of rows) stream.write(`\x1b[2K${text(id, row)}\n`)
    drawn = rows.size
    frame += 1
  }

  return {
    start(id, message) {
      rows.set(id, { state: 'running', message, startedAt: Date.now() })
      if (live) {
        timer ??= setInterval(redraw, 80)
        redraw()
      } else if (plain) {
        stream.write(`${id}: ${message}\n`)
      }
    },
    finish(id, ok, message) {
      const row = rows.get(id)
      Object.assign(row, { state: ok ? 'ok' : 'failed', message, doneAt: Date.now() })
      if (live) redraw()
      else if (plain) stream.write(`${id}: ${message} (${((row.doneAt - row.startedAt) / 1000).toFixed(1)}s)\n`)
    },
    stop() {
      clearInterval(timer)
      timer = undefined
      if (live && rows.size) redraw()
    },
  }
}
