#!/usr/bin/env python3
# Cisco's open-source MCP scanner (PyPI `cisco-ai-mcp-scanner`, 4.8.x) side by side with ours, on
# the same data: the scanner fixtures (crates/toolreg-trust/fixtures: attacks, held-out attacks,
# benign) and the real tool catalogs of the shared data set (Toucan, Docker MCP registry,
# LiveMCPBench, MCP reference servers; ~11.8k tools).
#
# Method: Cisco's OFFLINE mode only, i.e. what `mcp-scanner --analyzers yara,schema static --tools
# FILE` runs: its StaticAnalyzer with the YARA rule analyzer (bundled rules) and the schema-reference
# analyzer; no LLM, no Cisco AI Defense API, no meta analyzer. Each tool is scanned as Cisco scans a
# tools/list entry (description, then the JSON of the other fields); the few fixture cases that are
# server instructions go through the YARA analyzer as Cisco's `instructions` command does. A case or
# tool counts as flagged when Cisco reports any finding; its severity is the highest finding's.
# No network: LiteLLM (imported by the package) uses its bundled cost map, proxies point at
# loopback, and a socket guard refuses (and counts) any non-loopback connection or DNS lookup.
# The package is installed by this script into a scratch virtualenv (CISCO_VENV, default
# /tmp/cisco-venv); the scan itself runs inside that venv. Our scanner's figures are quoted, not
# re-run (see bench/trust.bench.mjs).
#
#   python3 bench/cisco-scanner.compare.py      (not part of npm test; needs PyPI once, then offline)
import json, os, subprocess, sys, tempfile, time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get('TOOLREG_DATA') or REPO.parent / 'shared' / 'data').resolve()
FIX = REPO / 'crates' / 'toolreg-trust' / 'fixtures'
VENV = Path(os.environ.get('CISCO_VENV', '/tmp/cisco-venv'))
PKG = 'cisco-ai-mcp-scanner>=4.8,<4.9'
OFFLINE_ENV = {'LITELLM_LOCAL_MODEL_COST_MAP': 'True', 'HTTP_PROXY': 'http://127.0.0.1:9', 'HTTPS_PROXY': 'http://127.0.0.1:9',
               'http_proxy': 'http://127.0.0.1:9', 'https_proxy': 'http://127.0.0.1:9', 'NO_PROXY': '', 'no_proxy': ''}
OURS = {'attacks': '84/84 (68 blocked)', 'held-out': '19/26', 'benign': '0 blocked / 6 warned',
        'real': '0 blocked / 43 warned'}
SEV = ['HIGH', 'MEDIUM', 'LOW', 'INFO', 'UNKNOWN']


def outer():
    if not (DATA / 'toucan-mcp-servers' / 'servers_with_tools.jsonl').exists():
        print(f'cisco-scanner.compare: skipped — the shared data set is not at {DATA} (set TOOLREG_DATA to its path).')
        return 0
    py = VENV / 'bin' / 'python'
    started = time.perf_counter()
    if not py.exists():
        subprocess.run([sys.executable, '-m', 'venv', str(VENV)], check=True)
    if subprocess.run([str(py), '-c', 'import mcpscanner'], capture_output=True).returncode != 0:
        subprocess.run([str(py), '-m', 'pip', 'install', '-q', '--disable-pip-version-check', PKG], check=True)
    install_s = time.perf_counter() - started
    env = {**os.environ, **OFFLINE_ENV, 'CISCO_INSTALL_S': f'{install_s:.1f}'}
    return subprocess.run([str(py), __file__, '--inner'], env=env).returncode


def guard_network():
    """Refuse (and count) every connection or name lookup that is not loopback."""
    import socket
    attempts = []
    local = ('127.0.0.1', '::1', 'localhost')
    real_connect, real_gai = socket.socket.connect, socket.getaddrinfo

    def connect(self, address):
        if isinstance(address, tuple) and address[0] not in local:
            attempts.append(address)
            raise OSError('network disabled by cisco-scanner.compare')
        return real_connect(self, address)

    def getaddrinfo(host, *args, **kw):
        if host not in local and host is not None:
            attempts.append(host)
            raise socket.gaierror('network disabled by cisco-scanner.compare')
        return real_gai(host, *args, **kw)

    socket.socket.connect, socket.getaddrinfo = connect, getaddrinfo
    return attempts


def docker_schema(t):
    if 'inputSchema' in t:
        return t['inputSchema']
    props = {a['name']: {'type': a.get('type') or 'string', **({'description': a['desc']} if a.get('desc') else {})}
             for a in t.get('arguments') or []}
    return {'type': 'object', 'properties': props}


def real_catalogs():
    """(source, server, tool) with tool = {name, description, inputSchema}, as our catalog loads them."""
    tool = lambda t, schema: {'name': t['name'], 'description': t.get('description') or '',
                              'inputSchema': schema or {'type': 'object', 'properties': {}}}
    out = []
    for line in open(DATA / 'toucan-mcp-servers' / 'servers_with_tools.jsonl', encoding='utf-8'):
        s = json.loads(line)
        out += [('toucan', s['server_name'], tool(t, t.get('inputSchema'))) for t in s['tools']]
    for line in open(DATA / 'docker-mcp-registry' / 'servers_tools.jsonl', encoding='utf-8'):
        s = json.loads(line)
        out += [('docker', s['server'], tool(t, docker_schema(t))) for t in s['tools']]
    for s in json.load(open(DATA / 'livemcpbench' / 'tools.json', encoding='utf-8')):
        for name, srv in s['tools'].items():
            out += [('livemcpbench', name, tool(t, t.get('inputSchema'))) for t in srv['tools']]
    for f in sorted((DATA / 'reference-mcp-servers').glob('*.tools_list.json')):
        out += [('reference', f.name.split('.')[0], tool(t, t.get('inputSchema')))
                for t in json.load(open(f, encoding='utf-8'))['tools']]
    return out


