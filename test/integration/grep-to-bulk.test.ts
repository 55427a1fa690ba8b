/**
 * `netintel grep -o | netintel bulk` through a real pipe: every address grep
 * prints is one bulk accepts, so the pipeline exits 0 with one row per line.
 * The built program in a child process: run `npm run build` first.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, isolatedEnv, REPO_ROOT, tempDir } from '../support/cli.js';
import { seededRandom } from '../support/seeded-random.js';

const scratch = tempDir();
afterAll(() => scratch.remove());

beforeAll(() => {
  if (!existsSync(join(REPO_ROOT, 'dist'))) throw new Error('dist/ is missing: run `npm run build` before the process tests');
});

/**
 * A seeded log of the shapes that put addresses next to other text: ports,
 * brackets, IPv4-mapped IPv6 (netstat, ss), zone indexes (ping6, ip -6),
 * mail headers, SIP's `addr:port:addr:port`, upper-case and full IPv6, and
 * noise that holds no address. Each line comes with the addresses grep -o
 * must print, in order.
 */
function generatedLog(lines: number, seed: number): { text: string; addresses: string[] } {
  const random = seededRandom(seed);
  const int = (n: number) => Math.floor(random() * n);
  const v4 = () => `${1 + int(223)}.${int(256)}.${int(256)}.${int(256)}`;
  const hex = () => int(65536).toString(16);
  const v6 = () => `2001:db8:${hex()}::${hex()}`;
  const port = () => String(1024 + int(64_000));
  const shapes: Array<() => [string, string[]]> = [
    () => {
      const [client, upstream] = [v4(), v4()];
      return [`${client} - - [27/Nov/2026:06:00:${10 + int(50)} +0000] "GET / HTTP/1.1" 200 12 upstream=${upstream}:${port()}`, [client, upstream]];
    },
    () => {
      const [local, remote] = [`::ffff:${v4()}`, `::ffff:${v4()}`];
      return [`tcp6       0      0 ${local}:22 ${remote}:${port()} ESTABLISHED`, [local, remote]];
    },
    () => {
      const address = v6();
      return [`proxy_pass https://[${address}]:${port()}/api;`, [address]];
    },
    () => {
      const address = `fe80::${hex()}%eth${int(4)}`;
      return [`64 bytes from ${address}: icmp_seq=${int(100)} ttl=64 time=0.0${int(90)} ms`, [address]];
    },
    () => {
      const [v6address, v4address] = [v6().toUpperCase(), v4()];
      return [`Received: from mx.example ([IPv6:${v6address}]) by relay.example ([${v4address}]);`, [v6address, v4address]];
    },
    () => {
      const [from, to] = [v4(), v4()];
      return [`INVITE ${from}:5060:${to}:5060 SIP/2.0`, [from, to]];
    },
    () => {
      const full = `2001:0db8:${hex()}:0000:0000:0000:0000:${hex()}`;
      return [`neighbour ${full} dev wlan0 lladdr 00:1a:2b:3c:4d:5e REACHABLE`, [full]];
    },
    () => [`at 10:30:00.123 version 1.2.3.4.5 std::vector Foo::bar 1.2.3.4:: 2001:db8::1:: x:::1.2.3.4`, []],
  ];
  let text = '';
  const addresses: string[] = [];
  for (let i = 0; i < lines; i++) {
    const [line, found] = shapes[int(shapes.length)]!();
    text += `${line}\n`;
    addresses.push(...found);
  }
  return { text, addresses };
}

/** Runs `grep -o LOG | bulk ARGS` in bash; the rows bulk printed and both exit codes. */
function pipe(log: string, bulkArgs: string[]): { grepCode: number; bulkCode: number; rows: Array<Record<string, unknown>>; stderr: string } {
  const script = `node "${BIN}" grep -o "${log}" | node "${BIN}" bulk ${bulkArgs.join(' ')}; echo "\${PIPESTATUS[0]} \${PIPESTATUS[1]}" >&2`;
  const run = spawnSync('bash', ['-c', script], { cwd: REPO_ROOT, encoding: 'utf8', env: { PATH: process.env.PATH, ...isolatedEnv() }, maxBuffer: 1 << 30 });
  const codes = /(\d+) (\d+)\n$/.exec(run.stderr);
  return {
    grepCode: Number(codes?.[1] ?? -1),
    bulkCode: Number(codes?.[2] ?? -1),
    rows: run.stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>),
    stderr: run.stderr,
  };
}

describe('netintel grep -o | netintel bulk', () => {
  it('looks up every address grep prints, zone indexes, mapped addresses and ports included: exit 0, one row per line', () => {
    const { text, addresses } = generatedLog(600, 20261129);
    const log = join(scratch.path, 'mixed.log');
    writeFileSync(log, text);
    const grep = spawnSync(process.execPath, [BIN, 'grep', '-o', log], { encoding: 'utf8', env: { PATH: process.env.PATH, ...isolatedEnv() } });
    expect(grep.stdout).toBe(addresses.map((address) => `${address}\n`).join(''));
    expect(addresses.some((address) => address.includes('%'))).toBe(true);
    expect(addresses.some((address) => address.startsWith('::ffff:'))).toBe(true);

    const { grepCode, bulkCode, rows, stderr } = pipe(log, ['-f', 'ndjson']);
    expect([grepCode, bulkCode]).toEqual([0, 0]);
    expect(stderr).toContain(`${addresses.length} rows, ${addresses.length} ok`);
    expect(rows).toHaveLength(addresses.length);
    expect(rows.filter((row) => 'error' in row)).toEqual([]);
    // A zone index is left out of the lookup; a mapped address is looked up as its IPv4 address.
    rows.forEach((row, i) => {
      const address = addresses[i]!;
      if (address.includes('%')) expect([row.ip, row.reserved]).toEqual([address.slice(0, address.indexOf('%')), 'link-local (RFC 4291)']);
      if (address.startsWith('::ffff:')) expect(row.ip).toBe(address.slice('::ffff:'.length));
    });
  });

  it('gives the same rows on worker threads, past the length a list starts them at', () => {
    const { text, addresses } = generatedLog(12_000, 7);
    const log = join(scratch.path, 'long.log');
    writeFileSync(log, text);
    const { grepCode, bulkCode, rows, stderr } = pipe(log, ['-f', 'ndjson', '--fields', 'ip', '--threads', '2', '-v']);
    expect([grepCode, bulkCode]).toEqual([0, 0]);
    const workersFrom = Number(/bulk: 1 worker thread from target (\d+) on/.exec(stderr)?.[1]);
    expect(addresses.length - workersFrom).toBeGreaterThan(5000);
    expect(rows.length).toBe(addresses.length);
    expect(rows.filter((row) => 'error' in row)).toEqual([]);
    const zoned = addresses.findLastIndex((address) => address.includes('%'));
    expect(zoned).toBeGreaterThan(workersFrom);
    expect(rows[zoned]).toEqual({ kind: 'ip', ip: addresses[zoned]!.slice(0, addresses[zoned]!.indexOf('%')) });
  });
});
