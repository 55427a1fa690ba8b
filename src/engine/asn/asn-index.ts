import { NetintelError } from '../../errors.js';
import { openDataFile, type DataFile } from '../dataset/data-file-reader.js';
import { SectionReader } from '../dataset/section-file.js';
import {
  decodeHeader,
  HEADER_BYTES,
  type Header,
  Section,
  type SectionId,
  type StoredMetadata,
  V4_BUCKET_ENTRIES,
  V4_BUCKET_SHIFT,
  V6_BYTES,
} from './asn-index-format.js';
import { v4ToText } from '../address/ip-address.js';
import { ipv6ToText } from '../address/ip-text.js';

/**
 * Reader of the compiled ASN index (layout in `asn-index-format.ts`).
 *
 * Two modes over the same file (both opened through `openDataFile`):
 * - `pread` (default): opening reads the header, the metadata and a few
 *   closing entries, nothing else; each lookup is a binary search by
 *   positioned reads (for IPv4: the bucket, one block of starts, then the
 *   fields of the range, under ten small `pread` calls). For the CLI's
 *   one-off lookups, where loading the 17 MB file would dominate the run.
 * - `memory`: the whole file is read once and searched through typed-array
 *   views; lookups do no I/O and, through `indexOfV4` and the accessors, no
 *   allocation. For bulk runs and the server.
 *
 * Lookups are synchronous in both modes.
 */

/** How the index is read: positioned reads per lookup, or loaded whole. */
export type AsnIndexMode = 'pread' | 'memory';

/** Options of `AsnIndex.open`. */
export interface AsnIndexOpenOptions {
  /** Default `pread`. */
  mode?: AsnIndexMode;
}

/** Facts about the index and the data it was compiled from. */
export interface AsnIndexMetadata extends StoredMetadata {
  formatVersion: number;
  /** Size of the index file in bytes. */
  fileBytes: number;
  v4Ranges: number;
  v6Ranges: number;
  asns: number;
  organizations: number;
}

/** The range of the index holding an address, and who announces it. */
export interface AsnMatch {
  version: 4 | 6;
  /** Autonomous system number. */
  asn: number;
  /** Name of the organisation holding the AS; null when the source has none. */
  organization: string | null;
  /** First address of the range (dotted quad, or RFC 5952 IPv6 text). */
  rangeStart: string;
  /** Last address of the range, inclusive. */
  rangeEnd: string;
}

/** An inclusive address range as text. */
export interface AsnRange {
  start: string;
  end: string;
}

/** Every range an AS holds in the index, in address order. */
export interface AsnPrefixes {
  asn: number;
  organization: string | null;
  v4: AsnRange[];
  v6: AsnRange[];
}

/** The last AS number: they are four octets (RFC 6793). */
export const MAX_ASN = 0xffff_ffff;

const NAMES = { kind: 'ASN index', remedy: 'build it with `npm run build:data`' };
const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
/** Once its window is this many bytes or fewer, a pread search reads the window in one call. */
const PREAD_WINDOW_BYTES = 4096;

/** The compiled ASN index, open for lookups. See the module comment for the two modes. */
export class AsnIndex {
  /** Path the index was opened from. */
  readonly path: string;
  readonly mode: AsnIndexMode;
  readonly metadata: AsnIndexMetadata;
  /** Number of IPv4 ranges; valid range indices are `0 .. v4Count - 1`. */
  readonly v4Count: number;
  /** Number of IPv6 ranges. */
  readonly v6Count: number;

  private readonly header: Header;
  private readonly data: DataFile;
  private readonly memory: MemoryViews | null;
  /** Section reads through `data` (pread mode). */
  private readonly file: SectionReader | null;
  /** Decoded organisation names by id (memory mode): one string per organisation, not per lookup. */
  private readonly organizations: Array<string | null | undefined>;
  private readonly v6Words = new Uint32Array(4);
  private closed = false;

  private constructor(data: DataFile, header: Header, stored: StoredMetadata, memory: MemoryViews | null) {
    this.path = data.path;
    this.mode = data.mode;
    this.data = data;
    this.header = header;
    this.memory = memory;
    this.file = memory === null ? new SectionReader(data, header.sections, (reason) => corrupt(data.path, reason), PREAD_WINDOW_BYTES) : null;
    this.v4Count = header.v4Count;
    this.v6Count = header.v6Count;
    this.organizations = memory === null ? [] : new Array<string | null | undefined>(header.orgCount);
    this.metadata = {
      ...stored,
      formatVersion: header.version,
      fileBytes: header.fileBytes,
      v4Ranges: header.v4Count,
      v6Ranges: header.v6Count,
      asns: header.asnCount,
      organizations: header.orgCount,
    };
  }

