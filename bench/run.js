#!/usr/bin/env node
// netintel benchmark: one-off start-up cost and bulk throughput, each against
// baselines measured in the same run, with the targets checked.
//
//   npm run bench                  full run (30 one-off runs, 1,000,000 IPs)
//   npm run bench -- --quick       fast check (10 one-off runs, 100,000 IPs)
//   node bench/run.js --help       all options
//
// Needs the project built (npm run build, npm run build:data).
// Writes bench/results/latest.json.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { buildMmdbLoop } from './lib/c-baseline.js';
import { ASN_INDEX, BENCH_DIR, CITY_DB, CLI, CLI_MAIN, RESULTS, ROOT } from './lib/paths.js';
import { ipListFile } from './lib/ip-list.js';
import { benchEnv, GNU_TIME, runBulk, timeOnce } from './lib/processes.js';
import { fixed, formatTable, grouped, loud } from './lib/report.js';
import { round, summarize } from './lib/stats.js';

const NODE = process.execPath;

const TARGETS = {
  // The floors of the simplification (one entry path, no speed-only machinery): a one-off
  // lookup through commander and the whole CLI bundle, and bulk without hand-tuned plumbing.
  oneOffRatio: 1.5, // netintel ip mean wall time / node -e 0 mean wall time, at most
  oneOffOverNodeMs: 15, // netintel ip median wall time - node -e 0 median wall time, at most (ms)
  bulkVsC: 0.5, // netintel bulk lookups/s / C libmaxminddb loop lookups/s, at least
  rssGrowth: 1.2, // peak RSS of the large bulk run / of the small one, at most
};

const C_LOOP_DESCRIPTION =
  'C loop (bench/baseline/mmdb-loop.c, gcc -O2, libmaxminddb, mmap): per line inet_pton; city lookup ' +
  '(MMDB_lookup_sockaddr + MMDB_get_entry_data_list decoding the whole record); a second ' +
  'MMDB_lookup_sockaddr of the same address in the same city DB + MMDB_get_value(country_code), ' +
  'standing in for the ASN lookup; one unquoted CSV line to a 1 MiB-buffered stdout';
const NODE_MAXMIND_DESCRIPTION =
  'Node + maxmind (bench/baseline/node-maxmind.mjs): city lookup only (reader.get, default LRU), ' +
  'one unquoted CSV line of 7 fields, 64 KiB write batches';

// ---------------------------------------------------------------- options

