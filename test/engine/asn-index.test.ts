import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ipaddr from 'ipaddr.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AsnIndex, type AsnIndexMode } from '../../src/engine/asn/asn-index.js';
import { HeaderField, Section } from '../../src/engine/asn/asn-index-format.js';
import { ipv6ToText, parseIpv6Into } from '../../src/engine/address/ip-text.js';
import { compileAsnIndex } from '../../src/engine/asn/compile-asn-index.js';
import { cidrContaining, cidrContainingV4, rangeToCidrs, rangeToCidrsV4 } from '../../src/engine/address/range-to-cidrs.js';
import { NetintelError } from '../../src/errors.js';
import { seededRandom } from '../support/seeded-random.js';

const MODES: AsnIndexMode[] = ['pread', 'memory'];

function v4(text: string): number {
  return text.split('.').reduce((value, part) => value * 256 + Number(part), 0);
}

function bytesOf(text: string): Uint8Array {
  return Uint8Array.from(ipaddr.parse(text).toByteArray());
}

function expectDataUnavailable(open: () => unknown, pathInMessage: string): void {
  let caught: unknown;
  try {
    open();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(NetintelError);
  expect((caught as NetintelError).code).toBe('data_unavailable');
  expect((caught as NetintelError).message).toContain(pathInMessage);
}

const FIXTURE_V4 = [
  '1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."',
  '1.0.4.0,1.0.7.255,38803,Gtelecom Pty Ltd',
  '2.0.0.5,2.0.1.10,64500,"LLC ""SPUTNIK"", Moscow"',
  '10.0.0.0,10.255.255.255,64501,Container Net',
  '10.1.0.0,10.1.255.255,64502,Nested Net',
  '0.0.0.0,0.0.0.255,64504,Bottom',
  '255.255.255.0,255.255.255.255,64503,"Multi',
  'Line, Org"',
  'not-an-ip,1.2.3.4,64510,Broken',
  '3.0.0.0,3.0.0.255,AS64511,Bad ASN',
  '5.0.0.0,5.0.0.255,64512,One,Two',
  '6.0.0.255,6.0.0.0,64513,Backwards',
  '',
].join('\n');

const FIXTURE_V6 = [
  '2001:200::,2001:200:1b9:ffff:ffff:ffff:ffff:ffff,2500,WIDE Project',
  '2001:db8::1,2001:db8::ff,64505,"Doc, Net"',
  '2606:4700::,2606:4700:ffff:ffff:ffff:ffff:ffff:ffff,13335,"Cloudflare, Inc."',
  'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ff00,ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff,64506,Top6',
  '',
].join('\r\n');

describe('compiled ASN index on a fixture', () => {
  let dir: string;
  let indexFile: string;
  let result: Awaited<ReturnType<typeof compileAsnIndex>>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netintel-asn-'));
    writeFileSync(join(dir, 'v4.csv'), FIXTURE_V4);
    writeFileSync(join(dir, 'v6.csv'), FIXTURE_V6);
    indexFile = join(dir, 'out', 'asn.idx');
    result = await compileAsnIndex({
      v4Csv: join(dir, 'v4.csv'),
      v6Csv: join(dir, 'v6.csv'),
      outFile: indexFile,
      sourceVersion: 'test-1.2.3',
      builtAt: new Date('2026-01-02T03:04:05Z'),
      minRanges: { v4: 1, v6: 1 },
      maxMalformedRatio: 0.5,
    });
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('skips and counts malformed rows, resolves the nested range and reports what it wrote', () => {
    expect(result).toMatchObject({
      v4Ranges: 8,
      v6Ranges: 4,
      asns: 10,
      organizations: 10,
      malformedRows: 4,
      overlappingRows: 1,
    });
    expect(result.malformedSamples.map((sample) => sample.line)).toEqual([9, 10, 11, 12]);
    expect(result.bytes).toBe(readFileSync(indexFile).length);
    expect(readdirSync(join(dir, 'out'))).toEqual(['asn.idx']);
  });

  it('refuses to write an index from a suspiciously small source and leaves no file behind', async () => {
    const outFile = join(dir, 'small', 'asn.idx');
    await expect(
      compileAsnIndex({ v4Csv: join(dir, 'v4.csv'), v6Csv: join(dir, 'v6.csv'), outFile, sourceVersion: 'x', maxMalformedRatio: 0.5 }),
    ).rejects.toMatchObject({ code: 'data_unavailable' });
    await expect(
      compileAsnIndex({ v4Csv: join(dir, 'v4.csv'), v6Csv: join(dir, 'v6.csv'), outFile, sourceVersion: 'x', minRanges: { v4: 1, v6: 1 } }),
    ).rejects.toMatchObject({ code: 'data_unavailable', message: expect.stringContaining('malformed') });
    expect(() => readdirSync(join(dir, 'small'))).toThrow();
  });

  it('fails with data_unavailable naming a missing source file', async () => {
    const missing = join(dir, 'nope.csv');
    await expect(
      compileAsnIndex({ v4Csv: missing, v6Csv: join(dir, 'v6.csv'), outFile: join(dir, 'x.idx'), sourceVersion: 'x' }),
    ).rejects.toMatchObject({ code: 'data_unavailable', message: expect.stringContaining(missing) });
  });

  describe.each(MODES)('opened in %s mode', (mode) => {
    let index: AsnIndex;
    beforeAll(() => {
      index = AsnIndex.open(indexFile, { mode });
    });
    afterAll(() => index.close());

    it('answers on the first and last address of a range and null just outside', () => {
      const cloudflare = { version: 4, asn: 13335, organization: 'Cloudflare, Inc.', rangeStart: '1.0.0.0', rangeEnd: '1.0.0.255' };
      expect(index.findV4(v4('1.0.0.0'))).toEqual(cloudflare);
      expect(index.findV4(v4('1.0.0.255'))).toEqual(cloudflare);
      expect(index.find(bytesOf('1.0.0.128'))).toEqual(cloudflare);
      expect(index.findV4(v4('1.0.1.0'))).toBeNull();
      expect(index.findV4(v4('0.255.255.255'))).toBeNull();
      expect(index.findV4(v4('1.0.3.255'))).toBeNull();
      expect(index.findV4(v4('1.0.4.0'))?.asn).toBe(38803);
    });

    it('keeps a non-aligned range exact and unquotes organisation names', () => {
      expect(index.findV4(v4('2.0.0.4'))).toBeNull();
      expect(index.findV4(v4('2.0.0.5'))).toEqual({
        version: 4,
        asn: 64500,
        organization: 'LLC "SPUTNIK", Moscow',
        rangeStart: '2.0.0.5',
        rangeEnd: '2.0.1.10',
      });
      expect(index.findV4(v4('2.0.1.10'))?.asn).toBe(64500);
      expect(index.findV4(v4('2.0.1.11'))).toBeNull();
    });

    it('answers the nested range inside it and the container on both sides', () => {
      expect(index.findV4(v4('10.0.0.0'))).toMatchObject({ asn: 64501, rangeStart: '10.0.0.0', rangeEnd: '10.0.255.255' });
      expect(index.findV4(v4('10.0.255.255'))?.asn).toBe(64501);
      expect(index.findV4(v4('10.1.0.0'))).toMatchObject({ asn: 64502, organization: 'Nested Net', rangeEnd: '10.1.255.255' });
      expect(index.findV4(v4('10.1.255.255'))?.asn).toBe(64502);
      expect(index.findV4(v4('10.2.0.0'))).toMatchObject({ asn: 64501, rangeStart: '10.2.0.0', rangeEnd: '10.255.255.255' });
      expect(index.findV4(v4('10.255.255.255'))?.asn).toBe(64501);
      expect(index.findV4(v4('11.0.0.0'))).toBeNull();
      expect(index.findV4(v4('9.255.255.255'))).toBeNull();
    });

    it('covers both ends of the address space and a quoted name spanning two lines', () => {
      expect(index.findV4(0)?.asn).toBe(64504);
      expect(index.findV4(0xffff_ffff)).toMatchObject({ asn: 64503, organization: 'Multi\nLine, Org' });
      expect(index.find(bytesOf('::'))).toBeNull();
      expect(index.find(bytesOf('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'))?.asn).toBe(64506);
      expect(index.find(bytesOf('ffff:ffff:ffff:ffff:ffff:ffff:ffff:feff'))).toBeNull();
    });

    it('answers IPv6 on the first and last address of a range and null just outside', () => {
      const wide = { version: 6, asn: 2500, organization: 'WIDE Project', rangeStart: '2001:200::', rangeEnd: '2001:200:1b9:ffff:ffff:ffff:ffff:ffff' };
      expect(index.find(bytesOf('2001:200::'))).toEqual(wide);
      expect(index.find(bytesOf('2001:200:1b9:ffff:ffff:ffff:ffff:ffff'))).toEqual(wide);
      expect(index.find(bytesOf('2001:200:1ba::'))).toBeNull();
      expect(index.find(bytesOf('2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff'))).toBeNull();
      expect(index.find(bytesOf('2001:db8::'))).toBeNull();
      expect(index.find(bytesOf('2001:db8::1'))).toMatchObject({ asn: 64505, organization: 'Doc, Net', rangeEnd: '2001:db8::ff' });
      expect(index.find(bytesOf('2001:db8::100'))).toBeNull();
    });

    it('lists every range of an AS from the per-ASN section', () => {
      expect(index.prefixesOf(64501)).toEqual({
        asn: 64501,
        organization: 'Container Net',
        v4: [
          { start: '10.0.0.0', end: '10.0.255.255' },
          { start: '10.2.0.0', end: '10.255.255.255' },
        ],
        v6: [],
      });
      expect(index.prefixesOf(13335)).toEqual({
        asn: 13335,
        organization: 'Cloudflare, Inc.',
        v4: [{ start: '1.0.0.0', end: '1.0.0.255' }],
        v6: [{ start: '2606:4700::', end: '2606:4700:ffff:ffff:ffff:ffff:ffff:ffff' }],
      });
      expect(index.prefixesOf(1)).toBeNull();
      expect(index.prefixesOf(64510)).toBeNull();
      expect(() => index.prefixesOf(-1)).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    });

    it('offers the allocation-free path: a range index and accessors', () => {
      const i = index.indexOfV4(v4('2.0.0.200'));
      expect(i).toBeGreaterThanOrEqual(0);
      expect([index.v4StartAt(i), index.v4EndAt(i), index.asnAt(4, i), index.organizationAt(4, i)]).toEqual([
        v4('2.0.0.5'),
        v4('2.0.1.10'),
        64500,
        'LLC "SPUTNIK", Moscow',
      ]);
      expect(index.indexOfV4(v4('2.0.1.11'))).toBe(-1);
      expect([index.indexOfV4(-1), index.indexOfV4(2 ** 32), index.indexOfV4(Number.NaN)]).toEqual([-1, -1, -1]);
      const j = index.indexOfV6(bytesOf('2606:4700::1'));
      expect(ipv6ToText(index.v6StartAt(j))).toBe('2606:4700::');
      expect(index.asnAt(6, j)).toBe(13335);
    });

    it('carries the build metadata', () => {
      expect(index.metadata).toMatchObject({
        formatVersion: 1,
        source: '@ip-location-db/asn',
        sourceVersion: 'test-1.2.3',
        builtAt: '2026-01-02T03:04:05.000Z',
        v4Ranges: 8,
        v6Ranges: 4,
        asns: 10,
        organizations: 10,
        malformedRows: 4,
        overlappingRows: 1,
      });
    });

    it('rejects an address that is neither 4 nor 16 bytes', () => {
      expect(() => index.find(new Uint8Array(3))).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    });
  });

  describe.each(MODES)('a damaged file opened in %s mode', (mode) => {
    const damaged = (name: string, change: (bytes: Buffer) => Buffer): string => {
      const path = join(dir, `${mode}-${name}.idx`);
      writeFileSync(path, change(readFileSync(indexFile)));
      return path;
    };

    it('gives data_unavailable naming the path when the file is missing', () => {
      const path = join(dir, 'missing.idx');
      expectDataUnavailable(() => AsnIndex.open(path, { mode }), path);
    });

    it('gives data_unavailable when the file is truncated', () => {
      const half = damaged('truncated', (bytes) => bytes.subarray(0, bytes.length >> 1));
      expectDataUnavailable(() => AsnIndex.open(half, { mode }), half);
      const tiny = damaged('tiny', (bytes) => bytes.subarray(0, 20));
      expectDataUnavailable(() => AsnIndex.open(tiny, { mode }), tiny);
    });

    it('gives data_unavailable on a wrong magic or format version', () => {
      const magic = damaged('magic', (bytes) => Buffer.concat([Buffer.from('MMDBXXXX'), bytes.subarray(8)]));
      expectDataUnavailable(() => AsnIndex.open(magic, { mode }), magic);
      const version = damaged('version', (bytes) => {
        bytes.writeUInt32LE(99, HeaderField.VERSION);
        return bytes;
      });
      expectDataUnavailable(() => AsnIndex.open(version, { mode }), version);
    });

    it('gives data_unavailable on an empty file', () => {
      const empty = damaged('empty', () => Buffer.alloc(0));
      expectDataUnavailable(() => AsnIndex.open(empty, { mode }), empty);
    });
  });

  it.each(MODES)('finds ranges out of order when verified in %s mode', (mode) => {
    const path = join(dir, `${mode}-unsorted.idx`);
    const bytes = readFileSync(indexFile);
    const startsAt = bytes.readUInt32LE(HeaderField.SECTION_TABLE + 8 * Section.V4_STARTS);
    bytes.writeUInt32LE(0xffff_fff0, startsAt + 4);
    writeFileSync(path, bytes);
    const index = AsnIndex.open(path, { mode });
    try {
      expectDataUnavailable(() => index.verify(), path);
    } finally {
      index.close();
    }
    const good = AsnIndex.open(indexFile, { mode });
    expect(() => good.verify()).not.toThrow();
    good.close();
  });

  it.each(MODES)('refuses at open a table that does not end where its data does, in %s mode', (mode) => {
    const path = join(dir, `${mode}-orgs.idx`);
    const bytes = readFileSync(indexFile);
    const offsetsAt = bytes.readUInt32LE(HeaderField.SECTION_TABLE + 8 * Section.ORG_OFFSETS);
    const orgCount = bytes.readUInt32LE(HeaderField.ORG_COUNT);
    bytes.writeUInt32LE(1_000_000, offsetsAt + 4 * orgCount);
    writeFileSync(path, bytes);
    expectDataUnavailable(() => AsnIndex.open(path, { mode }), path);
  });
});

describe('rangeToCidrs', () => {
  it('gives one block for an aligned range', () => {
    expect(rangeToCidrs('1.0.0.0', '1.0.0.255')).toEqual(['1.0.0.0/24']);
    expect(rangeToCidrs('214.95.0.0', '214.255.255.255')).toEqual(['214.95.0.0/16', '214.96.0.0/11', '214.128.0.0/9']);
  });

  it('splits a non-aligned range into the minimal list of blocks', () => {
    expect(rangeToCidrs('2.0.0.5', '2.0.1.10')).toEqual([
      '2.0.0.5/32', '2.0.0.6/31', '2.0.0.8/29', '2.0.0.16/28', '2.0.0.32/27',
      '2.0.0.64/26', '2.0.0.128/25', '2.0.1.0/29', '2.0.1.8/31', '2.0.1.10/32',
    ]);
    const almostAll = rangeToCidrsV4(1, 0xffff_fffe);
    expect(almostAll).toHaveLength(62);
    expect(almostAll.slice(0, 2)).toEqual(['0.0.0.1/32', '0.0.0.2/31']);
    expect(almostAll.slice(-2)).toEqual(['255.255.255.252/31', '255.255.255.254/32']);
  });

  it('gives /0 for the whole space', () => {
    expect(rangeToCidrs('0.0.0.0', '255.255.255.255')).toEqual(['0.0.0.0/0']);
    expect(rangeToCidrs('::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff')).toEqual(['::/0']);
  });

  it('gives a host route for a single address', () => {
    expect(rangeToCidrs('8.8.8.8', '8.8.8.8')).toEqual(['8.8.8.8/32']);
    expect(rangeToCidrs('2001:db8::1', '2001:db8::1')).toEqual(['2001:db8::1/128']);
    expect(rangeToCidrs(bytesOf('255.255.255.255'), bytesOf('255.255.255.255'))).toEqual(['255.255.255.255/32']);
  });

  it('splits IPv6 ranges with 128-bit arithmetic', () => {
    expect(rangeToCidrs('2001:200::', '2001:200:1b9:ffff:ffff:ffff:ffff:ffff')).toEqual([
      '2001:200::/40', '2001:200:100::/41', '2001:200:180::/43', '2001:200:1a0::/44', '2001:200:1b0::/45', '2001:200:1b8::/47',
    ]);
    expect(rangeToCidrs('2001:db8::1', '2001:db8::ff')).toEqual([
      '2001:db8::1/128', '2001:db8::2/127', '2001:db8::4/126', '2001:db8::8/125',
      '2001:db8::10/124', '2001:db8::20/123', '2001:db8::40/122', '2001:db8::80/121',
    ]);
  });

  it('rejects a reversed range, mixed families and invalid addresses', () => {
    for (const [start, end] of [['1.0.0.1', '1.0.0.0'], ['1.0.0.0', '::1'], ['1.0.0', '1.0.0.1'], ['2001:db8::2', '2001:db8::1']] as const) {
      expect(() => rangeToCidrs(start, end)).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    }
  });
});

describe('cidrContaining', () => {
  it('gives the block of the split holding the address', () => {
    expect(cidrContaining('2.0.0.5', '2.0.1.10', '2.0.0.5')).toBe('2.0.0.5/32');
    expect(cidrContaining('2.0.0.5', '2.0.1.10', '2.0.0.200')).toBe('2.0.0.128/25');
    expect(cidrContaining('2.0.0.5', '2.0.1.10', '2.0.1.9')).toBe('2.0.1.8/31');
    expect(cidrContainingV4(0, 0xffff_ffff, v4('8.8.8.8'))).toBe('0.0.0.0/0');
    expect(cidrContaining('2001:200::', '2001:200:1b9:ffff:ffff:ffff:ffff:ffff', '2001:200:1b9::1')).toBe('2001:200:1b8::/47');
  });

  it('gives null for an address outside the range or of the other family', () => {
    expect(cidrContaining('2.0.0.5', '2.0.1.10', '2.0.0.4')).toBeNull();
    expect(cidrContaining('2.0.0.5', '2.0.1.10', '2.0.1.11')).toBeNull();
    expect(cidrContaining('2001:db8::1', '2001:db8::ff', '2001:db8::100')).toBeNull();
    expect(cidrContaining('2.0.0.5', '2.0.1.10', '::1')).toBeNull();
  });

  it('agrees with rangeToCidrs on every address of a non-aligned range', () => {
    const start = v4('2.0.0.5');
    const end = v4('2.0.1.10');
    const blocks = rangeToCidrsV4(start, end);
    for (let address = start; address <= end; address++) {
      const block = cidrContainingV4(start, end, address)!;
      expect(blocks).toContain(block);
      const [base, length] = block.split('/') as [string, string];
      expect(address - v4(base)).toBeLessThan(2 ** (32 - Number(length)));
      expect(address).toBeGreaterThanOrEqual(v4(base));
    }
  });
});

describe('IPv6 text encoding of the index', () => {
  it('round-trips with RFC 5952 text as ipaddr.js writes it', () => {
    const random = seededRandom(6);
    const bytes = new Uint8Array(16);
    for (let n = 0; n < 500; n++) {
      // Zero some groups so that runs of zeros of every length appear.
      for (let i = 0; i < 16; i += 2) {
        const zero = random() < 0.5;
        bytes[i] = zero ? 0 : Math.floor(random() * 256);
        bytes[i + 1] = zero ? 0 : Math.floor(random() * 256);
      }
      const expected = ipaddr.fromByteArray(Array.from(bytes)).toString();
      expect(ipv6ToText(bytes)).toBe(expected);
      const parsed = new Uint8Array(16);
      expect(parseIpv6Into(expected, parsed)).toBe(true);
      expect(parsed).toEqual(bytes);
    }
    const out = new Uint8Array(16);
    expect(parseIpv6Into('::ffff:192.0.2.1', out)).toBe(true);
    expect(ipv6ToText(out)).toBe('::ffff:c000:201');
    for (const bad of [':::', '1::2::3', '1:2:3:4:5:6:7:8:9', '12345::', 'fe80::1%eth0', '1.2.3.4::', ':1::2', 'g::1']) {
      expect(parseIpv6Into(bad, out), bad).toBe(false);
    }
  });
});

describe('the index compiled from @ip-location-db/asn', () => {
  const require = createRequire(import.meta.url);
  const sourceDir = dirname(require.resolve('@ip-location-db/asn/package.json'));
  let dir: string;
  let indexFile: string;
  const opened: AsnIndex[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netintel-asn-real-'));
    indexFile = join(dir, 'asn.idx');
    const started = performance.now();
    const result = await compileAsnIndex({
      v4Csv: join(sourceDir, 'asn-ipv4.csv'),
      v6Csv: join(sourceDir, 'asn-ipv6.csv'),
      outFile: indexFile,
      sourceVersion: (JSON.parse(readFileSync(join(sourceDir, 'package.json'), 'utf8')) as { version: string }).version,
    });
    console.log(`compiled the real ASN index in ${Math.round(performance.now() - started)} ms: ${JSON.stringify(result)}`);
    for (const mode of MODES) opened.push(AsnIndex.open(indexFile, { mode }));
  }, 120_000);

  afterAll(() => {
    for (const index of opened) index.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(MODES)('answers Google and Cloudflare in %s mode', (mode) => {
    const index = opened[MODES.indexOf(mode)]!;
    const google = index.findV4(v4('8.8.8.8'));
    expect(google?.asn).toBe(15169);
    expect(google?.organization).toMatch(/Google/);
    const google6 = index.find(bytesOf('2001:4860:4860::8888'));
    expect(google6?.asn).toBe(15169);
    expect(google6?.organization).toMatch(/Google/);
    expect(index.find(bytesOf('1.1.1.1'))?.asn).toBe(13335);
  });

  it.each(MODES)('lists the prefixes of AS15169 in %s mode', (mode) => {
    const index = opened[MODES.indexOf(mode)]!;
    const prefixes = index.prefixesOf(15169)!;
    expect(prefixes.organization).toMatch(/Google/);
    const google = v4('8.8.8.8');
    expect(prefixes.v4.some((range) => v4(range.start) <= google && google <= v4(range.end))).toBe(true);
    expect(prefixes.v6.length).toBeGreaterThan(0);
    expect(prefixes.v6.some((range) => range.start.startsWith('2001:4860:'))).toBe(true);
  });

  it('agrees with a plain scan of the CSV for 2,000 seeded random IPv4 addresses', () => {
    // Reference: parse the CSV naively and, for each address, scan every row; the
    // covering row with the greatest start (then the shortest) is the answer.
    const lines = readFileSync(join(sourceDir, 'asn-ipv4.csv'), 'utf8').split('\n').filter((line) => line !== '');
    const starts = new Float64Array(lines.length);
    const ends = new Float64Array(lines.length);
    const asns = new Float64Array(lines.length);
    const orgs: string[] = [];
    lines.forEach((line, i) => {
      const [start, end, asn] = line.split(',', 3) as [string, string, string];
      const org = line.slice(start.length + end.length + asn.length + 3);
      starts[i] = v4(start);
      ends[i] = v4(end);
      asns[i] = Number(asn);
      orgs.push(org.startsWith('"') ? org.slice(1, -1).replaceAll('""', '"') : org);
    });
    const reference = (address: number): number => {
      let best = -1;
      for (let i = 0; i < starts.length; i++) {
        if (starts[i]! <= address && address <= ends[i]! &&
            (best < 0 || starts[i]! > starts[best]! || (starts[i] === starts[best] && ends[i]! < ends[best]!))) best = i;
      }
      return best;
    };

    const random = seededRandom(20260617);
    const addresses: number[] = [];
    for (let n = 0; n < 1000; n++) addresses.push(Math.floor(random() * 2 ** 32));
    // As many again inside and at the edges of random rows, where mistakes hide.
    for (let n = 0; n < 1000; n++) {
      const row = Math.floor(random() * lines.length);
      const pick = n % 4;
      addresses.push(pick === 0 ? starts[row]! : pick === 1 ? ends[row]! : pick === 2 ? starts[row]! - 1 : Math.min(ends[row]! + 1, 2 ** 32 - 1));
    }
    let hits = 0;
    for (const address of addresses) {
      const row = reference(address);
      for (const index of opened) {
        const match = index.findV4(address);
        if (row < 0) {
          expect(match, `${address}`).toBeNull();
          continue;
        }
        expect(match, `${address}`).not.toBeNull();
        expect([match!.asn, match!.organization]).toEqual([asns[row], orgs[row] === '' ? null : orgs[row]]);
        const [start, end] = [v4(match!.rangeStart), v4(match!.rangeEnd)];
        expect(start <= address && address <= end && start >= starts[row]! && end <= ends[row]!).toBe(true);
      }
      if (row >= 0) hits++;
    }
    expect(hits).toBeGreaterThan(1000);
  }, 60_000);

  it('reports pread open and lookup time and memory-mode lookups per second', () => {
    const started = performance.now();
    const index = AsnIndex.open(indexFile, { mode: 'pread' });
    const openedAt = performance.now();
    const match = index.findV4(v4('8.8.8.8'));
    const lookedUpAt = performance.now();
    index.close();
    expect(match?.asn).toBe(15169);

    const memory = opened[MODES.indexOf('memory')]!;
    const random = seededRandom(1);
    const addresses = new Uint32Array(1_000_000);
    for (let i = 0; i < addresses.length; i++) addresses[i] = Math.floor(random() * 2 ** 32);
    let found = 0;
    const bulkStart = performance.now();
    for (let i = 0; i < addresses.length; i++) if (memory.indexOfV4(addresses[i]!) >= 0) found++;
    const indexSeconds = (performance.now() - bulkStart) / 1000;
    const findStart = performance.now();
    for (let i = 0; i < addresses.length; i++) if (memory.findV4(addresses[i]!) !== null) found--;
    const findSeconds = (performance.now() - findStart) / 1000;
    expect(found).toBe(0);
    console.log(
      `pread open ${(openedAt - started).toFixed(2)} ms, first lookup ${(lookedUpAt - openedAt).toFixed(2)} ms; ` +
        `memory mode ${Math.round(addresses.length / indexSeconds).toLocaleString('en-US')} indexOfV4/s, ` +
        `${Math.round(addresses.length / findSeconds).toLocaleString('en-US')} findV4/s`,
    );
  }, 60_000);
});

const BUNDLED_INDEX = fileURLToPath(new URL('../../data/build/asn.idx', import.meta.url));

describe('data/build/asn.idx', () => {
  it.skipIf(!existsSync(BUNDLED_INDEX))('opens, when built, with the metadata of its source', () => {
    const index = AsnIndex.open(BUNDLED_INDEX);
    try {
      expect(index.metadata.source).toBe('@ip-location-db/asn');
      expect(index.findV4(v4('8.8.8.8'))?.asn).toBe(15169);
    } finally {
      index.close();
    }
  });
});
