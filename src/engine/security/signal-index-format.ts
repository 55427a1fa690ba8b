/**
 * Layout of the compiled signal index (`security.idx` in the data dir): every
 * installed security feed merged into one file that answers "which entries
 * hold this address" by one binary search, read with positioned reads for a
 * one-off lookup or loaded whole for a bulk run. Little-endian throughout.
 *
 * The file is a section file (`src/engine/dataset/section-file.ts`).
 *
 * Header (24 bytes, then the section table):
 *
 * | offset | size | field |
 * |---|---|---|
 * | 0 | 8 | magic `NISIGIDX` |
 * | 8 | 4 | format version |
 * | 12 | 4 | section count |
 * | 16 | 4 | file length in bytes |
 * | 20 | 4 | zero |
 * | 24 | 8 x sections | per section: offset, length (bytes); offsets 8-aligned |
 *
 * Sections:
 *
 * | id | name | content |
 * |---|---|---|
 * | 0 | META | UTF-8 JSON `SignalIndexMeta`: build date, the sources with their signal, date, licence |
 * | 1 | V4_STARTS | u32 per segment: first address of each segment, ascending; segment 0 starts at 0 |
 * | 2 | V4_SETS | i32 per segment: the entries holding every address of the segment (see below) |
 * | 3 | V6_STARTS | 4 x u32 per segment (the address's 32-bit words, most significant first) |
 * | 4 | V6_SETS | i32 per segment |
 * | 5 | SET_OFFSETS | u32 per set + 1: where each set's entry ids begin in SET_ENTRIES |
 * | 6 | SET_ENTRIES | u32 entry ids, ascending within a set |
 * | 7 | V4_ENTRIES | 16 bytes per IPv4 entry: start u32, end u32, source u16, port u16, label i32 |
 * | 8 | V6_ENTRIES | 40 bytes per IPv6 entry: start 4 x u32, end 4 x u32, source u16, port u16, label i32 |
 * | 9 | ASN_ENTRIES | 12 bytes per AS entry, by AS number: asn u32, source u16, zero u16, label i32 |
 * | 10 | LABEL_OFFSETS | u32 per label + 1 into LABEL_DATA |
 * | 11 | LABEL_DATA | UTF-8 label texts (operator names) |
 *
 * The segments of a family partition its whole address space: an address
 * lies in the last segment whose start is not above it (one binary search,
 * O(log n), no scan). A segment's set value is -1 (no entry), a set id >= 0
 * (several entries: SET_OFFSETS/SET_ENTRIES), or -2 - id for a single entry
 * (the common case needs no set table). Entry ids count IPv4 entries first,
 * then IPv6 ones. Any change to the layout bumps FORMAT_VERSION.
 */

import { decodeSectionHeader, headerBytes, type SectionFileFormat } from '../dataset/section-file.js';

/** ASCII `NISIGIDX`. */
export const MAGIC = Buffer.from('NISIGIDX', 'latin1');
export const FORMAT_VERSION = 1;

export const Section = {
  META: 0,
  V4_STARTS: 1,
  V4_SETS: 2,
  V6_STARTS: 3,
  V6_SETS: 4,
  SET_OFFSETS: 5,
  SET_ENTRIES: 6,
  V4_ENTRIES: 7,
  V6_ENTRIES: 8,
  ASN_ENTRIES: 9,
  LABEL_OFFSETS: 10,
  LABEL_DATA: 11,
} as const;

export type SectionId = (typeof Section)[keyof typeof Section];
export const SECTION_COUNT = 12;

/** The index as a section file: the header fields in the order of the table above. */
export const SIGNAL_INDEX_FORMAT: SectionFileFormat = {
  magic: MAGIC,
  version: FORMAT_VERSION,
  sectionCount: SECTION_COUNT,
  fields: ['version', 'sectionCount', 'fileBytes', 'zero'],
  padEnd: true,
  problems: {
    tooShort: 'shorter than its header',
    wrongMagic: 'not a netintel signal index (bad magic)',
    version: (found, expected) => `format version ${found}, this netintel reads ${expected} (run netintel data update)`,
    fileLength: (actual, said) => `file length ${actual}, header says ${said} (truncated?)`,
  },
};

export const HEADER_BYTES = headerBytes(SIGNAL_INDEX_FORMAT);
export const V4_ENTRY_BYTES = 16;
export const V6_ENTRY_BYTES = 40;
export const ASN_ENTRY_BYTES = 12;
export const NO_SET = -1;

/** A source as recorded in the index: what its entries mean and where they came from. */
export interface SignalSourceMeta {
  name: string;
  signal: string;
  /** The operator every entry of the source belongs to (a cloud's own list), or null. */
  provider: string | null;
  /** The dataset's date (ISO 8601), or null. */
  updated: string | null;
  version: string | null;
  entries: number;
  licence: string | null;
  attribution: string | null;
}

export interface SignalIndexMeta {
  builtAt: string;
  sources: SignalSourceMeta[];
  v4Entries: number;
  v6Entries: number;
  asnEntries: number;
  v4Segments: number;
  v6Segments: number;
  sets: number;
}

export interface SignalIndexHeader {
  version: number;
  fileBytes: number;
  sections: Array<[offset: number, length: number]>;
}

/** Decodes and checks the header; returns a problem description instead of throwing. */
export function decodeHeader(bytes: Uint8Array, actualFileBytes: number): SignalIndexHeader | string {
  const decoded = decodeSectionHeader(SIGNAL_INDEX_FORMAT, bytes, actualFileBytes);
  if (typeof decoded === 'string') return decoded;
  const { version, fileBytes, sections } = decoded;
  const sizeOk = (id: SectionId, unit: number) => sections[id]![1] % unit === 0;
  if (
    !sizeOk(Section.V4_STARTS, 4) ||
    !sizeOk(Section.V6_STARTS, 16) ||
    !sizeOk(Section.SET_OFFSETS, 4) ||
    !sizeOk(Section.SET_ENTRIES, 4) ||
    !sizeOk(Section.V4_ENTRIES, V4_ENTRY_BYTES) ||
    !sizeOk(Section.V6_ENTRIES, V6_ENTRY_BYTES) ||
    !sizeOk(Section.ASN_ENTRIES, ASN_ENTRY_BYTES) ||
    !sizeOk(Section.LABEL_OFFSETS, 4)
  ) {
    return 'a section length is not a whole number of entries';
  }
  if (sections[Section.V4_SETS]![1] !== sections[Section.V4_STARTS]![1]) return 'IPv4 segments and sets differ in count';
  if (sections[Section.V6_SETS]![1] * 4 !== sections[Section.V6_STARTS]![1]) return 'IPv6 segments and sets differ in count';
  if (sections[Section.V4_STARTS]![1] === 0 || sections[Section.V6_STARTS]![1] === 0) return 'a family has no segment';
  return { version, fileBytes, sections };
}
