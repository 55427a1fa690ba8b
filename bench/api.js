#!/usr/bin/env node
// netintel HTTP API benchmark: GET /api/ipinfo on `netintel serve` with an
// API key and the rate limits on, side by side in one run with nginx +
// Debian's geoip2 module answering the same lookup from the same DB-IP city
// database (the baseline), and a bare Node http server that looks nothing
// up, in one process and in one per CPU (references: what Node itself
// costs, and the most any Node server reaches here). Load from wrk on loopback,
// every server on one worker, the addresses rotating over a seeded list of
// public IPv4 addresses.
//
// Targets: netintel req/s >= 0.55 x nginx+geoip2 req/s; netintel p99 <= 5 ms
// at 64 connections.
//
//   node bench/api.js            3 interleaved rounds of 10 s, about 2 minutes
//   node bench/api.js --quick    1 round of 5 s
//   node bench/api.js --help     all options
//
// Needs the project built (npm run build), wrk, and for the baseline nginx
// with libnginx-mod-http-geoip2 (Debian). Writes bench/results/api-latest.json.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createPrng, isSpecialV4 } from './lib/ip-list.js';
import { CITY_DB, CLI, ROOT } from './lib/paths.js';
import { fixed, formatTable, grouped, loud } from './lib/report.js';

const RESULTS = join(ROOT, 'bench', 'results', 'api-latest.json');
const TARGET_RATIO = 0.55;
const TARGET_P99_MS = 5;
const GEOIP2_MODULE = ['/usr/lib/nginx/modules/ngx_http_geoip2_module.so', '/usr/share/nginx/modules/ngx_http_geoip2_module.so'].find((path) => existsSync(path)) ?? null;

// ---------------------------------------------------------------- options

const KNOWN = new Set(['help', 'quick', 'rounds', 'duration', 'connections', 'threads', 'addresses', 'strict']);
const flags = new Map();
for (const arg of process.argv.slice(2)) {
  const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
  if (!match || !KNOWN.has(match[1])) {
    process.stderr.write(`unknown argument ${arg} (see --help)\n`);
    process.exit(2);
  }
  flags.set(match[1], match[2] ?? true);
}
if (flags.has('help')) {
  process.stdout.write(
    [
      'usage: node bench/api.js [--quick] [--rounds=N] [--duration=S] [--connections=N] [--threads=N] [--addresses=N] [--strict]',
      '',
      '  --quick          one round of 5 s',
      '  --rounds=N       rounds, the servers interleaved with their order rotated (default 3)',
      '  --duration=S     wrk -d per server and round (default 10)',
      '  --connections=N  wrk -c (default 64)',
      '  --threads=N      wrk -t (default 1: on a 2-core machine the other core is the server\'s)',
      '  --addresses=N    distinct addresses the requests rotate over (default 10,000)',
      '  --strict         exit 1 when a target is missed',
      '',
    ].join('\n'),
  );
  process.exit(0);
}
const quick = flags.has('quick');
const rounds = Number(flags.get('rounds') ?? (quick ? 1 : 3));
const duration = Number(flags.get('duration') ?? (quick ? 5 : 10));
const connections = Number(flags.get('connections') ?? 64);
const threads = Number(flags.get('threads') ?? 1);
const addressCount = Number(flags.get('addresses') ?? 10_000);

// ---------------------------------------------------------------- helpers

function have(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).status === 0;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

function get(url, headers = {}) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode, headers: response.headers, body }));
      })
      .on('error', reject);
  });
}

