/**
 * The compiled signal index: containment answers for exact addresses, CIDR
 * edges, nested and overlapping entries, both families, in pread and memory
 * mode, checked against a brute-force scan; and its refusal of a broken file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseIpAddress } from '../../../src/engine/address/ip-address.js';
import { compileSignalIndex, type SignalSourceInput } from '../../../src/engine/security/compile-signal-index.js';
import { FeedEntries, parseFeed } from '../../../src/engine/security/feed-formats.js';
import { SignalIndex } from '../../../src/engine/security/signal-index.js';
import { NetintelError } from '../../../src/errors.js';
import { tempDir } from '../../support/cli.js';
import { compileFixtures } from './fixtures.js';

const scratch = tempDir('netintel-signal-index-');
afterAll(() => scratch.remove());

function source(name: string, text: string, signal = 'vpn_range', format: 'cidr-list' | 'proxy-list' | 'asn-list' = 'cidr-list'): SignalSourceInput {
  return {
    meta: { name, signal, provider: null, updated: '2026-11-20T00:00:00Z', version: null, licence: 'test', attribution: null },
    entries: parseFeed(format, text).entries,
  };
}

/** Both modes over the same compiled bytes. */
function openBoth(sources: SignalSourceInput[], name: string): SignalIndex[] {
  const path = join(scratch.path, `${name}.idx`);
  writeFileSync(path, compileSignalIndex(sources, new Date('2026-11-21T00:00:00Z')).bytes);
  return [SignalIndex.open(path, { mode: 'pread' }), SignalIndex.open(path, { mode: 'memory' })];
}

/** What matches an address: "source matched" per entry, sorted. */
function matches(index: SignalIndex, text: string): string[] {
  const address = parseIpAddress(text);
  const code = address.version === 4 ? index.v4SetAt(address.v4) : index.v6SetAt(address.bytes);
  return index
    .setEntries(code)
    .map((id) => index.entry(id))
    .map((entry) => `${index.meta.sources[entry.source]!.name} ${entry.matched}`)
    .sort();
}