  /**
   * Opens an index file. In `memory` mode the file is read whole; in `pread`
   * mode only the header, the metadata and the entries that close each table
   * are read. Throws `data_unavailable` naming the path when the file is
   * missing, unreadable, truncated, not an ASN index, of another format
   * version, or inconsistent in its structure (`verify` checks every entry).
   */
  static open(path: string, options: AsnIndexOpenOptions = {}): AsnIndex {
    const data = openDataFile(path, options.mode ?? 'pread', NAMES);
    try {
      const header = decodeHeader(data.read(0, Math.min(HEADER_BYTES, data.size)), data.size);
      if (typeof header === 'string') throw corrupt(path, header);
      const [metaOffset, metaBytes] = header.sections[Section.METADATA]!;
      const stored = decodeMetadata(path, data.read(metaOffset, metaBytes));
      const index = new AsnIndex(data, header, stored, data.mode === 'memory' ? memoryViews(data.whole(), header) : null);
      index.checkStructure();
      return index;
    } catch (error) {
      data.close();
      throw error instanceof NetintelError ? error : corrupt(path, String(error));
    }
  }

  /**
   * Checks every entry of the index against the invariants lookups rely on
   * (ranges sorted and disjoint, buckets consistent, every id and offset in
   * bounds), reading the whole file in pread mode. The compiler runs it on
   * each new index before that replaces the old one, not every open. Throws
   * `data_unavailable` naming the problem.
   */
  verify(): void {
    this.assertOpen();
    const memory = this.memory ?? memoryViews(this.data.whole(), this.header);
    const problem = checkEntries(this.header, memory);
    if (problem !== null) throw corrupt(this.path, problem);
  }

  /**
   * The range holding an IPv4 address given as an unsigned 32-bit integer
   * (`1.2.3.4` is `0x01020304`), or null when no range of the index holds it.
   */
  findV4(address: number): AsnMatch | null {
    const index = this.indexOfV4(address);
    return index < 0 ? null : this.rangeAt(4, index);
  }

  /**
   * The range holding an address given as 4 (IPv4) or 16 (IPv6)
   * network-order bytes, or null. An IPv4-mapped IPv6 address is looked up
   * as IPv6: unwrap it first. Throws `invalid_input` for any other length.
   */
  find(address: Uint8Array): AsnMatch | null {
    if (address.length === 4) return this.findV4(((address[0]! << 24) | (address[1]! << 16) | (address[2]! << 8) | address[3]!) >>> 0);
    if (address.length === V6_BYTES) {
      const index = this.indexOfV6(address);
      return index < 0 ? null : this.rangeAt(6, index);
    }
    throw new NetintelError('invalid_input', `an IP address has 4 or 16 bytes, not ${address.length}`);
  }

