import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { NetintelError } from '../../errors.js';
import type { MmdbMetadata } from './mmdb-file.js';

/**
 * The time zones of city records whose region spans several zones, compiled
 * at install time (scripts/build-region-codes.ts) into data/build/zones.idx.
 *
 * DB-IP Lite has no time zone field. A region whose every record lies in
 * one zone gets it from the region table; for the others the zone was
 * tz-lookup's answer at each record's coordinates, which needs its 73 KB
 * world map in every start-up that reaches it (half a millisecond of a
 * one-off lookup). Instead the build asks tz-lookup once for every record
 * of both city databases: the region table names each such region's most
 * common zone (RegionTable.majorityZone), and this file lists the records,
 * by their offset in the data section, whose zone differs from it (about
 * 6,000 per database), with that zone or none. The answers are exactly
 * tz-lookup's, for a city database the file was built from; for another
 * (a newer one in the data dir) `forDatabase` gives null and the lookup
 * asks tz-lookup as before.
 *
 * Layout (little-endian): a 64-byte header (magic, version, the zone names'
 * section, and per tree (IPv4, IPv6) the database's build epoch and node
 * count, the entry count, where its entries start and the shift that
 * buckets an offset); then each tree's 257 bucket starts (entry indexes:
 * the entries of offsets with `offset >>> shift === b` are those from
 * starts[b] to starts[b + 1]); then each tree's entries, sorted by offset,
 * as [u32 offset, u32 zone] where the zone is (name offset << 8 | name
 * length) in the names section, or NO_ZONE; then the names, UTF-8. A
 * lookup reads the header with both bucket tables, then one bucket, then
 * one name: three positioned reads.
 */

const MAGIC = 'NIZX';
const FORMAT_VERSION = 1;
const HEADER_BYTES = 64;
const BUCKETS = 256;
const BUCKET_TABLE_BYTES = 4 * (BUCKETS + 1);
const ENTRY_BYTES = 8;
const NO_ZONE = 0xffff_ffff;
/** Header offset of each tree's fields: build epoch (f64), node count, entry count, entries offset, shift (u32). */
const TREE_FIELDS = [16, 40] as const;

/** The database a tree's entries were computed from: a record offset means nothing in another. */
export interface ZoneTreeIdentity {
  buildEpochSeconds: number;
  nodeCount: number;
}

export interface ZoneTreeInput {
  identity: ZoneTreeIdentity;
  /** Record offset and its zone (null: the record has none), for the records whose zone is not their region's majority. */
  exceptions: ReadonlyArray<readonly [offset: number, zone: string | null]>;
}

/** The file's bytes for the two trees' exceptions. */
export function compileZoneExceptions(trees: { v4: ZoneTreeInput; v6: ZoneTreeInput }): Uint8Array {
  const names = new Map<string, number>();
  const nameBytes: Buffer[] = [];
  let namesLength = 0;
  const zoneRef = (zone: string | null): number => {
    if (zone === null) return NO_ZONE;
    let ref = names.get(zone);
    if (ref === undefined) {
      const bytes = Buffer.from(zone, 'utf8');
      if (bytes.length > 0xff) throw new Error(`time zone name too long: ${zone}`);
      ref = ((namesLength << 8) | bytes.length) >>> 0;
      names.set(zone, ref);
      nameBytes.push(bytes);
      namesLength += bytes.length;
    }
    return ref;
  };
  const sorted = [trees.v4, trees.v6].map((tree) => [...tree.exceptions].sort((a, b) => a[0] - b[0]));
  const entriesAt: number[] = [];
  let at = HEADER_BYTES + 2 * BUCKET_TABLE_BYTES;
  for (const entries of sorted) {
    entriesAt.push(at);
    at += ENTRY_BYTES * entries.length;
  }
  const namesAt = at;
  const file = Buffer.alloc(namesAt);
  file.write(MAGIC, 0, 'latin1');
  file.writeUInt32LE(FORMAT_VERSION, 4);
  file.writeUInt32LE(namesAt, 8);
  [trees.v4, trees.v6].forEach((tree, t) => {
    const entries = sorted[t]!;
    const largest = entries.length > 0 ? entries[entries.length - 1]![0] : 0;
    // The fewest bits that leave every offset in one of the buckets.
    let shift = 0;
    while (largest >>> shift >= BUCKETS) shift += 1;
    const field = TREE_FIELDS[t]!;
    file.writeDoubleLE(tree.identity.buildEpochSeconds, field);
    file.writeUInt32LE(tree.identity.nodeCount, field + 8);
    file.writeUInt32LE(entries.length, field + 12);
    file.writeUInt32LE(entriesAt[t]!, field + 16);
    file.writeUInt32LE(shift, field + 20);
    const buckets = HEADER_BYTES + t * BUCKET_TABLE_BYTES;
    let next = 0;
    for (let b = 0; b <= BUCKETS; b++) {
      while (next < entries.length && entries[next]![0] >>> shift < b) next += 1;
      file.writeUInt32LE(next, buckets + 4 * b);
    }
    entries.forEach(([offset, zone], i) => {
      if (i > 0 && entries[i - 1]![0] === offset) throw new Error(`record offset ${offset} listed twice`);
      file.writeUInt32LE(offset, entriesAt[t]! + ENTRY_BYTES * i);
      file.writeUInt32LE(zoneRef(zone), entriesAt[t]! + ENTRY_BYTES * i + 4);
    });
  });
  return Buffer.concat([file, ...nameBytes]);
}

/** The listed zones of one tree, for the database it was built from. */
export interface ZoneExceptionList {
  /** The record's zone when it is listed (null: it has none), undefined when it has its region's majority zone. */
  zoneAt(offset: number): string | null | undefined;
}