const KNOWN_FLAGS = new Set(['help', 'quick', 'runs', 'warmup', 'ips', 'small-ips', 'rounds', 'seed', 'budget', 'only', 'strict']);

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
        'usage: node bench/run.js [--quick] [--runs=N] [--warmup=N] [--ips=N] [--small-ips=N]',
        '                         [--rounds=N] [--seed=N] [--budget=SECONDS] [--only=oneoff|bulk] [--strict]',
        '',
        '  --quick        10 one-off runs, 100,000 IPs (small run: 10,000), 3 bulk rounds, 75 s budget',
        '  --runs=N       timed one-off runs per command (default 30)',
        '  --warmup=N     untimed warm-up rounds before them (default 3)',
        '  --ips=N        addresses in the large bulk run (default 1,000,000)',
        '  --small-ips=N  addresses in the small bulk run, for the memory comparison (default 100,000)',
        '  --rounds=N     bulk rounds, each a C loop run and a netintel run back to back; the bulk',
        '                 ratio is the median of the rounds\' ratios (default 5)',
        '  --seed=N       PRNG seed of the address list (default 20240601)',
        '  --budget=S     wall-time budget of the whole run; the large netintel run is cut',
        '                 (and reported as partial) when it would overrun; rounds that would',
        '                 overrun are left out (default 240)',
        '  --only=WHAT    only the one-off or only the bulk part',
        '  --strict       exit 1 when a target is missed',
        '',
      ].join('\n'),
    );
    process.exit(0);
  }
  const quick = flags.has('quick');
  const number = (name, fallback) => {
    if (!flags.has(name)) return fallback;
    const value = Number(flags.get(name));
    if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a number`);
    return value;
  };
  const only = flags.get('only') ?? null;
  if (only !== null && only !== 'oneoff' && only !== 'bulk') throw new Error('--only must be oneoff or bulk');
  const options = {
    mode: quick ? 'quick' : 'full',
    runs: number('runs', quick ? 10 : 30),
    warmup: number('warmup', quick ? 2 : 3),
    ips: number('ips', quick ? 100_000 : 1_000_000),
    smallIps: number('small-ips', quick ? 10_000 : 100_000),
    rounds: Math.max(1, Math.floor(number('rounds', quick ? 3 : 5))),
    seed: number('seed', 20240601),
    budgetS: number('budget', quick ? 75 : 240),
    only,
    strict: flags.has('strict'),
  };
  if (options.smallIps >= options.ips) throw new Error('--small-ips must be below --ips');
  return options;
}

// ---------------------------------------------------------------- environment

function machineInfo() {
  const cpuList = cpus();
  return {
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: cpuList.length,
    cpuModel: cpuList[0]?.model?.trim() ?? null,
    totalMemMb: Math.round(totalmem() / 2 ** 20),
    loadAvgAtStart: loadavg().map((x) => round(x, 2)),
  };
}

function gitInfo() {
  const run = (args) => spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  const head = run(['rev-parse', '--short', 'HEAD']);
  if (head.status !== 0) return null;
  const status = run(['status', '--porcelain', '--', 'src', 'bin', 'scripts']);
  return { commit: head.stdout.trim(), uncommittedChangesInSrc: status.stdout.trim() !== '' };
}

/** Source files changed after the CLI's built entry module: the measured build may not be the current code. */
function staleBuildFiles() {
  const builtAt = statSync(CLI_MAIN).mtimeMs;
  const stale = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') && statSync(path).mtimeMs > builtAt) stale.push(relative(ROOT, path));
    }
  };
  if (existsSync(join(ROOT, 'src'))) walk(join(ROOT, 'src'));
  return stale;
}

// ---------------------------------------------------------------- one-off

function oneOffCommands() {
  const json = (text) => {
    try {
      return JSON.parse(text);
    } catch {
      return null;
    }
  };
  return [
    {
      id: 'node',
      label: 'node -e 0',
      args: ['-e', '0'],
      check: (run) => run.code === 0,
    },
    {
      id: 'ip',
      label: 'netintel ip 8.8.8.8 -f json',
      args: [CLI, 'ip', '8.8.8.8', '-f', 'json'],
      netintel: true,
      check: (run) => run.code === 0 && json(run.stdout)?.ip === '8.8.8.8',
    },
    {
      // What a person types: the default view on a terminal (here a pipe, so without colour), which the JSON runs do not draw.
      id: 'ip-view',
      label: 'netintel ip 8.8.8.8 (the default view)',
      args: [CLI, 'ip', '8.8.8.8'],
      netintel: true,
      check: (run) => run.code === 0 && run.stdout.startsWith('8.8.8.8  '),
    },
    {
      id: 'ip6',
      label: 'netintel ip 2001:4860:4860::8888 -f json',
      args: [CLI, 'ip', '2001:4860:4860::8888', '-f', 'json'],
      netintel: true,
      check: (run) => run.code === 0 && json(run.stdout)?.ip === '2001:4860:4860::8888',
    },
    {
      id: 'vpn',
      label: 'netintel vpn 8.8.8.8 -f json',
      args: [CLI, 'vpn', '8.8.8.8', '-f', 'json'],
      netintel: true,
      check: (run) => run.code === 0 && json(run.stdout)?.ip === '8.8.8.8',
    },
    {
      id: 'asn',
      label: 'netintel asn 8.8.8.8 -f json',
      args: [CLI, 'asn', '8.8.8.8', '-f', 'json'],
      netintel: true,
      check: (run) => run.code === 0 && json(run.stdout)?.asn === 15169,
    },
    {
      id: 'maxmind',
      label: 'node maxmind.open() + 1 lookup (ref)',
      args: [join(BENCH_DIR, 'baseline', 'maxmind-oneoff.mjs'), CITY_DB, '8.8.8.8'],
      check: (run) => run.code === 0 && json(run.stdout)?.country_code === 'US',
    },
  ];
}

async function measureOneOff(options, env, notices, netintelReady) {
  const all = oneOffCommands();
  const commands = [];
  const skipped = [];
  for (const command of all) {
    if (command.netintel && !netintelReady) {
      skipped.push({ id: command.id, label: command.label, reason: 'netintel is not built' });
      continue;
    }
    const probe = await timeOnce(NODE, command.args, env);
    if (!command.check(probe)) {
      const reason = `exit ${probe.code}${probe.signal ? ` (${probe.signal})` : ''}: ${firstErrorLine(probe.stderr || probe.stdout)}`;
      notices.push(`SKIPPED one-off "${command.label}": its output failed the check, ${reason}`);
      skipped.push({ id: command.id, label: command.label, reason });
      continue;
    }
    commands.push({ ...command, samples: [], failures: 0, firstFailure: null });
  }
  process.stderr.write(`one-off: ${options.warmup} warm-up + ${options.runs} timed rounds of ${commands.length} commands, interleaved\n`);
  const rounds = options.warmup + options.runs;
  for (let round = 0; round < rounds; round++) {
    // Interleave A B C D, and rotate the order every round so no command always follows another.
    for (let k = 0; k < commands.length; k++) {
      const command = commands[(round + k) % commands.length];
      const run = await timeOnce(NODE, command.args, env);
      if (round < options.warmup) continue;
      if (command.check(run)) command.samples.push(run.ms);
      else {
        command.failures++;
        command.firstFailure ??= `exit ${run.code}: ${firstErrorLine(run.stderr || run.stdout)}`;
      }
    }
  }
  const node = commands.find((command) => command.id === 'node');
  const nodeStats = node ? summarize(node.samples) : null;
  const results = commands.map((command) => {
    const stats = summarize(command.samples);
    return {
      id: command.id,
      label: command.label,
      argv: ['node', ...command.args.map((arg) => (arg.startsWith(ROOT) ? relative(ROOT, arg) : arg))],
      runs: stats.n,
      failures: command.failures,
      firstFailure: command.firstFailure,
      meanMs: round(stats.mean),
      medianMs: round(stats.median),
      stdevMs: round(stats.stdev),
      minMs: round(stats.min),
      p90Ms: round(stats.p90),
      maxMs: round(stats.max),
      ratioMeanVsNode: nodeStats ? round(stats.mean / nodeStats.mean, 3) : null,
      ratioMedianVsNode: nodeStats ? round(stats.median / nodeStats.median, 3) : null,
      overMeanNodeMs: nodeStats ? round(stats.mean - nodeStats.mean) : null,
      overMedianNodeMs: nodeStats ? round(stats.median - nodeStats.median) : null,
    };
  });
  return { runs: options.runs, warmup: options.warmup, order: 'interleaved, order rotated every round', commands: results, skipped };
}

// ---------------------------------------------------------------- bulk

/** The most telling line of a failed process's stderr. */
function firstErrorLine(stderr) {
  const lines = (stderr ?? '').split('\n').map((line) => line.trim()).filter(Boolean);
  return lines.find((line) => /^(netintel:|[A-Z]\w*Error\b)/.test(line)) ?? lines.at(-1) ?? 'no stderr';
}

function bulkRow(label, description, run, expectedRows, headerLines) {
  if (run.error) return { label, description, error: run.error };
  const rows = Math.max(0, run.lines - headerLines);
  const cpuS = run.userS !== null && run.sysS !== null ? run.userS + run.sysS : null;
  const problems = [];
  if (run.truncated) problems.push(`stopped at the time budget after ${rows} of ${expectedRows} rows`);
  else if (rows !== expectedRows) problems.push(`row count ${rows}, expected ${expectedRows}`);
  if (!run.truncated && run.exitCode !== 0) problems.push(`exit ${run.exitCode}`);
  const complete = !run.truncated && rows === expectedRows && run.exitCode === 0;
  // A run that stopped at the budget still measured something; one that failed did not.
  const valid = rows > 0 && (complete || run.truncated);
  if (!valid) problems.push(`FAILED: ${firstErrorLine(run.stderrTail)}`);
  return {
    label,
    description,
    inputRows: expectedRows,
    rows,
    complete,
    valid,
    wallS: round(run.wallS, 3),
    cpuS: cpuS === null ? null : round(cpuS, 2),
    lookupsPerS: valid ? Math.round(rows / run.wallS) : null,
    lookupsPerCpuS: valid && cpuS ? Math.round(rows / cpuS) : null,
    peakRssMb: run.peakRssKb === null ? null : round(run.peakRssKb / 1024, 1),
    peakRssSource: run.peakRssSource,
    polledPeakRssMb: run.polledPeakKb === null ? null : round(run.polledPeakKb / 1024, 1),
    outputMb: round(run.bytes / 2 ** 20, 1),
    exitCode: run.exitCode,
    problems,
    stderrTail: run.stderrTail,
  };
}

/**
 * The run of median wall time (the lower middle one of an even count), with
 * every run's wall time beside it; failed runs count as the slowest.
 */
function medianRun(rows) {
  if (rows.length === 0) return null;
  const wall = (row) => (row.valid ? row.wallS : Infinity);
  const sorted = [...rows].sort((a, b) => wall(a) - wall(b));
  return { ...sorted[Math.floor((sorted.length - 1) / 2)], roundWallsS: rows.map((row) => row.wallS ?? null) };
}

async function measureBulk(options, env, notices, netintelReady, deadlineAt) {
  const started = Date.now();
  const large = ipListFile(options.ips, options.seed);
  const small = ipListFile(options.smallIps, options.seed);
  const generationS = (Date.now() - started) / 1000;
  const input = {
    count: options.ips,
    smallCount: options.smallIps,
    seed: options.seed,
    file: large.path,
    smallFile: small.path,
    description: 'uniform random IPv4 from a seeded mulberry32 PRNG, special-purpose ranges redrawn (all public unicast); the small list is the first lines of the large one',
    generatedNowS: large.generated || small.generated ? round(generationS, 2) : null,
    feed: 'file piped to stdin by the harness; stdout piped back and its lines counted',
  };
  const runs = [];
  const cap = (seconds) => Math.max(5000, Math.min(seconds * 1000, deadlineAt - Date.now()));
  const step = (label) => process.stderr.write(`bulk: ${label}\n`);

  // Node + maxmind, city only (a reference: one run)
  step(`node + maxmind, ${grouped(options.ips)} IPs`);
  const nodeRun = await runBulk({
    command: NODE,
    args: [join(BENCH_DIR, 'baseline', 'node-maxmind.mjs'), CITY_DB],
    env,
    inputFile: large.path,
    deadlineMs: cap(90),
  });
  const nodeMaxmind = bulkRow('node + maxmind (city only)', NODE_MAXMIND_DESCRIPTION, nodeRun, options.ips, 0);

  const build = buildMmdbLoop(join(BENCH_DIR, 'baseline', 'mmdb-loop.c'));
  if (build.skipped) notices.push(`SKIPPED C libmaxminddb baseline: ${build.skipped}. The bulk target cannot be checked.`);
  if (!netintelReady) notices.push('SKIPPED netintel bulk runs: netintel is not built or fails its check');
  const args = [CLI, 'bulk', '-f', 'csv'];

  let netSmall = null;
  if (netintelReady) {
    step(`netintel bulk -f csv, ${grouped(options.smallIps)} IPs`);
    const smallRun = await runBulk({ command: NODE, args, env, inputFile: small.path, deadlineMs: cap(60) });
    netSmall = bulkRow(`netintel bulk -f csv (${grouped(options.smallIps)})`, 'full record, CSV with header', smallRun, options.smallIps, 1);
  }

  // Rounds of the C loop and netintel on the large list, back to back, the
  // order swapped every round: this VM's speed drifts by tens of percent
  // within a minute, and a ratio of two runs seconds apart moves less than
  // either run. The target is the median of the rounds' ratios.
  const cRuns = [];
  const netRuns = [];
  const roundRatios = [];
  let roundS = 0;
  for (let i = 0; i < options.rounds && (build.binary || netintelReady); i++) {
    const remainingS = (deadlineAt - Date.now()) / 1000;
    if (i > 0 && remainingS < roundS * 1.5 + 20) {
      notices.push(`bulk: ${i} of ${options.rounds} rounds run; the rest would overrun the time budget (--budget)`);
      break;
    }
    const startedRound = Date.now();
    const round = {};
    const runC = async () => {
      step(`round ${i + 1}/${options.rounds}: C libmaxminddb loop, ${grouped(options.ips)} IPs`);
      const run = await runBulk({ command: build.binary, args: [CITY_DB], env, inputFile: large.path, deadlineMs: cap(60) });
      round.c = bulkRow('C libmaxminddb loop (city + 2nd lookup)', C_LOOP_DESCRIPTION, run, options.ips, 0);
    };
    const runNetintel = async () => {
      step(`round ${i + 1}/${options.rounds}: netintel bulk -f csv, ${grouped(options.ips)} IPs (budget left ${((deadlineAt - Date.now()) / 1000).toFixed(0)} s)`);
      const run = await runBulk({ command: NODE, args, env, inputFile: large.path, deadlineMs: cap(600) });
      round.net = bulkRow(`netintel bulk -f csv (${grouped(options.ips)})`, 'full record, CSV with header', run, options.ips, 1);
    };
    const order = [build.binary ? runC : null, netintelReady ? runNetintel : null].filter(Boolean);
    for (const run of i % 2 === 0 ? order : order.reverse()) await run();
    if (round.c) cRuns.push(round.c);
    if (round.net) netRuns.push(round.net);
    if (round.c?.valid && round.net?.valid) {
      roundRatios.push({
        wall: round.net.lookupsPerS / round.c.lookupsPerS,
        cpu: round.net.lookupsPerCpuS && round.c.lookupsPerCpuS ? round.net.lookupsPerCpuS / round.c.lookupsPerCpuS : null,
      });
    }
    roundS = (Date.now() - startedRound) / 1000;
  }
  const cLoop = medianRun(cRuns);
  const netLarge = medianRun(netRuns);
  if (cLoop) runs.push({ id: 'c-loop', ...cLoop });
  runs.push({ id: 'node-maxmind', ...nodeMaxmind });
  if (netSmall) runs.push({ id: 'netintel-small', ...netSmall });
  if (netLarge) runs.push({ id: 'netintel-large', ...netLarge });

  if (netintelReady) {
    // Reference: two lookup threads, whatever the default on this machine
    // (one per CPU but one). Here the harness reading stdout competes for
    // the CPUs too, as any CPU-bound reader of a pipeline would.
    if (cpus().length >= 2 && (deadlineAt - Date.now()) / 1000 > 30) {
      step(`netintel bulk -f csv --threads 2, ${grouped(options.ips)} IPs`);
      const threadedRun = await runBulk({ command: NODE, args: [...args, '--threads', '2'], env, inputFile: large.path, deadlineMs: cap(600) });
      const threaded = bulkRow(`netintel bulk -f csv --threads 2 (ref)`, 'as above, a worker thread besides the main one', threadedRun, options.ips, 1);
      runs.push({ id: 'netintel-large-threads-2', ...threaded });
      if (threaded.problems.length > 0) notices.push(`netintel --threads 2 bulk run: ${threaded.problems.join('; ')}`);
    }
    for (const run of netRuns) if (run.problems.length > 0) notices.push(`netintel large bulk run: ${run.problems.join('; ')}`);
    if (netSmall?.problems.length > 0) notices.push(`netintel small bulk run: ${netSmall.problems.join('; ')}`);
  }
  for (const run of cRuns) if (run.problems.length > 0) notices.push(`${run.label}: ${run.problems.join('; ')}`);
  if (nodeMaxmind.problems?.length) notices.push(`${nodeMaxmind.label}: ${nodeMaxmind.problems.join('; ')}`);
  return { input, gnuTime: GNU_TIME !== null, runs, rounds: roundRatios, cLoop, nodeMaxmind, netSmall, netLarge };
}

// ---------------------------------------------------------------- targets

function verdict(value, op, target, failed = false) {
  if (failed) return 'FAILED';
  if (value === null || value === undefined || Number.isNaN(value)) return 'SKIPPED';
  return (op === '<=' ? value <= target : value >= target) ? 'PASS' : 'MISS';
}

function checkTargets(oneOff, bulk) {
  const targets = [];
  if (oneOff) {
    const ip = oneOff.commands.find((command) => command.id === 'ip');
    const asn = oneOff.commands.find((command) => command.id === 'asn');
    const value = ip?.ratioMeanVsNode ?? null;
    targets.push({ name: 'one-off: netintel ip mean / node -e 0 mean', value, op: '<=', target: TARGETS.oneOffRatio, status: verdict(value, '<=', TARGETS.oneOffRatio) });
    // netintel's own share of a one-off is about fixed in milliseconds: the ratio falls when Node starts slower, this does not.
    const overMs = ip?.overMedianNodeMs ?? null;
    targets.push({ name: 'one-off: netintel ip median - node -e 0 median (ms)', value: overMs, op: '<=', target: TARGETS.oneOffOverNodeMs, status: verdict(overMs, '<=', TARGETS.oneOffOverNodeMs) });
    const viewValue = oneOff.commands.find((command) => command.id === 'ip-view')?.ratioMeanVsNode ?? null;
    targets.push({ name: 'one-off: netintel ip (default view) mean / node -e 0 mean', value: viewValue, op: '<=', target: TARGETS.oneOffRatio, status: verdict(viewValue, '<=', TARGETS.oneOffRatio) });
    const asnValue = asn?.ratioMeanVsNode ?? null;
    targets.push({ name: 'one-off: netintel asn mean / node -e 0 mean', value: asnValue, op: '<=', target: TARGETS.oneOffRatio, status: verdict(asnValue, '<=', TARGETS.oneOffRatio) });
    // vpn's target is the security issue's ("within the P1 target of the ip issue"); bench/security.js measures it with feeds too.
    const vpnValue = oneOff.commands.find((command) => command.id === 'vpn')?.ratioMeanVsNode ?? null;
    targets.push({ name: 'one-off: netintel vpn mean / node -e 0 mean', value: vpnValue, op: '<=', target: TARGETS.oneOffRatio, status: verdict(vpnValue, '<=', TARGETS.oneOffRatio) });
  }
  if (bulk) {
    const cOk = bulk.cLoop?.valid === true;
    const netFailed = bulk.netLarge !== null && bulk.netLarge.valid !== true;
    const ratios = bulk.rounds ?? [];
    const vsC = cOk && bulk.netLarge?.valid && ratios.length > 0 ? round(summarize(ratios.map((r) => r.wall)).median, 3) : null;
    const roundsNote = ratios.length > 1 ? ` (median of ${ratios.length} rounds)` : '';
    targets.push({ name: `bulk: netintel lookups/s / C loop lookups/s${roundsNote}`, value: vsC, op: '>=', target: TARGETS.bulkVsC, status: verdict(vsC, '>=', TARGETS.bulkVsC, netFailed || (bulk.cLoop !== null && !cOk)) });
    const cpuRatios = ratios.map((r) => r.cpu).filter((r) => r !== null);
    const vsCCpu = cOk && bulk.netLarge?.valid && cpuRatios.length > 0 ? round(summarize(cpuRatios).median, 3) : null;
    targets.push({ name: 'bulk, CPU-time basis (info: robust to a busy machine)', value: vsCCpu, op: '>=', target: TARGETS.bulkVsC, status: vsCCpu === null ? '-' : `(${verdict(vsCCpu, '>=', TARGETS.bulkVsC)})` });
    const memoryFailed = netFailed || (bulk.netSmall !== null && bulk.netSmall.valid !== true);
    const small = bulk.netSmall?.peakRssMb ?? null;
    const large = bulk.netLarge?.peakRssMb ?? null;
    const growth = !memoryFailed && small && large ? round(large / small, 3) : null;
    targets.push({
      name: `bulk: peak RSS ${grouped(bulk.netLarge?.rows)} rows / ${grouped(bulk.netSmall?.rows)} rows`,
      value: growth,
      op: '<=',
      target: TARGETS.rssGrowth,
      status: verdict(growth, '<=', TARGETS.rssGrowth, memoryFailed),
    });
  }
  return targets;
}

// ---------------------------------------------------------------- output

function printReport(result) {
  const out = [];
  const m = result.machine;
  out.push('');
  out.push(`netintel bench (${result.mode}) ${result.date}`);
  out.push(`node ${m.node}, ${m.platform}, ${m.cpus} CPUs (${m.cpuModel}), load average ${m.loadAvgAtStart.join(' ')} at start, ${result.loadAvgAtEnd.join(' ')} at end`);
  if (result.git) out.push(`git ${result.git.commit}${result.git.uncommittedChangesInSrc ? ' + uncommitted changes in src/' : ''}; bin/netintel.js loads ${result.netintelEntry ? `${result.netintelEntry} for every command` : '(not built)'}`);
  out.push('measured processes run with the environment minus NODE_EXTRA_CA_CERTS');

  if (result.oneOff) {
    const o = result.oneOff;
    out.push('');
    out.push(`ONE-OFF: wall time from spawn to exit, ${o.runs} runs each after ${o.warmup} warm-up rounds, ${o.order}`);
    out.push(
      formatTable(
        ['command', ' mean ms', ' median', ' stdev', ' min', ' p90', ' +ms vs node (mean)', ' x node (mean)', ' x node (median)', ' failed'],
        o.commands.map((c) => [c.label, fixed(c.meanMs), fixed(c.medianMs), fixed(c.stdevMs), fixed(c.minMs), fixed(c.p90Ms), fixed(c.overMeanNodeMs), fixed(c.ratioMeanVsNode, 2), fixed(c.ratioMedianVsNode, 2), c.failures]),
      ),
    );
    for (const s of o.skipped) out.push(`  skipped: ${s.label}: ${s.reason}`);
    for (const c of o.commands) if (c.failures > 0) out.push(`  ${c.failures} failed run(s) of "${c.label}", left out of the figures; first: ${c.firstFailure}`);
  }

  if (result.bulk) {
    const b = result.bulk;
    const cRun = b.runs.find((r) => r.id === 'c-loop');
    const c = cRun && !cRun.error ? cRun : null;
    out.push('');
    out.push(`BULK: ${grouped(b.input.count)} addresses (small run: ${grouped(b.input.smallCount)}), seed ${b.input.seed}; ${b.input.description}`);
    out.push(`${b.input.feed}; lookups/s = rows / wall time from spawn to exit (start-up and data loading included); CPU and peak RSS ${b.gnuTime ? 'from GNU time' : 'from /proc VmHWM polling (GNU time not installed)'}`);
    out.push(
      formatTable(
        ['run', ' rows', ' wall s', ' cpu s', ' lookups/s', ' lookups/cpu-s', ' x C loop', ' peak RSS MB', ' out MB', 'notes'],
        b.runs.map((r) =>
          r.error
            ? [r.label, '-', '-', '-', '-', '-', '-', '-', '-', `error: ${r.error}`]
            : [r.label, grouped(r.rows), fixed(r.wallS, 2), fixed(r.cpuS, 2), grouped(r.lookupsPerS), grouped(r.lookupsPerCpuS), c && r.lookupsPerS !== null ? fixed(r.lookupsPerS / c.lookupsPerS, 3) : '-', fixed(r.peakRssMb), fixed(r.outputMb), r.problems.join('; ') || (r.complete ? 'ok' : '')],
        ),
      ),
    );
    if (b.rounds.length > 0) {
      const walls = (id) => b.runs.find((r) => r.id === id)?.roundWallsS?.map((w) => fixed(w, 2)).join(' ') ?? '-';
      out.push(`  ${b.rounds.length} rounds of the C loop and netintel back to back, order swapped every round; the rows show the median-wall run of each`);
      out.push(`  wall s per round: C loop ${walls('c-loop')}; netintel ${walls('netintel-large')}`);
      out.push(`  ratio per round (x C loop): ${b.rounds.map((r) => fixed(r.wall, 3)).join(' ')}; on CPU time: ${b.rounds.map((r) => fixed(r.cpu, 3)).join(' ')}`);
    }
    out.push(`  C loop: ${C_LOOP_DESCRIPTION}`);
    out.push(`  node + maxmind: ${NODE_MAXMIND_DESCRIPTION}`);
    if (!c) out.push(loud('C libmaxminddb baseline SKIPPED: no ratio against it'));
  }

  out.push('');
  out.push('TARGETS');
  out.push(
    formatTable(
      ['check', ' value', ' target', 'status'],
      result.targets.map((t) => [t.name, fixed(t.value, 3), `${t.op} ${t.target}`, t.status]),
    ),
  );
  for (const notice of result.notices) out.push(loud(notice));
  out.push('');
  out.push(`total ${result.durationS.toFixed(1)} s; written ${relative(process.cwd(), RESULTS) || RESULTS}`);
  out.push('');
  process.stdout.write(`${out.join('\n')}\n`);
}

// ---------------------------------------------------------------- main

async function main() {
  const options = parseOptions(process.argv.slice(2));
  const startedAt = Date.now();
  const deadlineAt = startedAt + options.budgetS * 1000;
  const env = benchEnv();
  const notices = [];

  let netintelReady = true;
  if (!existsSync(CLI_MAIN)) {
    netintelReady = false;
    notices.push(`netintel is not built (${relative(ROOT, CLI_MAIN)}, imported by bin/netintel.js, is missing): run npm run build; netintel runs SKIPPED`);
  } else {
    const stale = staleBuildFiles();
    if (stale.length > 0) notices.push(`dist/ is older than ${stale.length} source file(s) (${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ', ...' : ''}): the measured build may not be the current code; run npm run build`);
  }
  const built = netintelReady ? relative(ROOT, CLI_MAIN) : null;
  if (!existsSync(ASN_INDEX)) notices.push(`${relative(ROOT, ASN_INDEX)} missing: run npm run build:data (netintel runs will fail their check)`);
  if (!existsSync(CITY_DB)) throw new Error(`${CITY_DB} missing: run npm install`);

  if (netintelReady) {
    // One real lookup through the CLI first: every netintel measurement needs it to work.
    const probe = await timeOnce(NODE, [CLI, 'ip', '8.8.8.8', '-f', 'json'], env);
    if (probe.code !== 0) {
      netintelReady = false;
      notices.push(`netintel fails: "netintel ip 8.8.8.8 -f json" exits ${probe.code}: ${firstErrorLine(probe.stderr)}; netintel runs SKIPPED`);
    }
  }

  const machine = machineInfo();
  const oneOff = options.only === 'bulk' ? null : await measureOneOff(options, env, notices, netintelReady);
  const bulk = options.only === 'oneoff' ? null : await measureBulk(options, env, notices, netintelReady, deadlineAt);
  const targets = checkTargets(oneOff, bulk);

  const result = {
    schema: 1,
    date: new Date(startedAt).toISOString(),
    mode: options.mode,
    options,
    machine,
    loadAvgAtEnd: loadavg().map((x) => round(x, 2)),
    git: gitInfo(),
    envRemoved: ['NODE_EXTRA_CA_CERTS'],
    netintelEntry: built,
    oneOff,
    bulk: bulk && { input: bulk.input, gnuTime: bulk.gnuTime, runs: bulk.runs, rounds: bulk.rounds.map((r) => ({ wall: round(r.wall, 3), cpu: round(r.cpu, 3) })) },
    targets,
    notices,
    durationS: round((Date.now() - startedAt) / 1000, 1),
  };
  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(RESULTS, `${JSON.stringify(result, null, 2)}\n`);
  printReport(result);
  if (options.strict && targets.some((t) => t.status === 'MISS')) process.exitCode = 1;
}

main().catch((error) => {
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