def inner():
    attempts = guard_network()
    import asyncio, logging
    from importlib.metadata import version
    logging.disable(logging.WARNING)
    from mcpscanner.core.analyzers.static_analyzer import StaticAnalyzer
    from mcpscanner.core.analyzers.yara_analyzer import YaraAnalyzer
    from mcpscanner.core.analyzers.schema_reference_analyzer import SchemaReferenceAnalyzer

    yara = YaraAnalyzer()
    static = StaticAnalyzer(analyzers=[yara, SchemaReferenceAnalyzer()])
    tmp = Path(tempfile.mkdtemp(prefix='cisco-compare-'))

    def scan_tools(tools):
        """Cisco's `static --tools` path on a list of tools/list entries -> list of findings per tool."""
        path = tmp / 'tools.json'
        path.write_text(json.dumps({'tools': tools}), encoding='utf-8')
        results = asyncio.run(static.scan_tools_file(path))
        assert len(results) == len(tools) and all(r['status'] == 'completed' for r in results)
        return [r['findings'] for r in results]

    def top(findings):
        return min((f.severity.upper() for f in findings), key=lambda s: SEV.index(s) if s in SEV else 9, default=None)

    def scan_cases(cases):
        with_tool = [c for c in cases if 'tool' in c]
        found = dict(zip((c['id'] for c in with_tool), scan_tools([c['tool'] for c in with_tool])))
        for c in cases:
            if c.get('instructions'):
                ctx = {'tool_name': c['id'], 'content_type': 'instructions'}
                found[c['id']] = found.get(c['id'], []) + asyncio.run(yara.analyze(c['instructions'], ctx))
        return {c['id']: top(found[c['id']]) for c in cases}

    def cells(sevs):
        n = Counter(s for s in sevs if s)
        flagged = sum(n.values())
        return [f'{flagged}/{len(sevs)} ({100 * flagged / len(sevs):.1f} %)', *(str(n[s]) for s in SEV[:3]),
                str(sum(n[s] for s in SEV[3:]) + sum(v for k, v in n.items() if k not in SEV))]

    rows, timings = [], {}
    for label, file, ours in [('attacks', 'attacks.json', OURS['attacks']), ('held-out', 'attacks-heldout.json', OURS['held-out']),
                              ('benign', 'benign.json', OURS['benign'])]:
        cases = json.load(open(FIX / file, encoding='utf-8'))
        t0 = time.perf_counter()
        result = scan_cases(cases)
        timings[label] = time.perf_counter() - t0
        rows.append([f'**{label}**', *cells(list(result.values())), ours])
        if label == 'attacks':
            for cls in dict.fromkeys(c['class'] for c in cases):
                rows.append([f'attacks: {cls}', *cells([result[c['id']] for c in cases if c['class'] == cls]), '12/12'])

    catalog = real_catalogs()
    t0 = time.perf_counter()
    findings = scan_tools([t for _, _, t in catalog])
    timings['real catalogs'] = time.perf_counter() - t0
    sevs = [top(f) for f in findings]
    by_source = defaultdict(list)
    for (source, _, _), s in zip(catalog, sevs):
        by_source[source].append(s)
    for source, s in by_source.items():
        rows.append([f'real: {source}', *cells(s), ''])
    rows.append(['**real catalogs (all)**', *cells(sevs), OURS['real']])

    print(f'# Cisco MCP scanner {version("cisco-ai-mcp-scanner")} (offline: YARA + schema-reference analyzers) vs toolreg-trust\n')
    print('| set | Cisco flagged | HIGH | MEDIUM | LOW | other | ours (flagged / blocked, warned) |')
    print('|---|---|---|---|---|---|---|')
    for r in rows:
        print('| ' + ' | '.join(r) + ' |')

    rules = Counter(f.details['raw_response']['rule'] if f.analyzer == 'YARA' else f.analyzer
                    for fs in findings for f in {(f.details.get('raw_response') or {}).get('rule', f.analyzer): f for f in fs}.values())
    print('\nRules behind the real-catalog flags (tools per rule): ' + ', '.join(f'{r} {n}' for r, n in rules.most_common()))
    print('\nExamples of flags on real tools:\n')
    seen = set()
    for (source, server, tool), fs, s in sorted(zip(catalog, findings, sevs), key=lambda x: SEV.index(x[2]) if x[2] in SEV else 9):
        rule = ','.join(sorted({(f.details.get('raw_response') or {}).get('rule', f.analyzer) for f in fs}))
        if not fs or rule in seen or len(seen) >= 8:
            continue
        seen.add(rule)
        text = ' '.join(tool['description'].split())[:110].replace('|', '/')
        print(f'- {s} `{rule}` — {source}/{server} `{tool["name"]}`: "{text}"')
    print(f'\nTime: install/check {os.environ.get("CISCO_INSTALL_S", "?")} s; scan ' +
          ', '.join(f'{k} {v:.2f} s' for k, v in timings.items()) +
          f' ({len(catalog)} real tools). Network attempts refused: {len(attempts)}{" " + repr(attempts[:5]) if attempts else ""}.')
    return 0


if __name__ == '__main__':
    sys.exit(inner() if '--inner' in sys.argv else outer())
