#!/usr/bin/env node
// Scale-out, shown with the official conformance suite: two `toolreg serve --http` replicas (one
// config, one bearer token, one request-state key) behind nginx, each running the suite's server
// scenarios one at a time, judged against lanes/conformance/expected-failures-<rev>.yml as
// scripts/conformance.mjs judges one gateway (the pieces come from scripts/conformance-suite.mjs).
// - 2026-07-28: nginx in plain round robin, no stickiness: that revision is stateless, any
//   replica answers any request.
// - 2025-11-25: a session lives in the replica that answered `initialize`. The `initialize`
//   request carries no Mcp-Session-Id, so hashing that header cannot know where the session
//   will be; instead nginx tags the session id the replica returns with that replica
//   (`a.<id>`), routes every later request by the tag, and hands the replica its own id back.
//   Requests without a session id (initialize, 2026-07-28) go round robin. `--hash` runs this
//   set with `hash $http_mcp_session_id consistent` instead, to show what that does.
// `--separate-keys` gives each replica its own request-state key, to show what sharing it does:
// a retry that reaches the replica that did not sign its state is refused.
// nginx is the system's when on PATH, else the Debian package unpacked into target/nginx
// (`apt-get download nginx` + `dpkg -x`: nothing is installed into the system). Its access log
// ($upstream_addr per request) says which replica served how many requests; the run fails
// unless both served some. The suite cannot send a bearer token, so the replicas require one and
// this test front adds it (in a deployment the client sends its own and nginx passes it on).
//
//   npm run scale-out [-- --revision 2026-07-28] [--scenario name] [--hash] [--separate-keys]
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { prepareSuite, runSide, sharedOptions, startGateway } from './conformance-suite.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const argv = process.argv.slice(2)
const { revision: revisionFilter, only } = sharedOptions(argv, 'scale-out')
const naiveHash = argv.includes('--hash')
const separateKeys = argv.includes('--separate-keys')
/** Each revision's run and how nginx routes it. */
const PHASES = [
  { revision: '2026-07-28', routing: 'round-robin' },
  { revision: '2025-11-25', routing: naiveHash ? 'hash' : 'session-tag' },
].filter((phase) => !revisionFilter || phase.revision === revisionFilter)

/** The nginx binary: the system's, else the Debian package's, unpacked into target/nginx. */
function ensureNginx() {
  try {
    execFileSync('nginx', ['-v'], { stdio: 'ignore' })
    return 'nginx'
  } catch {}
  const unpacked = path.join(root, 'target', 'nginx')
  const binary = path.join(unpacked, 'usr', 'sbin', 'nginx')
  if (!existsSync(binary)) {
    const download = mkdtempSync(path.join(tmpdir(), 'toolreg-nginx-deb-'))
    try {
      console.log('scale-out: no nginx on PATH; fetching the Debian package (apt-get download nginx)')
      // apt's stderr is kept for a failure's message: run as root it warns that its sandbox
      // user cannot write here, which changes nothing.
      execFileSync('apt-get', ['download', 'nginx'], { cwd: download, stdio: ['ignore', 'ignore', 'pipe'] })
      const deb = execFileSync('sh', ['-c', 'ls nginx_*.deb'], { cwd: download, encoding: 'utf8' }).trim()
      execFileSync('dpkg', ['-x', path.join(download, deb), unpacked])
    } finally {
      rmSync(download, { recursive: true, force: true })
    }
  }
  return binary
}

/** A TCP port free on loopback right now. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/**
 * nginx's config for one phase. `replicas` are `host:port` addresses; `token` is added to every
 * proxied request (the suite cannot send one). Temp paths and logs stay in `dir`.
 */
