#!/usr/bin/env node
// `netintel summarize` against `netintel bulk -f csv > /dev/null` on the same address list
// (bench/lib/ip-list.js, the list bench/run.js's bulk reads), measured in the same run, rounds
// interleaved; then summarize's peak RSS on a list ten times longer.
//
//   node bench/summarize.js            1,000,000 addresses (3 rounds); peak RSS at 1,000,000 and 10,000,000
//   node bench/summarize.js --quick    100,000 addresses (3 rounds); peak RSS at 100,000 and 1,000,000
//   node bench/summarize.js --rounds=N --seed=N --strict
//
// Both commands read the list from a file on stdin; bulk's stdout is /dev/null, summarize's
// (-f json, a few kB) a temp file whose totals are checked. bulk runs on the long list too, as
// the reference for the memory target (the lookups' caches and heap grow in both). Wall time, CPU time and peak RSS
// come from GNU time (/usr/bin/time). Writes bench/results/summarize-latest.json.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ipListFile } from './lib/ip-list.js';
import { BENCH_DIR, CLI } from './lib/paths.js';
import { benchEnv, GNU_TIME, timedRun } from './lib/processes.js';
import { fixed, formatTable, grouped, loud } from './lib/report.js';

const RATIO_TARGET = 1.2; // summarize wall / bulk -f csv wall, at most
const RSS_TARGET = 1.25; // summarize peak RSS on the long list / on the short one, at most

function parseOptions(argv) {
  const options = { quick: false, rounds: 3, seed: 20240601, strict: false };
  for (const arg of argv) {
    const match = /^--([a-z]+)(?:=(\d+))?$/.exec(arg);
    if (match?.[1] === 'quick') options.quick = true;
    else if (match?.[1] === 'rounds' && match[2]) options.rounds = Number(match[2]);
    else if (match?.[1] === 'seed' && match[2]) options.seed = Number(match[2]);
    else if (match?.[1] === 'strict') options.strict = true;
    else throw new Error(`unknown argument ${arg} (--quick, --rounds=N, --seed=N, --strict)`);
  }
  return { ...options, speedCount: options.quick ? 100_000 : 1_000_000, longCount: options.quick ? 1_000_000 : 10_000_000 };
}

/** Runs `node bin/netintel.js ...args < input > output` under GNU time: wall, CPU and peak RSS. */
function measure(args, inputPath, outputPath, env) {
  return timedRun(process.execPath, [CLI, ...args], { env, stdinPath: inputPath, stdoutPath: outputPath });
}

