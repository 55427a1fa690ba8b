#!/usr/bin/env node
// netintel security benchmark: what the security signals cost.
//
//   node bench/security.js               full run (1,000,000 synthetic ranges, 1,000,000 IPs)
//   node bench/security.js --quick       fast check (200,000 ranges, 200,000 IPs)
//   node bench/security.js --help        all options
//
// 1. Generates a realistic feed set into a temp dir: a datacenter CIDR list
//    of N random ranges (mostly /24, from single addresses to /20), a VPN
//    list, a Tor exit list, an open proxy list and a VPN ASN list, installs
//    it with `netintel data update` from file: URLs (download, validation,
//    compilation: timed) into a scratch data dir.
// 2. Bulk: `netintel bulk -f csv` over the same random IPv4 list with that
//    data dir and with an empty one, interleaved, several rounds. Target:
//    time with signals <= 1.2 x time without.
// 3. Memory: the compiled index's size and the RSS a process gains loading
//    it whole (memory mode). Target: under 100 MB for a million ranges.
// 4. Lookup cost against index size (O(log n)): ns per lookup at n/100 and n.
// 5. One-off: `netintel vpn 8.8.8.8 -f json` (with the big index, and with
//    none) and `netintel ip 8.8.8.8 -f json` against `node -e 0`, interleaved.
//    Target: the ip issue's P1, mean <= 1.3 x node -e 0.
//
// Needs the project built (npm run build). Writes bench/results/security-latest.json.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ipListFile, createPrng, isSpecialV4 } from './lib/ip-list.js';
import { BENCH_DIR, CLI, CLI_MAIN, ROOT } from './lib/paths.js';
import { benchEnv, GNU_TIME, runBulk, timeOnce } from './lib/processes.js';
import { fixed, formatTable, grouped, loud } from './lib/report.js';
import { round, summarize } from './lib/stats.js';

const NODE = process.execPath;
const RESULTS = join(BENCH_DIR, 'results', 'security-latest.json');
const TARGETS = {
  bulkRatio: 1.2, // bulk wall time with signals / without, at most
  memoryMb: 100, // RSS gained by loading the index of a million ranges, at most
  oneOffRatio: 1.3, // netintel vpn mean / node -e 0 mean, at most (P1 of the ip issue)
};

const KNOWN = new Set(['help', 'quick', 'ranges', 'ips', 'rounds', 'runs', 'seed', 'keep']);

function parseOptions(argv) {
  const flags = new Map();
  for (const arg of argv) {
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg);
    if (!match || !KNOWN.has(match[1])) throw new Error(`unknown argument ${arg} (see --help)`);
    flags.set(match[1], match[2] ?? true);
  }
  if (flags.has('help')) {
    process.stdout.write(
      [
        'usage: node bench/security.js [--quick] [--ranges=N] [--ips=N] [--rounds=N] [--runs=N] [--seed=N] [--keep]',
        '',
        '  --quick      200,000 ranges and IPs, 2 bulk rounds, 10 one-off runs',
        '  --ranges=N   synthetic datacenter ranges (default 1,000,000)',
        '  --ips=N      addresses in the bulk runs (default 1,000,000)',
        '  --rounds=N   bulk runs of each kind, interleaved (default 3)',
        '  --runs=N     timed one-off runs per command (default 20)',
        '  --seed=N     PRNG seed (default 20240601)',
        '  --keep       keep the generated feeds and data dir (printed)',
        '',
      ].join('\n'),
    );
    process.exit(0);
  }
  const quick = flags.has('quick');
  const number = (name, fallback) => (flags.has(name) ? Number(flags.get(name)) : fallback);
  return {
    mode: quick ? 'quick' : 'full',
    ranges: number('ranges', quick ? 200_000 : 1_000_000),
    ips: number('ips', quick ? 200_000 : 1_000_000),
    rounds: number('rounds', quick ? 2 : 3),
    runs: number('runs', quick ? 10 : 20),
    seed: number('seed', 20240601),
    keep: flags.has('keep'),
  };
}

