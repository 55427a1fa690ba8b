#!/usr/bin/env node
// `netintel grep -o --v4` against GNU grep -oE with an IPv4 pattern, on the same generated
// access log (bench/grep-log.js), measured in the same run, rounds interleaved.
//
//   node bench/grep.js               1 GiB log, 3 rounds
//   node bench/grep.js --quick       128 MiB log, 2 rounds
//   node bench/grep.js --mb=N --rounds=N
//
// Each command's stdout goes through `wc -l` (GNU grep stops at the first match when its
// output is /dev/null). GNU grep runs in the C locale, its fastest, and in the run's own
// UTF-8 locale as a reference. Writes bench/results/grep-latest.json.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, renameSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accessLogLines } from './grep-log.js';
import { BENCH_DIR, CLI } from './lib/paths.js';
import { benchEnv } from './lib/processes.js';

const TARGET = 0.5; // netintel MB/s / GNU grep (C locale) MB/s, at least
const PATTERN = '([0-9]{1,3}\\.){3}[0-9]{1,3}';

function parseOptions(argv) {
  const options = { mb: 1024, rounds: 3, strict: false };
  for (const arg of argv) {
    const match = /^--([a-z]+)(?:=(\d+))?$/.exec(arg);
    if (match?.[1] === 'quick') Object.assign(options, { mb: 128, rounds: 2 });
    else if (match?.[1] === 'mb' && match[2]) options.mb = Number(match[2]);
    else if (match?.[1] === 'rounds' && match[2]) options.rounds = Number(match[2]);
    else if (match?.[1] === 'strict') options.strict = true;
    else throw new Error(`unknown argument ${arg} (--quick, --mb=N, --rounds=N, --strict)`);
  }
  return options;
}

/** The log of about `mb` MiB, generated once into the temp dir. */
function logFile(mb) {
  const path = join(tmpdir(), `netintel-bench-grep-${mb}mb.log`);
  if (existsSync(path) && statSync(path).size >= mb * 1024 * 1024) return path;
  process.stderr.write(`generating a ${mb} MiB access log in ${path} ...\n`);
  const fd = openSync(`${path}.part`, 'w');
  let written = 0;
  let out = '';
  // Lines of one seed, then the next: the log keeps growing until it is large enough.
  for (let seed = 1; written < mb * 1024 * 1024; seed++) {
    for (const [line] of accessLogLines(100_000, seed)) {
      out += `${line}\n`;
      if (out.length > 1 << 20) {
        written += writeSync(fd, out);
        out = '';
      }
    }
  }
  written += writeSync(fd, out);
  closeSync(fd);
  // Written under another name first: a generation cut short leaves no full-size-looking log.
  renameSync(`${path}.part`, path);
  return path;
}

/** Runs `command | wc -l` in a shell; wall time in ms and the line count. */
function timePipeline(command, env) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn('bash', ['-c', `set -o pipefail; ${command} | wc -l`], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0) reject(new Error(`${command} exited ${code}`));
      else resolve({ ms, lines: Number(out.trim()) });
    });
  });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main() {
  const options = parseOptions(process.argv.slice(2));
  const path = logFile(options.mb);
  const bytes = statSync(path).size;
  const env = benchEnv();
  const commands = {
    netintel: `node "${CLI}" grep -o --v4 "${path}"`,
    grepC: `LC_ALL=C grep -oE '${PATTERN}' "${path}"`,
    grepUtf8: `LC_ALL=C.UTF-8 grep -oE '${PATTERN}' "${path}"`,
  };
  // Warm the page cache so that the first command does not pay for the disk.
  await timePipeline(`cat "${path}"`, env);
  const runs = { netintel: [], grepC: [], grepUtf8: [] };
  const ratios = [];
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 === 0 ? ['netintel', 'grepC', 'grepUtf8'] : ['grepC', 'grepUtf8', 'netintel'];
    const results = {};
    for (const name of order) results[name] = await timePipeline(commands[name], env);
    for (const name of order) runs[name].push(results[name]);
    ratios.push(results.grepC.ms / results.netintel.ms);
    process.stderr.write(`round ${round + 1}: netintel ${fmt(results.netintel.ms)} ms, grep (C) ${fmt(results.grepC.ms)} ms, grep (UTF-8) ${fmt(results.grepUtf8.ms)} ms, ratio ${ratios.at(-1).toFixed(3)}\n`);
  }
  const mbs = (ms) => bytes / 1048576 / (ms / 1000);
  const summary = Object.fromEntries(
    Object.entries(runs).map(([name, list]) => [name, { medianMs: round1(median(list.map((run) => run.ms))), mbPerS: round1(mbs(median(list.map((run) => run.ms)))), lines: list[0].lines }]),
  );
  const ratio = median(ratios);
  const rows = [
    ['netintel grep -o --v4', summary.netintel],
    ["grep -oE (LC_ALL=C)", summary.grepC],
    ["grep -oE (C.UTF-8)", summary.grepUtf8],
  ];
  process.stdout.write(`\ngrep over a ${(bytes / 1048576).toFixed(0)} MiB generated access log, ${options.rounds} rounds, medians\n`);
  for (const [name, result] of rows) {
    process.stdout.write(`  ${name.padEnd(24)} ${fmt(result.medianMs).padStart(9)} ms ${result.mbPerS.toFixed(1).padStart(8)} MiB/s ${String(result.lines).padStart(10)} addresses\n`);
  }
  const met = ratio >= TARGET;
  process.stdout.write(`  ratio netintel / grep (C locale): ${ratio.toFixed(3)}x (target >= ${TARGET}x: ${met ? 'met' : 'MISSED'}); vs grep (UTF-8): ${(median(runs.grepUtf8.map((r) => r.ms)) / summary.netintel.medianMs).toFixed(3)}x\n`);
  // The counts differ by design: grep -oE also takes 1.2.3.4 out of 1.2.3.4.5 and 999.1.1.1-like runs.
  mkdirSync(join(BENCH_DIR, 'results'), { recursive: true });
  writeFileSync(
    join(BENCH_DIR, 'results', 'grep-latest.json'),
    `${JSON.stringify({ date: new Date().toISOString(), bytes, rounds: options.rounds, summary, ratios: ratios.map((r) => Number(r.toFixed(3))), ratio: Number(ratio.toFixed(3)), target: TARGET, met }, null, 2)}\n`,
  );
  if (options.strict && !met) process.exitCode = 1;
}

const fmt = (ms) => ms.toFixed(0);
const round1 = (value) => Math.round(value * 10) / 10;

await main();
