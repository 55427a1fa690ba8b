// A web-server access log (combined format, nginx's default) for `netintel grep`:
// IPv4 and IPv6 clients, X-Forwarded-For chains, upstream host:port, referers with
// addresses in URLs, and user agents whose version numbers look like addresses but
// are not (Chrome/119.0.6045.159). Seeded, so the same seed gives the same log, and
// every line comes with the addresses it holds, in order: the expected output.
//
//   node bench/grep-log.js LINES [SEED [EXPECTED_FILE]] > access.log

import { createPrng } from './lib/ip-list.js';

const AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/119.0.6045.159 Safari/537.36',
  'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0',
  'curl/8.4.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1.2 Mobile/15E148 Safari/604.1',
  'python-requests/2.31.0',
];
const PATHS = ['/', '/index.html', '/api/v1/items?id=42', '/static/app.3f2a1b.js', '/login', '/wp-login.php', '/.env'];
const STATUSES = [200, 200, 200, 304, 404, 301, 500];

/** Yields [line, addresses] pairs: each line of the log and the addresses in it, in order. */
export function* accessLogLines(count, seed = 20261127) {
  const next = createPrng(seed);
  const random = () => next() / 4294967296;
  const pick = (items) => items[Math.floor(random() * items.length)];
  const octet = () => Math.floor(random() * 256);
  const v4 = () => `${1 + Math.floor(random() * 223)}.${octet()}.${octet()}.${octet()}`;
  const v6 = () => `2001:db8:${Math.floor(random() * 65536).toString(16)}::${Math.floor(random() * 65536).toString(16)}`;
  const start = Date.UTC(2026, 10, 27, 6, 0, 0);
  for (let i = 0; i < count; i++) {
    const client = random() < 0.8 ? v4() : v6();
    const addresses = [client];
    const time = new Date(start + i * 137).toISOString().replace('T', ':').slice(0, 19);
    const path = pick(PATHS);
    const status = pick(STATUSES);
    let referer = '-';
    if (random() < 0.1) {
      const host = v4();
      referer = `http://${host}:8080/admin`;
      addresses.push(host);
    }
    let extra = '';
    if (random() < 0.2) {
      const forwarded = [v4(), v4()];
      extra = ` xff="${forwarded.join(', ')}"`;
      addresses.push(...forwarded);
    }
    if (random() < 0.3) {
      const upstream = random() < 0.5 ? `${v4()}` : `[${v6()}]`;
      const address = upstream.startsWith('[') ? upstream.slice(1, -1) : upstream;
      extra += ` upstream=${upstream}:443`;
      addresses.push(address);
    }
    const line = `${client} - - [${time} +0000] "GET ${path} HTTP/1.1" ${status} ${Math.floor(random() * 50000)} "${referer}" "${pick(AGENTS)}" rt=0.${Math.floor(random() * 1000)}${extra}`;
    yield [line, addresses];
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { openSync, writeSync } = await import('node:fs');
  const count = Number(process.argv[2] ?? 1000);
  const seed = Number(process.argv[3] ?? 20261127);
  const expected = process.argv[4] === undefined ? null : openSync(process.argv[4], 'w');
  let out = '';
  let addresses = '';
  const flush = () => {
    writeSync(1, out);
    if (expected !== null) writeSync(expected, addresses);
    out = '';
    addresses = '';
  };
  for (const [line, found] of accessLogLines(count, seed)) {
    out += `${line}\n`;
    if (expected !== null) addresses += found.map((address) => `${address}\n`).join('');
    if (out.length > 1 << 20) flush();
  }
  flush();
}