describe('signal index lookups', () => {
  const indexes = openBoth(
    [
      source('tor', '185.220.101.1\n185.220.101.2\n2a0b:f4c2::1\n', 'tor_exit_list'),
      source('vpn', '45.83.104.0/24\n2001:ac8::/32\n0.0.0.0/32\n255.255.255.255\n'),
      source('dc', '45.83.0.0/16\n45.83.104.0/24\n185.220.101.0/24\n2001:ac8::/29\n', 'datacenter_range'),
      source('proxies', '45.83.104.20:8080\n45.83.104.20:3128\n', 'proxy_list', 'proxy-list'),
      source('asns', 'AS9009 # M247\nAS60729\n', 'vpn_asn', 'asn-list'),
      source('more-asns', '9009, "M247 Europe SRL"\n', 'hosting_asn', 'asn-list'),
    ],
    'mixed',
  );
  afterAll(() => indexes.forEach((index) => index.close()));

  for (const index of indexes) {
    describe(`${index.mode} mode`, () => {
      it('matches exact addresses and nothing next to them', () => {
        expect(matches(index, '185.220.101.1')).toEqual(['dc 185.220.101.0/24', 'tor 185.220.101.1']);
        expect(matches(index, '185.220.101.3')).toEqual(['dc 185.220.101.0/24']);
        expect(matches(index, '185.220.100.255')).toEqual([]);
      });

      it('matches the first and the last address of a CIDR, and not one beyond either edge', () => {
        expect(matches(index, '45.83.104.0')).toEqual(['dc 45.83.0.0/16', 'dc 45.83.104.0/24', 'vpn 45.83.104.0/24']);
        expect(matches(index, '45.83.104.255')).toEqual(['dc 45.83.0.0/16', 'dc 45.83.104.0/24', 'vpn 45.83.104.0/24']);
        expect(matches(index, '45.83.103.255')).toEqual(['dc 45.83.0.0/16']);
        expect(matches(index, '45.83.105.0')).toEqual(['dc 45.83.0.0/16']);
        expect(matches(index, '45.83.0.0')).toEqual(['dc 45.83.0.0/16']);
        expect(matches(index, '45.83.255.255')).toEqual(['dc 45.83.0.0/16']);
        expect(matches(index, '45.84.0.0')).toEqual([]);
        expect(matches(index, '45.82.255.255')).toEqual([]);
      });

      it('matches the ends of the address space', () => {
        expect(matches(index, '0.0.0.0')).toEqual(['vpn 0.0.0.0']);
        expect(matches(index, '0.0.0.1')).toEqual([]);
        expect(matches(index, '255.255.255.255')).toEqual(['vpn 255.255.255.255']);
        expect(matches(index, '255.255.255.254')).toEqual([]);
      });

      it('keeps every port of a proxy address', () => {
        expect(matches(index, '45.83.104.20')).toEqual([
          'dc 45.83.0.0/16',
          'dc 45.83.104.0/24',
          'proxies 45.83.104.20:3128',
          'proxies 45.83.104.20:8080',
          'vpn 45.83.104.0/24',
        ]);
      });

      it('matches IPv6 exact addresses and CIDR edges', () => {
        expect(matches(index, '2a0b:f4c2::1')).toEqual(['tor 2a0b:f4c2::1']);
        expect(matches(index, '2a0b:f4c2::2')).toEqual([]);
        expect(matches(index, '2001:ac8::')).toEqual(['dc 2001:ac8::/29', 'vpn 2001:ac8::/32']);
        expect(matches(index, '2001:ac8:ffff:ffff:ffff:ffff:ffff:ffff')).toEqual(['dc 2001:ac8::/29', 'vpn 2001:ac8::/32']);
        expect(matches(index, '2001:ac9::')).toEqual(['dc 2001:ac8::/29']);
        expect(matches(index, '2001:acf:ffff:ffff:ffff:ffff:ffff:ffff')).toEqual(['dc 2001:ac8::/29']);
        expect(matches(index, '2001:ad0::')).toEqual([]);
        expect(matches(index, '2001:ac7:ffff:ffff:ffff:ffff:ffff:ffff')).toEqual([]);
        expect(matches(index, '::')).toEqual([]);
        expect(matches(index, 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')).toEqual([]);
      });

      it('finds the entries naming an AS, with their labels', () => {
        const named = (asn: number) => index.asnEntries(asn).map((entry) => `${index.meta.sources[entry.source]!.name}:${entry.label}`);
        expect(named(9009)).toEqual(['asns:M247', 'more-asns:M247 Europe SRL']);
        expect(named(60729)).toEqual(['asns:null']);
        expect(named(15169)).toEqual([]);
        expect(named(0)).toEqual([]);
        expect(named(4294967295)).toEqual([]);
      });

      it('records each source with its entry count and date', () => {
        expect(index.meta.sources.map((s) => [s.name, s.signal, s.entries])).toEqual([
          ['tor', 'tor_exit_list', 3],
          ['vpn', 'vpn_range', 4],
          ['dc', 'datacenter_range', 4],
          ['proxies', 'proxy_list', 2],
          ['asns', 'vpn_asn', 2],
          ['more-asns', 'hosting_asn', 1],
        ]);
      });
    });
  }
});

describe('signal index against a brute-force scan', () => {
  it('answers 5,000 random addresses exactly as a linear scan over 1,500 random ranges would, in both modes', () => {
    let seed = 7;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed;
    };
    const ranges: Array<{ source: number; start: number; end: number }> = [];
    const sources: SignalSourceInput[] = [];
    for (let s = 0; s < 3; s++) {
      const entries = new FeedEntries();
      for (let i = 0; i < 500; i++) {
        // Clustered in 10.0.0.0/12 so that ranges overlap a lot, across and within sources.
        const prefix = 16 + (random() % 17);
        const size = 2 ** (32 - prefix);
        const start = 0x0a000000 + Math.floor((random() % 0x100000) / size) * size;
        entries.addV4(start, start + size - 1);
        ranges.push({ source: s, start, end: start + size - 1 });
      }
      sources.push({ meta: { name: `s${s}`, signal: 'vpn_range', provider: null, updated: null, version: null, licence: 'test', attribution: null }, entries });
    }
    const expectedAt = (address: number) =>
      [...new Set(ranges.filter((r) => r.start <= address && address <= r.end).map((r) => `${r.source}:${r.start}-${r.end}`))].sort();
    for (const index of openBoth(sources, 'random')) {
      for (let i = 0; i < 5000; i++) {
        const address = i % 4 === 0 ? ranges[random() % ranges.length]![random() % 2 === 0 ? 'start' : 'end'] + ((random() % 3) - 1) : 0x0a000000 + (random() % 0x100000);
        const got = index
          .setEntries(index.v4SetAt(address >>> 0))
          .map((id) => index.entry(id))
          .map((entry) => {
            const parsed = parseAddressText(entry.matched);
            return `${entry.source}:${parsed.start}-${parsed.end}`;
          })
          .sort();
        expect(got).toEqual(expectedAt(address >>> 0));
      }
      index.verify();
      index.close();
    }
  });
});

describe('IPv6 against a brute-force scan', () => {
  it('answers 2,000 random IPv6 addresses as a linear scan over 600 overlapping random prefixes would', () => {
    let seed = 11;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed;
    };
    const base = 0x2001_0db8n << 96n;
    const ranges: Array<{ source: number; start: bigint; end: bigint }> = [];
    const sources: SignalSourceInput[] = [];
    for (let s = 0; s < 2; s++) {
      const entries = new FeedEntries();
      for (let i = 0; i < 300; i++) {
        const prefix = 40 + (random() % 89);
        const size = 1n << BigInt(128 - prefix);
        const offset = (BigInt(random()) << 64n) | (BigInt(random()) << 32n) | BigInt(random());
        const start = base + ((offset % (1n << 96n)) / size) * size;
        entries.addV6(start, start + size - 1n);
        ranges.push({ source: s, start, end: start + size - 1n });
      }
      sources.push({ meta: { name: `v6-${s}`, signal: 'vpn_range', provider: null, updated: null, version: null, licence: 'test', attribution: null }, entries });
    }
    const toBytes = (value: bigint) => Uint8Array.from({ length: 16 }, (_, k) => Number((value >> BigInt(8 * (15 - k))) & 0xffn));
    for (const index of openBoth(sources, 'random-v6')) {
      for (let i = 0; i < 2000; i++) {
        const pick = ranges[random() % ranges.length]!;
        const address = i % 3 === 0 ? pick.start - 1n : i % 3 === 1 ? pick.end + (random() % 2 === 0 ? 0n : 1n) : pick.start + (pick.end - pick.start) / 2n;
        const expected = ranges.filter((r) => r.start <= address && address <= r.end).length;
        const got = index.setEntries(index.v6SetAt(toBytes(address))).length;
        expect(got).toBe(expected);
      }
      index.verify();
      index.close();
    }
  });
});

