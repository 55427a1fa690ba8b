#!/usr/bin/env node
// Writes examples/access.log, the web-server log the README's recipes read
// (`netintel summarize examples/access.log`): 300 lines of the combined log
// format, the same every run (a seeded generator, a fixed start time).
// Visitors come from the documentation blocks (RFC 5737: 192.0.2.0/24,
// 198.51.100.0/24, 203.0.113.0/24; RFC 3849: 2001:db8::/32), which no one
// uses, and from a few well-known public DNS resolvers, which have a
// country and a network to show in a summary.
//
//   node scripts/make-example-log.mjs            rewrites examples/access.log
//   node scripts/make-example-log.mjs --stdout   prints it instead
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPrng } from '../bench/lib/ip-list.js';

const LINES = 300;
const START = Date.UTC(2026, 10, 27, 6, 0, 0);

// The seeded generator of the benches' address lists: the file is the same on every machine.
const next = createPrng(20261127);
const random = () => next() / 4294967296;
const pick = (items) => items[Math.floor(random() * items.length)];

const RESOLVERS = [
  '8.8.8.8', '8.8.4.4', '1.1.1.1', '1.0.0.1', '9.9.9.9', '149.112.112.112',
  '208.67.222.222', '94.140.14.14', '77.88.8.8', '185.228.168.9',
  '2001:4860:4860::8888', '2606:4700:4700::1111', '2620:fe::fe',
];

/** A fixed set of visitors: every resolver, then 24 documentation addresses. */
const documentation = [
  ...Array.from({ length: 8 }, () => `192.0.2.${1 + Math.floor(random() * 254)}`),
  ...Array.from({ length: 6 }, () => `198.51.100.${1 + Math.floor(random() * 254)}`),
  ...Array.from({ length: 6 }, () => `203.0.113.${1 + Math.floor(random() * 254)}`),
  ...Array.from({ length: 4 }, () => `2001:db8:${Math.floor(random() * 0xffff).toString(16)}::${Math.floor(random() * 0xffff).toString(16)}`),
];
const visitors = [...new Set([...RESOLVERS, ...documentation])];
// Earlier visitors come more often, as the few regulars of a real log do.
const visitor = () => visitors[Math.floor(visitors.length * random() ** 1.6)];

const PAGES = ['/', '/', '/', '/about', '/blog/', '/blog/dns-over-https', '/blog/spf-lookup-limit', '/contact', '/feed.xml', '/robots.txt', '/favicon.ico', '/static/site.css', '/static/app.js', '/login', '/wp-login.php', '/.env'];
const AGENTS = [
  'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  'curl/8.5.0',
  'Feedreader/2.1 (+https://feeds.example.net/bot)',
];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** `27/Nov/2026:06:00:00 +0000`, the time form of the combined log format. */
function logTime(ms) {
  const d = new Date(ms);
  const two = (n) => String(n).padStart(2, '0');
  return `${two(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`;
}

function line(at) {
  const page = pick(PAGES);
  const status = page === '/wp-login.php' || page === '/.env' ? 404 : page === '/login' ? pick([200, 302]) : random() < 0.04 ? 304 : 200;
  const bytes = status === 304 || status === 302 ? 0 : 200 + Math.floor(random() * 24_000);
  const referer = random() < 0.3 ? `https://www.example.com${pick(PAGES)}` : '-';
  return `${visitor()} - - [${logTime(at)}] "GET ${page} HTTP/1.1" ${status} ${bytes} "${referer}" "${pick(AGENTS)}"`;
}

const lines = [];
let at = START;
for (let i = 0; i < LINES; i++) {
  at += Math.floor(random() * 90_000);
  lines.push(line(at));
}
const text = `${lines.join('\n')}\n`;

if (process.argv.includes('--stdout')) {
  process.stdout.write(text);
} else {
  const path = join(dirname(fileURLToPath(import.meta.url)), '..', 'examples', 'access.log');
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}
