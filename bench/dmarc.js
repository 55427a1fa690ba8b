#!/usr/bin/env node
// `netintel dmarc-report` over a directory of generated DMARC aggregate reports, against a simple
// reference in Python's standard library (bench/dmarc_reference.py: xml.etree, gzip, zipfile) over
// the same files, rounds interleaved; then netintel's peak RSS on a tenth of the files, to show
// that memory follows the distinct sources, not the reports.
//
//   node bench/dmarc.js             10,000 report files (3 rounds)
//   node bench/dmarc.js --quick     1,000 report files (3 rounds)
//   node bench/dmarc.js --files=N --rounds=N --seed=N
//
// The files: 60% .xml.gz, 25% .xml, 15% .zip; 1 to 40 records each from a pool of 2,000 source
// addresses, about a tenth failing; 1% are copies of another report (duplicates). netintel runs
// with --no-ptr (no DNS: the reference does none) and prints its table view to a file whose
// headline is checked against the reference's counts. Wall time, CPU time and peak RSS come from
// GNU time (/usr/bin/time). Writes bench/results/dmarc-latest.json. Benchmarks only print.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { zipSync } from 'fflate';
import { createPrng } from './lib/ip-list.js';
import { BENCH_DIR, CLI } from './lib/paths.js';
import { benchEnv, GNU_TIME, timedRun } from './lib/processes.js';
import { fixed, formatTable, grouped } from './lib/report.js';

const PYTHON = '/usr/bin/python3';
const REFERENCE = join(BENCH_DIR, 'dmarc_reference.py');

function parseOptions(argv) {
  const options = { files: 10_000, rounds: 3, seed: 20260101 };
  for (const arg of argv) {
    const match = /^--([a-z]+)(?:=(\d+))?$/.exec(arg);
    if (match?.[1] === 'quick') options.files = 1_000;
    else if (match?.[1] === 'files' && match[2]) options.files = Number(match[2]);
    else if (match?.[1] === 'rounds' && match[2]) options.rounds = Number(match[2]);
    else if (match?.[1] === 'seed' && match[2]) options.seed = Number(match[2]);
    else throw new Error(`unknown argument ${arg} (--quick, --files=N, --rounds=N, --seed=N)`);
  }
  return options;
}

/** A seeded generator of floats in [0, 1), so that a run can be repeated. */
function randomFrom(seed) {
  const next = createPrng(seed);
  return () => next() / 4294967296;
}

const ORGS = ['google.com', 'Yahoo', 'Enterprise Outlook', 'mail.example.net', 'comcast.net'];