  /**
   * Index of the IPv4 range holding `address` (unsigned 32-bit integer), or
   * -1 (also for a value outside 0..2^32-1). Allocation-free in memory
   * mode: the bulk path pairs it with `asnAt`, `organizationAt`, `v4StartAt`
   * and `v4EndAt`.
   */
  indexOfV4(address: number): number {
    this.assertOpen();
    if (!(address >= 0 && address <= 0xffff_ffff)) return -1;
    const memory = this.memory;
    if (memory !== null) {
      const starts = memory.v4Starts;
      const bucket = address >>> V4_BUCKET_SHIFT;
      let lo = memory.v4Buckets[bucket]!;
      let hi = memory.v4Buckets[bucket + 1]!;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (starts[mid]! <= address) lo = mid + 1;
        else hi = mid;
      }
      return lo > 0 && memory.v4Ends[lo - 1]! >= address ? lo - 1 : -1;
    }
    const file = this.file!;
    const bucket = file.read(Section.V4_BUCKETS, 4 * (address >>> V4_BUCKET_SHIFT), 8);
    const lo = bucket.readUInt32LE(0);
    const hi = bucket.readUInt32LE(4);
    if (lo > hi || hi > this.v4Count) throw corrupt(this.path, 'IPv4 bucket out of bounds');
    const i = file.upperBoundU32(Section.V4_STARTS, lo, hi, address) - 1;
    return i >= 0 && file.u32(Section.V4_ENDS, i) >= address ? i : -1;
  }

  /** Index of the IPv6 range holding the 16 network-order bytes at `offset` of `address`, or -1. */
  indexOfV6(address: Uint8Array, offset = 0): number {
    this.assertOpen();
    const words = this.v6Words;
    for (let k = 0; k < 4; k++) {
      const at = offset + 4 * k;
      words[k] = ((address[at]! << 24) | (address[at + 1]! << 16) | (address[at + 2]! << 8) | address[at + 3]!) >>> 0;
    }
    const memory = this.memory;
    if (memory !== null) {
      const { view, v6StartsAt, v6EndsAt } = memory;
      let lo = 0;
      let hi = this.v6Count;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (compareV6(view, v6StartsAt + V6_BYTES * mid, words) <= 0) lo = mid + 1;
        else hi = mid;
      }
      return lo > 0 && compareV6(view, v6EndsAt + V6_BYTES * (lo - 1), words) >= 0 ? lo - 1 : -1;
    }
    const file = this.file!;
    const compare = (bytes: Buffer, at: number) => compareV6(new DataView(bytes.buffer, bytes.byteOffset, bytes.length), at, words);
    const i = file.upperBound(Section.V6_STARTS, 0, this.v6Count, V6_BYTES, compare) - 1;
    return i >= 0 && compare(file.read(Section.V6_ENDS, V6_BYTES * i, V6_BYTES), 0) >= 0 ? i : -1;
  }

  /** The ASN of range `index` of the given family. */
  asnAt(version: 4 | 6, index: number): number {
    this.checkIndex(version, index);
    const memory = this.memory;
    if (memory !== null) return (version === 4 ? memory.v4Asns : memory.v6Asns)[index]!;
    return this.file!.u32(version === 4 ? Section.V4_ASNS : Section.V6_ASNS, index);
  }

  /** The organisation of range `index` of the given family (null when unknown). */
  organizationAt(version: 4 | 6, index: number): string | null {
    this.checkIndex(version, index);
    const memory = this.memory;
    const org =
      memory !== null
        ? (version === 4 ? memory.v4Orgs : memory.v6Orgs)[index]!
        : this.file!.u32(version === 4 ? Section.V4_ORGS : Section.V6_ORGS, index);
    return this.organization(org);
  }

  /** First address of IPv4 range `index`, as an unsigned 32-bit integer. */
  v4StartAt(index: number): number {
    this.checkIndex(4, index);
    return this.memory !== null ? this.memory.v4Starts[index]! : this.file!.u32(Section.V4_STARTS, index);
  }

  /** Last address of IPv4 range `index`, inclusive. */
  v4EndAt(index: number): number {
    this.checkIndex(4, index);
    return this.memory !== null ? this.memory.v4Ends[index]! : this.file!.u32(Section.V4_ENDS, index);
  }

  /** First address of IPv6 range `index`, as 16 network-order bytes (a copy). */
  v6StartAt(index: number): Uint8Array {
    return this.v6Bytes(Section.V6_STARTS, index);
  }

  /** Last address of IPv6 range `index`, inclusive (a copy). */
  v6EndAt(index: number): Uint8Array {
    return this.v6Bytes(Section.V6_ENDS, index);
  }

  /** The full record of range `index` of the given family. */
  rangeAt(version: 4 | 6, index: number): AsnMatch {
    const asn = this.asnAt(version, index);
    const organization = this.organizationAt(version, index);
    const { rangeStart, rangeEnd } = this.rangeText(version, index);
    return { version, asn, organization, rangeStart, rangeEnd };
  }

  /**
   * Every range of the index announced by `asn`, with its organisation, or
   * null when the AS holds none. Answered from the per-ASN section, without
   * a scan. Throws `invalid_input` when `asn` is not an unsigned 32-bit integer.
   */
  prefixesOf(asn: number): AsnPrefixes | null {
    this.assertOpen();
    if (!Number.isInteger(asn) || asn < 0 || asn > MAX_ASN) {
      throw new NetintelError('invalid_input', `${asn} is not an AS number (0 to ${MAX_ASN})`);
    }
    const count = this.header.asnCount;
    const memory = this.memory;
    const file = this.file;
    let slot: number;
    if (memory !== null) {
      let lo = 0;
      let hi = count;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (memory.asnNumbers[mid]! <= asn) lo = mid + 1;
        else hi = mid;
      }
      slot = lo - 1;
    } else {
      slot = file!.upperBoundU32(Section.ASN_NUMBERS, 0, count, asn) - 1;
    }
    if (slot < 0 || this.u32(Section.ASN_NUMBERS, slot) !== asn) return null;
    const ranges = (version: 4 | 6): AsnRange[] => {
      const first = this.u32(version === 4 ? Section.ASN_V4_FIRST : Section.ASN_V6_FIRST, slot);
      const last = this.u32(version === 4 ? Section.ASN_V4_FIRST : Section.ASN_V6_FIRST, slot + 1);
      const indices = this.u32s(version === 4 ? Section.ASN_V4_RANGES : Section.ASN_V6_RANGES, first, last - first);
      return Array.from(indices, (index) => {
        const text = this.rangeText(version, index);
        return { start: text.rangeStart, end: text.rangeEnd };
      });
    };
    return {
      asn,
      organization: this.organization(this.u32(Section.ASN_ORGS, slot)),
      v4: ranges(4),
      v6: ranges(6),
    };
  }

  /** Releases the file descriptor (pread mode) or the loaded bytes. Lookups then throw `internal`. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.data.close();
  }

  private rangeText(version: 4 | 6, index: number): { rangeStart: string; rangeEnd: string } {
    if (version === 4) return { rangeStart: v4ToText(this.v4StartAt(index)), rangeEnd: v4ToText(this.v4EndAt(index)) };
    this.checkIndex(6, index);
    const memory = this.memory;
    if (memory !== null) {
      return {
        rangeStart: ipv6ToText(memory.bytes, memory.v6StartsAt + V6_BYTES * index),
        rangeEnd: ipv6ToText(memory.bytes, memory.v6EndsAt + V6_BYTES * index),
      };
    }
    const file = this.file!;
    return {
      rangeStart: ipv6ToText(file.read(Section.V6_STARTS, V6_BYTES * index, V6_BYTES)),
      rangeEnd: ipv6ToText(file.read(Section.V6_ENDS, V6_BYTES * index, V6_BYTES)),
    };
  }

  private v6Bytes(section: SectionId, index: number): Uint8Array {
    this.checkIndex(6, index);
    const memory = this.memory;
    if (memory !== null) {
      const at = (section === Section.V6_STARTS ? memory.v6StartsAt : memory.v6EndsAt) + V6_BYTES * index;
      return memory.bytes.slice(at, at + V6_BYTES);
    }
    return new Uint8Array(this.file!.read(section, V6_BYTES * index, V6_BYTES));
  }

  private organization(id: number): string | null {
    if (id >= this.header.orgCount) throw corrupt(this.path, `organisation id ${id} out of range`);
    const memory = this.memory;
    if (memory !== null) {
      let name = this.organizations[id];
      if (name === undefined) {
        const text = decodeUtf8(memory.bytes, memory.orgDataAt + memory.orgOffsets[id]!, memory.orgDataAt + memory.orgOffsets[id + 1]!);
        name = text === '' ? null : text;
        this.organizations[id] = name;
      }
      return name;
    }
    const file = this.file!;
    const [from, to] = file.stringBounds(Section.ORG_OFFSETS, id);
    const [, dataBytes] = this.header.sections[Section.ORG_DATA]!;
    if (from > to || to > dataBytes) throw corrupt(this.path, `organisation ${id} out of bounds`);
    const text = decodeUtf8(file.read(Section.ORG_DATA, from, to - from), 0, to - from);
    return text === '' ? null : text;
  }

  private u32(section: SectionId, index: number): number {
    const memory = this.memory;
    if (memory !== null) return memory.view.getUint32(this.header.sections[section]![0] + 4 * index, true);
    return this.file!.u32(section, index);
  }

  private u32s(section: SectionId, from: number, count: number): Uint32Array {
    const [offset, byteLength] = this.header.sections[section]!;
    if (count < 0 || 4 * (from + count) > byteLength) throw corrupt(this.path, `section ${section} index out of bounds`);
    const bytes =
      this.memory !== null
        ? this.memory.bytes.subarray(offset + 4 * from, offset + 4 * (from + count))
        : this.data.read(offset + 4 * from, 4 * count);
    const out = new Uint32Array(count);
    for (let i = 0; i < count; i++) out[i] = readU32(bytes, 4 * i);
    return out;
  }

  /**
   * The checks cheap enough for every open: each table ends where its data
   * does. One read each in pread mode.
   */
  private checkStructure(): void {
    const { v4Count, orgCount, asnCount, sections } = this.header;
    const checks: Array<[SectionId, number, number]> = [
      [Section.V4_BUCKETS, 0, 0],
      [Section.V4_BUCKETS, V4_BUCKET_ENTRIES - 1, v4Count],
      [Section.ORG_OFFSETS, 0, 0],
      [Section.ORG_OFFSETS, orgCount, sections[Section.ORG_DATA]![1]],
      [Section.ASN_V4_FIRST, 0, 0],
      [Section.ASN_V4_FIRST, asnCount, sections[Section.ASN_V4_RANGES]![1] / 4],
      [Section.ASN_V6_FIRST, 0, 0],
      [Section.ASN_V6_FIRST, asnCount, sections[Section.ASN_V6_RANGES]![1] / 4],
    ];
    for (const [section, index, expected] of checks) {
      if (this.u32(section, index) !== expected) throw corrupt(this.path, `section ${section} does not match its data`);
    }
  }

  private checkIndex(version: 4 | 6, index: number): void {
    this.assertOpen();
    const count = version === 4 ? this.v4Count : this.v6Count;
    if (!(index >= 0 && index < count && Number.isInteger(index))) {
      throw new NetintelError('internal', `IPv${version} range index ${index} outside 0..${count - 1}`);
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new NetintelError('internal', `ASN index ${this.path} used after close()`);
  }
}