// ---------------------------------------------------------------- feeds

const V4 = (value) => `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;

function randomPublic(next) {
  let value;
  do value = next();
  while (isSpecialV4(value));
  return value;
}

/** Writes the synthetic feed set; returns { name: path }. */
function writeFeeds(dir, options) {
  const next = createPrng(options.seed ^ 0x5eed);
  const lines = new Array(options.ranges);
  for (let i = 0; i < options.ranges; i++) {
    const roll = next() % 100;
    // Mostly /24s, as in the real datacenter lists; some single addresses, some up to /20.
    const prefix = roll < 55 ? 24 : roll < 65 ? 32 : roll < 75 ? 23 : roll < 82 ? 22 : roll < 88 ? 28 : roll < 94 ? 26 : roll < 98 ? 21 : 20;
    const size = 2 ** (32 - prefix);
    const base = randomPublic(next);
    lines[i] = `${V4(base - (base % size))}/${prefix}`;
  }
  const feeds = {
    'datacenter-ipv4': `# synthetic datacenter ranges (${options.ranges})\n${lines.join('\n')}\n`,
    'vpn-ipv4': `${Array.from({ length: 10_000 }, () => `${V4(randomPublic(next) & 0xffffff00)}/24`).join('\n')}\n`,
    'tor-exit': `${Array.from({ length: 2_000 }, () => V4(randomPublic(next))).join('\n')}\n`,
    'open-proxies': `${Array.from({ length: 10_000 }, () => `${V4(randomPublic(next))}:${1024 + (next() % 60000)}`).join('\n')}\n`,
    'vpn-asn': `${['AS9009 # M247', 'AS60729 # Tor Servers', 'AS209854 # Surfshark', 'AS136787 # NordVPN', 'AS212238 # Datacamp'].join('\n')}\n`,
  };
  const paths = {};
  for (const [name, text] of Object.entries(feeds)) {
    paths[name] = join(dir, `${name}.txt`);
    writeFileSync(paths[name], text);
  }
  return paths;
}

// ---------------------------------------------------------------- measurements

function timedSync(args, env) {
  const timeFile = join(tmpdir(), `netintel-security-bench-${process.pid}.time`);
  const started = process.hrtime.bigint();
  const [file, argv] = GNU_TIME ? [GNU_TIME, ['-f', '%e %U %S %M', '-o', timeFile, NODE, ...args]] : [NODE, args];
  const run = spawnSync(file, argv, { env, encoding: 'utf8', maxBuffer: 64 * 2 ** 20 });
  const wallS = Number(process.hrtime.bigint() - started) / 1e9;
  let peakRssMb = null;
  if (GNU_TIME && existsSync(timeFile)) {
    const last = spawnSync('tail', ['-n', '1', timeFile], { encoding: 'utf8' }).stdout.trim().split(/\s+/);
    peakRssMb = round(Number(last[3]) / 1024, 1);
    rmSync(timeFile, { force: true });
  }
  return { status: run.status, stdout: run.stdout, stderr: run.stderr, wallS, peakRssMb };
}

