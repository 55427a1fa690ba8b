#!/usr/bin/env node
// netintel DNS bulk benchmark: `netintel dns --type A,MX,TXT` over 10,000
// names against an authoritative server on loopback (NLnet Labs NSD), set
// against the capacity dnsperf measures against the same server in the same
// run. Target: netintel queries/s >= 0.5 x dnsperf queries/s (the median of
// the rounds' ratios); netintel's peak RSS is reported beside it.
//
//   node bench/dns.js            full run (3 rounds, dnsperf -l 10), about a minute
//   node bench/dns.js --quick    one round, dnsperf -l 5, about 20 s
//   node bench/dns.js --help     all options
//
// Needs the project built (npm run build) and the Debian packages nsd,
// dnsperf and bind9-dnsutils (dig, optional: a reference row). Writes
// bench/results/dns-latest.json.
import { spawn, spawnSync } from 'node:child_process';
import dgram from 'node:dgram';
import { accessSync, closeSync, constants, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { delimiter, dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, CLI_MAIN, ROOT } from './lib/paths.js';
import { fixed, formatTable, grouped, loud } from './lib/report.js';

const NODE = process.execPath;
const RESULTS = join(ROOT, 'bench', 'results', 'dns-latest.json');
const TARGET_RATIO = 0.5; // netintel q/s / dnsperf q/s, at least
const TYPES = ['A', 'MX', 'TXT'];
const ZONE = 'bench.test';

// ---------------------------------------------------------------- options

const KNOWN_FLAGS = new Set(['help', 'quick', 'names', 'rounds', 'duration', 'concurrency', 'dnsperf-clients', 'dnsperf-outstanding', 'no-dig', 'no-floor', 'strict']);

function parseOptions(argv) {
  const flags = new Map();
  for (const arg of argv) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!match || !KNOWN_FLAGS.has(match[1])) throw new Error(`unknown argument ${arg} (see --help)`);
    flags.set(match[1], match[2] ?? true);
  }
  if (flags.has('help')) {
    process.stdout.write(
      [
        'usage: node bench/dns.js [--quick] [--names=N] [--rounds=N] [--duration=S] [--concurrency=N]',
        '                         [--dnsperf-clients=N] [--dnsperf-outstanding=N] [--no-dig] [--no-floor] [--strict]',
        '',
        '  --quick                  one round, dnsperf -l 5',
        '  --names=N                names in the zone and on netintel\'s stdin (default 10,000; 3 queries each)',
        '  --rounds=N               rounds of dnsperf, netintel, dig and the Node floor, interleaved (default 3)',
        '  --duration=S             dnsperf -l, seconds per round (default 10)',
        '  --concurrency=N          netintel --concurrency (default 200 names in flight, 3 queries each)',
        '  --dnsperf-clients=N      dnsperf -c (default 4)',
        '  --dnsperf-outstanding=N  dnsperf -q (default 500)',
        '  --no-dig                 leave out the dig -f reference',
        '  --no-floor               leave out the Node dgram floor reference',
        '  --strict                 exit 1 when the target is missed',
        '',
      ].join('\n'),
    );
    process.exit(0);
  }
  const quick = flags.has('quick');
  const number = (name, fallback) => {
    if (!flags.has(name)) return fallback;
    const value = Number(flags.get(name));
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a whole number from 1`);
    return value;
  };
  return {
    mode: quick ? 'quick' : 'full',
    names: number('names', 10_000),
    rounds: number('rounds', quick ? 1 : 3),
    durationS: number('duration', quick ? 5 : 10),
    concurrency: number('concurrency', 200),
    dnsperfClients: number('dnsperf-clients', 4),
    dnsperfOutstanding: number('dnsperf-outstanding', 500),
    dig: !flags.has('no-dig'),
    floor: !flags.has('no-floor'),
    strict: flags.has('strict'),
  };
}

// ---------------------------------------------------------------- environment

function findExecutable(name) {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin', '/sbin'];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // Not here.
    }
  }
  return null;
}

function toolVersion(command, args, pattern) {
  const run = spawnSync(command, args, { encoding: 'utf8' });
  const match = pattern.exec(`${run.stdout ?? ''}\n${run.stderr ?? ''}`);
  return match ? match[1] : null;
}

function machineInfo() {
  const cpuList = cpus();
  return {
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: cpuList.length,
    cpuModel: cpuList[0]?.model?.trim() ?? null,
    totalMemMb: Math.round(totalmem() / 2 ** 20),
    loadAvgAtStart: loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

function gitInfo() {
  const run = (args) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  const head = run(['rev-parse', '--short', 'HEAD']);
  if (head.status !== 0) return null;
  const status = run(['status', '--porcelain', '--', 'src', 'bin', 'scripts']);
  return { commit: head.stdout.trim(), uncommittedChangesInSrc: status.stdout.trim() !== '' };
}

/** Source files changed after the built CLI: the measured build may not be the current code. */
function staleBuildFiles() {
  const builtAt = statSync(CLI_MAIN).mtimeMs;
  const stale = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && statSync(path).mtimeMs > builtAt) stale.push(relative(ROOT, path));
    }
  };
  walk(join(ROOT, 'src'));
  return stale;
}

/**
 * The environment of the measured processes: ours minus NODE_EXTRA_CA_CERTS
 * (it slows every Node start) and NETINTEL_* (a developer's settings), with
 * an empty HOME so that no netintel config file applies.
 */
function benchEnv(home) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key === 'NODE_EXTRA_CA_CERTS' || key.startsWith('NETINTEL_')) continue;
    env[key] = value;
  }
  return { ...env, HOME: home, XDG_CONFIG_HOME: home };
}

// ---------------------------------------------------------------- zone and inputs

/** The i-th name of the zone, without the zone suffix. */
const label = (i) => `h${String(i).padStart(5, '0')}`;

/** Writes the zone file (A, MX, TXT at every name), netintel's name list, dnsperf's and dig's query files. */
function writeInputs(dir, count) {
  const zone = [
    `$ORIGIN ${ZONE}.`,
    '$TTL 300',
    `@ IN SOA ns1.${ZONE}. hostmaster.${ZONE}. 1 7200 900 1209600 300`,
    `@ IN NS ns1.${ZONE}.`,
    'ns1 IN A 127.0.0.1',
  ];
  const names = [];
  const queries = [];
  for (let i = 0; i < count; i++) {
    const host = label(i);
    const a = `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
    zone.push(`${host} IN A ${a}`, `${host} IN MX 10 mx${i % 10}.${ZONE}.`, `${host} IN TXT "v=spf1 ip4:${a} -all"`);
    names.push(`${host}.${ZONE}`);
    for (const type of TYPES) queries.push(`${host}.${ZONE} ${type}`);
  }
  const files = {
    zone: join(dir, `${ZONE}.zone`),
    names: join(dir, 'names.txt'),
    queries: join(dir, 'queries.txt'),
  };
  writeFileSync(files.zone, `${zone.join('\n')}\n`);
  writeFileSync(files.names, `${names.join('\n')}\n`);
  writeFileSync(files.queries, `${queries.join('\n')}\n`);
  return files;
}

