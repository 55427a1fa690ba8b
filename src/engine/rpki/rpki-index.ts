import { NetintelError } from '../../errors.js';
import { v4ToText } from '../address/ip-address.js';
import { v6Text } from '../address/address-range.js';
import { dataFileOfBytes, openDataFile, type DataFile, type DataFileMode } from '../dataset/data-file-reader.js';
import { SectionReader } from '../dataset/section-file.js';
import { decodeRpkiHeader, HEADER_BYTES, NO_TA, Section, V4_PREFIX_BYTES, V6_PREFIX_BYTES, VRP_BYTES, type RpkiIndexMeta } from './rpki-index-format.js';

/** A payload covering a route, as the index holds it. */
export interface CoveringVrp {
  prefix: string;
  maxLength: number;
  asn: number;
  ta: string | null;
}

/** A route: its family, first address (a 32-bit or 128-bit unsigned integer) and length. */
export type RouteKey = { version: 4; start: number; length: number } | { version: 6; start: bigint; length: number };

/** A prefix entry of the index, decoded. */
interface PrefixEntry {
  start: bigint;
  length: number;
  parent: number;
  first: number;
  count: number;
}

const NAMES = { kind: 'RPKI index', remedy: 'run netintel data update rpki' };
/** A binary search reads single entries until this much of the section is left, then reads that at once. */
const PREAD_WINDOW_BYTES = 8192;

/**
 * Reader of the compiled RPKI index (layout in `rpki-index-format.ts`): by
 * positioned reads for a one-off lookup (the header and metadata on open,
 * then a binary search and a few entries per route), or loaded whole for
 * bulk runs.
 */
export class RpkiIndex {
  readonly meta: RpkiIndexMeta;
  private readonly file: SectionReader;
  private readonly counts: { 4: number; 6: number; vrps: number; tas: number };
  private readonly tas = new Map<number, string>();

  private constructor(
    readonly path: string,
    private readonly data: DataFile,
    sections: Array<[number, number]>,
  ) {
    this.file = new SectionReader(data, sections, (problem) => corrupt(path, problem), PREAD_WINDOW_BYTES);
    const length = (id: number) => sections[id]![1];
    this.counts = {
      4: length(Section.V4_PREFIXES) / V4_PREFIX_BYTES,
      6: length(Section.V6_PREFIXES) / V6_PREFIX_BYTES,
      vrps: length(Section.VRPS) / VRP_BYTES,
      tas: Math.max(0, length(Section.TA_OFFSETS) / 4 - 1),
    };
    try {
      this.meta = JSON.parse(this.file.read(Section.META, 0, length(Section.META)).toString('utf8')) as RpkiIndexMeta;
    } catch (error) {
      throw corrupt(path, `metadata is not JSON (${(error as Error).message})`);
    }
    if (this.meta === null || typeof this.meta !== 'object') throw corrupt(path, 'metadata is not an object');
  }

  /** Opens an index. Throws `data_unavailable` naming the path when it is missing, unreadable or not an RPKI index of this version. */
  static open(path: string, options: { mode?: DataFileMode } = {}): RpkiIndex {
    const data = openDataFile(path, options.mode ?? 'pread', NAMES);
    try {
      return RpkiIndex.over(data);
    } catch (error) {
      data.close();
      throw error instanceof NetintelError ? error : corrupt(path, String(error));
    }
  }

  /** An index held in memory (a freshly compiled one, checked before it is written). */
  static fromBytes(path: string, bytes: Uint8Array): RpkiIndex {
    return RpkiIndex.over(dataFileOfBytes(path, bytes, NAMES));
  }

  private static over(data: DataFile): RpkiIndex {
    const header = decodeRpkiHeader(data.read(0, Math.min(HEADER_BYTES, data.size)), data.size);
    if (typeof header === 'string') throw corrupt(data.path, header);
    return new RpkiIndex(data.path, data, header.sections);
  }

  /**
   * The payloads covering a route (RFC 6811 §2), the most specific prefix
   * first. O(log n) reads for the search, then one per covering prefix.
   */
  covering(route: RouteKey): CoveringVrp[] {
    if (route.version === 4) return this.coveringV4(route.start, route.length);
    const width = 128;
    const start = route.start;
    const found: CoveringVrp[] = [];
    let i = this.lastAtOrBeforeV6(start, route.length);
    let steps = 0;
    while (i >= 0) {
      if (++steps > width + 1) throw corrupt(this.path, 'a parent chain is longer than the address width');
      const entry = this.prefix(6, i);
      const covers = entry.length <= route.length && start >> BigInt(width - entry.length) === entry.start >> BigInt(width - entry.length);
      if (covers) for (let p = entry.first; p < entry.first + entry.count; p++) found.push(this.vrp(p, 6, entry));
      if (entry.parent >= i) throw corrupt(this.path, `prefix ${i} names a parent after it`);
      i = entry.parent;
    }
    return found;
  }

