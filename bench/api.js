#!/usr/bin/env node
// netintel HTTP API benchmark: GET /api/ipinfo on `netintel serve` with an
// API key and the rate limits on, side by side in one run with a bare Node
// http server that looks nothing up (the baseline: what Node itself costs
// per request), nginx + Debian's geoip2 module answering the same lookup
// from the same DB-IP city database, and the bare server in one process per
// CPU (references). The same server's GET /api/email-tests (the mail checks
// of a domain, over a local DNS responder) and POST /api/bulk (100
// addresses) are measured in the same rounds. Load from wrk on loopback,
// every server on one worker, the addresses rotating over a seeded list of
// public IPv4 addresses.
//
// Targets: netintel /api/ipinfo req/s >= 0.5 x the bare Node server's;
// netintel p99 <= 5 ms at 64 connections.
//
// --fleet: the same netintel server with its limits in memory and with its
// limits in a redis-server started here (target: >= 0.8 x in memory), and,
// as a figure, two netintel servers behind nginx (round robin) sharing that
// Redis and a PostgreSQL key database made by initdb here.
//
//   node bench/api.js            3 interleaved rounds of 10 s
//   node bench/api.js --quick    1 round of 5 s
//   node bench/api.js --fleet    the fleet mode
//   node bench/api.js --help     all options
//
// Needs the project built (npm run build), wrk, and for the references nginx
// with libnginx-mod-http-geoip2 (Debian); --fleet needs redis-server and
// PostgreSQL (initdb, postgres). Writes bench/results/api-latest.json (or
// api-fleet-latest.json).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createPrng, isSpecialV4 } from './lib/ip-list.js';
import { CITY_DB, CLI, ROOT } from './lib/paths.js';
import { fixed, formatTable, grouped, loud } from './lib/report.js';
import { findPostgres, freePort, have, startDnsResponder, startPostgres, startRedis } from './lib/services.js';

const TARGET_RATIO = 0.5;
const TARGET_FLEET_RATIO = 0.8;
const TARGET_P99_MS = 5;
const GEOIP2_MODULE = ['/usr/lib/nginx/modules/ngx_http_geoip2_module.so', '/usr/share/nginx/modules/ngx_http_geoip2_module.so'].find((path) => existsSync(path)) ?? null;

// ---------------------------------------------------------------- options

const KNOWN = new Set(['help', 'quick', 'fleet', 'rounds', 'duration', 'connections', 'threads', 'addresses', 'strict']);
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
      'usage: node bench/api.js [--quick] [--fleet] [--rounds=N] [--duration=S] [--connections=N] [--threads=N] [--addresses=N] [--strict]',
      '',
      '  --quick          one round of 5 s',
      '  --fleet          limits in memory vs in Redis; two servers behind nginx on Redis and PostgreSQL',
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
const fleet = flags.has('fleet');
const RESULTS = join(ROOT, 'bench', 'results', fleet ? 'api-fleet-latest.json' : 'api-latest.json');
const rounds = Number(flags.get('rounds') ?? (quick ? 1 : 3));
const duration = Number(flags.get('duration') ?? (quick ? 5 : 10));
const connections = Number(flags.get('connections') ?? 64);
const threads = Number(flags.get('threads') ?? 1);
const addressCount = Number(flags.get('addresses') ?? 10_000);

// ---------------------------------------------------------------- helpers

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

const JSON_DONE = [
  'done = function(summary, latency, requests)',
  '  io.write(string.format("JSON {\\"requests\\": %d, \\"seconds\\": %f, \\"p50\\": %f, \\"p99\\": %f, \\"errors\\": %d, \\"non2xx\\": %d}\\n",',
  '    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1000, latency:percentile(99) / 1000,',
  '    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.errors.status))',
  'end',
];

/**
 * A wrk script (Lua, in the temp dir) cycling over `requests` (Lua
 * expressions of wrk.format, made once in each thread's init), with the
 * key's header.
 */
