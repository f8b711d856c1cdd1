// The addon's weight. A release build takes longer than the whole test suite on the CI machine,
// so the 20 MB budget is checked on a release addon when one is there (`npm run build`, or
// TOOLREG_RELEASE_ADDON=path); what is checked always: the data files the addon embeds stay
// within their share, and the ELF reader behind `npm run size` reads the debug addon right.
import { describe, it, expect } from 'vitest'
import { existsSync, statSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { sizeReport, elfSections, assetBytes, EMBEDDED_ASSETS, ADDON_BUDGET_BYTES, EXEC_HELPER_BUDGET_BYTES } from '../scripts/size-report.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const targetDir = process.env.CARGO_TARGET_DIR ?? path.join(root, 'target')
const debugAddon = path.join(targetDir, 'x86_64-unknown-linux-gnu', 'debug', 'libtoolreg.so')
const releaseAddon = [process.env.TOOLREG_RELEASE_ADDON, path.join(targetDir, 'x86_64-unknown-linux-gnu', 'release', 'libtoolreg.so')].find(
  (file) => file && existsSync(file),
)

/**
 * Embedded data may take this much of the budget: the release addon's code, unwind tables and
 * other read-only data come to ~17.3 MB (`npm run size`), so more data than this would push it
 * past 20 MB. (The built-in embeddings ship in the main package instead.)
 */
const EMBEDDED_DATA_BUDGET_BYTES = 2_000_000

describe('addon size', () => {
  it('embeds at most its share of data files', () => {
    const total = Object.values(EMBEDDED_ASSETS).reduce((sum, files) => sum + assetBytes(files), 0)
    expect(total).toBeLessThanOrEqual(EMBEDDED_DATA_BUDGET_BYTES)
  })

  it.skipIf(!existsSync(debugAddon))('reads the sections of the built addon, embedded data inside .rodata', () => {
    const { sections, fileBytes } = elfSections(debugAddon)
    expect(sections.get('.text')).toBeGreaterThan(1_000_000)
    const embedded = Object.values(EMBEDDED_ASSETS).reduce((sum, files) => sum + assetBytes(files), 0)
    expect(sections.get('.rodata')).toBeGreaterThan(embedded)
    const { rows } = sizeReport(debugAddon)
    expect(rows.at(-1)[1]).toBe(fileBytes)
    expect(rows.every(([, bytes]) => bytes >= 0)).toBe(true)
  })

  it.skipIf(!releaseAddon)(`a release addon fits in ${ADDON_BUDGET_BYTES / 1e6} MB, its sandbox executable in ${EXEC_HELPER_BUDGET_BYTES / 1e6} MB`, () => {
    const { fileBytes } = sizeReport(releaseAddon)
    expect(fileBytes).toBeLessThanOrEqual(ADDON_BUDGET_BYTES)
    // Cargo puts the executable beside the addon's artifact (an addon given by path may have none).
    const helper = path.join(path.dirname(releaseAddon), 'toolreg-exec')
    if (existsSync(helper)) expect(statSync(helper).size).toBeLessThanOrEqual(EXEC_HELPER_BUDGET_BYTES)
  })
  if (!releaseAddon) console.log('size.test: no release addon here (npm run build); the 20 MB budget is checked by `npm run size`')
})
