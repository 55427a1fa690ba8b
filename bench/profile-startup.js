#!/usr/bin/env node
// Where a one-off netintel run spends its time.
//
//   node bench/profile-startup.js [--runs=N] [--keep] [-- ARGS...]
//
// ARGS default to `ip 8.8.8.8 -f json`. Two views, both over N runs
// (default 10) with the environment minus NODE_EXTRA_CA_CERTS:
//  1. phases, in-process: Node bootstrap, importing the CLI's built module
//     graph, main() itself, the event loop draining after it, and process
//     teardown; next to `node -e 0` measured interleaved;
//  2. a sampling CPU profile (node --cpu-prof, 100 us interval) of
//     bin/netintel.js: self time summed by group (Node internals, GC, each
//     package, each project file) and by function, and the inclusive time of
//     the project's own functions (which step of main() costs what).
// --keep leaves the .cpuprofile files (open them in Chrome DevTools).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_DIR, CLI, CLI_LOADER, CLI_MAIN, ROOT } from './lib/paths.js';
import { benchEnv, timeOnce } from './lib/processes.js';
import { fixed, formatTable } from './lib/report.js';
import { summarize } from './lib/stats.js';

const NODE = process.execPath;
const argv = process.argv.slice(2);
const split = argv.indexOf('--');
const own = split === -1 ? argv : argv.slice(0, split);
const cliArgs = split === -1 ? ['ip', '8.8.8.8', '-f', 'json'] : argv.slice(split + 1);
const runs = Number(own.find((arg) => arg.startsWith('--runs='))?.slice(7) ?? 10);
const keep = own.includes('--keep');
const env = benchEnv();