function reportXml(random, index) {
  const org = ORGS[index % ORGS.length];
  const begin = 1_767_225_600 + (index % 30) * 86_400;
  const records = [];
  const count = 1 + Math.floor(random() * 40);
  for (let i = 0; i < count; i++) {
    const source = Math.floor(random() * 2000);
    const ip = `${100 + (source >> 8)}.${source & 255}.${(source * 7) & 255}.${1 + (source % 250)}`;
    const fails = source % 10 === 0;
    const result = fails ? 'fail' : 'pass';
    records.push(
      `<record><row><source_ip>${ip}</source_ip><count>${1 + Math.floor(random() * 500)}</count><policy_evaluated><disposition>${fails ? 'reject' : 'none'}</disposition><dkim>${result}</dkim><spf>${result}</spf></policy_evaluated></row>` +
        `<identifiers><header_from>example.com</header_from></identifiers><auth_results><dkim><domain>example.com</domain><selector>s1</selector><result>${result}</result></dkim><spf><domain>example.com</domain><scope>mfrom</scope><result>${result}</result></spf></auth_results></record>`,
    );
  }
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<feedback><version>1.0</version><report_metadata><org_name>${org}</org_name><email>dmarc@${org.replace(/ /g, '')}</email><report_id>${index}</report_id>` +
    `<date_range><begin>${begin}</begin><end>${begin + 86_399}</end></date_range></report_metadata><policy_published><domain>example.com</domain><adkim>r</adkim><aspf>r</aspf><p>reject</p><sp>reject</sp><pct>100</pct></policy_published>\n${records.join('\n')}\n</feedback>\n`
  );
}

function writeReports(dir, files, seed) {
  const random = randomFrom(seed);
  for (let index = 0; index < files; index++) {
    // One report in a hundred is sent again (as receivers do on a retry): a duplicate of the one before.
    const xml = reportXml(random, index % 100 === 99 ? index - 1 : index);
    const kind = random();
    const name = `report-${String(index).padStart(6, '0')}`;
    if (kind < 0.6) writeFileSync(join(dir, `${name}.xml.gz`), gzipSync(xml));
    else if (kind < 0.85) writeFileSync(join(dir, `${name}.xml`), xml);
    else writeFileSync(join(dir, `${name}.zip`), zipSync({ [`${name}.xml`]: Buffer.from(xml) }));
  }
}

/** Runs a command under GNU time: wall, CPU, peak RSS and the output. */
async function measure(command, args, env) {
  const outFile = join(tmpdir(), `netintel-bench-dmarc-out-${process.pid}.txt`);
  try {
    const run = await timedRun(command, args, { env, stdoutPath: outFile });
    return { ...run, stdout: readFileSync(outFile, 'utf8') };
  } finally {
    rmSync(outFile, { force: true });
  }
}

const netintelRun = (dir, env) => measure(process.execPath, [CLI, 'dmarc-report', '--no-ptr', dir], { ...env, COLUMNS: '80' });
const pythonRun = (dir, env) => measure(PYTHON, [REFERENCE, dir], env);

/** The netintel headline must say what the reference counted. */
function checkAgreement(netintel, reference) {
  const counts = JSON.parse(reference.stdout);
  const expected = `${grouped(counts.messages)} messages from ${grouped(counts.sources)} sources; ${grouped(counts.failing_sources)} sources fail DMARC`;
  const headline = netintel.stdout.split('\n')[0];
  if (!headline.startsWith(expected)) throw new Error(`netintel says "${headline}", the reference counted "${expected}"`);
  return counts;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main() {
  const options = parseOptions(process.argv.slice(2));
  if (GNU_TIME === null) throw new Error('GNU time (/usr/bin/time) is needed for CPU time and peak RSS: apt-get install time');
  if (!existsSync(PYTHON)) throw new Error(`the reference needs ${PYTHON}`);
  if (!existsSync(join(BENCH_DIR, '..', 'dist', 'bundle'))) throw new Error('build first: npm run build');
  const env = benchEnv();
  const dir = mkdtempSync(join(tmpdir(), 'netintel-bench-dmarc-'));
  const tenth = mkdtempSync(join(tmpdir(), 'netintel-bench-dmarc-tenth-'));
  try {
    process.stderr.write(`writing ${grouped(options.files)} report files (seed ${options.seed}) ...\n`);
    writeReports(dir, options.files, options.seed);
    writeReports(tenth, Math.max(1, Math.round(options.files / 10)), options.seed);
    await netintelRun(dir, env);
    const rounds = [];
    let counts;
    for (let round = 0; round < options.rounds; round++) {
      const order = round % 2 === 0 ? ['python', 'netintel'] : ['netintel', 'python'];
      const results = {};
      for (const name of order) results[name] = name === 'python' ? await pythonRun(dir, env) : await netintelRun(dir, env);
      counts = checkAgreement(results.netintel, results.python);
      rounds.push({ ...results, ratio: results.netintel.wallS / results.python.wallS });
      process.stderr.write(`round ${round + 1}: python ${fixed(results.python.wallS, 2)} s, netintel ${fixed(results.netintel.wallS, 2)} s, ratio ${fixed(rounds.at(-1).ratio, 3)}\n`);
    }
    const small = await netintelRun(tenth, env);
    const pick = (name) => rounds.find((round) => round[name].wallS === median(rounds.map((each) => each[name].wallS)))[name];
    const netintel = pick('netintel');
    const python = pick('python');
    const ratio = median(rounds.map((round) => round.ratio));
    const cpuRatio = median(rounds.map((round) => round.netintel.cpuS / round.python.cpuS));
    const rows = [
      [`python3 xml.etree reference (${grouped(options.files)} files)`, fixed(python.wallS, 2), fixed(python.cpuS, 2), grouped(options.files / python.wallS), fixed(python.peakRssMb, 1)],
      [`netintel dmarc-report --no-ptr (${grouped(options.files)} files)`, fixed(netintel.wallS, 2), fixed(netintel.cpuS, 2), grouped(options.files / netintel.wallS), fixed(netintel.peakRssMb, 1)],
      [`netintel dmarc-report --no-ptr (${grouped(Math.round(options.files / 10))} files)`, fixed(small.wallS, 2), fixed(small.cpuS, 2), grouped(options.files / 10 / small.wallS), fixed(small.peakRssMb, 1)],
    ];
    const out = [
      '',
      `DMARC-REPORT: ${grouped(options.files)} generated report files (seed ${options.seed}), ${grouped(counts.reports)} reports + ${grouped(counts.duplicates)} duplicates, ${grouped(counts.messages)} messages from ${grouped(counts.sources)} sources; ${options.rounds} interleaved rounds, median-wall run shown; ${availableParallelism()} CPUs, load ${loadavg().map((value) => value.toFixed(2)).join(' ')}`,
      formatTable(['command', ' wall s', ' cpu s', ' files/s', ' peak RSS MB'], rows),
      `  rounds (netintel / python wall): ${rounds.map((round) => fixed(round.ratio, 3)).join(', ')}`,
      `  netintel / python wall, median of rounds: ${fixed(ratio, 3)}x; CPU time, median of rounds (steadier on a loaded machine): ${fixed(cpuRatio, 3)}x`,
      `  netintel peak RSS ${grouped(options.files)} / ${grouped(Math.round(options.files / 10))} files: ${fixed(netintel.peakRssMb / small.peakRssMb, 3)}x`,
    ];
    process.stdout.write(`${out.join('\n')}\n`);
    mkdirSync(join(BENCH_DIR, 'results'), { recursive: true });
    const round3 = (value) => Math.round(value * 1000) / 1000;
    const strip = ({ stdout: _stdout, ...run }) => Object.fromEntries(Object.entries(run).map(([key, value]) => [key, round3(value)]));
    const result = { date: new Date().toISOString(), seed: options.seed, files: options.files, cpus: availableParallelism(), counts, ratio: round3(ratio), cpuRatio: round3(cpuRatio), netintel: strip(netintel), python: strip(python), tenth: strip(small) };
    writeFileSync(join(BENCH_DIR, 'results', 'dmarc-latest.json'), `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(tenth, { recursive: true, force: true });
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exitCode = 1;
});
