import { NetintelError } from '../../errors.js';
import { dataFileOfBytes, openDataFile, type DataFile } from '../dataset/data-file-reader.js';
import { SectionReader } from '../dataset/section-file.js';
import { v4RangeText, v6RangeText } from '../address/address-range.js';
import {
  ASN_ENTRY_BYTES,
  decodeHeader,
  HEADER_BYTES,
  NO_SET,
  Section,
  type SectionId,
  type SignalIndexHeader,
  type SignalIndexMeta,
  V4_ENTRY_BYTES,
  V6_ENTRY_BYTES,
} from './signal-index-format.js';

/**
 * Reader of the compiled signal index (layout in `signal-index-format.ts`).
 *
 * Both modes open the file through `openDataFile`.
 * - `pread`: opening reads the header and the metadata (a few KiB); a lookup
 *   is a binary search by positioned reads (about ten small reads), so a
 *   one-off lookup does not depend on the size of the index.
 * - `memory`: the file is read once and searched through typed-array views,
 *   with no I/O and no allocation per lookup (bulk runs), helped by two
 *   tables built at load: a /16 bucket table (256 KiB) and a /24 bitmap of
 *   listed blocks (2 MiB).
 */
export type SignalIndexMode = 'pread' | 'memory';

/** One entry of the index, as evidence needs it. */
export interface SignalEntry {
  /** Index of the source in `meta.sources`. */
  source: number;
  /** The entry as its list writes it: an address, a CIDR, `a-b`, or `ip:port`. */
  matched: string;
  /** The operator the entry names, or null. */
  label: string | null;
  /** Addresses the entry spans minus one (smaller is more specific). */
  span: number;
}

export interface SignalAsnEntry {
  source: number;
  label: string | null;
}

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
/** A binary search over a section reads single words until this much of it is left, then reads that at once. */
const PREAD_WINDOW_BYTES = 16_384;
const NAMES = { kind: 'signal index', remedy: 'run netintel data update' };

interface MemoryViews {
  bytes: Buffer;
  v4Starts: Uint32Array;
  v4Sets: Int32Array;
  v6Starts: Uint32Array;
  v6Sets: Int32Array;
  /**
   * Per /16 (top 16 bits b): the segment holding address b << 16. The
   * segment of an address in /16 b lies in v4Buckets[b] .. v4Buckets[b + 1],
   * a window of a few entries: a bulk lookup searches that instead of the
   * whole table (fewer steps, fewer cache misses). Built at load, O(n).
   */
  v4Buckets: Uint32Array;
  /**
   * One bit per /24: set when some entry holds an address of that /24. Most
   * addresses of a bulk run are in no list; for them a lookup is one read
   * of this 2 MiB map instead of a search. Built at load, O(n + marked /24s).
   */
  v4Marks: Uint8Array;
  /** V4_ENTRIES as u32 words: start, end, source | port << 16, label. */
  v4Entries: Uint32Array;
  /** V6_ENTRIES as u32 words: start (4), end (4), source | port << 16, label. */
  v6Entries: Uint32Array;
}

function v4MarkTable(starts: Uint32Array, sets: Int32Array): Uint8Array {
  const marks = new Uint8Array(1 << 21);
  const n = starts.length;
  for (let i = 0; i < n; i++) {
    if (sets[i] === NO_SET) continue;
    const last = ((i + 1 < n ? starts[i + 1]! : 2 ** 32) - 1) >>> 8;
    for (let block = starts[i]! >>> 8; block <= last; block++) marks[block >>> 3]! |= 1 << (block & 7);
  }
  return marks;
}

function v4BucketTable(starts: Uint32Array): Uint32Array {
  const buckets = new Uint32Array(65_537);
  let segment = 0;
  for (let b = 0; b < 65_536; b++) {
    const first = b * 65_536;
    while (segment + 1 < starts.length && starts[segment + 1]! <= first) segment++;
    buckets[b] = segment;
  }
  buckets[65_536] = starts.length - 1;
  return buckets;
}

