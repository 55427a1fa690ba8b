#!/usr/bin/env node
// netintel human view benchmark: the `dns` view (table format) of large TXT answers against the
// JSON of the same answers, measured in the same run. The view wraps each TXT record into the
// table's data column; its time must grow linearly with the answer's size.
//
//   node bench/human-view.js              3 rounds, a 60 s budget per process (about a minute)
//   node bench/human-view.js --quick      1 round, a 20 s budget
//   node bench/human-view.js --rounds=N --reps=N --budget=SECONDS --strict
//
// Cases: one TXT record of 4,000, 8,000 and 64,000 bytes, and 63 records of 1,000 bytes, each
// record in 255-byte character strings without a space (kB here is 1,000 bytes, so a linear
// view takes 16x as long for 64 kB as for 4 kB). Two measures per case:
// - render: the built output layer (dist/src) renders the record the resolver gives, as json
//   and as the view at 80 columns, in a process of its own (bench/lib/render-dns-view.mjs),
//   five times each after a warm-up; medians.
// - CLI: `node bin/netintel.js dns NAME --type TXT -f json|table` against a DNS server in this
//   process (UDP, truncated to TCP for large answers), wall and CPU time (GNU time when
//   installed), the two formats interleaved, their order swapped every round.
// A process that outlives the budget is killed and reported as "> budget".
// Target: view render time of 64 kB / 4 kB <= 24 (linear: 16). Needs the project built
// (npm run build). Writes bench/results/human-view-latest.json.
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { BENCH_DIR, CLI, CLI_MAIN, ROOT } from './lib/paths.js';
import { benchEnv, GNU_TIME } from './lib/processes.js';
import { fixed, formatTable, loud } from './lib/report.js';
import { round } from './lib/stats.js';

const require = createRequire(import.meta.url);
const dnsPacket = require('dns-packet');

const RESULTS = join(BENCH_DIR, 'results', 'human-view-latest.json');
const RENDER_CHILD = join(BENCH_DIR, 'lib', 'render-dns-view.mjs');
const LINEARITY_TARGET = 24; // view render time of the 64 kB answer / of the 4 kB one, at most (linear: 16)
const ZONE = 'bench.test';
const CASES = [
  { name: 'txt-4k', label: '1 record of 4 kB', bytes: 4_000, records: 1 },
  { name: 'txt-8k', label: '1 record of 8 kB', bytes: 8_000, records: 1 },
  { name: 'txt-64k', label: '1 record of 64 kB', bytes: 64_000, records: 1 },
  { name: 'txt-63x1k', label: '63 records of 1 kB', bytes: 1_000, records: 63 },
];
const kilobytes = (item) => (item.bytes * item.records) / 1000;

function parseOptions(argv) {
  const options = { quick: false, rounds: null, reps: null, budgetS: null, strict: false };
  for (const arg of argv) {
    const match = /^--(quick|rounds|reps|budget|strict|help)(?:=(\d+))?$/.exec(arg);
    if (!match) throw new Error(`unknown argument ${arg} (see --help)`);
    if (match[1] === 'help') {
      process.stdout.write('usage: node bench/human-view.js [--quick] [--rounds=N] [--reps=N (renders per round)] [--budget=SECONDS] [--strict]\n');
      process.exit(0);
    }
    if (match[1] === 'quick') options.quick = true;
    if (match[1] === 'strict') options.strict = true;
    if (match[1] === 'rounds' || match[1] === 'reps' || match[1] === 'budget') {
      const value = Number(match[2]);
      if (!Number.isInteger(value) || value < 1) throw new Error(`--${match[1]} must be a whole number from 1`);
      if (match[1] === 'rounds') options.rounds = value;
      else if (match[1] === 'reps') options.reps = value;
      else options.budgetS = value;
    }
  }
  options.rounds ??= options.quick ? 1 : 3;
  options.budgetS ??= options.quick ? 20 : 60;
  options.reps ??= options.quick ? 3 : 5;
  return options;
}