function nginxConfig({ dir, port, replicas, routing, token }) {
  const servers = replicas.map((address) => `    server ${address};`).join('\n')
  const tags = replicas.map((_, i) => String.fromCharCode(97 + i)) // a, b, …
  const tagged =
    routing === 'session-tag'
      ? `
  # A 2025-11-25 session lives in the replica that answered initialize. Its session id leaves
  # nginx tagged with that replica ("a.<id>"); a request carrying a tagged id goes to that
  # replica with the id as the replica issued it; one without (initialize, 2026-07-28) goes
  # round robin.
${replicas.map((address, i) => `  upstream replica_${tags[i]} {\n    server ${address};\n  }`).join('\n')}
  map $http_mcp_session_id $route {
${tags.map((tag) => `    ~^${tag}\\. replica_${tag};`).join('\n')}
    default replicas;
  }
  map $http_mcp_session_id $replica_session_id {
    ~^[${tags.join('')}]\\.(?<id>.+)$ $id;
    default $http_mcp_session_id;
  }
  map $upstream_addr $replica_tag {
${replicas.map((address, i) => `    ${address} ${tags[i]};`).join('\n')}
  }
  map $upstream_http_mcp_session_id $client_session_id {
    "" "";
    default $replica_tag.$upstream_http_mcp_session_id;
  }`
      : ''
  const balance = { 'round-robin': '', hash: '    hash $http_mcp_session_id consistent;\n', 'session-tag': '' }[routing]
  const pass =
    routing === 'session-tag'
      ? `      proxy_pass http://$route;
      proxy_set_header Mcp-Session-Id $replica_session_id;
      proxy_hide_header Mcp-Session-Id;
      add_header Mcp-Session-Id $client_session_id always;`
      : '      proxy_pass http://replicas;'
  return `# Generated by scripts/scale-out.mjs (${routing}).
daemon off;
master_process off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events {
  worker_connections 256;
}
http {
  client_body_temp_path ${dir}/tmp/body;
  proxy_temp_path ${dir}/tmp/proxy;
  fastcgi_temp_path ${dir}/tmp/fastcgi;
  uwsgi_temp_path ${dir}/tmp/uwsgi;
  scgi_temp_path ${dir}/tmp/scgi;
  # Which replica served each request; no session ids, no headers.
  log_format replicas '$upstream_addr $status $request_method $uri';
  access_log ${dir}/access.log replicas;
  # The replicas accept a browser Origin that is their own address only; behind nginx a
  # legitimate page's Origin is nginx's. nginx vouches for its own origin and passes the request
  # on without one; any other Origin goes on unchanged, for the replica to refuse.
  map $http_origin $replica_origin {
    ~^http://(localhost|127\.0\.0\.1|\[::1\]):${port}$ "";
    default $http_origin;
  }
  upstream replicas {
${balance}${servers}
    keepalive 16;
  }${tagged}
  server {
    listen 127.0.0.1:${port};
    location = /healthz {
      proxy_pass http://replicas;
    }
    location / {
${pass}
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      # The replicas check Host against their own names (DNS-rebinding guard): pass the
      # client's on, as a browser's would reach them.
      proxy_set_header Host $http_host;
      proxy_set_header Origin $replica_origin;
      proxy_set_header Authorization "Bearer ${token}";
      # Responses may be SSE streams: no buffering, and streams may idle between events.
      proxy_buffering off;
      proxy_read_timeout 1h;
    }
  }
}
`
}

/** Starts nginx on `config` once `nginx -t` accepts it; resolves when it answers /healthz. */
async function startNginx(binary, dir, config, port) {
  const args = ['-p', dir, '-e', path.join(dir, 'error.log'), '-c', config]
  execFileSync(binary, ['-t', '-q', ...args], { stdio: ['ignore', 'ignore', 'inherit'] })
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'inherit'] })
  const deadline = Date.now() + 10_000
  for (;;) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`)
      if (response.ok) return child
    } catch {}
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGTERM')
      throw new Error(`nginx did not serve on ${port}: ${readFileSync(path.join(dir, 'error.log'), 'utf8')}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Stops nginx and waits for it to exit, so its access log is complete. */