function parseAddressText(matched: string): { start: number; end: number } {
  const [base, prefix] = matched.split('/');
  const start = parseIpAddress(base!).v4;
  const size = prefix === undefined ? 1 : 2 ** (32 - Number(prefix));
  return { start, end: start + size - 1 };
}

describe('a broken or foreign index file', () => {
  const good = compileFixtures();

  function opening(bytes: Uint8Array, mode: 'pread' | 'memory'): NetintelError {
    const path = join(scratch.path, `broken-${mode}.idx`);
    writeFileSync(path, bytes);
    try {
      SignalIndex.open(path, { mode }).close();
    } catch (error) {
      expect(error).toBeInstanceOf(NetintelError);
      return error as NetintelError;
    }
    throw new Error('expected the index to be refused');
  }

  for (const mode of ['pread', 'memory'] as const) {
    it(`refuses a truncated file, another file type and a missing file with data_unavailable (${mode})`, () => {
      expect(opening(good.subarray(0, good.length - 16), mode).message).toMatch(/is invalid: file length \d+, header says \d+ \(truncated\?\)/);
      expect(opening(Buffer.from('not an index at all, but long enough to hold a header of some kind '.repeat(4)), mode).message).toMatch(/bad magic/);
      const missing = (() => {
        try {
          SignalIndex.open(join(scratch.path, 'missing.idx'), { mode });
        } catch (error) {
          return error as NetintelError;
        }
        throw new Error('expected an error');
      })();
      expect(missing.code).toBe('data_unavailable');
    });
  }

  it('verify() finds a segment table out of order', () => {
    const path = join(scratch.path, 'shuffled.idx');
    writeFileSync(path, good);
    const index = SignalIndex.open(path, { mode: 'memory' });
    index.close();
    const bytes = Buffer.from(readFileSync(path));
    // The second IPv4 segment start (section 1 at the offset in the section table) set below the first.
    const v4StartsOffset = bytes.readUInt32LE(24 + 8 * 1);
    bytes.writeUInt32LE(0, v4StartsOffset + 4);
    writeFileSync(path, bytes);
    const broken = SignalIndex.open(path, { mode: 'pread' });
    expect(() => broken.verify()).toThrow(/IPv4 segment 1 out of order/);
    broken.close();
  });
});
