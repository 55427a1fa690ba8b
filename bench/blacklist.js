#!/usr/bin/env node
// netintel blacklist benchmark: one IP address against 20 DNS blocklist
// zones served by a local DNS server that answers each zone after its own
// delay (20 ms to 400 ms). Target: the 20-zone check takes at most 1.2x the
// slowest single zone's check, i.e. the zones (and their RFC 5782 test
// points) are asked at once, not one after the other.
//
//   node bench/blacklist.js            3 rounds (about 25 s)
//   node bench/blacklist.js --rounds=N
//   node bench/blacklist.js --strict   exit 1 when the target is missed
//
// Needs the project built (npm run build). Measures the built CLI as users
// run it (node bin/netintel.js blacklist ... -f json): the ratio is taken on
// the check's own wall time (the record's latency_ms, from the first query to
// the last answer), and shown for the whole process too.
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { CLI, CLI_MAIN, ROOT } from './lib/paths.js';
import { fixed, formatTable, loud } from './lib/report.js';
import { summarize } from './lib/stats.js';

const require = createRequire(import.meta.url);
const dnsPacket = require('dns-packet');

const TARGET_RATIO = 1.2;
const ZONE_COUNT = 20;
const TARGET_IP = '192.0.2.77';
/** Zone i (1-based) answers after 20 * i ms: 20 ms ... 400 ms. */
const delayOf = (index) => 20 * index;
/** Zones that list the target (a listing costs a TXT query after the A answer). */
const LISTING_ZONES = new Set([3, 11]);

function parseOptions(argv) {
  const options = { rounds: 3, strict: false };
  for (const arg of argv) {
    const match = /^--(rounds|strict|help)(?:=(.*))?$/.exec(arg);
    if (!match) throw new Error(`unknown argument ${arg} (see --help)`);
    if (match[1] === 'help') {
      process.stdout.write('usage: node bench/blacklist.js [--rounds=N] [--strict]\n');
      process.exit(0);
    }
    if (match[1] === 'strict') options.strict = true;
    if (match[1] === 'rounds') {
      options.rounds = Number(match[2]);
      if (!Number.isInteger(options.rounds) || options.rounds < 1) throw new Error('--rounds must be a whole number from 1');
    }
  }
  return options;
}

const zoneName = (index) => `z${String(index).padStart(2, '0')}.bench.test`;
const reversed = (ip) => ip.split('.').reverse().join('.');

/** A DNSBL server on 127.0.0.1: every zone lists its test point 127.0.0.2, some list the target; replies wait the zone's delay. */
async function startDelayedServer() {
  const answers = new Map();
  for (let index = 1; index <= ZONE_COUNT; index++) {
    const zone = zoneName(index);
    answers.set(`2.0.0.127.${zone}`, { delayMs: delayOf(index), a: '127.0.0.2', txt: 'test point' });
    answers.set(`1.0.0.127.${zone}`, { delayMs: delayOf(index), a: null, txt: null });
    const listed = LISTING_ZONES.has(index);
    answers.set(`${reversed(TARGET_IP)}.${zone}`, { delayMs: delayOf(index), a: listed ? '127.0.0.2' : null, txt: listed ? `listed on ${zone}` : null });
  }
  const socket = dgram.createSocket('udp4');
  const timers = new Set();
  let queries = 0;
  socket.on('message', (message, remote) => {
    let query;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    queries += 1;
    const entry = answers.get(question.name.toLowerCase());
    const record = entry && question.type === 'A' ? entry.a : entry && question.type === 'TXT' ? entry.txt : null;
    const reply = dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags: dnsPacket.AUTHORITATIVE_ANSWER | dnsPacket.RECURSION_AVAILABLE | (record === null ? 3 : 0),
      questions: [question],
      answers: record === null ? [] : [{ name: question.name, type: question.type, ttl: 60, data: record }],
    });
    const timer = setTimeout(() => {
      timers.delete(timer);
      socket.send(reply, remote.port, remote.address);
    }, entry?.delayMs ?? 0);
    timers.add(timer);
  });
  await new Promise((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    queries: () => queries,
    close: () => {
      timers.forEach(clearTimeout);
      socket.close();
    },
  };
}

