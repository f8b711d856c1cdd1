// Installs the checkout's toolreg into this lane's node_modules, as npm would put it in an app:
// its `require('ai')` then resolves to this lane's ai@7, as in a user's app, not to the
// checkout's ai@6 (imported in place, it would). The files are copied (a symlink would resolve
// back into the checkout); the native addon and the sandbox executable are linked.
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const lane = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(lane, '..', '..')

export default function setup() {
  const target = path.join(lane, 'node_modules', 'toolreg')
  rmSync(target, { recursive: true, force: true })
  mkdirSync(target, { recursive: true })
  for (const file of ['package.json', 'index.js', 'index.d.ts', 'binding.js', 'js']) {
    if (!existsSync(path.join(root, file))) throw new Error(`ai@7 lane: ${file} is missing in ${root}; build the addon first (npm run build:debug)`)
    cpSync(path.join(root, file), path.join(target, file), { recursive: true })
  }
  // The addon and the tool_exec sandbox executable beside it, as the platform package has them.
  for (const file of readdirSync(root).filter((f) => f.endsWith('.node') || f.startsWith('toolreg-exec.'))) symlinkSync(path.join(root, file), path.join(target, file))
}
