#!/usr/bin/env node
// `netintel grep -o --v4` against ripgrep (`rg -o`) and GNU grep -oE with an IPv4 pattern, on the
// same generated access log (bench/grep-log.js), measured in the same run, rounds interleaved.
// The target is against ripgrep; GNU grep is a reference. Without `rg` on the PATH the bench says
// so and skips that baseline (the target is then not measured).
//
//   node bench/grep.js               1 GiB log, 3 rounds
//   node bench/grep.js --quick       128 MiB log, 2 rounds
//   node bench/grep.js --mb=N --rounds=N
//
// Each command's stdout goes through `wc -l` (GNU grep stops at the first match when its
// output is /dev/null). ripgrep runs with --no-config (no user settings); GNU grep in the C
// locale, its fastest, and in the run's own UTF-8 locale. Writes bench/results/grep-latest.json.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, renameSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { accessLogLines } from './grep-log.js';
import { BENCH_DIR, CLI } from './lib/paths.js';
import { benchEnv } from './lib/processes.js';

const TARGET = 0.5; // netintel MB/s / ripgrep MB/s, at least
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

/** Whether ripgrep runs here. */
function hasRipgrep(env) {
  return spawnSync('rg', ['--version'], { env, stdio: 'ignore' }).status === 0;
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  const path = logFile(options.mb);
  const bytes = statSync(path).size;
  const env = benchEnv();
  const ripgrep = hasRipgrep(env);
  if (!ripgrep) process.stderr.write('\n*** ripgrep (rg) is not installed: its baseline is skipped and the target is NOT measured (Debian: apt-get install ripgrep) ***\n\n');
  const commands = {
    netintel: `node "${CLI}" grep -o --v4 "${path}"`,
    ...(ripgrep ? { ripgrep: `rg --no-config -o '${PATTERN}' "${path}"` } : {}),
    grepC: `LC_ALL=C grep -oE '${PATTERN}' "${path}"`,
    grepUtf8: `LC_ALL=C.UTF-8 grep -oE '${PATTERN}' "${path}"`,
  };
  const names = Object.keys(commands);
  // Warm the page cache so that the first command does not pay for the disk.
  await timePipeline(`cat "${path}"`, env);
  const runs = Object.fromEntries(names.map((name) => [name, []]));
  const ratios = { ripgrep: [], grepC: [] };
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 === 0 ? names : [...names.slice(1), names[0]];
    const results = {};
    for (const name of order) results[name] = await timePipeline(commands[name], env);
    for (const name of order) runs[name].push(results[name]);
    for (const baseline of Object.keys(ratios)) if (results[baseline]) ratios[baseline].push(results[baseline].ms / results.netintel.ms);
    const times = order.map((name) => `${LABELS[name]} ${fmt(results[name].ms)} ms`).join(', ');
    const against = Object.entries(ratios).filter(([, list]) => list.length > round).map(([name, list]) => `/${LABELS[name]} ${list.at(-1).toFixed(3)}`);
    process.stderr.write(`round ${round + 1}: ${times}; netintel ${against.join(', ')}\n`);
  }
  const mbs = (ms) => bytes / 1048576 / (ms / 1000);
  const summary = Object.fromEntries(
    Object.entries(runs).map(([name, list]) => [name, { medianMs: round1(median(list.map((run) => run.ms))), mbPerS: round1(mbs(median(list.map((run) => run.ms)))), lines: list[0].lines }]),
  );
  process.stdout.write(`\ngrep over a ${(bytes / 1048576).toFixed(0)} MiB generated access log, ${options.rounds} rounds, medians\n`);
  for (const name of names) {
    const result = summary[name];
    process.stdout.write(`  ${COMMAND_LABELS[name].padEnd(26)} ${fmt(result.medianMs).padStart(9)} ms ${result.mbPerS.toFixed(1).padStart(8)} MiB/s ${String(result.lines).padStart(10)} addresses\n`);
  }
  const ratio = ripgrep ? median(ratios.ripgrep) : null;
  const met = ratio !== null && ratio >= TARGET;
  const status = ratio === null ? 'NOT MEASURED: rg is missing' : met ? 'met' : 'MISSED';
  process.stdout.write(`  ratio netintel / ripgrep: ${ratio === null ? '-' : `${ratio.toFixed(3)}x`} (target >= ${TARGET}x: ${status})\n`);
  const utf8Ratio = median(runs.grepUtf8.map((r) => r.ms)) / summary.netintel.medianMs;
  process.stdout.write(`  reference: netintel / grep (C locale) ${median(ratios.grepC).toFixed(3)}x, / grep (UTF-8) ${utf8Ratio.toFixed(3)}x\n`);
  // The counts differ by design: grep -oE and rg -o also take 1.2.3.4 out of 1.2.3.4.5 and 999.1.1.1-like runs.
  mkdirSync(join(BENCH_DIR, 'results'), { recursive: true });
  const rounded = (list) => list.map((r) => Number(r.toFixed(3)));
  writeFileSync(
    join(BENCH_DIR, 'results', 'grep-latest.json'),
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        bytes,
        rounds: options.rounds,
        summary,
        ratios: rounded(ratios.ripgrep),
        ratio: ratio === null ? null : Number(ratio.toFixed(3)),
        target: TARGET,
        met,
        reference: { ratiosGrepC: rounded(ratios.grepC), ratioGrepC: Number(median(ratios.grepC).toFixed(3)) },
      },
      null,
      2,
    )}\n`,
  );
  if (options.strict && !met) process.exitCode = 1;
}

const LABELS = { netintel: 'netintel', ripgrep: 'rg', grepC: 'grep (C)', grepUtf8: 'grep (UTF-8)' };
const COMMAND_LABELS = { netintel: 'netintel grep -o --v4', ripgrep: 'rg -o', grepC: 'grep -oE (LC_ALL=C)', grepUtf8: 'grep -oE (C.UTF-8)' };
const fmt = (ms) => ms.toFixed(0);
const round1 = (value) => Math.round(value * 10) / 10;

await main();