function stopNginx(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once('exit', resolve)
    child.kill('SIGQUIT') // graceful: finishes and logs the requests in flight
  })
}

/**
 * Requests to /mcp per replica address from the access log, with their answers: `2xx` counted
 * together, other statuses by method (a 404 on a POST with a session is a session the request
 * did not find; the scenarios provoke 4xx on purpose too).
 */
function servedBy(accessLog, replicas) {
  const counts = new Map(replicas.map((address) => [address, { requests: 0, statuses: {} }]))
  for (const line of readFileSync(accessLog, 'utf8').split('\n')) {
    const [upstream, status, method, uri] = line.split(' ')
    if (uri !== '/mcp') continue
    // A retried request lists every replica tried ("a, b"): the last one answered.
    const address = upstream.split(',').pop().trim()
    const entry = counts.get(address) ?? counts.set(address, { requests: 0, statuses: {} }).get(address)
    entry.requests++
    const answer = status.startsWith('2') ? '2xx' : `${method} ${status}`
    entry.statuses[answer] = (entry.statuses[answer] ?? 0) + 1
  }
  return counts
}

try {
  prepareSuite()
} catch (error) {
  if (error.code !== 'NO_NODE22') throw error
  console.log(`scale-out: skipped, no Node 22 here (${error.message})`)
  process.exit(0)
}
const nginx = ensureNginx()
console.log(`scale-out: ${spawnSync(nginx, ['-v'], { encoding: 'utf8' }).stderr.trim()} (${nginx})`)

const work = mkdtempSync(path.join(tmpdir(), 'toolreg-scale-out-'))
// One token and one request-state key for both replicas, as an operator's secret store would
// hand them out; neither is printed.
const token = randomBytes(32).toString('base64url')
const stateKey = randomBytes(32).toString('base64url')
const replicas = []
let failed = false
try {
  for (const name of ['a', 'b']) {
    const key = separateKeys ? randomBytes(32).toString('base64url') : stateKey
    replicas.push(await startGateway(path.join(work, `replica-${name}`), { token, env: { TOOLREG_STATE_KEY: key } }))
  }
  const addresses = replicas.map((replica) => new URL(replica.url).host)
  console.log(`replicas: ${addresses.join(', ')} (toolreg serve --http, one token, ${separateKeys ? 'a TOOLREG_STATE_KEY each' : 'one TOOLREG_STATE_KEY'})`)
  for (const { revision, routing } of PHASES) {
    const dir = path.join(work, `nginx-${routing}`)
    mkdirSync(path.join(dir, 'tmp'), { recursive: true, mode: 0o700 })
    const port = await freePort()
    const config = path.join(dir, 'nginx.conf')
    writeFileSync(config, nginxConfig({ dir, port, replicas: addresses, routing, token }), { mode: 0o600 })
    const front = await startNginx(nginx, dir, config, port)
    let result
    try {
      result = await runSide('server', revision, `http://127.0.0.1:${port}/mcp`, {
        label: `Server scenarios through nginx (${routing}) to 2 replicas`,
        only,
        requiredOnly: true,
      })
    } finally {
      await stopNginx(front)
    }
    const counts = servedBy(path.join(dir, 'access.log'), addresses)
    const share = [...counts].map(([address, { requests, statuses }]) => `${address} ${requests} (${Object.entries(statuses).map(([s, n]) => `${n}× ${s}`).join(', ')})`)
    console.log(`requests to /mcp per replica: ${share.join('; ')}`)
    const idle = addresses.filter((address) => counts.get(address).requests === 0)
    if (idle.length > 0) console.log(`✗ replica ${idle.join(', ')} served no request: the run did not scale out`)
    failed = failed || result.unexpected || idle.length > 0
  }
} finally {
  for (const replica of replicas) replica.process.kill('SIGTERM')
  rmSync(work, { recursive: true, force: true })
}
process.exit(failed ? 1 : 0)
