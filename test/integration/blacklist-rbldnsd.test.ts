/**
 * netintel's blacklist check against a real DNSBL server: Debian's rbldnsd
 * (the daemon many public lists run) serving test zones on 127.0.0.1 at a
 * free port, in the foreground. Zones: an IPv4 list with per-entry codes and
 * TXT templates, its IPv6 data (ip6trie), a domain list (dnset, with a
 * wildcard), a zone that lists the whole world, and one without its RFC 5782
 * test point. The engine is asked in-process, then the built CLI as a
 * process (needs `npm run build`). Needs the Debian package rbldnsd; skipped,
 * with a warning, when it is missing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBlacklist, createBlacklistChecker } from '../../src/engine/blacklist/check-blacklist.js';
import { createEngineContext } from '../../src/engine/context.js';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { REPO_ROOT, spawnCli } from '../support/cli.js';
import { findExecutable } from '../support/peers.js';

const RBLDNSD = findExecutable('rbldnsd');
if (!RBLDNSD) {
  console.warn('SKIPPING test/integration/blacklist-rbldnsd.test.ts: rbldnsd (Debian package rbldnsd) not found on PATH or in /usr/sbin');
}

// rbldnsd's own data formats: ":A:TXT" sets the default answer, "$" in a TXT
// template is replaced by the address or name asked about.
const FILES: Record<string, string> = {
  'bl.zone': [
    ':127.0.0.2:Listed by bl.rbl.test: $',
    '127.0.0.2',
    '192.0.2.99',
    '198.51.100.0/24 :127.0.0.4:Range listed: $',
  ].join('\n'),
  'bl6.zone': [':127.0.0.3:IPv6 listed: $', '2001:db8:bad::/48'].join('\n'),
  'dbl.zone': [':127.0.1.2:Domain listed: $', 'test', 'listed.example', '.spam.example'].join('\n'),
  'world.zone': '0.0.0.0-255.255.255.255',
  'empty.zone': [':127.0.0.2:listed', '192.0.2.99'].join('\n'),
};
const ZONES = [
  'bl.rbl.test:ip4set:bl.zone',
  'bl.rbl.test:ip6trie:bl6.zone',
  'dbl.rbl.test:dnset:dbl.zone',
  'world.rbl.test:ip4set:world.zone',
  'empty.rbl.test:ip4set:empty.zone',
];

async function freeUdpPort(): Promise<number> {
  const socket = dgram.createSocket('udp4');
  const port = await new Promise<number>((resolve) => socket.bind(0, '127.0.0.1', () => resolve(socket.address().port)));
  await new Promise<void>((resolve) => socket.close(() => resolve()));
  return port;
}

/** Starts rbldnsd in the foreground; resolves once it says it started. */
async function startRbldnsd(root: string): Promise<{ child: ChildProcess; address: string }> {
  for (let attempt = 0; ; attempt++) {
    const port = await freeUdpPort();
    // As root rbldnsd chroots (-r) and drops to its own user; chroot needs root, so others only change directory (-w).
    const where = process.getuid?.() === 0 ? ['-r', root, '-w', '/'] : ['-w', root];
    const child = spawn(RBLDNSD!, ['-n', '-b', `127.0.0.1/${port}`, ...where, '-t', '60', ...ZONES], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const started = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 5000);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (/started/.test(output)) {
          clearTimeout(timer);
          resolve(true);
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', () => {
        clearTimeout(timer);
        resolve(false);
      });
    });
    if (started) return { child, address: `127.0.0.1:${port}` };
    child.kill('SIGKILL');
    if (attempt >= 3) throw new Error(`rbldnsd did not start: ${output}`);
  }
}

