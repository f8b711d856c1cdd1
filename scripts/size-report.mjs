#!/usr/bin/env node
// What the addon's bytes are: its ELF sections grouped into code, read-only data (with the data
// files the Rust code embeds), unwind tables and the rest, as in the README's install-size table.
//
//   node scripts/size-report.mjs [addon.node]   (default: the release build's artifact)
//
// Exits 1 when the addon is over the 20 MB budget, 2 when there is no addon to read.
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const ADDON_BUDGET_BYTES = 20 * 1000 * 1000
/** The `toolreg-exec` sandbox executable that ships next to the addon (wasmtime's runtime and
 * the tool_exec engine compiled ahead of time, ~3.6 MB of it). */
export const EXEC_HELPER_BUDGET_BYTES = 5 * 1000 * 1000
/** A platform package's addon and sandbox executable together. */
export const PLATFORM_BUDGET_BYTES = 22 * 1000 * 1000

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

/** The files `include_bytes!`/`include_str!` put into `.rodata`, by what they are. */
export const EMBEDDED_ASSETS = {
  'tiktoken rank files (o200k_base, cl100k_base)': ['assets/tiktoken/o200k_base.ranks.gz', 'assets/tiktoken/cl100k_base.ranks.gz'],
}

export function assetBytes(files) {
  let total = 0
  for (const file of files) {
    const full = path.join(root, file)
    if (statSync(full).isDirectory()) {
      total += assetBytes(
        readdirSync(full)
          .filter((name) => name !== 'README.md')
          .map((name) => path.join(file, name)),
      )
    } else total += statSync(full).size
  }
  return total
}

/** Section name → size, from an ELF64 little-endian file's section headers. */
export function elfSections(file) {
  const buf = readFileSync(file)
  if (buf.readUInt32BE(0) !== 0x7f454c46 || buf[4] !== 2 || buf[5] !== 1) {
    throw new Error(`${file} is not a 64-bit little-endian ELF file`)
  }
  const shoff = Number(buf.readBigUInt64LE(0x28))
  const shentsize = buf.readUInt16LE(0x3a)
  const shnum = buf.readUInt16LE(0x3c)
  const shstrndx = buf.readUInt16LE(0x3e)
  const header = (i) => shoff + i * shentsize
  const strtabOffset = Number(buf.readBigUInt64LE(header(shstrndx) + 0x18))
  const sections = new Map()
  for (let i = 1; i < shnum; i++) {
    const h = header(i)
    const nameOffset = strtabOffset + buf.readUInt32LE(h)
    const name = buf.toString('latin1', nameOffset, buf.indexOf(0, nameOffset))
    const type = buf.readUInt32LE(h + 4)
    const size = Number(buf.readBigUInt64LE(h + 0x20))
    // SHT_NOBITS (.bss) takes no file space.
    if (type !== 8) sections.set(name, (sections.get(name) ?? 0) + size)
  }
  return { sections, fileBytes: buf.length }
}

export function sizeReport(file) {
  const { sections, fileBytes } = elfSections(file)
  const take = (names) => names.reduce((sum, name) => sum + (sections.get(name) ?? 0), 0)
  const text = take(['.text'])
  const rodata = take(['.rodata'])
  const unwind = take(['.eh_frame', '.eh_frame_hdr', '.gcc_except_table'])
  const assets = Object.entries(EMBEDDED_ASSETS).map(([what, files]) => [what, assetBytes(files)])
  const assetTotal = assets.reduce((sum, [, bytes]) => sum + bytes, 0)
  const rows = [
    ['`.text` (all code)', text],
    ['`.rodata`', rodata],
    ...assets.map(([what, bytes]) => [`— of which ${what}`, bytes]),
    ['— everything else (Unicode and regex tables, strings)', rodata - assetTotal],
    ['unwind tables (`.eh_frame`, `.eh_frame_hdr`, `.gcc_except_table`)', unwind],
    ['relocations, headers and other sections', fileBytes - text - rodata - unwind],
    ['**total**', fileBytes],
  ]
  return { rows, fileBytes, withinBudget: fileBytes <= ADDON_BUDGET_BYTES }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const file = process.argv[2] ?? path.join(root, 'toolreg.linux-x64-gnu.node')
  if (!existsSync(file)) {
    console.error(`no addon at ${file}; build one with \`npm run build\` (release) or pass its path`)
    process.exit(2)
  }
  const mb = (bytes) => (bytes / 1e6).toFixed(2)
  let fileBytes
  let withinBudget
  if (readFileSync(file).readUInt32BE(0) === 0x7f454c46) {
    const report = sizeReport(file)
    ;({ fileBytes, withinBudget } = report)
    console.log(`${file}\n\n| part of the addon | bytes |\n|---|---:|`)
    for (const [what, bytes] of report.rows) console.log(`| ${what} | ${bytes.toLocaleString('en-US')} |`)
  } else {
    // A PE or Mach-O build (CI's Windows and macOS lanes): the total only.
    fileBytes = statSync(file).size
    withinBudget = fileBytes <= ADDON_BUDGET_BYTES
    console.log(`${file}: ${fileBytes.toLocaleString('en-US')} bytes (not ELF: no section breakdown)`)
  }
  console.log(`\n${withinBudget ? 'within' : 'OVER'} the ${ADDON_BUDGET_BYTES / 1e6} MB budget: ${mb(fileBytes)} MB`)
  // The sandbox executable built with the same profile, beside the addon's artifact: the
  // platform name of `toolreg.<platform>.node`, or cargo's own `toolreg-exec` beside a cargo artifact.
  const platform = /^toolreg\.(.+)\.node$/.exec(path.basename(file))?.[1]
  const helperBase = path.join(path.dirname(file), platform ? `toolreg-exec.${platform}` : 'toolreg-exec')
  const helper = [helperBase, `${helperBase}.exe`].find(existsSync)
  let helperFits = true
  if (helper) {
    const helperBytes = statSync(helper).size
    const total = fileBytes + helperBytes
    helperFits = helperBytes <= EXEC_HELPER_BUDGET_BYTES && total <= PLATFORM_BUDGET_BYTES
    console.log(`the tool_exec sandbox executable ${path.basename(helper)}: ${mb(helperBytes)} MB (${helperBytes <= EXEC_HELPER_BUDGET_BYTES ? 'within' : 'OVER'} its ${EXEC_HELPER_BUDGET_BYTES / 1e6} MB budget); platform package total ${mb(total)} MB (${total <= PLATFORM_BUDGET_BYTES ? 'within' : 'OVER'} ${PLATFORM_BUDGET_BYTES / 1e6} MB)`)
  }
  process.exit(withinBudget && helperFits ? 0 : 1)
}