/** Runs summarize and checks that its report counted every address of the list. */
async function summarizeRun(list, count, env) {
  const out = join(tmpdir(), `netintel-bench-summarize-${process.pid}.json`);
  const run = await measure(['summarize', '-f', 'json'], list, out, env);
  const report = JSON.parse(readFileSync(out, 'utf8'));
  rmSync(out, { force: true });
  if (report.totals.addresses !== count || report.totals.lookup_failures !== 0) {
    throw new Error(`summarize counted ${report.totals.addresses} addresses (${report.totals.lookup_failures} failed) of ${count}`);
  }
  return { ...run, unique: report.totals.unique, uniqueCapped: report.totals.unique_capped, countries: report.countries.distinct };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main() {
  const options = parseOptions(process.argv.slice(2));
  if (GNU_TIME === null) throw new Error('GNU time (/usr/bin/time) is needed for CPU time and peak RSS: apt-get install time');
  if (!existsSync(join(BENCH_DIR, '..', 'dist', 'bundle'))) throw new Error('build first: npm run build');
  const env = benchEnv();
  process.stderr.write(`address lists of ${grouped(options.speedCount)} and ${grouped(options.longCount)} lines (seed ${options.seed}) ...\n`);
  const list = ipListFile(options.speedCount, options.seed).path;
  const long = ipListFile(options.longCount, options.seed).path;
  // Warm the page cache and the code cache: the first run of either command pays for neither.
  await measure(['bulk', '-f', 'csv'], list, '/dev/null', env);

  const rounds = [];
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 === 0 ? ['bulk', 'summarize'] : ['summarize', 'bulk'];
    const results = {};
    for (const name of order) {
      results[name] = name === 'bulk' ? await measure(['bulk', '-f', 'csv'], list, '/dev/null', env) : await summarizeRun(list, options.speedCount, env);
    }
    const ratio = results.summarize.wallS / results.bulk.wallS;
    rounds.push({ ...results, ratio });
    process.stderr.write(`round ${round + 1}: bulk -f csv ${fixed(results.bulk.wallS, 2)} s, summarize ${fixed(results.summarize.wallS, 2)} s, ratio ${fixed(ratio, 3)}\n`);
  }
  process.stderr.write(`summarize and bulk over ${grouped(options.longCount)} lines ...\n`);
  const longRun = await summarizeRun(long, options.longCount, env);
  // The reference for the memory target: how much bulk's own peak grows on the same lists.
  const bulkLong = await measure(['bulk', '-f', 'csv'], long, '/dev/null', env);

  const ratio = median(rounds.map((round) => round.ratio));
  const pick = (name) => {
    const walls = rounds.map((round) => round[name].wallS);
    return rounds.find((round) => round[name].wallS === median(walls))[name];
  };
  const bulk = pick('bulk');
  const summarize = pick('summarize');
  const shortRss = median(rounds.map((round) => round.summarize.peakRssMb));
  const rssRatio = longRun.peakRssMb / shortRss;
  const ratioMet = ratio <= RATIO_TARGET;
  const rssMet = rssRatio <= RSS_TARGET;

  const rows = [
    [`netintel bulk -f csv > /dev/null (${grouped(options.speedCount)})`, fixed(bulk.wallS, 2), fixed(bulk.cpuS, 2), grouped(options.speedCount / bulk.wallS), fixed(bulk.peakRssMb, 1)],
    [`netintel summarize (${grouped(options.speedCount)})`, fixed(summarize.wallS, 2), fixed(summarize.cpuS, 2), grouped(options.speedCount / summarize.wallS), fixed(summarize.peakRssMb, 1)],
    [`netintel summarize (${grouped(options.longCount)})`, fixed(longRun.wallS, 2), fixed(longRun.cpuS, 2), grouped(options.longCount / longRun.wallS), fixed(longRun.peakRssMb, 1)],
    [`netintel bulk -f csv > /dev/null (${grouped(options.longCount)}, ref)`, fixed(bulkLong.wallS, 2), fixed(bulkLong.cpuS, 2), grouped(options.longCount / bulkLong.wallS), fixed(bulkLong.peakRssMb, 1)],
  ];
  const bulkRssRatio = bulkLong.peakRssMb / median(rounds.map((round) => round.bulk.peakRssMb));
  const out = [
    '',
    `SUMMARIZE: random public unicast IPv4, seed ${options.seed}; ${options.rounds} interleaved rounds, median-wall run shown; ${availableParallelism()} CPUs, load ${loadavg().map((value) => value.toFixed(2)).join(' ')}`,
    formatTable(['command', ' wall s', ' cpu s', ' addresses/s', ' peak RSS MB'], rows),
    `  rounds (summarize / bulk wall): ${rounds.map((round) => fixed(round.ratio, 3)).join(', ')}`,
    `  summarize / bulk -f csv wall, median of rounds: ${fixed(ratio, 3)}x (target <= ${RATIO_TARGET}x: ${ratioMet ? 'met' : 'MISSED'})`,
    `  summarize peak RSS ${grouped(options.longCount)} / ${grouped(options.speedCount)} lines: ${fixed(rssRatio, 3)}x (target <= ${RSS_TARGET}x: ${rssMet ? 'met' : 'MISSED'}); unique at ${grouped(options.longCount)}: ${grouped(longRun.unique)}${longRun.uniqueCapped ? '+ (capped)' : ''}`,
    `  bulk -f csv peak RSS on the same lists (reference: the lookups' own share): ${fixed(bulkRssRatio, 3)}x`,
  ];
  if (!ratioMet || !rssMet) out.push(loud(`summarize missed a target: ${!ratioMet ? 'speed ' : ''}${!rssMet ? 'memory' : ''}`.trim()));
  process.stdout.write(`${out.join('\n')}\n`);
  mkdirSync(join(BENCH_DIR, 'results'), { recursive: true });
  const round3 = (value) => Math.round(value * 1000) / 1000;
  const result = {
    date: new Date().toISOString(),
    mode: options.quick ? 'quick' : 'full',
    seed: options.seed,
    cpus: availableParallelism(),
    counts: { speed: options.speedCount, long: options.longCount },
    rounds: rounds.map((round) => ({ bulkWallS: round3(round.bulk.wallS), summarizeWallS: round3(round.summarize.wallS), ratio: round3(round.ratio), summarizePeakRssMb: round3(round.summarize.peakRssMb) })),
    bulk: { wallS: round3(bulk.wallS), cpuS: round3(bulk.cpuS), peakRssMb: round3(bulk.peakRssMb) },
    summarize: { wallS: round3(summarize.wallS), cpuS: round3(summarize.cpuS), peakRssMb: round3(summarize.peakRssMb) },
    summarizeLong: { wallS: round3(longRun.wallS), cpuS: round3(longRun.cpuS), peakRssMb: round3(longRun.peakRssMb), unique: longRun.unique, uniqueCapped: longRun.uniqueCapped },
    bulkLong: { wallS: round3(bulkLong.wallS), cpuS: round3(bulkLong.cpuS), peakRssMb: round3(bulkLong.peakRssMb), rssRatio: round3(bulkRssRatio) },
    ratio: { value: round3(ratio), target: RATIO_TARGET, met: ratioMet },
    rss: { value: round3(rssRatio), target: RSS_TARGET, met: rssMet },
  };
  writeFileSync(join(BENCH_DIR, 'results', 'summarize-latest.json'), `${JSON.stringify(result, null, 2)}\n`);
  if (options.strict && (!ratioMet || !rssMet)) process.exitCode = 1;
}

await main();