interface MemoryViews {
  bytes: Uint8Array;
  view: DataView;
  v4Starts: Uint32Array;
  v4Buckets: Uint32Array;
  v4Ends: Uint32Array;
  v4Asns: Uint32Array;
  v4Orgs: Uint32Array;
  /** Byte offsets of the IPv6 address sections in `bytes`. */
  v6StartsAt: number;
  v6EndsAt: number;
  v6Asns: Uint32Array;
  v6Orgs: Uint32Array;
  orgOffsets: Uint32Array;
  orgDataAt: number;
  asnNumbers: Uint32Array;
  asnOrgs: Uint32Array;
  asnV4First: Uint32Array;
  asnV4Ranges: Uint32Array;
  asnV6First: Uint32Array;
  asnV6Ranges: Uint32Array;
}

/** Sign of (the IPv6 address at `offset` of `view`) - (the address in `words`). */
function compareV6(view: DataView, offset: number, words: Uint32Array): number {
  for (let k = 0; k < 4; k++) {
    const word = view.getUint32(offset + 4 * k, false);
    if (word !== words[k]) return word < words[k]! ? -1 : 1;
  }
  return 0;
}

/** A uint32 little-endian section as a Uint32Array: a view on little-endian hosts, a swapped copy otherwise. */
function u32View(bytes: Uint8Array): Uint32Array {
  if (LITTLE_ENDIAN_HOST) return new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
  const out = new Uint32Array(bytes.byteLength / 4);
  for (let i = 0; i < out.length; i++) out[i] = readU32(bytes, 4 * i);
  return out;
}

