// How the CLI shows a tool's progress on stderr: one line redrawn in place on a terminal and
// cleared when the tool ends, plain lines elsewhere (pipes, CI logs).
import { describe, expect, it } from 'vitest'
import { createToolProgress } from '../cli/progress.mjs'

function fakeStream(isTTY) {
  const written = []
  return { isTTY, columns: 60, written, write: (text) => written.push(text) }
}

const update = (progress, extra = {}) => ({ serverId: 'everything', toolName: 'long', progress, ...extra })

describe('createToolProgress', () => {
  it('writes a plain line per notification when stderr is not a terminal, with total and message when given', () => {
    const stream = fakeStream(false)
    const shown = createToolProgress(stream)
    shown.report(update(1, { total: 3 }))
    shown.report(update(2, { total: 3, message: 'copying' }))
    shown.report(update(0.5))
    shown.done()
    expect(stream.written).toEqual(['everything/long: 1/3\n', 'everything/long: 2/3 copying\n', 'everything/long: 0.5\n'])
  })

  it('redraws one line on a terminal, cut to its width, and clears it when the tool ends', () => {
    const stream = fakeStream(true)
    const shown = createToolProgress(stream)
    shown.done()
    expect(stream.written).toEqual([])
    shown.report(update(1, { total: 2 }))
    shown.report(update(2, { total: 2, message: 'a message far longer than the sixty columns this terminal has room for' }))
    shown.done()
    expect(stream.written).toHaveLength(3)
    expect(stream.written.slice(0, 2).every((text) => text.startsWith('\r\x1b[2K') && !text.includes('\n'))).toBe(true)
    expect(stream.written[0]).toContain('everything/long: 1/2')
    // Cut to the terminal's width (ANSI codes aside), so the redraw stays on one line.
    expect(stream.written[1].replace(/\x1b\[[0-9;]*m|\r|\x1b\[2K/g, '').length).toBeLessThan(60)
    expect(stream.written[2]).toBe('\r\x1b[2K')
  })
})