export class SignalIndex {
  readonly path: string;
  readonly mode: SignalIndexMode;
  readonly meta: SignalIndexMeta;
  private readonly header: SignalIndexHeader;
  private readonly memory: MemoryViews | null;
  private readonly data: DataFile;
  private readonly file: SectionReader;
  private readonly v4Segments: number;
  private readonly v6Segments: number;
  private readonly v4Entries: number;
  private readonly v6Entries: number;
  private readonly asnCount: number;
  private readonly labelCount: number;
  private readonly setCount: number;
  private readonly words = new Uint32Array(4);
  private readonly labels = new Map<number, string>();

  private constructor(path: string, mode: SignalIndexMode, header: SignalIndexHeader, memory: MemoryViews | null, data: DataFile) {
    this.path = path;
    this.mode = mode;
    this.header = header;
    this.memory = memory;
    this.data = data;
    const file = new SectionReader(data, header.sections, (problem) => corrupt(path, problem), PREAD_WINDOW_BYTES);
    this.file = file;
    const length = (id: SectionId) => header.sections[id]![1];
    this.v4Segments = length(Section.V4_STARTS) / 4;
    this.v6Segments = length(Section.V6_SETS) / 4;
    this.v4Entries = length(Section.V4_ENTRIES) / V4_ENTRY_BYTES;
    this.v6Entries = length(Section.V6_ENTRIES) / V6_ENTRY_BYTES;
    this.asnCount = length(Section.ASN_ENTRIES) / ASN_ENTRY_BYTES;
    this.labelCount = Math.max(0, length(Section.LABEL_OFFSETS) / 4 - 1);
    this.setCount = Math.max(0, length(Section.SET_OFFSETS) / 4 - 1);
    let meta: SignalIndexMeta;
    try {
      meta = JSON.parse(file.read(Section.META, 0, length(Section.META)).toString('utf8')) as SignalIndexMeta;
    } catch (error) {
      throw corrupt(path, `metadata is not JSON (${(error as Error).message})`);
    }
    if (!Array.isArray(meta.sources)) throw corrupt(path, 'metadata lists no sources');
    this.meta = meta;
    if (this.u32(Section.V4_STARTS, 0) !== 0 || this.u32(Section.V6_STARTS, 0) !== 0) throw corrupt(path, 'the first segment does not start at 0');
    if (this.setCount >= 0 && this.u32(Section.SET_OFFSETS, this.setCount) * 4 !== length(Section.SET_ENTRIES)) {
      throw corrupt(path, 'set table length disagrees with its entries');
    }
  }

  /**
   * Opens an index. Throws `data_unavailable` naming the path when the file is
   * missing, unreadable, truncated or not a signal index of this version.
   */
  static open(path: string, options: { mode?: SignalIndexMode } = {}): SignalIndex {
    const data = openDataFile(path, options.mode ?? 'pread', NAMES);
    try {
      return SignalIndex.over(data);
    } catch (error) {
      data.close();
      throw error instanceof NetintelError ? error : corrupt(path, String(error));
    }
  }

  /** An index held in memory (a freshly compiled one, before it is written). */
  static fromBytes(path: string, input: Uint8Array): SignalIndex {
    return SignalIndex.over(dataFileOfBytes(path, input, NAMES));
  }

  /**
   * The index in an open data file. In memory mode the sections are searched
   * through typed-array views of the loaded file, which need a little-endian
   * host and a file loaded at an 8-byte boundary; otherwise through section reads.
   */
  private static over(data: DataFile): SignalIndex {
    const path = data.path;
    const header = decodeHeader(data.read(0, Math.min(HEADER_BYTES, data.size)), data.size);
    if (typeof header === 'string') throw corrupt(path, header);
    const bytes = data.mode === 'memory' ? data.whole() : null;
    if (bytes === null || bytes.byteOffset % 8 !== 0 || !LITTLE_ENDIAN_HOST) {
      return new SignalIndex(path, data.mode, header, null, data);
    }
    const view = <T>(id: SectionId, make: (buffer: ArrayBufferLike, offset: number, length: number) => T, unit: number): T => {
      const [offset, length] = header.sections[id]!;
      return make(bytes.buffer, bytes.byteOffset + offset, length / unit);
    };
    const v4Starts = view(Section.V4_STARTS, (b, o, n) => new Uint32Array(b, o, n), 4);
    const v4Sets = view(Section.V4_SETS, (b, o, n) => new Int32Array(b, o, n), 4);
    const memory: MemoryViews = {
      bytes,
      v4Starts,
      v4Sets,
      v4Buckets: v4BucketTable(v4Starts),
      v4Marks: v4MarkTable(v4Starts, v4Sets),
      v4Entries: view(Section.V4_ENTRIES, (b, o, n) => new Uint32Array(b, o, n), 4),
      v6Entries: view(Section.V6_ENTRIES, (b, o, n) => new Uint32Array(b, o, n), 4),
      v6Starts: view(Section.V6_STARTS, (b, o, n) => new Uint32Array(b, o, n), 4),
      v6Sets: view(Section.V6_SETS, (b, o, n) => new Int32Array(b, o, n), 4),
    };
    return new SignalIndex(path, 'memory', header, memory, data);
  }