function readU32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
}

function decodeUtf8(bytes: Uint8Array, from: number, to: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + from, to - from).toString('utf8');
}

function decodeMetadata(path: string, bytes: Uint8Array): StoredMetadata {
  let value: unknown;
  try {
    value = JSON.parse(decodeUtf8(bytes, 0, bytes.length));
  } catch {
    throw corrupt(path, 'unreadable metadata');
  }
  const meta = value as Partial<StoredMetadata> | null;
  if (
    typeof meta !== 'object' || meta === null ||
    typeof meta.source !== 'string' || typeof meta.sourceVersion !== 'string' || typeof meta.builtAt !== 'string' ||
    typeof meta.malformedRows !== 'number' || typeof meta.overlappingRows !== 'number'
  ) {
    throw corrupt(path, 'incomplete metadata');
  }
  return {
    source: meta.source,
    sourceVersion: meta.sourceVersion,
    builtAt: meta.builtAt,
    malformedRows: meta.malformedRows,
    overlappingRows: meta.overlappingRows,
  };
}

function sectionBounds(header: Header, id: SectionId): [from: number, to: number] {
  const [offset, byteLength] = header.sections[id]!;
  return [offset, offset + byteLength];
}

/** Typed-array views over a whole index file (a copy first if the bytes are misaligned). */
function memoryViews(loaded: Uint8Array, header: Header): MemoryViews {
  // Uint32Array views need 4-byte alignment; a pooled small Buffer may not start at 0.
  const bytes = loaded.byteOffset % 8 === 0 ? loaded : new Uint8Array(loaded);
  const u32s = (id: SectionId): Uint32Array => u32View(bytes.subarray(...sectionBounds(header, id)));
  return {
    bytes,
    view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    v4Starts: u32s(Section.V4_STARTS),
    v4Ends: u32s(Section.V4_ENDS),
    v4Asns: u32s(Section.V4_ASNS),
    v4Orgs: u32s(Section.V4_ORGS),
    v4Buckets: u32s(Section.V4_BUCKETS),
    v6StartsAt: header.sections[Section.V6_STARTS]![0],
    v6EndsAt: header.sections[Section.V6_ENDS]![0],
    v6Asns: u32s(Section.V6_ASNS),
    v6Orgs: u32s(Section.V6_ORGS),
    orgOffsets: u32s(Section.ORG_OFFSETS),
    orgDataAt: header.sections[Section.ORG_DATA]![0],
    asnNumbers: u32s(Section.ASN_NUMBERS),
    asnOrgs: u32s(Section.ASN_ORGS),
    asnV4First: u32s(Section.ASN_V4_FIRST),
    asnV4Ranges: u32s(Section.ASN_V4_RANGES),
    asnV6First: u32s(Section.ASN_V6_FIRST),
    asnV6Ranges: u32s(Section.ASN_V6_RANGES),
  };
}