/** Runs the CLI once (asynchronously: the DNS server lives in this process) and returns its record and wall time. */
function runCheck(resolver, zones) {
  const args = [CLI, 'blacklist', TARGET_IP, '--zones', zones.join(','), '--resolver', resolver, '-f', 'json', '-t', '5000'];
  const env = { ...process.env, HOME: '/nonexistent', XDG_CONFIG_HOME: '/nonexistent' };
  for (const key of Object.keys(env)) if (key.startsWith('NETINTEL_') || key === 'NODE_EXTRA_CA_CERTS') delete env[key];
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = [];
    const err = [];
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0) {
        reject(new Error(`netintel exited ${code}: ${Buffer.concat(err).toString()}`));
        return;
      }
      const record = JSON.parse(Buffer.concat(out).toString());
      resolve({ record, wallMs });
    });
  });
}

async function main() {
  const options = parseOptions(process.argv.slice(2));
  if (!existsSync(CLI_MAIN)) {
    process.stderr.write(`${loud(`${CLI_MAIN} is missing: run npm run build first`)}\n`);
    process.exitCode = 1;
    return;
  }
  const server = await startDelayedServer();
  const zones = Array.from({ length: ZONE_COUNT }, (_, i) => zoneName(i + 1));
  try {
    // Warm-up: the first run pays for the OS page cache.
    await runCheck(server.address, zones);

    // Each zone alone, every round: the slowest single zone's answer.
    const single = new Map(zones.map((zone) => [zone, { checkMs: [], wallMs: [] }]));
    const all = { checkMs: [], wallMs: [] };
    for (let round = 0; round < options.rounds; round++) {
      for (const zone of zones) {
        const { record, wallMs } = await runCheck(server.address, [zone]);
        const row = record.zones[0];
        if (!row || (row.status !== 'clean' && row.status !== 'listed')) throw new Error(`${zone}: unexpected status ${row?.status}: ${row?.detail}`);
        single.get(zone).checkMs.push(record.latency_ms);
        single.get(zone).wallMs.push(wallMs);
      }
      const { record, wallMs } = await runCheck(server.address, zones);
      const statuses = record.zones.map((row) => row.status);
      if (statuses.length !== ZONE_COUNT || statuses.some((status) => status !== 'clean' && status !== 'listed')) {
        throw new Error(`20-zone run: unexpected statuses ${statuses.join(',')}`);
      }
      all.checkMs.push(record.latency_ms);
      all.wallMs.push(wallMs);
    }

    const singles = zones.map((zone, i) => {
      const samples = single.get(zone);
      return { zone, delayMs: delayOf(i + 1), listed: LISTING_ZONES.has(i + 1), check: summarize(samples.checkMs), wall: summarize(samples.wallMs) };
    });
    const slowest = singles.reduce((worst, item) => (item.check.median > worst.check.median ? item : worst));
    const slowestWall = singles.reduce((worst, item) => (item.wall.median > worst.wall.median ? item : worst));
    const allCheck = summarize(all.checkMs);
    const allWall = summarize(all.wallMs);
    const ratio = allCheck.median / slowest.check.median;
    const wallRatio = allWall.median / slowestWall.wall.median;
    const verdict = ratio <= TARGET_RATIO ? 'PASS' : 'MISS';

    process.stdout.write(`netintel blacklist: one IP against ${ZONE_COUNT} zones, each answering after its own delay; ${options.rounds} rounds, medians\n\n`);
    process.stdout.write(
      `${formatTable(
        ['zone', ' delay ms', 'listed', ' check ms (alone)', ' process ms (alone)'],
        singles.map((item) => [item.zone, item.delayMs, item.listed ? 'yes' : 'no', fixed(item.check.median), fixed(item.wall.median)]),
      )}\n\n`,
    );
    process.stdout.write(
      `${formatTable(
        ['run', ' check ms', ' process ms'],
        [
          [`slowest single zone (${slowest.zone})`, fixed(slowest.check.median), fixed(slowestWall.wall.median)],
          [`all ${ZONE_COUNT} zones at once`, fixed(allCheck.median), fixed(allWall.median)],
        ],
      )}\n\n`,
    );
    process.stdout.write(`ratio (check, 20 zones / slowest single zone): ${ratio.toFixed(3)}  target <= ${TARGET_RATIO}  ${verdict}\n`);
    process.stdout.write(`ratio (whole process, for reference):          ${wallRatio.toFixed(3)}\n`);
    process.stdout.write(`DNS queries served: ${server.queries()}\n`);
    if (verdict === 'MISS' && options.strict) process.exitCode = 1;
  } finally {
    server.close();
  }
}

main().catch((error) => {
  process.stderr.write(`${loud(error instanceof Error ? error.message : String(error))}\n`);
  process.exitCode = 1;
});