  /** Size of the index file in bytes. */
  get fileBytes(): number {
    return this.header.fileBytes;
  }

  /**
   * The set code of the segment holding an IPv4 address (unsigned 32-bit
   * integer): -1 when no entry holds it. O(log n); allocation-free in memory
   * mode.
   */
  v4SetAt(address: number): number {
    const memory = this.memory;
    if (memory !== null) {
      const block = address >>> 8;
      if ((memory.v4Marks[block >>> 3]! & (1 << (block & 7))) === 0) return NO_SET;
      const starts = memory.v4Starts;
      const bucket = address >>> 16;
      // The last segment in lo..hi (inclusive) starting at or below the address.
      let lo = memory.v4Buckets[bucket]!;
      let hi = memory.v4Buckets[bucket + 1]!;
      while (lo < hi) {
        const mid = (lo + hi + 1) >>> 1;
        if (starts[mid]! <= address) lo = mid;
        else hi = mid - 1;
      }
      return memory.v4Sets[lo]!;
    }
    const i = this.file.upperBoundU32(Section.V4_STARTS, 0, this.v4Segments, address) - 1;
    return this.file.i32(Section.V4_SETS, i);
  }

  /** The set code of the segment holding the IPv6 address in 16 network-order bytes at `offset`. */
  v6SetAt(address: Uint8Array, offset = 0): number {
    const words = this.words;
    for (let k = 0; k < 4; k++) {
      const at = offset + 4 * k;
      words[k] = ((address[at]! << 24) | (address[at + 1]! << 16) | (address[at + 2]! << 8) | address[at + 3]!) >>> 0;
    }
    const memory = this.memory;
    if (memory !== null) {
      const starts = memory.v6Starts;
      let lo = 0;
      let hi = this.v6Segments;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (compareWords(starts, 4 * mid, words) <= 0) lo = mid + 1;
        else hi = mid;
      }
      return memory.v6Sets[lo - 1]!;
    }
    const i = this.file.upperBound(Section.V6_STARTS, 0, this.v6Segments, 16, (bytes, at) => compareWordsLE(bytes, at, words)) - 1;
    return this.file.i32(Section.V6_SETS, i);
  }

  /** The entry ids of a set code (empty for -1). */
  setEntries(code: number): number[] {
    if (code === NO_SET) return [];
    if (code < NO_SET) return [-2 - code];
    if (code >= this.setCount) throw corrupt(this.path, `set ${code} out of bounds`);
    const from = this.u32(Section.SET_OFFSETS, code);
    const to = this.u32(Section.SET_OFFSETS, code + 1);
    const ids: number[] = [];
    for (let i = from; i < to; i++) ids.push(this.u32(Section.SET_ENTRIES, i));
    return ids;
  }

  /** The entry with an id from `setEntries`. */
  entry(id: number): SignalEntry {
    if (id < this.v4Entries) {
      const record = this.file.read(Section.V4_ENTRIES, id * V4_ENTRY_BYTES, V4_ENTRY_BYTES);
      const start = record.readUInt32LE(0);
      const end = record.readUInt32LE(4);
      const source = record.readUInt16LE(8);
      const port = record.readUInt16LE(10);
      const label = record.readInt32LE(12);
      const text = v4RangeText(start, end);
      return { source: this.checkSource(source), matched: port > 0 ? `${text}:${port}` : text, label: this.label(label), span: end - start };
    }
    const v6 = id - this.v4Entries;
    if (v6 >= this.v6Entries) throw corrupt(this.path, `entry ${id} out of bounds`);
    const record = this.file.read(Section.V6_ENTRIES, v6 * V6_ENTRY_BYTES, V6_ENTRY_BYTES);
    const big = (at: number) =>
      (BigInt(record.readUInt32LE(at)) << 96n) |
      (BigInt(record.readUInt32LE(at + 4)) << 64n) |
      (BigInt(record.readUInt32LE(at + 8)) << 32n) |
      BigInt(record.readUInt32LE(at + 12));
    const start = big(0);
    const end = big(16);
    const source = record.readUInt16LE(32);
    const port = record.readUInt16LE(34);
    const label = record.readInt32LE(36);
    const text = v6RangeText(start, end);
    return { source: this.checkSource(source), matched: port > 0 ? `[${text}]:${port}` : text, label: this.label(label), span: Number(end - start) };
  }

  /** The source (index in `meta.sources`) of an entry; no decoding, no allocation in memory mode. */
  entrySource(id: number): number {
    const memory = this.memory;
    if (id < this.v4Entries) {
      const source = memory !== null ? memory.v4Entries[4 * id + 2]! & 0xffff : this.file.read(Section.V4_ENTRIES, id * V4_ENTRY_BYTES + 8, 2).readUInt16LE(0);
      return this.checkSource(source);
    }
    const v6 = id - this.v4Entries;
    if (v6 >= this.v6Entries) throw corrupt(this.path, `entry ${id} out of bounds`);
    const source = memory !== null ? memory.v6Entries[10 * v6 + 8]! & 0xffff : this.file.read(Section.V6_ENTRIES, v6 * V6_ENTRY_BYTES + 32, 2).readUInt16LE(0);
    return this.checkSource(source);
  }

  /** The operator an entry names, or null. */
  entryLabel(id: number): string | null {
    const memory = this.memory;
    if (id < this.v4Entries) {
      return this.label(memory !== null ? memory.v4Entries[4 * id + 3]! | 0 : this.file.read(Section.V4_ENTRIES, id * V4_ENTRY_BYTES + 12, 4).readInt32LE(0));
    }
    const v6 = id - this.v4Entries;
    return this.label(memory !== null ? memory.v6Entries[10 * v6 + 9]! | 0 : this.file.read(Section.V6_ENTRIES, v6 * V6_ENTRY_BYTES + 36, 4).readInt32LE(0));
  }

  /** Addresses an entry spans minus one (for IPv6 approximate: a float); smaller is more specific. */
  entrySpan(id: number): number {
    const memory = this.memory;
    if (id < this.v4Entries) {
      if (memory !== null) return memory.v4Entries[4 * id + 1]! - memory.v4Entries[4 * id]!;
      const record = this.file.read(Section.V4_ENTRIES, id * V4_ENTRY_BYTES, 8);
      return record.readUInt32LE(4) - record.readUInt32LE(0);
    }
    const v6 = id - this.v4Entries;
    const record = this.file.read(Section.V6_ENTRIES, v6 * V6_ENTRY_BYTES, 32);
    let span = 0;
    for (let k = 0; k < 4; k++) span = span * 2 ** 32 + (record.readUInt32LE(16 + 4 * k) - record.readUInt32LE(4 * k));
    return span;
  }

  /** What an entry matches, as its list writes it (`a.b.c.d/n`, an address, `ip:port`, `a-b`). */
  entryMatched(id: number): string {
    const memory = this.memory;
    if (memory !== null && id < this.v4Entries) {
      const words = memory.v4Entries;
      const text = v4RangeText(words[4 * id]!, words[4 * id + 1]!);
      const port = words[4 * id + 2]! >>> 16;
      return port > 0 ? `${text}:${port}` : text;
    }
    return this.entry(id).matched;
  }

  /** The entries naming an AS (binary search over the AS table). */
  asnEntries(asn: number): SignalAsnEntry[] {
    let lo = 0;
    let hi = this.asnCount;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.u32(Section.ASN_ENTRIES, (mid * ASN_ENTRY_BYTES) / 4) < asn) lo = mid + 1;
      else hi = mid;
    }
    const found: SignalAsnEntry[] = [];
    for (let i = lo; i < this.asnCount; i++) {
      const record = this.file.read(Section.ASN_ENTRIES, i * ASN_ENTRY_BYTES, ASN_ENTRY_BYTES);
      if (record.readUInt32LE(0) !== asn) break;
      found.push({ source: this.checkSource(record.readUInt16LE(4)), label: this.label(record.readInt32LE(8)) });
    }
    return found;
  }

  /**
   * Checks every structural invariant lookups rely on (segments ascending,
   * every set code, entry id, source and label in bounds). Run on each new
   * index before it replaces the old one. Throws `data_unavailable`.
   */
  verify(): void {
    const totalEntries = this.v4Entries + this.v6Entries;
    const checkCode = (code: number, where: string) => {
      if (code === NO_SET) return;
      if (code < NO_SET ? -2 - code >= totalEntries : code >= this.setCount) throw corrupt(this.path, `${where}: set code ${code} out of bounds`);
    };
    let previous = -1;
    for (let i = 0; i < this.v4Segments; i++) {
      const start = this.u32(Section.V4_STARTS, i);
      if (start <= previous) throw corrupt(this.path, `IPv4 segment ${i} out of order`);
      previous = start;
      checkCode(this.file.i32(Section.V4_SETS, i), `IPv4 segment ${i}`);
    }
    const current = new Uint32Array(4);
    const last = new Uint32Array(4);
    for (let i = 0; i < this.v6Segments; i++) {
      for (let k = 0; k < 4; k++) current[k] = this.u32(Section.V6_STARTS, 4 * i + k);
      if (i > 0 && compareWords(current, 0, last) <= 0) throw corrupt(this.path, `IPv6 segment ${i} out of order`);
      last.set(current);
      checkCode(this.file.i32(Section.V6_SETS, i), `IPv6 segment ${i}`);
    }
    for (let s = 0; s < this.setCount; s++) for (const id of this.setEntries(s)) if (id >= totalEntries) throw corrupt(this.path, `set ${s} names entry ${id}`);
    for (let id = 0; id < totalEntries; id++) {
      this.entrySource(id);
      this.entryLabel(id);
      if (!(this.entrySpan(id) >= 0)) throw corrupt(this.path, `entry ${id} ends before it starts`);
    }
    for (let i = 0; i < this.asnCount; i++) {
      const record = this.file.read(Section.ASN_ENTRIES, i * ASN_ENTRY_BYTES, ASN_ENTRY_BYTES);
      this.checkSource(record.readUInt16LE(4));
      this.label(record.readInt32LE(8));
    }
  }

  close(): void {
    this.data.close();
  }

  private u32(section: SectionId, index: number): number {
    return this.file.u32(section, index);
  }

  private checkSource(source: number): number {
    if (source >= this.meta.sources.length) throw corrupt(this.path, `source ${source} out of bounds`);
    return source;
  }

  private label(id: number): string | null {
    if (id < 0) return null;
    if (id >= this.labelCount) throw corrupt(this.path, `label ${id} out of bounds`);
    let text = this.labels.get(id);
    if (text === undefined) {
      const [from, to] = this.file.stringBounds(Section.LABEL_OFFSETS, id);
      if (to < from) throw corrupt(this.path, `label ${id} has a negative length`);
      text = this.file.read(Section.LABEL_DATA, from, to - from).toString('utf8');
      this.labels.set(id, text);
    }
    return text;
  }
}

function compareWords(starts: Uint32Array, at: number, words: Uint32Array): number {
  for (let k = 0; k < 4; k++) {
    const a = starts[at + k]!;
    const b = words[k]!;
    if (a !== b) return a < b ? -1 : 1;
  }
  return 0;
}

/** Sign of (the address at `at` of `bytes`, four little-endian words, most significant first) - (the address in `words`). */
function compareWordsLE(bytes: Buffer, at: number, words: Uint32Array): number {
  for (let k = 0; k < 4; k++) {
    const a = bytes.readUInt32LE(at + 4 * k);
    const b = words[k]!;
    if (a !== b) return a < b ? -1 : 1;
  }
  return 0;
}

function corrupt(path: string, problem: string): NetintelError {
  return new NetintelError('data_unavailable', `the signal index ${path} is invalid: ${problem}; run netintel data update`, {
    details: { path, problem },
  });
}