function wrkScript(dir, name, key, requests, setup = []) {
  const path = join(dir, `${name}.lua`);
  const lines = [
    'local requests = {}',
    'local i = 0',
    key ? `wrk.headers["X-API-Key"] = "${key}"` : '',
    ...setup,
    'init = function(args)',
    `  requests = {${requests.join(',\n')}}`,
    'end',
    'request = function()',
    '  i = i % #requests + 1',
    '  return requests[i]',
    'end',
    ...JSON_DONE,
  ];
  writeFileSync(path, lines.join('\n'));
  return path;
}

/** GET /api/ipinfo?ip=... over the address list. */
const ipinfoScript = (dir, list, key, name = key ? 'ipinfo-key' : 'ipinfo') => wrkScript(dir, name, key, list.map((ip) => `wrk.format("GET", "/api/ipinfo?ip=${ip}")`));

/** GET /api/email-tests of a domain (no SMTP probe, no DNSSEC chain), over 1,000 domains the responder knows. */
const emailScript = (dir, key) =>
  wrkScript(dir, 'email-tests', key, Array.from({ length: 1000 }, (_, i) => `wrk.format("GET", "/api/email-tests?domain=d${i}.bench.example&smtp=false&dnssec=false")`));

/** POST /api/bulk with 100 addresses, over bodies cut from the address list. */
const bulkScript = (dir, list, key) =>
  wrkScript(
    dir,
    'bulk',
    key,
    Array.from({ length: Math.max(1, Math.floor(list.length / 100)) }, (_, i) => `wrk.format("POST", "/api/bulk", nil, '${JSON.stringify({ ips: list.slice(i * 100, i * 100 + 100) })}')`),
    ['wrk.headers["Content-Type"] = "application/json"'],
  );

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

/** A key with limits no bench reaches, made in the key database `db` (a SQLite path or a PostgreSQL URL). */
function createKey(dir, db) {
  const created = spawnSync(
    process.execPath,
    [CLI, 'keys', 'create', '--plan', 'enterprise', '--label', 'bench', '--daily', '1000000000', '--per-minute', '1000000000', '--burst', '100000000', '--db', db, '-f', 'json', '-q'],
    { encoding: 'utf8', env: { ...process.env, XDG_CONFIG_HOME: dir } },
  );
  if (created.status !== 0) throw new Error(`keys create failed: ${created.stderr}`);
  return JSON.parse(created.stdout).key;
}

/** `netintel serve` on a free port over the key database `db`; `extra` are more serve options. */
async function startNetintel(dir, { name, db, key, extra = [] }) {
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'serve', '--port', String(port), '--db', db, '--log-level', 'warn', ...extra], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, XDG_CONFIG_HOME: dir, XDG_DATA_HOME: dir },
  });
  const url = `http://127.0.0.1:${port}`;
  const check = await waitFor(`${url}/api/ipinfo?ip=8.8.8.8`, { 'x-api-key': key });
  const record = JSON.parse(check.body);
  if (record.network?.asn !== 15169 || !check.headers['x-ratelimit-remaining']) throw new Error(`netintel answered ${check.body}`);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  // Stopped before the stores it uses, and waited for: requests still queued when the load ends are answered first.
  const stop = async () => {
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  };
  return { name, url, key, stop };
}

/**
 * Writes an nginx configuration into `home` (one worker, in the foreground,
 * its pid, log and temporary files kept there) with `http` inside its http
 * block, and returns its path.
 */
function writeNginxConfig(home, http, { loadModule = null } = {}) {
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'];
  for (const sub of temp) mkdirSync(join(home, sub), { recursive: true });
  const conf = join(home, 'nginx.conf');
  writeFileSync(
    conf,
    `${loadModule ? `load_module ${loadModule};\n` : ''}worker_processes 1;
daemon off;
pid ${join(home, 'nginx.pid')};
error_log ${join(home, 'error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
${temp.map((sub) => `  ${sub}_temp_path ${join(home, sub)};`).join('\n')}
${http}
}
`,
  );
  return conf;
}

/** nginx in front of `upstreams` (round robin, keep-alive connections to them). */
async function startNginxProxy(dir, upstreams) {
  const port = await freePort();
  const home = join(dir, 'nginx-proxy');
  const conf = writeNginxConfig(
    home,
    `  upstream netintel {
${upstreams.map((upstream) => `    server ${new URL(upstream.url).host};`).join('\n')}
    keepalive 64;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://netintel;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }`,
  );
  const child = spawn('nginx', ['-c', conf, '-p', home], { stdio: ['ignore', 'ignore', 'inherit'] });
  return { url: `http://127.0.0.1:${port}`, stop: () => child.kill('SIGQUIT') };
}