// ---------------------------------------------------------------- nsd

/** A port free for both UDP and TCP on 127.0.0.1 at the time of asking. */
async function freePort() {
  for (;;) {
    const udp = dgram.createSocket('udp4');
    const port = await new Promise((resolve) => udp.bind(0, '127.0.0.1', () => resolve(udp.address().port)));
    const tcp = net.createServer();
    const ok = await new Promise((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(port, '127.0.0.1', () => resolve(true));
    });
    await new Promise((resolve) => udp.close(resolve));
    if (ok) await new Promise((resolve) => tcp.close(resolve));
    if (ok) return port;
  }
}

const dnsPacket = createRequire(join(ROOT, 'package.json'))('dns-packet');

/** True when the server answers SOA of the zone within `timeoutMs`. */
function answersSoa(port, timeoutMs) {
  return new Promise((resolve) => {
    const socket = dgram.createSocket('udp4');
    const done = (ok) => {
      clearTimeout(timer);
      socket.close();
      resolve(ok);
    };
    const timer = setTimeout(() => done(false), timeoutMs);
    socket.on('error', () => done(false));
    socket.on('message', (message) => {
      try {
        done((dnsPacket.decode(message).answers ?? []).some((rr) => rr.type === 'SOA'));
      } catch {
        done(false);
      }
    });
    socket.send(dnsPacket.encode({ type: 'query', id: 4242, questions: [{ name: ZONE, type: 'SOA' }] }), port, '127.0.0.1');
  });
}

/**
 * Starts NSD in the foreground on 127.0.0.1:port with one server process.
 * Response rate limiting is off (`rrl-ratelimit: 0`): by default NSD
 * answers at most 200 queries/s per client network, which would measure
 * the limiter instead of the server.
 */
