#!/usr/bin/env node
// netintel DKIM message benchmark: what hostile header shapes cost `netintel dkim --message`.
//
//   node bench/dkim-message.js            all cases, mailauth's verifier as the reference (capped at 60 s a case)
//   node bench/dkim-message.js --quick    no 200,000-fold case, reference capped at 10 s
//
// 1. Makes an RSA 2048 key, serves it from a DNS responder on 127.0.0.1 (dns-packet over UDP)
//    and signs a message with mailauth's signer (relaxed/relaxed).
// 2. Cases, each a file verified by the built CLI (`dkim --message FILE -f json --resolver ...`),
//    wall time from spawn to exit and peak RSS (GNU time, when installed):
//    - the DKIM-Signature field folded N times (N = 10,000, 40,000, 200,000): empty continuation
//      lines inside b=, which verifiers remove with the rest of b= (RFC 6376 §3.7), so the
//      signature still verifies; 3 octets a fold (200,000 folds: about 600 KB);
//    - a header field of 10 MB: over the 1 MiB header limit, refused (exit 2) without reading on;
//    - a header section just under the limit, and a 48 MiB body (linear body hashing).
//    Target: the 200,000-fold message verifies in under 2 s and every case stays under 200 MB
//    peak RSS (before the message reader, 40,000 folds took 6.6 s, 200,000 over 60 s, and the
//    10 MB field 552 MB).
// 3. The reference: mailauth's dkimVerify (the verifier netintel used before) on the folded
//    messages, in a child process with a deadline.
//
// Needs the project built (npm run build). Writes bench/results/dkim-message-latest.json.
import { generateKeyPairSync } from 'node:crypto';
import dgram from 'node:dgram';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import dnsPacket from 'dns-packet';
import { dkimSign } from 'mailauth/lib/dkim/sign.js';
import { BENCH_DIR, CLI, ROOT } from './lib/paths.js';
import { benchEnv, GNU_TIME, timeOnce } from './lib/processes.js';
import { formatTable } from './lib/report.js';

const quick = process.argv.includes('--quick');
if (process.argv.includes('--help')) {
  process.stdout.write('usage: node bench/dkim-message.js [--quick]\n');
  process.exit(0);
}
const RESULTS = join(BENCH_DIR, 'results', 'dkim-message-latest.json');
const REFERENCE_DEADLINE_S = quick ? 10 : 60;
const TARGETS = { foldedSeconds: 2, peakRssMb: 200 };

const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const p = publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
const record = `v=DKIM1; k=rsa; p=${p}`;
const server = await startDns({ 'bench._domainkey.bench.test': record });
const resolver = `127.0.0.1:${server.address().port}`;

const MESSAGE = ['From: Alice <alice@bench.test>', 'To: bob@example.test', 'Subject: figures', 'Date: Fri, 27 Nov 2026 10:00:00 +0000', 'Message-ID: <b-1@bench.test>', '', 'The figures.', ''].join('\r\n');
const signed = await dkimSign(MESSAGE, { canonicalization: 'relaxed/relaxed', signatureData: [{ signingDomain: 'bench.test', selector: 'bench', privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }) }] });
const signature = signed.signatures.replace(/\r\n$/, '');

/** The signature with `folds` empty continuation lines put after the first octet of its b= value. */
function folded(folds) {
  const at = signature.search(/[;\s]b=/) + 4;
  return `${signature.slice(0, at)}${'\r\n '.repeat(folds)}${signature.slice(at)}\r\n${MESSAGE}`;
}

const dir = mkdtempSync(join(tmpdir(), 'netintel-bench-dkim-'));
const cases = [];
for (const folds of quick ? [10_000, 40_000] : [10_000, 40_000, 200_000]) cases.push({ name: `DKIM-Signature folded ${folds.toLocaleString('en')} times`, text: folded(folds), expect: 'pass', folds });
cases.push({ name: 'a 10 MB header field', text: `X-Big: ${'a'.repeat(10_000_000)}\r\n${signature}\r\n${MESSAGE}`, expect: 'invalid_input' });
cases.push({ name: 'header section just under 1 MiB', text: `${'X-Pad: '.concat('a'.repeat(990), '\r\n').repeat(1000)}${signature}\r\n${MESSAGE}`, expect: 'pass' });
cases.push({ name: 'a 48 MiB body', text: await bigBody(), expect: 'pass' });

const rows = [];
for (const item of cases) {
  const file = join(dir, `${rows.length}.eml`);
  writeFileSync(file, item.text);
  const measured = await measure(file);
  const verdict = measured.json?.error?.code ?? measured.json?.status ?? `exit ${measured.code}`;
  const reference = item.folds ? referenceRun(file) : null;
  rows.push({ case: item.name, bytes: Buffer.byteLength(item.text, 'latin1'), seconds: measured.seconds, peakRssMb: measured.peakRssMb, verdict, expected: item.expect, referenceSeconds: reference });
}
server.close();
rmSync(dir, { recursive: true, force: true });