/** RSS a process gains opening the index in memory mode and doing a few lookups, in MB. */
function indexMemory(indexPath, env) {
  const module = pathToFileURL(join(ROOT, 'dist', 'src', 'engine', 'security', 'signal-index.js')).href;
  const script = `
    const { SignalIndex } = await import(${JSON.stringify(module)});
    globalThis.gc?.();
    const before = process.memoryUsage();
    const index = SignalIndex.open(${JSON.stringify(indexPath)}, { mode: 'memory' });
    let hits = 0;
    for (let i = 0; i < 100000; i++) if (index.v4SetAt((Math.imul(i, 2654435761) >>> 0)) !== -1) hits++;
    globalThis.gc?.();
    const after = process.memoryUsage();
    // Uses the index after measuring, so that it is still alive when measured.
    console.log(JSON.stringify({ rssMb: (after.rss - before.rss) / 2 ** 20, externalMb: (after.arrayBuffers - before.arrayBuffers) / 2 ** 20, heapMb: (after.heapUsed - before.heapUsed) / 2 ** 20, hits, segments: index.meta.v4Segments + index.v4SetAt(0) }));
  `;
  const run = spawnSync(NODE, ['--expose-gc', '--input-type=module', '-e', script], { env, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`index memory probe failed: ${run.stderr}`);
  const measured = JSON.parse(run.stdout);
  // RSS may not show every page of a buffer yet; count whichever is larger.
  return { ...measured, loadMb: Math.max(measured.rssMb, measured.externalMb + measured.heapMb) };
}

/** ns per v4 lookup (memory mode) over indexes of a small and the full size. */
function lookupScaling(smallIndex, bigIndex, env) {
  const module = pathToFileURL(join(ROOT, 'dist', 'src', 'engine', 'security', 'signal-index.js')).href;
  const script = `
    const { SignalIndex } = await import(${JSON.stringify(module)});
    const out = {};
    for (const [name, path] of Object.entries(${JSON.stringify({ small: smallIndex, big: bigIndex })})) {
      const index = SignalIndex.open(path, { mode: 'memory' });
      let sink = 0;
      for (let i = 0; i < 200000; i++) sink += index.v4SetAt(Math.imul(i, 2654435761) >>> 0);
      const n = 2000000;
      const start = process.hrtime.bigint();
      for (let i = 0; i < n; i++) sink += index.v4SetAt(Math.imul(i + 7, 2246822519) >>> 0);
      out[name] = { nsPerLookup: Number(process.hrtime.bigint() - start) / n, segments: index.meta.v4Segments, sink: sink !== 0 };
    }
    console.log(JSON.stringify(out));
  `;
  const run = spawnSync(NODE, ['--input-type=module', '-e', script], { env, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`lookup scaling probe failed: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

async function oneOff(options, env, dataDir, emptyDir) {
  const json = (text) => {
    try {
      return JSON.parse(text);
    } catch {
      return null;
    }
  };
  const commands = [
    { id: 'node', label: 'node -e 0', args: ['-e', '0'], check: (r) => r.code === 0 },
    { id: 'ip', label: 'netintel ip 8.8.8.8 -f json (no feeds)', args: [CLI, 'ip', '8.8.8.8', '-f', 'json', '--data-dir', emptyDir], check: (r) => json(r.stdout)?.ip === '8.8.8.8' },
    { id: 'vpn', label: 'netintel vpn 8.8.8.8 -f json (no feeds)', args: [CLI, 'vpn', '8.8.8.8', '-f', 'json', '--data-dir', emptyDir], check: (r) => json(r.stdout)?.kind === 'vpn' },
    {
      id: 'vpn-index',
      label: `netintel vpn 8.8.8.8 -f json (${grouped(options.ranges)}-range index)`,
      args: [CLI, 'vpn', '8.8.8.8', '-f', 'json', '--data-dir', dataDir],
      check: (r) => json(r.stdout)?.is_tor === false,
    },
    {
      id: 'ip-index',
      label: `netintel ip 8.8.8.8 -f json (${grouped(options.ranges)}-range index)`,
      args: [CLI, 'ip', '8.8.8.8', '-f', 'json', '--data-dir', dataDir],
      check: (r) => json(r.stdout)?.security?.is_tor === false,
    },
  ];
  for (const command of commands) {
    command.samples = [];
    const probe = await timeOnce(NODE, command.args, env);
    if (!command.check(probe)) throw new Error(`one-off "${command.label}" failed its check: ${probe.stderr || probe.stdout}`);
  }
  const warmup = 2;
  for (let turn = 0; turn < warmup + options.runs; turn++) {
    for (let k = 0; k < commands.length; k++) {
      const command = commands[(turn + k) % commands.length];
      const run = await timeOnce(NODE, command.args, env);
      if (turn >= warmup && command.check(run)) command.samples.push(run.ms);
    }
  }
  const node = summarize(commands[0].samples);
  return commands.map((command) => {
    const stats = summarize(command.samples);
    return {
      id: command.id,
      label: command.label,
      runs: stats.n,
      meanMs: round(stats.mean),
      medianMs: round(stats.median),
      p90Ms: round(stats.p90),
      ratioMeanVsNode: round(stats.mean / node.mean, 3),
      ratioMedianVsNode: round(stats.median / node.median, 3),
    };
  });
}

// ---------------------------------------------------------------- main

async function main() {
  const options = parseOptions(process.argv.slice(2));
  if (!existsSync(CLI_MAIN)) throw new Error(`netintel is not built (${CLI_MAIN} missing): run npm run build`);
  const env = benchEnv();
  const started = Date.now();
  const work = mkdtempSync(join(tmpdir(), 'netintel-security-bench-'));
  const dataDir = join(work, 'data');
  const emptyDir = join(work, 'empty');
  mkdirSync(emptyDir);
  const notices = [];
  try {
    process.stderr.write(`security bench: generating ${grouped(options.ranges)} ranges + VPN, Tor, proxy and ASN lists\n`);
    const feeds = writeFeeds(join(work), options);
    const feedArgs = Object.entries(feeds).flatMap(([name, path]) => ['--feed', `${name}=${pathToFileURL(path).href}`]);

    process.stderr.write('security bench: netintel data update (validate + compile)\n');
    const update = timedSync([CLI, 'data', 'update', ...Object.keys(feeds), ...feedArgs, '--data-dir', dataDir, '-f', 'json', '-q'], env);
    if (update.status !== 0) throw new Error(`data update failed (exit ${update.status}): ${update.stderr}`);
    const installed = JSON.parse(update.stdout);
    const indexPath = join(dataDir, 'security.idx');
    const indexBytes = statSync(indexPath).size;

    // A small index for the scaling probe: the first 1% of the ranges (at least 10,000).
    const smallDir = join(work, 'small');
    const smallFeed = join(work, 'small-datacenter.txt');
    const head = spawnSync('head', ['-n', String(Math.max(10_000, Math.floor(options.ranges / 100))), feeds['datacenter-ipv4']], { encoding: 'utf8', maxBuffer: 256 * 2 ** 20 });
    writeFileSync(smallFeed, head.stdout);
    const small = timedSync([CLI, 'data', 'update', 'datacenter-ipv4', '--feed', `datacenter-ipv4=${pathToFileURL(smallFeed).href}`, '--data-dir', smallDir, '-q'], env);
    if (small.status !== 0) throw new Error(`small data update failed: ${small.stderr}`);

    process.stderr.write('security bench: index memory and lookup scaling\n');
    const memory = indexMemory(indexPath, env);
    const scaling = lookupScaling(join(smallDir, 'security.idx'), indexPath, env);

    const list = ipListFile(options.ips, options.seed);
    const bulkRuns = { without: [], with: [] };
    for (let turn = 0; turn < options.rounds; turn++) {
      for (const kind of turn % 2 === 0 ? ['without', 'with'] : ['with', 'without']) {
        process.stderr.write(`security bench: bulk ${grouped(options.ips)} IPs ${kind} signals (round ${turn + 1}/${options.rounds})\n`);
        const dir = kind === 'with' ? dataDir : emptyDir;
        const run = await runBulk({ command: NODE, args: [CLI, 'bulk', '-f', 'csv', '-q', '--data-dir', dir], env, inputFile: list.path, deadlineMs: 600_000 });
        if (run.error || run.exitCode !== 0 || run.lines !== options.ips + 1) {
          throw new Error(`bulk ${kind} signals failed: exit ${run.exitCode}, ${run.lines} lines, ${run.error ?? run.stderrTail}`);
        }
        bulkRuns[kind].push({ wallS: round(run.wallS, 3), cpuS: run.userS === null ? null : round(run.userS + run.sysS, 2), peakRssMb: run.peakRssKb === null ? null : round(run.peakRssKb / 1024, 1) });
      }
    }
    const median = (values) => summarize(values).median;
    const bulk = {
      ips: options.ips,
      rounds: options.rounds,
      without: bulkRuns.without,
      with: bulkRuns.with,
      medianWallWithoutS: round(median(bulkRuns.without.map((r) => r.wallS)), 3),
      medianWallWithS: round(median(bulkRuns.with.map((r) => r.wallS)), 3),
      medianCpuWithoutS: bulkRuns.without[0].cpuS === null ? null : round(median(bulkRuns.without.map((r) => r.cpuS)), 2),
      medianCpuWithS: bulkRuns.with[0].cpuS === null ? null : round(median(bulkRuns.with.map((r) => r.cpuS)), 2),
      peakRssWithoutMb: Math.max(...bulkRuns.without.map((r) => r.peakRssMb ?? 0)) || null,
      peakRssWithMb: Math.max(...bulkRuns.with.map((r) => r.peakRssMb ?? 0)) || null,
    };
    bulk.ratioWall = round(bulk.medianWallWithS / bulk.medianWallWithoutS, 3);
    bulk.ratioCpu = bulk.medianCpuWithS && bulk.medianCpuWithoutS ? round(bulk.medianCpuWithS / bulk.medianCpuWithoutS, 3) : null;

    process.stderr.write(`security bench: one-off, ${options.runs} rounds of 5 commands, interleaved\n`);
    const oneOffResults = await oneOff(options, env, dataDir, emptyDir);
    const byId = Object.fromEntries(oneOffResults.map((r) => [r.id, r]));

    const totalRanges = installed.reduce((sum, record) => sum + (record.entries ?? 0), 0);
    const targets = [
      { name: 'bulk 1M IPv4: wall time with signals / without (median)', value: bulk.ratioWall, op: '<=', target: TARGETS.bulkRatio },
      { name: 'bulk, CPU-time basis (info)', value: bulk.ratioCpu, op: '<=', target: TARGETS.bulkRatio, info: true },
      { name: `memory to load the index of ${grouped(totalRanges)} entries whole (MB)`, value: round(memory.loadMb, 1), op: '<=', target: TARGETS.memoryMb },
      { name: 'one-off: netintel vpn (big index) mean / node -e 0 mean', value: byId['vpn-index'].ratioMeanVsNode, op: '<=', target: TARGETS.oneOffRatio },
      { name: 'one-off: netintel vpn (no feeds) mean / node -e 0 mean', value: byId.vpn.ratioMeanVsNode, op: '<=', target: TARGETS.oneOffRatio },
      { name: 'one-off: netintel ip (no feeds) mean / node -e 0 mean (reference)', value: byId.ip.ratioMeanVsNode, op: '<=', target: TARGETS.oneOffRatio, info: true },
    ].map((t) => ({ ...t, status: t.value === null ? 'SKIPPED' : (t.op === '<=' ? t.value <= t.target : t.value >= t.target) ? 'PASS' : 'MISS' }));
    if (!GNU_TIME) notices.push('GNU time not installed: CPU time and peak RSS of the bulk and update runs are not measured');

    const cpuList = cpus();
    const result = {
      schema: 1,
      date: new Date(started).toISOString(),
      mode: options.mode,
      options,
      machine: { node: process.version, cpus: cpuList.length, cpuModel: cpuList[0]?.model?.trim() ?? null, totalMemMb: Math.round(totalmem() / 2 ** 20), loadAvg: loadavg().map((x) => round(x, 2)) },
      envRemoved: ['NODE_EXTRA_CA_CERTS'],
      feeds: installed.map((record) => ({ source: record.source, entries: record.entries, bytes: record.bytes })),
      update: { wallS: round(update.wallS, 2), peakRssMb: update.peakRssMb, indexBytes, indexMb: round(indexBytes / 2 ** 20, 1) },
      memory: { loadMb: round(memory.loadMb, 1), rssMb: round(memory.rssMb, 1), externalMb: round(memory.externalMb, 1), heapMb: round(memory.heapMb, 1) },
      lookupScaling: scaling,
      bulk,
      oneOff: oneOffResults,
      targets,
      notices,
      durationS: round((Date.now() - started) / 1000, 1),
    };
    mkdirSync(dirname(RESULTS), { recursive: true });
    writeFileSync(RESULTS, `${JSON.stringify(result, null, 2)}\n`);
    printReport(result);
    if (options.keep) process.stdout.write(`kept: ${work}\n`);
  } finally {
    if (!options.keep) rmSync(work, { recursive: true, force: true });
  }
}

function printReport(r) {
  const out = [''];
  out.push(`netintel security bench (${r.mode}) ${r.date}; node ${r.machine.node}, ${r.machine.cpus} CPUs (${r.machine.cpuModel}), load ${r.machine.loadAvg.join(' ')}`);
  out.push('measured processes run with the environment minus NODE_EXTRA_CA_CERTS');
  out.push('');
  out.push(`FEEDS installed by netintel data update from file: URLs in ${fixed(r.update.wallS, 2)} s (peak RSS ${fixed(r.update.peakRssMb)} MB); security.idx ${fixed(r.update.indexMb)} MB`);
  out.push(formatTable(['source', ' entries', ' bytes'], r.feeds.map((f) => [f.source, grouped(f.entries), grouped(f.bytes)])));
  out.push('');
  out.push(`MEMORY: loading the index whole (memory mode) takes ${fixed(r.memory.loadMb)} MB (RSS +${fixed(r.memory.rssMb)} MB; buffers ${fixed(r.memory.externalMb)} MB, heap ${fixed(r.memory.heapMb)} MB)`);
  const s = r.lookupScaling;
  out.push(`LOOKUP: ${fixed(s.small.nsPerLookup, 0)} ns at ${grouped(s.small.segments)} segments, ${fixed(s.big.nsPerLookup, 0)} ns at ${grouped(s.big.segments)} segments (binary search: log n)`);
  out.push('');
  const b = r.bulk;
  out.push(`BULK: netintel bulk -f csv, ${grouped(b.ips)} random IPv4, ${b.rounds} interleaved rounds each; wall time from spawn to exit`);
  out.push(
    formatTable(
      ['run', ' wall s (each)', ' median', ' cpu s (median)', ' peak RSS MB'],
      [
        ['without signals (empty data dir)', b.without.map((x) => fixed(x.wallS, 2)).join(' '), fixed(b.medianWallWithoutS, 2), fixed(b.medianCpuWithoutS, 2), fixed(b.peakRssWithoutMb)],
        ['with signals (index above)', b.with.map((x) => fixed(x.wallS, 2)).join(' '), fixed(b.medianWallWithS, 2), fixed(b.medianCpuWithS, 2), fixed(b.peakRssWithMb)],
      ],
    ),
  );
  out.push('');
  out.push('ONE-OFF: wall time from spawn to exit, interleaved, order rotated every round');
  out.push(formatTable(['command', ' runs', ' mean ms', ' median', ' p90', ' x node (mean)', ' x node (median)'], r.oneOff.map((c) => [c.label, c.runs, fixed(c.meanMs), fixed(c.medianMs), fixed(c.p90Ms), fixed(c.ratioMeanVsNode, 2), fixed(c.ratioMedianVsNode, 2)])));
  out.push('');
  out.push('TARGETS');
  out.push(formatTable(['check', ' value', ' target', 'status'], r.targets.map((t) => [t.name, fixed(t.value, 3), `${t.op} ${t.target}`, t.info ? `(${t.status})` : t.status])));
  for (const notice of r.notices) out.push(loud(notice));
  out.push('');
  out.push(`total ${fixed(r.durationS)} s; written bench/results/security-latest.json`);
  process.stdout.write(`${out.join('\n')}\n`);
}

main().catch((error) => {
  process.stderr.write(`security bench: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
