// Static checks of cross-built binaries, from the object tools Debian ships (binutils for ELF and
// MinGW's objdump for PE, LLVM's objdump for Mach-O). Each check returns { name, ok, detail }.
//
//   node scripts/cross/checks.mjs elf <addon> <toolreg-exec> <x86-64|aarch64>
//
// runs the ELF checks on a native build (CI's Linux jobs) and exits 1 when one fails.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const out = (command, args) => execFileSync(command, args, { encoding: 'utf8', maxBuffer: 256 << 20 })
const result = (name, ok, detail) => ({ name, ok, detail })

// ---------------------------------------------------------------- ELF (Linux)

const ELF_MACHINES = { 62: 'x86-64', 183: 'aarch64' }

/** Architecture from the ELF header's e_machine. */
export function elfMachine(file) {
  const head = readFileSync(file).subarray(0, 20)
  if (head.readUInt32BE(0) !== 0x7f454c46) return 'not ELF'
  return ELF_MACHINES[head.readUInt16LE(18)] ?? `e_machine ${head.readUInt16LE(18)}`
}

/** The highest GLIBC_x.y symbol version a file needs (from its dynamic symbol table). */
export function glibcNeeded(file, objdump = 'objdump') {
  const versions = [...out(objdump, ['-T', file]).matchAll(/GLIBC_(\d+)\.(\d+)(?:\.(\d+))?/g)].map((m) => [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)])
  versions.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2])
  const top = versions.at(-1)
  return top ? top.filter((n, i) => i < 2 || n).join('.') : 'none'
}

/** Shared libraries an ELF file names (DT_NEEDED). */
export function elfNeeded(file, objdump = 'objdump') {
  return [...out(objdump, ['-p', file]).matchAll(/^\s*NEEDED\s+(\S+)/gm)].map((m) => m[1])
}

/** The newest glibc the Linux packages may need (Debian 12, Ubuntu 22.04 and later): what their READMEs and docs/platforms.md promise. */
export const GLIBC_FLOOR = '2.35'

const numbers = (version) => version.split('.').map(Number)
const atMost = (version, limit) => {
  const [a, b] = [numbers(version), numbers(limit)]
  return a[0] < b[0] || (a[0] === b[0] && (a[1] ?? 0) <= (b[1] ?? 0))
}

export function elfChecks({ addon, helper, machine, objdump }) {
  const glibcLibs = /^(libc|libm|libdl|libpthread|librt|libgcc_s|ld-linux-aarch64|ld-linux-x86-64)\.so\.\d+$/
  const checks = []
  for (const [what, file] of [['addon', addon], ['helper', helper]]) {
    const arch = elfMachine(file)
    checks.push(result(`${what} is ${machine} ELF`, arch === machine, arch))
    const needed = elfNeeded(file, objdump)
    const foreign = needed.filter((lib) => !glibcLibs.test(lib))
    checks.push(result(`${what} needs only glibc's libraries`, foreign.length === 0, needed.join(', ')))
    const glibc = glibcNeeded(file, objdump)
    checks.push(result(`${what} needs glibc ≤ ${GLIBC_FLOOR}`, glibc === 'none' || atMost(glibc, GLIBC_FLOOR), `GLIBC ${glibc}`))
  }
  const dynsyms = out(objdump, ['-T', addon])
  checks.push(result('addon exports napi_register_module_v1', /^.*\.text\s.*\snapi_register_module_v1$/m.test(dynsyms), ''))
  return checks
}

// ---------------------------------------------------------------- PE (Windows)

/** DLLs every Windows 10+ has (the API sets resolve to system DLLs). */
const WINDOWS_SYSTEM_DLLS = new Set(
  [
    'kernel32.dll', 'ntdll.dll', 'advapi32.dll', 'user32.dll', 'ws2_32.dll', 'bcrypt.dll', 'bcryptprimitives.dll', 'crypt32.dll',
    'secur32.dll', 'userenv.dll', 'shell32.dll', 'ole32.dll', 'oleaut32.dll', 'iphlpapi.dll', 'ncrypt.dll', 'dbghelp.dll',
    'psapi.dll', 'powrprof.dll', 'shlwapi.dll', 'rpcrt4.dll', 'synchronization.dll', 'version.dll', 'winmm.dll', 'msvcrt.dll',
    'ucrtbase.dll', 'vcruntime140.dll', 'kernelbase.dll', 'dnsapi.dll', 'mswsock.dll', 'netapi32.dll',
  ],
)
/** What a MinGW build must not need at run time: its runtime DLLs are not on users' machines. */
const MINGW_RUNTIME = /^(libgcc_s_seh-1|libgcc_s_dw2-1|libstdc\+\+-6|libwinpthread-1|libssp-0|libgomp-1)\.dll$/i