/** `size` bytes of lowercase letters as 255-byte character strings (the last shorter), as render-dns-view.mjs builds them. */
function txtStrings(size, seed) {
  const strings = [];
  for (let offset = 0, index = 0; offset < size; offset += 255, index++) strings.push(String.fromCharCode(97 + ((seed + index) % 26)).repeat(Math.min(255, size - offset)));
  return strings;
}

/** An authoritative server on 127.0.0.1, UDP and TCP on one port: each case's TXT records; a UDP reply larger than the query allows is truncated (TC), as RFC 1035 §4.2.1 and RFC 6891 §6.2.5 say. */
async function startServer() {
  const zone = new Map(
    CASES.map((item) => [`${item.name}.${ZONE}`, Array.from({ length: item.records }, (_, index) => ({ name: `${item.name}.${ZONE}`, type: 'TXT', ttl: 300, data: txtStrings(item.bytes, index) }))]),
  );
  const reply = (message, transport) => {
    let query;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return null;
    }
    const question = query.questions?.[0];
    if (!question) return null;
    const answers = question.type === 'TXT' ? (zone.get(question.name.toLowerCase()) ?? []) : [];
    const base = { type: 'response', id: query.id, flags: dnsPacket.AUTHORITATIVE_ANSWER | (zone.has(question.name.toLowerCase()) ? 0 : 3), questions: [question] };
    const full = dnsPacket.encode({ ...base, answers });
    if (transport === 'tcp') return full;
    const opt = (query.additionals ?? []).find((record) => record.type === 'OPT');
    const limit = Math.max(512, opt?.udpPayloadSize ?? 512);
    return full.length <= limit ? full : dnsPacket.encode({ ...base, flags: base.flags | dnsPacket.TRUNCATED_RESPONSE, answers: [] });
  };
  const udp = dgram.createSocket('udp4');
  udp.on('message', (message, remote) => {
    const out = reply(message, 'udp');
    if (out) udp.send(out, remote.port, remote.address);
  });
  await new Promise((resolve) => udp.bind(0, '127.0.0.1', resolve));
  const port = udp.address().port;
  const sockets = new Set();
  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 2 && pending.length >= 2 + pending.readUInt16BE(0)) {
        const length = pending.readUInt16BE(0);
        const out = reply(pending.subarray(2, 2 + length), 'tcp');
        pending = pending.subarray(2 + length);
        if (out) {
          const frame = Buffer.alloc(2 + out.length);
          frame.writeUInt16BE(out.length, 0);
          out.copy(frame, 2);
          socket.write(frame);
        }
      }
    });
  });
  await new Promise((resolve, reject) => {
    tcp.once('error', reject);
    tcp.listen(port, '127.0.0.1', resolve);
  });
  return {
    address: `127.0.0.1:${port}`,
    close: () => {
      udp.close();
      for (const socket of sockets) socket.destroy();
      tcp.close();
    },
  };
}

/** Runs a command in a process group of its own, killed with the group after `budgetMs`: its stdout, wall time and (GNU time) CPU time. */
function runBounded(command, args, { env, budgetMs }) {
  return new Promise((resolve) => {
    const timeFile = join(tmpdir(), `netintel-bench-view-${process.pid}-${Date.now()}.txt`);
    const [file, argv] = GNU_TIME ? [GNU_TIME, ['-f', '%e %U %S %x', '-o', timeFile, command, ...args]] : [command, args];
    const started = process.hrtime.bigint();
    const child = spawn(file, argv, { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out = [];
    let stderr = '';
    let killed = false;
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4096)));
    const timer = setTimeout(() => {
      killed = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    }, budgetMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ killed: false, code: null, wallMs: NaN, cpuMs: null, stdout: '', stderr: String(error) });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
      let cpuMs = null;
      if (GNU_TIME && !killed && existsSync(timeFile)) {
        const [, user, sys] = readFileSync(timeFile, 'utf8').trim().split('\n').pop().split(/\s+/).map(Number);
        cpuMs = (user + sys) * 1000;
      }
      rmSync(timeFile, { force: true });
      resolve({ killed, code, wallMs, cpuMs, stdout: Buffer.concat(out).toString('utf8'), stderr });
    });
  });
}