/** One in-process phase measurement: the report comes back on fd 3. */
function phasesOnce() {
  return new Promise((resolve) => {
    const started = process.hrtime.bigint();
    const child = spawn(NODE, [join(BENCH_DIR, 'lib', 'startup-phases.mjs'), existsSync(CLI_LOADER) ? CLI_LOADER : CLI_MAIN, ...cliArgs], {
      env,
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
    });
    let report = '';
    let stderr = '';
    child.stdio[3].on('data', (chunk) => (report += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => {
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
      try {
        const phases = JSON.parse(report);
        resolve({ ...phases, wallMs, teardownMs: wallMs - phases.exitEventAtMs, code });
      } catch {
        resolve({ error: `exit ${code}: ${stderr.trim().split('\n').slice(-2).join(' ')}` });
      }
    });
  });
}

function profileOnce(dir) {
  return timeOnce(NODE, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=100', CLI, ...cliArgs], env);
}

/** Names a script URL's group: Node internals, a package, or a project file. */
function groupOf(url, functionName) {
  if (url === '') {
    if (functionName === '(garbage collector)') return '(garbage collector)';
    if (functionName === '(program)') return '(program): native code, parsing and compiling JS';
    if (functionName === '(idle)') return '(idle): waiting on I/O';
    return `(native) ${functionName}`;
  }
  if (url.startsWith('node:internal/modules/')) return 'node: module loader (resolve, read, link)';
  if (url.startsWith('node:')) return 'node: other internals';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const packageMatch = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  if (packageMatch) return `package ${packageMatch[1]}`;
  return relative(ROOT, path);
}

function functionKey({ url, functionName, lineNumber }) {
  const where = url === '' ? '' : ` ${groupOf(url, functionName).replace(/^package /, '')}:${lineNumber + 1}`;
  return `${functionName || '(anonymous)'}${where}`;
}

/** Whether a frame is the project's own code (the built files, not Node or a package). */
function isProjectFrame({ url }) {
  return url.startsWith('file://') && !url.includes('/node_modules/');
}

function aggregate(profiles) {
  const byGroup = new Map();
  const byFunction = new Map();
  const inclusive = new Map();
  let totalMs = 0;
  for (const profile of profiles) {
    const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
    const parents = new Map();
    for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
    profile.samples.forEach((id, index) => {
      const ms = (profile.timeDeltas[index] ?? 0) / 1000;
      const { url, functionName } = nodes.get(id).callFrame;
      totalMs += ms;
      const group = groupOf(url, functionName);
      byGroup.set(group, (byGroup.get(group) ?? 0) + ms);
      const key = functionKey(nodes.get(id).callFrame);
      byFunction.set(key, (byFunction.get(key) ?? 0) + ms);
      // Inclusive time: every project function on the sampled stack, once per sample.
      const seen = new Set();
      for (let at = id; at !== undefined; at = parents.get(at)) {
        const frame = nodes.get(at).callFrame;
        if (!isProjectFrame(frame)) continue;
        const name = functionKey(frame);
        if (seen.has(name)) continue;
        seen.add(name);
        inclusive.set(name, (inclusive.get(name) ?? 0) + ms);
      }
    });
  }
  const n = profiles.length;
  const top = (map, count) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([name, ms]) => [name, fixed(ms / n, 2), fixed((100 * ms) / totalMs, 1)]);
  return { perRunMs: totalMs / n, groups: top(byGroup, 12), functions: top(byFunction, 25), inclusive: top(inclusive, 30) };
}

async function main() {
  process.stdout.write(`profiling: node ${relative(ROOT, CLI)} ${cliArgs.join(' ')} (${runs} runs; entry ${relative(ROOT, CLI_MAIN)})\n\n`);

  // 1. Phases, interleaved with node -e 0.
  for (let i = 0; i < 2; i++) {
    await phasesOnce();
    await timeOnce(NODE, ['-e', '0'], env);
  }
  const phases = [];
  const bare = [];
  for (let i = 0; i < runs; i++) {
    const result = await phasesOnce();
    if (result.error) {
      process.stdout.write(`phase run failed: ${result.error}\n`);
      process.exitCode = 1;
      return;
    }
    phases.push(result);
    bare.push((await timeOnce(NODE, ['-e', '0'], env)).ms);
  }
  const row = (label, values) => {
    const s = summarize(values);
    return [label, fixed(s.mean), fixed(s.median), fixed(s.min)];
  };
  process.stdout.write('PHASES (ms; wall from spawn to exit, the rest from performance.now() inside the process)\n');
  process.stdout.write(
    `${formatTable(
      ['phase', ' mean', ' median', ' min'],
      [
        row('node -e 0, whole process (reference)', bare),
        row('netintel: bootstrap until the entry script runs', phases.map((p) => p.bootstrapMs)),
        row('netintel: import of the CLI module graph', phases.map((p) => p.importMs)),
        row('netintel: main() (parse flags, open data, look up, print)', phases.map((p) => p.mainMs)),
        row("netintel: main() returned -> 'exit' event (open handles draining)", phases.map((p) => p.drainMs)),
        row("netintel: 'exit' event -> process gone (teardown, as seen by the parent)", phases.map((p) => p.teardownMs)),
        row('netintel: whole process', phases.map((p) => p.wallMs)),
      ],
    )}\n\n`,
  );

  // 2. CPU profiles.
  const dir = mkdtempSync(join(tmpdir(), 'netintel-cpuprof-'));
  for (let i = 0; i < runs; i++) await profileOnce(dir);
  const profiles = readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')));
  const { perRunMs, groups, functions, inclusive } = aggregate(profiles);
  process.stdout.write(`CPU PROFILE: ${profiles.length} runs, ${fixed(perRunMs)} ms sampled per run (from profiler start, after bootstrap)\n`);
  process.stdout.write(`${formatTable(['self time by group', ' ms/run', ' %'], groups)}\n\n`);
  process.stdout.write(`${formatTable(['self time by function', ' ms/run', ' %'], functions)}\n\n`);
  process.stdout.write(`${formatTable(['inclusive time of project functions (callees included)', ' ms/run', ' %'], inclusive)}\n`);
  if (keep) process.stdout.write(`\nprofiles kept in ${dir}\n`);
  else rmSync(dir, { recursive: true, force: true });
}

await main();