export function peImports(file, objdump) {
  return [...new Set([...out(objdump, ['-p', file]).matchAll(/^\s*DLL Name:\s*(\S+)/gm)].map((m) => m[1].toLowerCase()))].sort()
}

export function peExports(file, objdump) {
  const text = out(objdump, ['-p', file])
  const start = text.indexOf('[Ordinal/Name Pointer] Table')
  if (start < 0) return []
  return [...text.slice(start).matchAll(/^\s*\[\s*\d+\]\s+(\S+)\s*$/gm)].map((m) => m[1])
}

export function peChecks({ addon, helper, objdump }) {
  const checks = []
  for (const [what, file, allowed] of [
    ['addon', addon, (dll) => WINDOWS_SYSTEM_DLLS.has(dll) || dll.startsWith('api-ms-win-') || dll === 'node.exe'],
    ['helper', helper, (dll) => WINDOWS_SYSTEM_DLLS.has(dll) || dll.startsWith('api-ms-win-')],
  ]) {
    const format = /file format (\S+)/.exec(out(objdump, ['-f', file]))?.[1]
    checks.push(result(`${what} is a PE32+ x86-64 file`, format === 'pei-x86-64', format))
    const imports = peImports(file, objdump)
    const mingw = imports.filter((dll) => MINGW_RUNTIME.test(dll))
    const other = imports.filter((dll) => !allowed(dll))
    checks.push(result(`${what} imports only Windows system DLLs${what === 'addon' ? ' and node.exe' : ''}`, mingw.length === 0 && other.length === 0, imports.join(', ')))
  }
  const exported = peExports(addon, objdump)
  checks.push(result('addon exports napi_register_module_v1', exported.includes('napi_register_module_v1'), `${exported.length} exports`))
  return checks
}

// ---------------------------------------------------------------- Mach-O (macOS)

export function machoChecks({ addon, helper, triple, minOs }) {
  const cpu = triple.startsWith('aarch64') ? 'ARM64' : 'X86_64'
  const checks = []
  for (const [what, file] of [['addon', addon], ['helper', helper]]) {
    const headers = out('llvm-objdump', ['--macho', '--private-headers', file])
    const header = /^\s*MH_MAGIC_64\s+(\S+)\s+\S+\s+\S+\s+(\S+)/m.exec(headers)
    checks.push(result(`${what} is a ${cpu} Mach-O ${what === 'addon' ? 'dylib' : 'executable'}`, header?.[1] === cpu && header?.[2] === (what === 'addon' ? 'DYLIB' : 'EXECUTE'), header ? `${header[1]} ${header[2]}` : 'no 64-bit Mach-O header'))
    const dylibs = [...headers.matchAll(/cmd LC_LOAD(?:_WEAK)?_DYLIB\n\s*cmdsize \d+\n\s*name (\S+)/g)].map((m) => m[1])
    const foreign = dylibs.filter((lib) => !lib.startsWith('/usr/lib/') && !lib.startsWith('/System/Library/Frameworks/'))
    checks.push(result(`${what} links only system libraries`, dylibs.length > 0 && foreign.length === 0, dylibs.join(', ')))
    const minos = /cmd LC_BUILD_VERSION[\s\S]*?minos (\S+)/.exec(headers)?.[1] ?? /cmd LC_VERSION_MIN_MACOSX[\s\S]*?version (\S+)/.exec(headers)?.[1]
    checks.push(result(`${what} needs macOS ${minOs} or later`, minos === minOs, `minos ${minos}`))
    // arm64 macOS runs no unsigned code (an ad hoc signature will do); Intel macOS has no such rule.
    if (cpu === 'ARM64') checks.push(result(`${what} is code-signed (ad hoc)`, /cmd LC_CODE_SIGNATURE/.test(headers), ''))
  }
  const trie = out('llvm-objdump', ['--macho', '--exports-trie', addon])
  checks.push(result('addon exports _napi_register_module_v1', /\b_napi_register_module_v1\b/.test(trie), ''))
  return checks
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [kind, addon, helper, machine] = process.argv.slice(2)
  if (kind !== 'elf' || !machine) {
    console.error('usage: node scripts/cross/checks.mjs elf <addon> <toolreg-exec> <x86-64|aarch64>')
    process.exit(2)
  }
  const checks = elfChecks({ addon, helper, machine, objdump: 'objdump' })
  for (const check of checks) console.log(`${check.ok ? 'ok' : 'not ok'} - ${check.name}${check.detail ? ` (${check.detail})` : ''}`)
  process.exit(checks.every((check) => check.ok) ? 0 : 1)
}