async function startNsd(nsdPath, dir, zoneFile, port) {
  const config = join(dir, 'nsd.conf');
  writeFileSync(
    config,
    `server:
  ip-address: 127.0.0.1@${port}
  port: ${port}
  username: ""
  chroot: ""
  zonesdir: "${dir}"
  pidfile: "${join(dir, 'nsd.pid')}"
  database: ""
  xfrdfile: "${join(dir, 'xfrd.state')}"
  xfrdir: "${dir}"
  zonelistfile: "${join(dir, 'zone.list')}"
  logfile: "${join(dir, 'nsd.log')}"
  server-count: 1
  verbosity: 1
  rrl-ratelimit: 0
remote-control:
  control-enable: no
zone:
  name: "${ZONE}"
  zonefile: "${zoneFile}"
`,
  );
  const child = spawn(nsdPath, ['-d', '-c', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const deadline = Date.now() + 15_000;
  for (;;) {
    if (child.exitCode !== null) {
      const log = existsSync(join(dir, 'nsd.log')) ? readFileSync(join(dir, 'nsd.log'), 'utf8') : '';
      throw new Error(`nsd exited with ${child.exitCode}:\n${output}\n${log}`);
    }
    if (await answersSoa(port, 200)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nsd did not answer on port ${port} within 15 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return child;
}

async function stopProcess(child) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

// ---------------------------------------------------------------- measured runs

/**
 * Runs a command to completion with stdin from `stdinFile` (or nothing) and
 * stdout to /dev/null; stderr is kept. CPU time and peak RSS come from GNU
 * time when installed. Wall time is from spawn to exit.
 */
function runMeasured(command, args, { env, stdinFile = null, timeoutMs }) {
  const gnuTime = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
  const timeFile = join(tmpdir(), `netintel-dns-bench-time-${process.pid}-${Date.now()}.txt`);
  const [file, argv] = gnuTime ? [gnuTime, ['-f', '%e %U %S %M', '-o', timeFile, command, ...args]] : [command, args];
  const stdin = stdinFile ? openSync(stdinFile, 'r') : 'ignore';
  const stdout = openSync('/dev/null', 'w');
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const child = spawn(file, argv, { env, stdio: [stdin, stdout, 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr = (stderr + chunk).slice(-65536);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    // Without GNU time, the peak RSS is read from /proc while the child runs.
    let polledRssKb = null;
    const poll = gnuTime
      ? null
      : setInterval(() => {
          try {
            const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
            if (match) polledRssKb = Math.max(polledRssKb ?? 0, Number(match[1]));
          } catch {
            // Exited, or no /proc.
          }
        }, 10);
    const finish = (result) => {
      clearTimeout(timer);
      if (poll) clearInterval(poll);
      if (typeof stdin === 'number') closeSync(stdin);
      closeSync(stdout);
      resolve(result);
    };
    child.on('error', (error) => finish({ error: String(error), stderr }));
    child.on('close', (code, signal) => {
      const wallS = Number(process.hrtime.bigint() - started) / 1e9;
      let cpu = null;
      if (gnuTime) {
        try {
          const last = readFileSync(timeFile, 'utf8').trim().split('\n').pop();
          const [, userS, sysS, maxRssKb] = last.split(/\s+/).map(Number);
          cpu = { userS, sysS, maxRssKb };
        } catch {
          cpu = null;
        }
        rmSync(timeFile, { force: true });
      }
      finish({ code, signal, wallS, userS: cpu?.userS ?? null, sysS: cpu?.sysS ?? null, peakRssKb: cpu?.maxRssKb ?? polledRssKb, stderr });
    });
  });
}

async function runDnsperf(dnsperfPath, port, files, options, env) {
  const args = ['-s', '127.0.0.1', '-p', String(port), '-d', files.queries, '-l', String(options.durationS), '-c', String(options.dnsperfClients), '-q', String(options.dnsperfOutstanding)];
  // dnsperf writes its report on stdout; run it directly to read it.
  const started = process.hrtime.bigint();
  const run = spawnSync(dnsperfPath, args, { env, encoding: 'utf8', timeout: (options.durationS + 30) * 1000 });
  const wallS = Number(process.hrtime.bigint() - started) / 1e9;
  const text = `${run.stdout ?? ''}\n${run.stderr ?? ''}`;
  const number = (pattern) => {
    const match = pattern.exec(text);
    return match ? Number(match[1]) : null;
  };
  return {
    command: `dnsperf ${args.join(' ')}`,
    code: run.status,
    wallS,
    qps: number(/Queries per second:\s+([\d.]+)/),
    sent: number(/Queries sent:\s+(\d+)/),
    completed: number(/Queries completed:\s+(\d+)/),
    lost: number(/Queries lost:\s+(\d+)/),
    noerrorPct: number(/NOERROR \d+ \(([\d.]+)%\)/),
    avgLatencyS: number(/Average Latency \(s\):\s+([\d.]+)/),
    raw: run.status === 0 ? null : text.slice(-2000),
  };
}

async function runNetintel(port, files, options, env) {
  const args = [CLI, 'dns', '--type', TYPES.join(','), '-f', 'csv', '--resolver', `127.0.0.1:${port}`, '--concurrency', String(options.concurrency)];
  const run = await runMeasured(NODE, args, { env, stdinFile: files.names, timeoutMs: 120_000 });
  const queries = options.names * TYPES.length;
  // The summary line on stderr: "<n> targets, <ok> ok, <failed> failed".
  const summary = /(\d+) ok, (\d+) failed/.exec(run.stderr ?? '');
  const ok = summary ? Number(summary[1]) : null;
  const failed = summary ? Number(summary[2]) : null;
  const valid = run.code === 0 && ok === queries && failed === 0;
  return {
    command: `node bin/netintel.js ${args.slice(1).join(' ')} < names.txt > /dev/null`,
    code: run.code,
    signal: run.signal ?? null,
    wallS: run.wallS,
    userS: run.userS,
    sysS: run.sysS,
    peakRssKb: run.peakRssKb,
    queries,
    ok,
    failed,
    valid,
    qps: valid ? queries / run.wallS : null,
    stderrTail: (run.stderr ?? run.error ?? '').trim().split('\n').slice(-3).join('\n'),
  };
}

async function runDig(digPath, port, files, options, env) {
  const args = ['@127.0.0.1', '-p', String(port), '+noall', '+answer', '+tries=1', '+time=2', '-f', files.queries];
  const run = await runMeasured(digPath, args, { env, timeoutMs: 120_000 });
  const queries = options.names * TYPES.length;
  return {
    command: `dig ${args.join(' ')} > /dev/null`,
    code: run.code,
    wallS: run.wallS,
    userS: run.userS,
    sysS: run.sysS,
    queries,
    qps: run.code === 0 ? queries / run.wallS : null,
  };
}

/**
 * The Node floors: a bare node:dgram client in a child process sending the
 * same 30,000 queries over one connected socket with a window of 600 in
 * flight (what netintel --concurrency 200 x 3 types keeps in flight). No
 * netintel code runs. With `codec` 0 the queries are encoded before the
 * clock starts and the replies only counted: what one Node thread can do
 * with node:dgram on this machine. With `codec` 1 each query is encoded
 * when it is sent, by netintel's own encodeQuery (RD, an EDNS0 OPT record,
 * dns-packet's encoder), and each reply decoded with dns-packet: what any
 * client built on node:dgram and dns-packet can reach on one thread, before
 * it does anything with a reply.
 */
const FLOOR_CLIENT = `
const dgram = require('node:dgram');
const { readFileSync } = require('node:fs');
const dnsPacket = require(process.argv[1]);
const [dnsMessageUrl, port, file, windowText, codecText] = process.argv.slice(2);
const window = Number(windowText);
const codec = codecText === '1';
const questions = readFileSync(file, 'utf8').trim().split('\\n').map((line) => line.split(' '));
import(dnsMessageUrl).then(({ encodeQuery }) => {
const encode = (i) => {
  const [name, type] = questions[i];
  if (codec) return encodeQuery(i & 0xffff, { name, type }, true);
  return dnsPacket.encode({ type: 'query', id: i & 0xffff, flags: dnsPacket.RECURSION_DESIRED, questions: [{ name, type, class: 'IN' }] });
};
const queries = codec ? null : questions.map((_, i) => encode(i));
const socket = dgram.createSocket('udp4');
socket.connect(Number(port), '127.0.0.1', () => {
  try { socket.setRecvBufferSize(4 << 20); } catch {}
  let sent = 0, received = 0, answers = 0;
  const started = process.hrtime.bigint();
  const pump = () => { while (sent < questions.length && sent - received < window) socket.send(codec ? encode(sent++) : queries[sent++]); };
  const timer = setTimeout(() => { process.stdout.write(JSON.stringify({ received, timedOut: true })); process.exit(1); }, 60000);
  socket.on('message', (message) => {
    received++;
    if (codec) answers += dnsPacket.decode(message).answers.length;
    if (received === questions.length) {
      const s = Number(process.hrtime.bigint() - started) / 1e9;
      clearTimeout(timer);
      process.stdout.write(JSON.stringify({ received, seconds: s, answers }));
      socket.close();
    } else pump();
  });
  pump();
});
});
`;

function runFloor(port, files, options, env, { codec }) {
  const dnsPacketPath = createRequire(join(ROOT, 'package.json')).resolve('dns-packet');
  const dnsMessageUrl = pathToFileURL(join(ROOT, 'dist', 'src', 'engine', 'dns', 'dns-message.js')).href;
  const args = ['-e', FLOOR_CLIENT, dnsPacketPath, dnsMessageUrl, String(port), files.queries, String(options.concurrency * TYPES.length), codec ? '1' : '0'];
  const run = spawnSync(NODE, args, {
    env,
    encoding: 'utf8',
    timeout: 90_000,
  });
  try {
    const result = JSON.parse(run.stdout);
    const qps = result.seconds ? result.received / result.seconds : null;
    // Every name of the zone has one record of each type: a decoding floor that read fewer answers decoded nothing.
    if (codec && result.answers !== result.received) return { received: result.received, seconds: result.seconds ?? null, qps: null, error: `${result.answers} answers decoded from ${result.received} replies` };
    return { received: result.received, seconds: result.seconds ?? null, qps, ...(codec ? { answers: result.answers } : {}) };
  } catch {
    return { received: null, seconds: null, qps: null, error: (run.stderr || run.stdout || '').slice(-500) };
  }
}

// ---------------------------------------------------------------- report

const settle = () => new Promise((resolve) => setTimeout(resolve, 1000));

function median(values) {
  const sorted = values.filter((v) => typeof v === 'number' && Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function maxOf(values) {
  const numbers = values.filter((v) => typeof v === 'number' && Number.isFinite(v));
  return numbers.length === 0 ? null : Math.max(...numbers);
}

const round = (value, digits = 2) => (value === null || value === undefined || Number.isNaN(value) ? null : Math.round(value * 10 ** digits) / 10 ** digits);

// ---------------------------------------------------------------- main

async function main() {
  const options = parseOptions(process.argv.slice(2));
  const notices = [];
  const tools = { nsd: findExecutable('nsd'), dnsperf: findExecutable('dnsperf'), dig: findExecutable('dig') };
  const missing = [
    tools.nsd ? null : 'nsd (apt-get install -y nsd)',
    tools.dnsperf ? null : 'dnsperf (apt-get install -y dnsperf)',
  ].filter(Boolean);
  if (missing.length > 0) {
    process.stderr.write(`${loud(`SKIPPED the DNS benchmark: ${missing.join(' and ')} not found on PATH or in /usr/sbin`)}\n`);
    mkdirSync(dirname(RESULTS), { recursive: true });
    writeFileSync(RESULTS, `${JSON.stringify({ schema: 1, date: new Date().toISOString(), skipped: true, missing }, null, 2)}\n`);
    return 0;
  }
  if (!existsSync(CLI_MAIN)) {
    process.stderr.write(`${loud(`SKIPPED the DNS benchmark: ${relative(ROOT, CLI_MAIN)} is missing; run npm run build first`)}\n`);
    return 1;
  }
  const stale = staleBuildFiles();
  if (stale.length > 0) notices.push(`the build is older than ${stale.length} source file(s) (${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ', ...' : ''}): run npm run build`);
  if (!tools.dig && options.dig) {
    notices.push('dig not found (apt-get install -y bind9-dnsutils): the dig reference is left out');
    options.dig = false;
  }

  const dir = mkdtempSync(join(tmpdir(), 'netintel-dns-bench-'));
  const home = join(dir, 'home');
  mkdirSync(home);
  const env = benchEnv(home);
  let nsd = null;
  const stopOnSignal = async (signal) => {
    await stopProcess(nsd);
    rmSync(dir, { recursive: true, force: true });
    process.kill(process.pid, signal);
  };
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);

  const machine = machineInfo();
  const rounds = [];
  let port = null;
  try {
    const files = writeInputs(dir, options.names);
    port = await freePort();
    nsd = await startNsd(tools.nsd, dir, files.zone, port);
    process.stderr.write(
      `nsd on 127.0.0.1:${port}, ${grouped(options.names)} names x ${TYPES.join('/')}; ${options.rounds} round(s) of ` +
        `dnsperf (-l ${options.durationS}), netintel${options.dig ? ', dig -f' : ''}${options.floor ? ', Node floor' : ''}\n`,
    );
    // A short untimed netintel run first: page cache, nsd's warm-up.
    await runNetintel(port, files, { ...options }, env);
    for (let r = 0; r < options.rounds; r++) {
      const entry = {};
      // A pause before each measured run lets the server drain what the
      // previous one left in flight and the machine settle.
      await settle();
      entry.dnsperf = await runDnsperf(tools.dnsperf, port, files, options, env);
      await settle();
      entry.netintel = await runNetintel(port, files, options, env);
      await settle();
      if (options.dig) entry.dig = await runDig(tools.dig, port, files, options, env);
      await settle();
      if (options.floor) {
        entry.floor = runFloor(port, files, options, env, { codec: false });
        await settle();
        entry.codecFloor = runFloor(port, files, options, env, { codec: true });
      }
      entry.ratio = entry.netintel.qps && entry.dnsperf.qps ? entry.netintel.qps / entry.dnsperf.qps : null;
      rounds.push(entry);
      process.stderr.write(
        `round ${r + 1}: dnsperf ${grouped(entry.dnsperf.qps)} q/s, netintel ${grouped(entry.netintel.qps)} q/s` +
          `${entry.dig ? `, dig ${grouped(entry.dig.qps)} q/s` : ''}${entry.floor ? `, floor ${grouped(entry.floor.qps)} q/s` : ''}` +
          `${entry.codecFloor ? `, floor with dns-packet ${grouped(entry.codecFloor.qps)} q/s` : ''}\n`,
      );
      if (!entry.netintel.valid) notices.push(`round ${r + 1}: netintel run failed the check (exit ${entry.netintel.code}, ${entry.netintel.ok ?? '?'} ok, ${entry.netintel.failed ?? '?'} failed): ${entry.netintel.stderrTail}`);
      if (entry.dnsperf.code !== 0 || entry.dnsperf.qps === null) notices.push(`round ${r + 1}: dnsperf failed (exit ${entry.dnsperf.code}): ${entry.dnsperf.raw ?? ''}`);
      else if (entry.dnsperf.lost > 0) notices.push(`round ${r + 1}: dnsperf lost ${entry.dnsperf.lost} queries`);
    }
  } finally {
    await stopProcess(nsd);
    process.off('SIGINT', stopOnSignal);
    process.off('SIGTERM', stopOnSignal);
    rmSync(dir, { recursive: true, force: true });
  }

  const dnsperfQps = median(rounds.map((r) => r.dnsperf.qps));
  const netintelQps = median(rounds.map((r) => r.netintel.qps));
  const digQps = median(rounds.map((r) => r.dig?.qps));
  const floorQps = median(rounds.map((r) => r.floor?.qps));
  const codecFloorQps = median(rounds.map((r) => r.codecFloor?.qps));
  const ratio = median(rounds.map((r) => r.ratio));
  const verdict = ratio === null ? 'ERROR' : ratio >= TARGET_RATIO ? 'PASS' : 'MISS';
  const ratioOf = (qps) => (qps && dnsperfQps ? qps / dnsperfQps : null);
  const peakRssKb = maxOf(rounds.map((r) => r.netintel.peakRssKb));
  const peakRss = peakRssKb === null ? 'peak RSS n/a' : `peak RSS ${fixed(peakRssKb / 1024, 1)} MB`;

  const queries = options.names * TYPES.length;
  const rows = [
    ['dnsperf', `-c ${options.dnsperfClients} -q ${options.dnsperfOutstanding}, ${options.durationS} s`, grouped(dnsperfQps), '1.00', '', ''],
    [
      'netintel dns -f csv',
      `${grouped(queries)} queries, --concurrency ${options.concurrency}, wall ${fixed(median(rounds.map((r) => r.netintel.wallS)), 2)} s, cpu ${fixed(median(rounds.map((r) => (r.netintel.userS ?? NaN) + (r.netintel.sysS ?? NaN))), 2)} s, ${peakRss}`,
      grouped(netintelQps),
      fixed(ratio, 3),
      `>= ${TARGET_RATIO}`,
      verdict,
    ],
  ];
  if (options.dig) rows.push(['dig -f (ref)', `${grouped(queries)} queries, one at a time`, grouped(digQps), fixed(ratioOf(digQps), 3), '', '']);
  if (options.floor) {
    const window = options.concurrency * TYPES.length;
    rows.push(['node:dgram floor (ref)', `${grouped(queries)} queries, window ${window}, no decoding`, grouped(floorQps), fixed(ratioOf(floorQps), 3), '', '']);
    rows.push(['  + dns-packet (ref)', `the same, each query encoded and each reply decoded with dns-packet`, grouped(codecFloorQps), fixed(ratioOf(codecFloorQps), 3), '', '']);
  }

  const out = [
    '',
    `DNS bulk: ${grouped(options.names)} names x ${TYPES.join('/')} against NSD on loopback (${machine.cpus} CPUs, load ${machine.loadAvgAtStart.join(' ')}), median of ${options.rounds} round(s)`,
    '',
    formatTable(['tool', 'run', ' q/s', ' vs dnsperf', ' target', 'verdict'], rows),
    '',
    `target: netintel >= ${TARGET_RATIO} x dnsperf (median of the rounds' ratios): ${verdict}, ${fixed(ratio, 3)} ` +
      `(rounds ${rounds.map((r) => fixed(r.ratio, 3)).join(', ')}); netintel ${peakRss} (the largest of the rounds)`,
    '',
  ];
  for (const notice of notices) out.push(loud(notice), '');
  process.stdout.write(`${out.join('\n')}\n`);

  const result = {
    schema: 1,
    date: new Date().toISOString(),
    options,
    machine,
    loadAvgAtEnd: loadavg().map((x) => round(x)),
    git: gitInfo(),
    tools: {
      nsd: toolVersion(tools.nsd, ['-v'], /NSD version (\S+)/),
      dnsperf: toolVersion(tools.dnsperf, ['-h'], /Version (\S+)/),
      dig: tools.dig ? toolVersion(tools.dig, ['-v'], /DiG (\S+)/) : null,
    },
    server: { software: 'nsd', serverCount: 1, rrlRatelimit: 0, address: `127.0.0.1:${port}` },
    envRemoved: ['NODE_EXTRA_CA_CERTS', 'NETINTEL_*'],
    netintelEntry: relative(ROOT, CLI_MAIN),
    queries,
    target: { ratio: TARGET_RATIO, description: 'netintel dns q/s / dnsperf q/s, same server, same run, at least' },
    summary: {
      dnsperfQps: round(dnsperfQps, 0),
      netintelQps: round(netintelQps, 0),
      digQps: round(digQps, 0),
      nodeFloorQps: round(floorQps, 0),
      ratio: round(ratio, 3),
      netintelPeakRssMb: peakRssKb === null ? null : round(peakRssKb / 1024, 1),
      nodeFloorRatio: round(ratioOf(floorQps), 3),
      dnsPacketFloorQps: round(codecFloorQps, 0),
      dnsPacketFloorRatio: round(ratioOf(codecFloorQps), 3),
      verdict,
    },
    rounds: rounds.map((r) => ({
      ratio: round(r.ratio, 3),
      dnsperf: { ...r.dnsperf, qps: round(r.dnsperf.qps, 0), wallS: round(r.dnsperf.wallS) },
      netintel: { ...r.netintel, qps: round(r.netintel.qps, 0), wallS: round(r.netintel.wallS, 3) },
      ...(r.dig ? { dig: { ...r.dig, qps: round(r.dig.qps, 0), wallS: round(r.dig.wallS, 3) } } : {}),
      ...(r.floor ? { floor: { ...r.floor, qps: round(r.floor.qps, 0), seconds: round(r.floor.seconds, 3) } } : {}),
      ...(r.codecFloor ? { dnsPacketFloor: { ...r.codecFloor, qps: round(r.codecFloor.qps, 0), seconds: round(r.codecFloor.seconds, 3) } } : {}),
    })),
    notices,
  };
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`written ${relative(ROOT, RESULTS)}\n`);
  return options.strict && verdict !== 'PASS' ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`${loud(`DNS benchmark failed: ${error.message}`)}\n`);
    process.exitCode = 1;
  },
);