describe.skipIf(!RBLDNSD)('blacklist checks against rbldnsd', () => {
  let root: string;
  let server: { child: ChildProcess; address: string };
  const context = (timeoutMs = 2000) => createEngineContext({ resolvers: [parseResolverAddress(server.address)], timeoutMs, dnsRetries: 1 });

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'netintel-rbldnsd-'));
    // rbldnsd started as root chroots there and drops to its own user, which must read the files.
    chmodSync(root, 0o755);
    for (const [name, text] of Object.entries(FILES)) {
      writeFileSync(join(root, name), `${text}\n`);
      chmodSync(join(root, name), 0o644);
    }
    server = await startRbldnsd(root);
  });

  afterAll(() => {
    server?.child.kill('SIGTERM');
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('reads an IPv4 listing: reversed octets, the return code, the TXT reason, test points passed', async () => {
    const result = await checkBlacklist(context(), '192.0.2.99', { zones: 'bl.rbl.test' });
    expect(result.zones).toEqual([
      expect.objectContaining({
        zone: 'bl.rbl.test',
        query: '99.2.0.192.bl.rbl.test',
        status: 'listed',
        return_codes: [{ address: '127.0.0.2', meaning: null }],
        reason: 'Listed by bl.rbl.test: 192.0.2.99',
        canary: 'passed',
        resolver: server.address,
      }),
    ]);
    expect(result.verdict).toMatchObject({ status: 'listed', listed_zones: 1, unchecked_zones: 0 });
  });

  it('reads a range listing with its own return code and reason', async () => {
    const result = await checkBlacklist(context(), '198.51.100.200', { zones: 'bl.rbl.test' });
    expect(result.zones[0]).toMatchObject({ status: 'listed', return_codes: [{ address: '127.0.0.4', meaning: null }], reason: 'Range listed: 198.51.100.200' });
  });

  it('calls an address absent from the list clean', async () => {
    const result = await checkBlacklist(context(), '192.0.2.1', { zones: 'bl.rbl.test' });
    expect(result.zones[0]).toMatchObject({ status: 'clean', return_codes: [], reason: null, canary: 'passed' });
    expect(result.verdict.status).toBe('clean');
  });

  it('asks an IPv6 address as reversed nibbles and reads the ip6trie listing', async () => {
    const result = await checkBlacklist(context(), '2001:db8:bad::25', { zones: 'bl.rbl.test:ipv6' });
    expect(result.zones[0]).toMatchObject({
      query: '5.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.d.a.b.0.8.b.d.0.1.0.0.2.bl.rbl.test',
      status: 'listed',
      return_codes: [{ address: '127.0.0.3', meaning: null }],
      reason: 'IPv6 listed: 2001:db8:bad::25',
    });
    const clean = await checkBlacklist(context(), '2001:db8:900d::25', { zones: 'bl.rbl.test:ipv6' });
    expect(clean.zones[0]!.status).toBe('clean');
  });

  it('reads a domain list, wildcard entries included, with its TEST / INVALID test points', async () => {
    const checker = await createBlacklistChecker(context(), { zones: 'dbl.rbl.test:domain' });
    try {
      const [listed, wildcard, clean] = await Promise.all(['listed.example', 'www.spam.example', 'good.example'].map((name) => checker.check(name)));
      expect(listed!.zones[0]).toMatchObject({ query: 'listed.example.dbl.rbl.test', status: 'listed', return_codes: [{ address: '127.0.1.2', meaning: null }], reason: 'Domain listed: listed.example', canary: 'passed' });
      expect(wildcard!.zones[0]!.status).toBe('listed');
      expect(clean!.zones[0]!.status).toBe('clean');
    } finally {
      await checker.close();
    }
  });

  it('does not trust a zone that lists the whole world (its 127.0.0.1 test point is listed)', async () => {
    const result = await checkBlacklist(context(), '192.0.2.1', { zones: 'world.rbl.test,bl.rbl.test' });
    expect(result.zones.map((row) => [row.zone, row.status, row.canary])).toEqual([
      ['world.rbl.test', 'error', 'failed'],
      ['bl.rbl.test', 'clean', 'passed'],
    ]);
    expect(result.verdict).toMatchObject({ status: 'incomplete', listings: 0, unchecked_zones: 1 });
  });

  it('does not trust a zone that does not list its 127.0.0.2 test point, even for a listed address', async () => {
    const result = await checkBlacklist(context(), '192.0.2.99', { zones: 'empty.rbl.test' });
    expect(result.zones[0]).toMatchObject({ status: 'error', canary: 'failed', return_codes: [{ address: '127.0.0.2', meaning: null }] });
    expect(result.verdict).toMatchObject({ status: 'unknown', listings: 0 });
  });

  it('reports a zone the server does not serve (REFUSED) as an error, not as clean', async () => {
    const result = await checkBlacklist(context(), '192.0.2.1', { zones: 'unknown.rbl.test' });
    expect(result.zones[0]!.status).toBe('error');
    expect(result.zones[0]!.detail).toMatch(/REFUSED/);
  });

  describe('the built CLI as a process', () => {
    beforeAll(() => {
      if (!existsSync(join(REPO_ROOT, 'dist', 'bundle', 'main.cjs'))) {
        throw new Error('dist/bundle/main.cjs is missing: run `npm run build` before the process tests');
      }
    });

    it('checks IPv4, IPv6 and domain targets given as arguments, one row each in order', async () => {
      const result = await spawnCli([
        'blacklist',
        '192.0.2.99',
        '2001:db8:bad::1',
        'listed.example',
        '192.0.2.1',
        '--zones',
        'bl.rbl.test:ipv6,dbl.rbl.test:domain',
        '--resolver',
        server.address,
        '-f',
        'ndjson',
      ]);
      // rbldnsd answers only its zones: the MX hosts of listed.example cannot be looked up through it, so that
      // target is checked in part (its domain zone answered), and the run exits 7 as a partial one.
      expect(result.code).toBe(7);
      const rows = result.stdout.trim().split('\n').map((line) => JSON.parse(line));
      expect(rows.map((row) => [row.target, row.verdict.status])).toEqual([
        ['192.0.2.99', 'listed'],
        ['2001:db8:bad::1', 'listed'],
        ['listed.example', 'listed'],
        ['192.0.2.1', 'clean'],
      ]);
      expect(rows.map((row) => row.verdict.failure?.code ?? null)).toEqual([null, null, 'upstream', null]);
    });

    it('reads targets from stdin, keeps input order, and exits 10 under --fail-on error', async () => {
      const input = ['192.0.2.1', '198.51.100.7', '# comment', '192.0.2.99'].join('\n');
      const result = await spawnCli(['blacklist', '--zones', 'bl.rbl.test', '--resolver', server.address, '-f', 'csv', '--fields', 'verdict', '--fail-on', 'error'], {
        input,
      });
      expect(result.code).toBe(10);
      const lines = result.stdout.trim().split('\n');
      expect(lines[0]).toBe(
        'query,target,verdict.status,verdict.listed_zones,verdict.listings,verdict.checked_zones,verdict.unchecked_zones,verdict.zones,verdict.message,verdict.failure.code,verdict.failure.reason,error.code,error.message',
      );
      expect(lines.slice(1).map((line) => line.split(',').slice(0, 3).join(','))).toEqual([
        '192.0.2.1,192.0.2.1,clean',
        '198.51.100.7,198.51.100.7,listed',
        '192.0.2.99,192.0.2.99,listed',
      ]);
      expect(result.stderr).toMatch(/3 \w+, 3 ok, 0 failed/);
    });
  });
});