const median = (values) => {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** The CLI's run of one case in one format, its output checked: every record in json, the answer count in the view's headline. */
async function runCli(server, item, format, env, budgetMs) {
  const run = await runBounded(process.execPath, [CLI, 'dns', `${item.name}.${ZONE}`, '--type', 'TXT', '--resolver', server.address, '-f', format, '-t', '10000', '--retries', '0'], { env, budgetMs });
  if (run.killed) return run;
  if (run.code !== 0) throw new Error(`netintel dns ${item.name} -f ${format} exited ${run.code}: ${run.stderr.trim()}`);
  if (format === 'json') {
    const record = JSON.parse(run.stdout);
    const answers = record.answers ?? record[0]?.answers;
    if (answers?.length !== item.records) throw new Error(`${item.name}: json has ${answers?.length} answers, expected ${item.records}`);
  } else if (!run.stdout.includes(`${item.records} answer`)) {
    throw new Error(`${item.name}: the view does not say ${item.records} answer(s): ${run.stdout.slice(0, 200)}`);
  }
  return run;
}

/** render-dns-view.mjs for one case: the json and view render times, or what was measured before the budget ran out. */
async function runRender(item, reps, env, budgetMs) {
  const run = await runBounded(process.execPath, [RENDER_CHILD, ROOT, String(item.bytes), String(item.records), String(reps)], { env, budgetMs });
  const results = Object.fromEntries(
    run.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
      .map((result) => [result.format, result]),
  );
  if (!run.killed && run.code !== 0) throw new Error(`render ${item.name} exited ${run.code}: ${run.stderr.trim()}`);
  return { killed: run.killed, json: results.json ?? null, table: results.table ?? null };
}

const msText = (value, killed, budgetS) => (killed ? `> ${budgetS} s` : value === null ? '-' : value >= 10_000 ? `${fixed(value / 1000, 1)} s` : fixed(value, value < 10 ? 2 : 1));

async function main() {
  const options = parseOptions(process.argv.slice(2));
  if (!existsSync(CLI_MAIN)) {
    process.stderr.write(`${loud(`${CLI_MAIN} is missing: run npm run build first`)}\n`);
    process.exitCode = 1;
    return;
  }
  const env = { ...benchEnv(), HOME: '/nonexistent', XDG_CONFIG_HOME: '/nonexistent', COLUMNS: '80' };
  for (const key of Object.keys(env)) if (key.startsWith('NETINTEL_')) delete env[key];
  const budgetMs = options.budgetS * 1000;
  const server = await startServer();
  const results = new Map(CASES.map((item) => [item.name, { render: { json: [], table: [], killed: false }, cli: { json: [], table: [], jsonCpu: [], tableCpu: [], killed: false } }]));
  try {
    // Warm-up: the page cache and the code cache.
    await runCli(server, CASES[0], 'json', env, budgetMs);
    for (let roundIndex = 0; roundIndex < options.rounds; roundIndex++) {
      for (const item of CASES) {
        const result = results.get(item.name);
        const formats = roundIndex % 2 === 0 ? ['json', 'table'] : ['table', 'json'];
        for (const format of formats) {
          // A format that outlived the budget once is not run again.
          if (format === 'table' && result.cli.killed) continue;
          const run = await runCli(server, item, format, env, budgetMs);
          if (run.killed) result.cli.killed = true;
          else {
            result.cli[format].push(run.wallMs);
            result.cli[`${format}Cpu`].push(run.cpuMs);
          }
        }
        if (!result.render.killed) {
          const render = await runRender(item, options.reps, env, budgetMs);
          if (render.json) result.render.json.push(...render.json.ms);
          if (render.table) result.render.table.push(...render.table.ms);
          if (render.killed) result.render.killed = true;
        }
        process.stderr.write('.');
      }
    }
    process.stderr.write('\n');
  } finally {
    server.close();
  }

  const rows = CASES.map((item) => {
    const result = results.get(item.name);
    const jsonMs = median(result.render.json);
    const tableMs = result.render.killed ? null : median(result.render.table);
    const cliJson = median(result.cli.json);
    const cliTable = result.cli.killed ? null : median(result.cli.table);
    return {
      case: item.name,
      label: item.label,
      kilobytes: kilobytes(item),
      render: { jsonMs: round(jsonMs, 3), viewMs: round(tableMs, 3), viewKilled: result.render.killed, viewMsPerKb: round(tableMs === null ? null : tableMs / kilobytes(item), 4), viewOverJson: round(tableMs === null || !jsonMs ? null : tableMs / jsonMs, 2) },
      cli: {
        jsonMs: round(cliJson, 1),
        tableMs: round(cliTable, 1),
        tableKilled: result.cli.killed,
        jsonCpuMs: round(median(result.cli.jsonCpu), 0),
        tableCpuMs: round(result.cli.killed ? null : median(result.cli.tableCpu), 0),
        tableOverJson: round(cliTable === null || !cliJson ? null : cliTable / cliJson, 2),
      },
    };
  });
  const byName = Object.fromEntries(rows.map((row) => [row.case, row]));
  const small = byName['txt-4k'].render.viewMs;
  const large = byName['txt-64k'].render.viewMs;
  const linearity = small !== null && large !== null ? large / small : null;
  const verdict = linearity !== null && linearity <= LINEARITY_TARGET ? 'PASS' : 'MISS';

  process.stdout.write(`netintel dns, human view (table, 80 columns) against json of the same TXT answers; ${options.rounds} round(s), medians\n\n`);
  process.stdout.write(
    `${formatTable(
      ['case', ' kB', ' json render ms', ' view render ms', ' view ms/kB', ' view/json', ' CLI json ms', ' CLI view ms', ' CLI view CPU ms', ' CLI view/json'],
      rows.map((row) => [
        row.label,
        row.kilobytes,
        msText(row.render.jsonMs, false, options.budgetS),
        msText(row.render.viewMs, row.render.viewKilled, options.budgetS),
        row.render.viewMsPerKb === null ? '-' : fixed(row.render.viewMsPerKb, 3),
        row.render.viewOverJson === null ? '-' : `${fixed(row.render.viewOverJson, 1)}x`,
        msText(row.cli.jsonMs, false, options.budgetS),
        msText(row.cli.tableMs, row.cli.tableKilled, options.budgetS),
        row.cli.tableCpuMs === null ? '-' : msText(row.cli.tableCpuMs, false, options.budgetS),
        row.cli.tableOverJson === null ? '-' : `${fixed(row.cli.tableOverJson, 2)}x`,
      ]),
    )}\n\n`,
  );
  process.stdout.write(`view render, 64 kB / 4 kB: ${linearity === null ? '-' : `${fixed(linearity, 1)}x`} (linear: 16x)  target <= ${LINEARITY_TARGET}x  ${verdict}\n`);
  const per = (name) => byName[name].render.viewMsPerKb;
  process.stdout.write(`view ms per kB: 4 kB ${per('txt-4k') ?? '-'}, 8 kB ${per('txt-8k') ?? '-'}, 64 kB ${per('txt-64k') ?? '-'}, 63 x 1 kB ${per('txt-63x1k') ?? '-'}\n`);

  mkdirSync(dirname(RESULTS), { recursive: true });
  writeFileSync(
    RESULTS,
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        node: process.version,
        cpus: cpus().length,
        loadavg: loadavg().map((value) => round(value, 2)),
        rounds: options.rounds,
        budgetS: options.budgetS,
        target: { viewRender64kOver4k: LINEARITY_TARGET, measured: round(linearity, 2), verdict },
        cases: rows,
      },
      null,
      2,
    )}\n`,
  );
  if (verdict === 'MISS' && options.strict) process.exitCode = 1;
}

main().catch((error) => {
  process.stderr.write(`${loud(error instanceof Error ? error.message : String(error))}\n`);
  process.exitCode = 1;
});