async function waitFor(url, headers, tries = 200) {
  for (let i = 0; i < tries; i++) {
    try {
      const response = await get(url, headers);
      if (response.status === 200) return response;
    } catch {
      // not up yet
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${url} did not answer`);
}

function addresses(count) {
  const next = createPrng(20240601);
  const list = [];
  while (list.length < count) {
    const value = next();
    if (isSpecialV4(value)) continue;
    list.push(`${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`);
  }
  return list;
}

/** A wrk script sending GET /api/ipinfo?ip=... over the address list, round robin per thread. */
function wrkScript(dir, list, key) {
  const path = join(dir, key ? 'ipinfo-key.lua' : 'ipinfo.lua');
  const lines = [
    `local ips = {${list.map((ip) => `"${ip}"`).join(',')}}`,
    'local i = 0',
    key ? `wrk.headers["X-API-Key"] = "${key}"` : '',
    'request = function()',
    '  i = i % #ips + 1',
    '  return wrk.format("GET", "/api/ipinfo?ip=" .. ips[i])',
    'end',
    'done = function(summary, latency, requests)',
    '  io.write(string.format("JSON {\\"requests\\": %d, \\"seconds\\": %f, \\"p50\\": %f, \\"p99\\": %f, \\"errors\\": %d, \\"non2xx\\": %d}\\n",',
    '    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000,',
    '    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.errors.status))',
    'end',
  ];
  writeFileSync(path, lines.join('\n'));
  return path;
}

function runWrk(url, script) {
  return new Promise((resolve) => {
    const child = spawn('wrk', [`-t${threads}`, `-c${connections}`, `-d${duration}s`, '--latency', '-s', script, url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (out += chunk));
    child.on('close', () => {
      const match = /JSON (\{.*\})/.exec(out);
      if (!match) return resolve({ error: out.trim() });
      const result = JSON.parse(match[1]);
      resolve({ ...result, rps: result.requests / result.seconds });
    });
  });
}

function median(values) {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

// ---------------------------------------------------------------- servers

async function startNetintel(dir) {
  const db = join(dir, 'keys.db');
  const created = spawnSync(
    process.execPath,
    [CLI, 'keys', 'create', '--plan', 'enterprise', '--label', 'bench', '--daily', '1000000000', '--per-minute', '1000000000', '--burst', '100000000', '--db', db, '-f', 'json', '-q'],
    { encoding: 'utf8', env: { ...process.env, XDG_CONFIG_HOME: dir } },
  );
  if (created.status !== 0) throw new Error(`keys create failed: ${created.stderr}`);
  const { key } = JSON.parse(created.stdout);
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'serve', '--port', String(port), '--db', db, '--log-level', 'warn'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, XDG_CONFIG_HOME: dir, XDG_DATA_HOME: dir },
  });
  const url = `http://127.0.0.1:${port}`;
  const check = await waitFor(`${url}/api/ipinfo?ip=8.8.8.8`, { 'x-api-key': key });
  const record = JSON.parse(check.body);
  if (record.network?.asn !== 15169 || !check.headers['x-ratelimit-remaining']) throw new Error(`netintel answered ${check.body}`);
  return { name: 'netintel serve (key, limits on)', url, key, stop: () => child.kill('SIGTERM'), sample: check.body };
}

async function startNginx(dir) {
  if (!have('nginx') || !GEOIP2_MODULE) return null;
  const port = await freePort();
  const conf = join(dir, 'nginx.conf');
  for (const sub of ['client', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, 'nginx', sub), { recursive: true });
  const fields = [
    ['country_code', 'country_code'],
    ['region', 'state1'],
    ['city', 'city'],
    ['latitude', 'latitude'],
    ['longitude', 'longitude'],
  ];
  writeFileSync(
    conf,
    `load_module ${GEOIP2_MODULE};
worker_processes 1;
daemon off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'nginx-error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${join(dir, 'nginx', 'client')};
  proxy_temp_path ${join(dir, 'nginx', 'proxy')};
  fastcgi_temp_path ${join(dir, 'nginx', 'fastcgi')};
  uwsgi_temp_path ${join(dir, 'nginx', 'uwsgi')};
  scgi_temp_path ${join(dir, 'nginx', 'scgi')};
  geoip2 ${CITY_DB} {
${fields.map(([name, path]) => `    $geo_${name} source=$arg_ip ${path};`).join('\n')}
  }
  server {
    listen 127.0.0.1:${port};
    location = /api/ipinfo {
      default_type application/json;
      return 200 '{"ip":"$arg_ip","type":"ipv4","location":{${fields.map(([name]) => `"${name}":"$geo_${name}"`).join(',')}}}';
    }
  }
}
`,
  );
  const child = spawn('nginx', ['-c', conf, '-p', dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  const check = await waitFor(`${url}/api/ipinfo?ip=8.8.8.8`);
  if (!check.body.includes('"country_code":"US"')) throw new Error(`nginx answered ${check.body}`);
  return { name: 'nginx + geoip2 (baseline)', url, stop: () => child.kill('SIGQUIT'), sample: check.body };
}

async function startBareNode(dir) {
  const port = await freePort();
  const script = join(dir, 'bare.cjs');
  writeFileSync(
    script,
    `require('node:http').createServer((req, res) => { res.setHeader('content-type', 'application/json'); res.end('{"ip":"' + (new URL(req.url, 'http://x').searchParams.get('ip') || '') + '"}'); }).listen(${port}, '127.0.0.1');`,
  );
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/api/ipinfo?ip=8.8.8.8`);
  return { name: 'bare Node http, no lookup (reference)', url, stop: () => child.kill('SIGTERM') };
}

/**
 * The same bare server in one process per CPU (node:cluster): what Node's
 * http layer reaches with every core, the ceiling of any Node server here,
 * netintel included (wrk needs a core of its own too).
 */
async function startBareNodeCluster(dir) {
  const port = await freePort();
  const workers = cpus().length;
  const script = join(dir, 'bare-cluster.cjs');
  writeFileSync(
    script,
    `const cluster = require('node:cluster');
if (cluster.isPrimary) {
  for (let i = 0; i < ${workers}; i++) cluster.fork();
  process.on('SIGTERM', () => { for (const worker of Object.values(cluster.workers)) worker.kill(); process.exit(0); });
} else {
  require('node:http').createServer((req, res) => { res.setHeader('content-type', 'application/json'); res.end('{"ip":"' + (new URL(req.url, 'http://x').searchParams.get('ip') || '') + '"}'); }).listen(${port}, '127.0.0.1');
}`,
  );
  const child = spawn(process.execPath, [script], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/api/ipinfo?ip=8.8.8.8`);
  return { name: `bare Node http, ${workers} processes (reference)`, url, stop: () => child.kill('SIGTERM') };
}

// ---------------------------------------------------------------- run

async function main() {
  if (!existsSync(join(ROOT, 'dist', 'bundle', 'main.cjs'))) throw new Error('build first: npm run build');
  if (!have('wrk')) {
    process.stderr.write(`${loud('SKIPPED: wrk is not installed (apt-get install wrk)')}\n`);
    process.exitCode = 1;
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'netintel-bench-api-'));
  const servers = [];
  try {
    const netintel = await startNetintel(dir);
    servers.push(netintel);
    const nginx = await startNginx(dir);
    if (nginx) servers.push(nginx);
    else process.stderr.write(`${loud('nginx with the geoip2 module is not installed (apt-get install nginx libnginx-mod-http-geoip2): the baseline is the bare Node server')}\n`);
    const bare = await startBareNode(dir);
    servers.push(bare);
    if (cpus().length > 1) servers.push(await startBareNodeCluster(dir));
    const baseline = nginx ?? bare;

    const list = addresses(addressCount);
    const scripts = new Map(servers.map((server) => [server, wrkScript(dir, list, server.key)]));
    // Warm-up: JIT, caches, connections.
    for (const server of servers) await runWrkShort(server, scripts.get(server));

    const samples = new Map(servers.map((server) => [server, []]));
    for (let round = 0; round < rounds; round++) {
      const order = servers.map((_, i) => servers[(i + round) % servers.length]);
      for (const server of order) {
        const result = await runWrk(server.url, scripts.get(server));
        if (result.error) throw new Error(`wrk against ${server.name}: ${result.error}`);
        samples.get(server).push(result);
        process.stderr.write(`round ${round + 1}/${rounds} ${server.name}: ${grouped(result.rps)} req/s, p99 ${fixed(result.p99, 2)} ms${result.non2xx ? `, ${result.non2xx} non-2xx` : ''}\n`);
      }
    }

    const summary = servers.map((server) => {
      const runs = samples.get(server);
      return {
        name: server.name,
        rps: median(runs.map((run) => run.rps)),
        p50: median(runs.map((run) => run.p50)),
        p99: median(runs.map((run) => run.p99)),
        errors: runs.reduce((sum, run) => sum + run.errors + run.non2xx, 0),
      };
    });
    const base = summary[servers.indexOf(baseline)];
    const ours = summary[0];
    const ratio = ours.rps / base.rps;
    const rows = summary.map((row) => [row.name, grouped(row.rps), fixed(row.rps / base.rps, 2), fixed(row.p50, 2), fixed(row.p99, 2), grouped(row.errors)]);
    process.stdout.write(
      `\nGET /api/ipinfo, wrk -t${threads} -c${connections} -d${duration}s, ${rounds} round(s), ${addressCount.toLocaleString('en-US')} addresses; median of rounds\n` +
        `${cpus().length} CPUs, load ${loadavg().map((value) => value.toFixed(2)).join(' ')}\n\n` +
        `${formatTable(['server', ' req/s', ' x baseline', ' p50 ms', ' p99 ms', ' errors'], rows)}\n\n` +
        `netintel / ${nginx ? 'nginx+geoip2' : 'bare Node'}: ${fixed(ratio, 2)} (target >= ${TARGET_RATIO}) ${ratio >= TARGET_RATIO ? 'OK' : 'MISSED'}\n` +
        `netintel p99: ${fixed(ours.p99, 2)} ms (target <= ${TARGET_P99_MS} ms) ${ours.p99 <= TARGET_P99_MS ? 'OK' : 'MISSED'}\n`,
    );
    mkdirSync(dirname(RESULTS), { recursive: true });
    writeFileSync(
      RESULTS,
      `${JSON.stringify(
        {
          date: new Date().toISOString(),
          node: process.version,
          cpus: cpus().length,
          load: loadavg(),
          wrk: { threads, connections, durationSeconds: duration, rounds, addresses: addressCount },
          baseline: base.name,
          servers: summary,
          ratio,
          targets: { ratio: TARGET_RATIO, p99Ms: TARGET_P99_MS },
          met: { ratio: ratio >= TARGET_RATIO, p99: ours.p99 <= TARGET_P99_MS },
        },
        null,
        2,
      )}\n`,
    );
    if (flags.has('strict') && (ratio < TARGET_RATIO || ours.p99 > TARGET_P99_MS)) process.exitCode = 1;
  } finally {
    for (const server of servers) server.stop();
    await new Promise((resolve) => setTimeout(resolve, 300));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A two-second run to warm a server up. */
function runWrkShort(server, script) {
  return new Promise((resolve) => {
    const child = spawn('wrk', ['-t1', `-c${connections}`, '-d2s', '-s', script, server.url], { stdio: 'ignore' });
    child.on('close', resolve);
  });
}

main().catch((error) => {
  process.stderr.write(`bench/api.js: ${error.stack ?? error}\n`);
  process.exitCode = 1;
});
