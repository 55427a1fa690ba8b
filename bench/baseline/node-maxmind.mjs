// Bulk reference: plain Node + the `maxmind` package, city lookups only (no
// ASN, no validation, no special ranges). Reads one IPv4 per line on stdin,
// looks each up with reader.get() (maxmind's default 10,000-entry LRU cache)
// and writes one CSV line (ip, country_code, state1, city, latitude,
// longitude, timezone; no quoting) to stdout in 64 KiB batches, honouring
// backpressure. Prints "<lines> lines, <found> found, <notfound> not found"
// on stderr.
// Usage: node node-maxmind.mjs CITY.mmdb < ips.txt > out.csv
import maxmind from 'maxmind';
import { once } from 'node:events';

const reader = await maxmind.open(process.argv[2]);
let lines = 0;
let found = 0;
let pending = '';
let batch = [];
let batchBytes = 0;

async function flush() {
  if (batch.length === 0) return;
  const text = batch.join('');
  batch = [];
  batchBytes = 0;
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

async function handle(ip) {
  if (ip === '' || ip.startsWith('#')) return;
  lines++;
  const record = reader.get(ip);
  let row;
  if (record) {
    found++;
    row = `${ip},${record.country_code},${record.state1},${record.city},${record.latitude},${record.longitude},${record.timezone}\n`;
  } else {
    row = `${ip},,,,,,\n`;
  }
  batch.push(row);
  batchBytes += row.length;
  if (batchBytes >= 65536) await flush();
}

process.stdin.setEncoding('latin1');
for await (const chunk of process.stdin) {
  const text = pending + chunk;
  let start = 0;
  let end;
  while ((end = text.indexOf('\n', start)) !== -1) {
    await handle(text.slice(start, end).trim());
    start = end + 1;
  }
  pending = text.slice(start);
}
await handle(pending.trim());
await flush();
process.stderr.write(`${lines} lines, ${found} found, ${lines - found} not found\n`);