process.stdout.write(
  formatTable(
    ['case', 'octets', 'netintel s', 'peak RSS MB', 'verdict', 'mailauth dkimVerify s'],
    rows.map((row) => [row.case, row.bytes.toLocaleString('en'), row.seconds.toFixed(2), row.peakRssMb === null ? '-' : String(row.peakRssMb), row.verdict, row.referenceSeconds === null ? '-' : row.referenceSeconds]),
  ) + '\n',
);
const wrong = rows.filter((row) => row.verdict !== row.expected);
const slow = rows.filter((row) => row.case.startsWith('DKIM-Signature folded') && row.seconds > TARGETS.foldedSeconds);
const heavy = rows.filter((row) => row.peakRssMb !== null && row.peakRssMb > TARGETS.peakRssMb);
for (const row of wrong) process.stdout.write(`WRONG VERDICT: ${row.case}: ${row.verdict}, expected ${row.expected}\n`);
process.stdout.write(`targets: folded messages under ${TARGETS.foldedSeconds} s: ${slow.length === 0 ? 'met' : 'MISSED'}; peak RSS under ${TARGETS.peakRssMb} MB: ${heavy.length === 0 ? 'met' : 'MISSED'}\n`);
mkdirSync(join(BENCH_DIR, 'results'), { recursive: true });
writeFileSync(RESULTS, `${JSON.stringify({ date: new Date().toISOString(), quick, targets: TARGETS, rows }, null, 2)}\n`);
process.exitCode = wrong.length > 0 ? 1 : 0;

async function bigBody() {
  const line = 'The quick brown fox  jumps over the lazy dog, again and again. \r\n';
  const message = MESSAGE.replace('The figures.\r\n', line.repeat(Math.floor((48 * 1024 * 1024) / line.length)));
  const big = await dkimSign(message, { canonicalization: 'relaxed/relaxed', signatureData: [{ signingDomain: 'bench.test', selector: 'bench', privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }) }] });
  return big.signatures + message;
}

async function measure(file) {
  const args = [CLI, 'dkim', '--message', file, '-f', 'json', '--resolver', resolver, '--timeout', '2000', '--retries', '0'];
  const timeFile = join(dir, 'time.txt');
  const [command, argv] = GNU_TIME ? [GNU_TIME, ['-f', '%M', '-o', timeFile, process.execPath, ...args]] : [process.execPath, args];
  const run = await timeOnce(command, argv, benchEnv());
  let json = null;
  try {
    json = JSON.parse(run.stdout);
  } catch {
    json = null;
  }
  let peakRssMb = null;
  if (GNU_TIME) {
    const { readFileSync } = await import('node:fs');
    const kb = Number(readFileSync(timeFile, 'utf8').trim().split('\n').pop());
    if (Number.isFinite(kb)) peakRssMb = Math.round(kb / 1024);
  }
  return { seconds: run.ms / 1000, code: run.code, json, peakRssMb };
}

/** mailauth's dkimVerify on the file, in a child with a deadline: seconds, or "> N (stopped)". */
function referenceRun(file) {
  const script = `
    const { readFileSync } = require('node:fs');
    const { dkimVerify } = require(${JSON.stringify(join(ROOT, 'node_modules', 'mailauth', 'lib', 'dkim', 'verify.js'))});
    const message = readFileSync(${JSON.stringify(file)});
    const started = process.hrtime.bigint();
    dkimVerify(message, { resolver: async () => [[${JSON.stringify(record)}]] }).then((result) => {
      process.stdout.write(JSON.stringify({ seconds: Number(process.hrtime.bigint() - started) / 1e9, result: result.results[0]?.status?.result }));
    });`;
  const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: REFERENCE_DEADLINE_S * 1000, env: benchEnv() });
  if (child.error || child.status !== 0) return `> ${REFERENCE_DEADLINE_S} (stopped)`;
  const { seconds, result } = JSON.parse(child.stdout);
  return `${seconds.toFixed(2)} (${result})`;
}

/** A DNS responder for TXT questions on 127.0.0.1, answering from `zone`. */
function startDns(zone) {
  const socket = dgram.createSocket('udp4');
  socket.on('message', (message, peer) => {
    const query = dnsPacket.decode(message);
    const question = query.questions?.[0];
    const text = question ? zone[question.name.toLowerCase()] : undefined;
    const chunks = text === undefined ? [] : text.match(/.{1,255}/g);
    const answers = text === undefined || question.type !== 'TXT' ? [] : [{ name: question.name, type: 'TXT', ttl: 60, data: chunks }];
    const reply = dnsPacket.encode({ id: query.id, type: 'response', flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (text === undefined ? 3 : 0), questions: query.questions, answers });
    socket.send(reply, peer.port, peer.address);
  });
  return new Promise((resolve) => socket.bind(0, '127.0.0.1', () => resolve(socket)));
}