async function startNginx(dir) {
  if (!have('nginx') || !GEOIP2_MODULE) return null;
  const port = await freePort();
  const home = join(dir, 'nginx');
  const fields = [
    ['country_code', 'country_code'],
    ['region', 'state1'],
    ['city', 'city'],
    ['latitude', 'latitude'],
    ['longitude', 'longitude'],
  ];
  const conf = writeNginxConfig(
    home,
    `  geoip2 ${CITY_DB} {
${fields.map(([name, path]) => `    $geo_${name} source=$arg_ip ${path};`).join('\n')}
  }
  server {
    listen 127.0.0.1:${port};
    location = /api/ipinfo {
      default_type application/json;
      return 200 '{"ip":"$arg_ip","type":"ipv4","location":{${fields.map(([name]) => `"${name}":"$geo_${name}"`).join(',')}}}';
    }
  }`,
    { loadModule: GEOIP2_MODULE },
  );
  const child = spawn('nginx', ['-c', conf, '-p', home], { stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  const check = await waitFor(`${url}/api/ipinfo?ip=8.8.8.8`);
  if (!check.body.includes('"country_code":"US"')) throw new Error(`nginx answered ${check.body}`);
  return { name: 'nginx + geoip2 (reference)', url, stop: () => child.kill('SIGQUIT'), sample: check.body };
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
  return { name: 'bare Node http, no lookup (baseline)', url, stop: () => child.kill('SIGTERM') };
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

/**
 * Runs `scenarios` (a name, a URL, a wrk script each) in rounds, after a
 * warm-up of each; returns the median req/s, p50 and p99 of each, and the
 * second's req/s over the first's in each round (`ratios`). The first two
 * are the pair a target compares: in every round they run back to back,
 * which goes first alternating, before the others in an order rotated every
 * round. This machine's speed drifts by tens of percent within a minute, and
 * the ratio of two runs seconds apart moves much less than either run (see
 * bench/README.md, Bulk): the target is the median of the rounds' ratios.
 */
async function measure(scenarios) {
  // Warm-up: JIT, caches, connections.
  for (const scenario of scenarios) await runWrkShort(scenario.url, scenario.script);
  const samples = new Map(scenarios.map((scenario) => [scenario, []]));
  const [first, second, ...others] = scenarios;
  const ratios = [];
  for (let round = 0; round < rounds; round++) {
    const pair = round % 2 === 0 ? [first, second] : [second, first];
    const order = [...pair, ...others.map((_, i) => others[(i + round) % others.length])];
    for (const scenario of order) {
      const result = await runWrk(scenario.url, scenario.script);
      if (result.error) throw new Error(`wrk against ${scenario.name}: ${result.error}`);
      samples.get(scenario).push(result);
      process.stderr.write(`round ${round + 1}/${rounds} ${scenario.name}: ${grouped(result.rps)} req/s, p99 ${fixed(result.p99, 2)} ms${result.non2xx ? `, ${result.non2xx} non-2xx` : ''}\n`);
    }
    ratios.push(samples.get(second)[round].rps / samples.get(first)[round].rps);
  }
  const summary = scenarios.map((scenario) => {
    const runs = samples.get(scenario);
    return {
      name: scenario.name,
      rps: median(runs.map((run) => run.rps)),
      p50: median(runs.map((run) => run.p50)),
      p99: median(runs.map((run) => run.p99)),
      errors: runs.reduce((sum, run) => sum + run.errors + run.non2xx, 0),
    };
  });
  return { summary, ratios };
}

/** `0.47 (rounds 0.44, 0.47, 0.51)`: the median of the rounds' ratios, then each. */
const roundRatios = (ratios) => `${fixed(median(ratios), 2)} (rounds ${ratios.map((ratio) => fixed(ratio, 2)).join(', ')})`;

const verdict = (met) => (met ? 'OK' : 'MISSED');

function table(summary, base) {
  return formatTable(
    ['scenario', ' req/s', ` x ${base.name.split(' (')[0]}`, ' p50 ms', ' p99 ms', ' errors'],
    summary.map((row) => [row.name, grouped(row.rps), fixed(row.rps / base.rps, 2), fixed(row.p50, 2), fixed(row.p99, 2), grouped(row.errors)]),
  );
}

function heading(what) {
  return (
    `\n${what}, wrk -t${threads} -c${connections} -d${duration}s, ${rounds} round(s), ${addressCount.toLocaleString('en-US')} addresses; median of rounds\n` +
    `${cpus().length} CPUs, load ${loadavg().map((value) => value.toFixed(2)).join(' ')}\n\n`
  );
}

function writeResults(results) {
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(
    RESULTS,
    `${JSON.stringify(
      { date: new Date().toISOString(), node: process.version, cpus: cpus().length, load: loadavg(), wrk: { threads, connections, durationSeconds: duration, rounds, addresses: addressCount }, ...results },
      null,
      2,
    )}\n`,
  );
}

/** GET /api/ipinfo against bare Node (the target's baseline) and nginx+geoip2; /api/email-tests and /api/bulk on the same server. */
async function runEndpoints(dir, stops) {
  const dns = await startDnsResponder();
  stops.push(dns.stop);
  const db = join(dir, 'keys.db');
  const key = createKey(dir, db);
  const netintel = await startNetintel(dir, { name: 'netintel serve (key, limits on)', db, key, extra: ['--resolver', dns.address] });
  stops.push(netintel.stop);
  const email = await waitFor(`${netintel.url}/api/email-tests?domain=d0.bench.example&smtp=false&dnssec=false`, { 'x-api-key': key });
  if (!email.body.includes('v=spf1')) throw new Error(`netintel answered /api/email-tests with ${email.body}`);
  const nginx = await startNginx(dir);
  if (nginx) stops.push(nginx.stop);
  else process.stderr.write(`${loud('nginx with the geoip2 module is not installed (apt-get install nginx libnginx-mod-http-geoip2): no nginx reference')}\n`);
  const bare = await startBareNode(dir);
  stops.push(bare.stop);
  const cluster = cpus().length > 1 ? await startBareNodeCluster(dir) : null;
  if (cluster) stops.push(cluster.stop);

  const list = addresses(addressCount);
  const ipinfo = { name: 'netintel GET /api/ipinfo', url: netintel.url, script: ipinfoScript(dir, list, key) };
  const baseline = { name: bare.name, url: bare.url, script: ipinfoScript(dir, list, null) };
  // The baseline first: measure() gives each round's netintel / baseline.
  const scenarios = [
    baseline,
    ipinfo,
    ...(nginx ? [{ name: nginx.name, url: nginx.url, script: ipinfoScript(dir, list, null) }] : []),
    ...(cluster ? [{ name: cluster.name, url: cluster.url, script: ipinfoScript(dir, list, null) }] : []),
    { name: 'netintel GET /api/email-tests', url: netintel.url, script: emailScript(dir, key) },
    { name: 'netintel POST /api/bulk (100 addresses)', url: netintel.url, script: bulkScript(dir, list, key) },
  ];
  const { summary, ratios } = await measure(scenarios);
  const base = summary[0];
  const ours = summary[1];
  const ratio = median(ratios);
  const met = { ratio: ratio >= TARGET_RATIO, p99: ours.p99 <= TARGET_P99_MS };
  process.stdout.write(
    heading('GET /api/ipinfo (and the other endpoints of the same server)') +
      `${table(summary, base)}\n\n` +
      `netintel /api/ipinfo / bare Node, each round's pair: ${roundRatios(ratios)} (target >= ${TARGET_RATIO}) ${verdict(met.ratio)}\n` +
      `netintel /api/ipinfo p99: ${fixed(ours.p99, 2)} ms (target <= ${TARGET_P99_MS} ms) ${verdict(met.p99)}\n` +
      (nginx ? `netintel /api/ipinfo / nginx+geoip2 (reference): ${fixed(ours.rps / summary[2].rps, 2)}\n` : ''),
  );
  writeResults({ baseline: base.name, scenarios: summary, ratio, roundRatios: ratios, targets: { ratio: TARGET_RATIO, p99Ms: TARGET_P99_MS }, met });
  return met.ratio && met.p99;
}

/**
 * The fleet: one server with its limits in memory, the same with its limits
 * in Redis (the target's pair), and two servers behind nginx sharing that
 * Redis and a PostgreSQL key database (a figure).
 */
async function runFleet(dir, stops) {
  if (!have('redis-server')) throw new Error('--fleet needs redis-server (apt-get install redis-server)');
  const postgresPrograms = findPostgres();
  const redis = await startRedis(dir);
  stops.push(redis.stop);
  const db = join(dir, 'keys.db');
  const key = createKey(dir, db);
  const memory = await startNetintel(dir, { name: 'netintel, limits in memory', db, key });
  stops.push(memory.stop);
  const shared = await startNetintel(dir, { name: 'netintel, limits in Redis', db, key, extra: ['--redis-url', redis.url] });
  stops.push(shared.stop);
  const list = addresses(addressCount);
  const script = ipinfoScript(dir, list, key);
  const scenarios = [
    { name: memory.name, url: memory.url, script },
    { name: shared.name, url: shared.url, script },
  ];
  if (postgresPrograms && have('nginx')) {
    const postgres = await startPostgres(postgresPrograms);
    stops.push(postgres.stop);
    const fleetKey = createKey(dir, postgres.url);
    const fleetScript = ipinfoScript(dir, list, fleetKey, 'ipinfo-fleet');
    const members = [];
    for (const n of [1, 2]) {
      const member = await startNetintel(dir, { name: `fleet member ${n}`, db: postgres.url, key: fleetKey, extra: ['--redis-url', redis.url] });
      stops.push(member.stop);
      members.push(member);
    }
    const proxy = await startNginxProxy(dir, members);
    stops.push(proxy.stop);
    await waitFor(`${proxy.url}/api/ipinfo?ip=8.8.8.8`, { 'x-api-key': fleetKey });
    scenarios.push({ name: '2 x netintel behind nginx, Redis + PostgreSQL', url: proxy.url, script: fleetScript });
  } else {
    process.stderr.write(`${loud('PostgreSQL (initdb, postgres) or nginx is not installed: no two-server figure')}\n`);
  }
  const { summary, ratios } = await measure(scenarios);
  const ratio = median(ratios);
  const met = { ratio: ratio >= TARGET_FLEET_RATIO };
  process.stdout.write(
    heading('GET /api/ipinfo, limits in memory vs in Redis') +
      `${table(summary, summary[0])}\n\n` +
      `limits in Redis / in memory, each round's pair: ${roundRatios(ratios)} (target >= ${TARGET_FLEET_RATIO}) ${verdict(met.ratio)}\n`,
  );
  writeResults({ baseline: summary[0].name, scenarios: summary, ratio, roundRatios: ratios, targets: { ratio: TARGET_FLEET_RATIO }, met });
  return met.ratio;
}

async function main() {
  if (!existsSync(join(ROOT, 'dist', 'bundle', 'main.cjs'))) throw new Error('build first: npm run build');
  if (!have('wrk')) {
    process.stderr.write(`${loud('SKIPPED: wrk is not installed (apt-get install wrk)')}\n`);
    process.exitCode = 1;
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'netintel-bench-api-'));
  const stops = [];
  try {
    const met = fleet ? await runFleet(dir, stops) : await runEndpoints(dir, stops);
    if (flags.has('strict') && !met) process.exitCode = 1;
  } finally {
    for (const stop of stops.reverse()) await stop();
    await new Promise((resolve) => setTimeout(resolve, 500));
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A two-second run to warm a server up. */
function runWrkShort(url, script) {
  return new Promise((resolve) => {
    const child = spawn('wrk', ['-t1', `-c${connections}`, '-d2s', '-s', script, url], { stdio: 'ignore' });
    child.on('close', resolve);
  });
}

main().catch((error) => {
  process.stderr.write(`bench/api.js: ${error.stack ?? error}\n`);
  process.exitCode = 1;
});