interface Tree {
  identity: ZoneTreeIdentity;
  count: number;
  entriesAt: number;
  shift: number;
  /** Where its bucket starts are in the header bytes. */
  bucketsAt: number;
}

/** data/build/zones.idx, read with positioned reads (one-off lookups) or whole (bulk runs). */
export class ZoneExceptions {
  /**
   * The header and both trees' bucket starts. Read through a DataView: its
   * methods are V8's own, where a first call of Buffer's readers or of
   * toString costs tens of microseconds each in a one-off lookup.
   */
  private readonly head: DataView;
  private readonly trees: readonly [Tree, Tree];
  private readonly namesAt: number;
  private readonly lists: Array<ZoneExceptionList | null | undefined> = [];
  private readonly names = new Map<number, string>();

  /** `read` gives `length` bytes at `position`, fewer at the end of the file. */
  private constructor(
    private readonly path: string,
    private readonly read: (position: number, length: number) => Buffer,
    private readonly closeFile: () => void,
  ) {
    const bytes = this.bytes(0, HEADER_BYTES + 2 * BUCKET_TABLE_BYTES);
    const head = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    const u32 = (at: number): number => head.getUint32(at, true);
    for (let i = 0; i < MAGIC.length; i++) if (head.getUint8(i) !== MAGIC.charCodeAt(i)) throw this.corrupt('not a zone exception file');
    if (u32(4) !== FORMAT_VERSION) throw this.corrupt(`format version ${u32(4)}, expected ${FORMAT_VERSION}`);
    const namesAt = u32(8);
    const treeAt = (t: 0 | 1): Tree => {
      const field = TREE_FIELDS[t];
      const tree = {
        identity: { buildEpochSeconds: head.getFloat64(field, true), nodeCount: u32(field + 8) },
        count: u32(field + 12),
        entriesAt: u32(field + 16),
        shift: u32(field + 20),
        bucketsAt: HEADER_BYTES + t * BUCKET_TABLE_BYTES,
      };
      if (tree.shift > 31 || u32(tree.bucketsAt + 4 * BUCKETS) !== tree.count || tree.entriesAt + ENTRY_BYTES * tree.count > namesAt) {
        throw this.corrupt(`IPv${t === 0 ? 4 : 6} entries out of bounds`);
      }
      return tree;
    };
    this.head = head;
    this.trees = [treeAt(0), treeAt(1)];
    this.namesAt = namesAt;
  }

  static open(path: string, mode: 'pread' | 'memory'): ZoneExceptions {
    try {
      if (mode === 'memory') {
        const file = readFileSync(path);
        return new ZoneExceptions(path, (position, length) => file.subarray(position, position + length), () => {});
      }
      const fd = openSync(path, 'r');
      try {
        const read = (position: number, length: number): Buffer => {
          const bytes = Buffer.allocUnsafe(length);
          const got = readSync(fd, bytes, 0, length, position);
          return got === length ? bytes : bytes.subarray(0, got);
        };
        return new ZoneExceptions(path, read, () => closeSync(fd));
      } catch (error) {
        closeSync(fd);
        throw error;
      }
    } catch (error) {
      if (error instanceof NetintelError) throw error;
      throw new NetintelError('data_unavailable', `cannot read the time zone table ${path}: run "npm run build:data"`, {
        cause: error,
        details: { path },
      });
    }
  }

  /** The list for a city database, or null when this file was built from another one. */
  forDatabase(metadata: Pick<MmdbMetadata, 'ipVersion' | 'buildEpoch' | 'nodeCount'>): ZoneExceptionList | null {
    const t = metadata.ipVersion === 4 ? 0 : 1;
    let list = this.lists[t];
    if (list === undefined) {
      const tree = this.trees[t];
      const matches = tree.identity.buildEpochSeconds === metadata.buildEpoch.getTime() / 1000 && tree.identity.nodeCount === metadata.nodeCount;
      list = matches ? { zoneAt: (offset) => this.zoneAt(tree, offset) } : null;
      this.lists[t] = list;
    }
    return list;
  }

  close(): void {
    this.closeFile();
  }

  private zoneAt(tree: Tree, offset: number): string | null | undefined {
    const bucket = offset >>> tree.shift;
    if (!(offset >= 0) || bucket >= BUCKETS) return undefined;
    const first = this.head.getUint32(tree.bucketsAt + 4 * bucket, true);
    const count = this.head.getUint32(tree.bucketsAt + 4 * bucket + 4, true) - first;
    if (count <= 0) return undefined;
    if (first + count > tree.count) throw this.corrupt('bucket out of bounds');
    const bytes = this.bytes(tree.entriesAt + ENTRY_BYTES * first, ENTRY_BYTES * count);
    const entries = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    let lo = 0;
    let hi = count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const at = entries.getUint32(ENTRY_BYTES * mid, true);
      if (at === offset) return this.zoneName(entries.getUint32(ENTRY_BYTES * mid + 4, true));
      if (at < offset) lo = mid + 1;
      else hi = mid;
    }
    return undefined;
  }

  private zoneName(ref: number): string | null {
    if (ref === NO_ZONE) return null;
    let name = this.names.get(ref);
    if (name === undefined) {
      name = this.bytes(this.namesAt + (ref >>> 8), ref & 0xff).toString('utf8');
      this.names.set(ref, name);
    }
    return name;
  }

  private bytes(position: number, length: number): Buffer {
    const bytes = this.read(position, length);
    if (bytes.length !== length) throw this.corrupt('truncated');
    return bytes;
  }

  private corrupt(why: string): NetintelError {
    return new NetintelError('data_unavailable', `${this.path} is not a valid time zone table (${why}): run "npm run build:data"`, {
      details: { path: this.path },
    });
  }
}
