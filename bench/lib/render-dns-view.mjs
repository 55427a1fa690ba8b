// One case of bench/human-view.js, in a process of its own so that a render that takes too long
// can be stopped: the record `netintel dns NAME --type TXT` gives for a TXT answer of
// `records` records of `bytes` bytes each (255-byte character strings, no space in them),
// rendered by the built output layer (dist/src) as json, then as the human view (table, 80
// columns), `reps` times each after one warm-up. One JSON line per format on stdout:
// {"format", "ms": [...], "cpuMs": [...], "chars", "lines"}.
//
//   node bench/lib/render-dns-view.mjs ROOT BYTES RECORDS REPS
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const [root, bytesArg, recordsArg, repsArg] = process.argv.slice(2);
const bytes = Number(bytesArg);
const records = Number(recordsArg);
const reps = Number(repsArg);

const { createFormatter } = await import(pathToFileURL(join(root, 'dist', 'src', 'output', 'formatter.js')).href);
const { DNS_SCHEMA } = await import(pathToFileURL(join(root, 'dist', 'src', 'output', 'schemas', 'dns-schema.js')).href);

/** `bytes` bytes of lowercase letters as 255-byte character strings (the last shorter). */
export function txtStrings(size, seed) {
  const strings = [];
  for (let offset = 0, index = 0; offset < size; offset += 255, index++) strings.push(String.fromCharCode(97 + ((seed + index) % 26)).repeat(Math.min(255, size - offset)));
  return strings;
}

const answers = Array.from({ length: records }, (_, index) => ({ name: 'big.bench.test', type: 'TXT', ttl_seconds: 300, data: { strings: txtStrings(bytes, index) } }));
const record = {
  kind: 'dns',
  target: 'big.bench.test',
  domain: 'big.bench.test',
  domain_unicode: 'big.bench.test',
  type: 'TXT',
  status: 'noerror',
  rcode: 'NOERROR',
  answers,
  resolver: '127.0.0.1:53',
  transport: 'tcp',
  latency_ms: 1,
};

async function renderOnce(format) {
  const formatter = await createFormatter({ format, schema: DNS_SCHEMA, columns: null, header: true, color: false, single: true, width: 80, all: false });
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  const text = formatter.start() + formatter.write({ ok: true, query: 'big.bench.test', value: record }) + formatter.end();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const used = process.cpuUsage(cpu);
  return { ms, cpuMs: (used.user + used.system) / 1000, text };
}

for (const format of ['json', 'table']) {
  await renderOnce(format);
  const ms = [];
  const cpuMs = [];
  let text = '';
  for (let rep = 0; rep < reps; rep++) {
    const run = await renderOnce(format);
    ms.push(run.ms);
    cpuMs.push(run.cpuMs);
    text = run.text;
  }
  process.stdout.write(`${JSON.stringify({ format, ms, cpuMs, chars: text.length, lines: text.split('\n').length - 1 })}\n`);
}
