// Runs the ai@7 lane (lanes/ai7: ai@7, @ai-sdk/anthropic 4, @ai-sdk/openai 4, @ai-sdk/mcp 2) under Node 22,
// which comes from the npm registry (scripts/ensure-node22.mjs); the lane's dependencies are
// installed from its own lock on first run. Fails when any lane test fails.
import { describe, it, expect } from 'vitest'
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ensureNode22, ensureLaneDeps } from '../scripts/ensure-node22.mjs'

const lane = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'lanes', 'ai7')

describe('ai@7 lane (Node 22)', () => {
  it('passes', () => {
    const node22 = ensureNode22()
    ensureLaneDeps(lane)
    const run = spawnSync(node22, ['node_modules/vitest/vitest.mjs', 'run'], {
      cwd: lane,
      encoding: 'utf8',
      env: { ...process.env, CI: 'true', NO_COLOR: '1', FORCE_COLOR: '0' },
      timeout: 240_000,
    })
    const output = `${run.stdout}\n${run.stderr}`
    if (run.status !== 0) console.error(output)
    expect(run.error).toBeUndefined()
    expect(run.status, 'the ai@7 lane failed (its output is above)').toBe(0)
    expect(output).toMatch(/Tests\s+\d+ passed/)
    expect(output).not.toMatch(/skipped|todo/)
  }, 420_000)
})