  /** {@link RpkiIndex.covering} for IPv4 in 32-bit numbers (bulk runs ask it for most rows). */
  private coveringV4(start: number, length: number): CoveringVrp[] {
    const found: CoveringVrp[] = [];
    const compare = (bytes: Buffer, at: number): number => {
      const entryStart = bytes.readUInt32LE(at);
      if (entryStart !== start) return entryStart < start ? -1 : 1;
      return bytes.readUInt32LE(at + 4) <= length ? -1 : 1;
    };
    let i = this.file.upperBound(Section.V4_PREFIXES, 0, this.counts[4], V4_PREFIX_BYTES, compare) - 1;
    let steps = 0;
    while (i >= 0) {
      if (++steps > 33) throw corrupt(this.path, 'a parent chain is longer than the address width');
      const bytes = this.file.read(Section.V4_PREFIXES, V4_PREFIX_BYTES * i, V4_PREFIX_BYTES);
      const entryStart = bytes.readUInt32LE(0);
      const entryLength = bytes.readUInt32LE(4);
      const parent = bytes.readInt32LE(8);
      if (entryLength <= length && (entryLength === 0 || (start ^ entryStart) >>> (32 - entryLength) === 0)) {
        const first = bytes.readUInt32LE(12);
        const entry = { start: BigInt(entryStart), length: entryLength, parent, first, count: bytes.readUInt32LE(16) };
        for (let p = first; p < first + entry.count; p++) found.push(this.vrp(p, 4, entry));
      }
      if (parent >= i) throw corrupt(this.path, `prefix ${i} names a parent after it`);
      i = parent;
    }
    return found;
  }

  /**
   * Checks what lookups rely on: prefixes in order, parents before their
   * children and holding them, payload and trust anchor references in bounds.
   * Run on a new index before it replaces the old one. Throws `data_unavailable`.
   */
  verify(): void {
    for (const version of [4, 6] as const) {
      const width = version === 4 ? 32 : 128;
      let previous: PrefixEntry | null = null;
      for (let i = 0; i < this.counts[version]; i++) {
        const entry = this.prefix(version, i);
        if (entry.length > width) throw corrupt(this.path, `IPv${version} prefix ${i} is longer than ${width} bits`);
        if (previous !== null && (entry.start < previous.start || (entry.start === previous.start && entry.length <= previous.length))) {
          throw corrupt(this.path, `IPv${version} prefix ${i} out of order`);
        }
        if (entry.parent >= i || entry.parent < -1) throw corrupt(this.path, `IPv${version} prefix ${i} names parent ${entry.parent}`);
        if (entry.parent >= 0) {
          const parent = this.prefix(version, entry.parent);
          if (parent.length >= entry.length || entry.start >> BigInt(width - parent.length) !== parent.start >> BigInt(width - parent.length)) {
            throw corrupt(this.path, `IPv${version} prefix ${i} is not inside its parent`);
          }
        }
        if (entry.count === 0 || entry.first + entry.count > this.counts.vrps) throw corrupt(this.path, `IPv${version} prefix ${i} names payloads out of bounds`);
        for (let p = entry.first; p < entry.first + entry.count; p++) {
          const vrp = this.vrp(p, version, entry);
          if (vrp.maxLength < entry.length || vrp.maxLength > width) throw corrupt(this.path, `payload ${p} has maxLength ${vrp.maxLength}`);
        }
        previous = entry;
      }
    }
  }

  close(): void {
    this.data.close();
  }

  /** The last IPv6 prefix sorting at or before a route (by start, then length), or -1. */
  private lastAtOrBeforeV6(start: bigint, length: number): number {
    const compare = (bytes: Buffer, at: number): number => {
      const entryStart = v6StartAt(bytes, at);
      if (entryStart !== start) return entryStart < start ? -1 : 1;
      return bytes.readUInt32LE(at + 16) <= length ? -1 : 1;
    };
    return this.file.upperBound(Section.V6_PREFIXES, 0, this.counts[6], V6_PREFIX_BYTES, compare) - 1;
  }

  private prefix(version: 4 | 6, index: number): PrefixEntry {
    if (version === 4) {
      const bytes = this.file.read(Section.V4_PREFIXES, V4_PREFIX_BYTES * index, V4_PREFIX_BYTES);
      return { start: BigInt(bytes.readUInt32LE(0)), length: bytes.readUInt32LE(4), parent: bytes.readInt32LE(8), first: bytes.readUInt32LE(12), count: bytes.readUInt32LE(16) };
    }
    const bytes = this.file.read(Section.V6_PREFIXES, V6_PREFIX_BYTES * index, V6_PREFIX_BYTES);
    return { start: v6StartAt(bytes, 0), length: bytes.readUInt32LE(16), parent: bytes.readInt32LE(20), first: bytes.readUInt32LE(24), count: bytes.readUInt32LE(28) };
  }

  private vrp(index: number, version: 4 | 6, entry: PrefixEntry): CoveringVrp {
    const bytes = this.file.read(Section.VRPS, VRP_BYTES * index, VRP_BYTES);
    const prefix = `${version === 4 ? v4ToText(Number(entry.start)) : v6Text(entry.start)}/${entry.length}`;
    return { prefix, maxLength: bytes.readUInt16LE(4), asn: bytes.readUInt32LE(0), ta: this.ta(bytes.readUInt16LE(6)) };
  }

  private ta(id: number): string | null {
    if (id === NO_TA) return null;
    if (id >= this.counts.tas) throw corrupt(this.path, `trust anchor ${id} out of bounds`);
    let name = this.tas.get(id);
    if (name === undefined) {
      const [from, to] = this.file.stringBounds(Section.TA_OFFSETS, id);
      if (to < from) throw corrupt(this.path, `trust anchor ${id} has a negative length`);
      name = this.file.read(Section.TA_DATA, from, to - from).toString('utf8');
      this.tas.set(id, name);
    }
    return name;
  }
}

function v6StartAt(bytes: Buffer, at: number): bigint {
  let value = 0n;
  for (let k = 0; k < 4; k++) value = (value << 32n) | BigInt(bytes.readUInt32LE(at + 4 * k));
  return value;
}

function corrupt(path: string, problem: string): NetintelError {
  return new NetintelError('data_unavailable', `the RPKI index ${path} is invalid: ${problem}; run netintel data update rpki`, { details: { path, problem } });
}