/**
 * Every invariant the lookups rely on, in one pass over each section.
 * Returns the first problem found, or null.
 */
function checkEntries(header: Header, m: MemoryViews): string | null {
  const { v4Count, v6Count, orgCount, asnCount } = header;
  let bucket = 0;
  for (let i = 0; i < v4Count; i++) {
    if (m.v4Starts[i]! > m.v4Ends[i]!) return `IPv4 range ${i} ends before it starts`;
    if (i > 0 && m.v4Starts[i]! <= m.v4Ends[i - 1]!) return `IPv4 range ${i} out of order`;
    if (m.v4Orgs[i]! >= orgCount) return `IPv4 range ${i} has no organisation`;
    for (const top = m.v4Starts[i]! >>> V4_BUCKET_SHIFT; bucket <= top; bucket++) {
      if (m.v4Buckets[bucket] !== i) return `IPv4 bucket ${bucket} does not match the ranges`;
    }
  }
  for (; bucket < V4_BUCKET_ENTRIES; bucket++) {
    if (m.v4Buckets[bucket] !== v4Count) return `IPv4 bucket ${bucket} does not match the ranges`;
  }
  const words = new Uint32Array(4);
  for (let i = 0; i < v6Count; i++) {
    for (let k = 0; k < 4; k++) words[k] = m.view.getUint32(m.v6EndsAt + V6_BYTES * i + 4 * k, false);
    if (compareV6(m.view, m.v6StartsAt + V6_BYTES * i, words) > 0) return `IPv6 range ${i} ends before it starts`;
    if (i + 1 < v6Count && compareV6(m.view, m.v6StartsAt + V6_BYTES * (i + 1), words) <= 0) return `IPv6 range ${i + 1} out of order`;
    if (m.v6Orgs[i]! >= orgCount) return `IPv6 range ${i} has no organisation`;
  }
  const dataBytes = header.sections[Section.ORG_DATA]![1];
  if (m.orgOffsets[0] !== 0 || m.orgOffsets[orgCount] !== dataBytes) return 'organisation table does not match its data';
  for (let i = 0; i < orgCount; i++) if (m.orgOffsets[i]! > m.orgOffsets[i + 1]!) return `organisation ${i} out of bounds`;
  const perAsn: Array<[Uint32Array, Uint32Array, number]> = [
    [m.asnV4First, m.asnV4Ranges, v4Count],
    [m.asnV6First, m.asnV6Ranges, v6Count],
  ];
  for (const [first, ranges, rangeCount] of perAsn) {
    if (first[0] !== 0 || first[asnCount] !== ranges.length) return 'per-ASN table does not match its ranges';
    for (let i = 0; i < asnCount; i++) if (first[i]! > first[i + 1]!) return `per-ASN table entry ${i} out of order`;
    for (let i = 0; i < ranges.length; i++) if (ranges[i]! >= rangeCount) return `per-ASN range ${i} out of bounds`;
  }
  for (let i = 0; i < asnCount; i++) {
    if (i > 0 && m.asnNumbers[i]! <= m.asnNumbers[i - 1]!) return `ASN ${i} out of order`;
    if (m.asnOrgs[i]! >= orgCount) return `ASN ${i} has no organisation`;
  }
  return null;
}

function corrupt(path: string, reason: string): NetintelError {
  return new NetintelError('data_unavailable', `ASN index ${path} is unusable: ${reason}; rebuild it with \`npm run build:data\``, {
    details: { path, reason },
  });
}
