/**
 * The binary layout of the compiled ASN index (`data/build/asn.idx`), shared
 * by the compiler (`compile-asn-index.ts`) and the reader (`asn-index.ts`),
 * plus the address encodings the index uses.
 *
 * The index answers "which AS announces this address" by binary search over
 * sorted, non-overlapping, inclusive ranges, and "which ranges does AS n
 * hold" through a per-ASN section, without parsing any CSV at run time. It is
 * built to be read either with positioned reads (`pread`, a few syscalls per
 * lookup, nothing loaded) or whole into memory with typed-array views.
 *
 * The file is a section file (`src/engine/dataset/section-file.ts`): a
 * header of fields and a section table, then the sections.
 *
 * ## Conventions
 * - Integers are unsigned 32-bit little-endian (uint32).
 * - IPv4 addresses are uint32 (so `1.2.3.4` is `0x01020304`).
 * - IPv6 addresses are 16 bytes in network (big-endian) order, so byte-wise
 *   comparison is numeric comparison.
 * - Every section starts on an 8-byte boundary; the bytes between sections
 *   are zero.
 * - Ranges are inclusive (`start <= address <= end`), sorted by start, and
 *   never overlap (the compiler resolves overlaps in the source).
 *
 * ## Header (HEADER_BYTES = 184 bytes at offset 0)
 * | offset | size | field |
 * |---|---|---|
 * | 0 | 8 | magic, ASCII `NIASNIDX` |
 * | 8 | 4 | format version (FORMAT_VERSION) |
 * | 12 | 4 | header length in bytes (HEADER_BYTES) |
 * | 16 | 4 | total file length in bytes (a truncated file fails this check) |
 * | 20 | 4 | v4Count: number of IPv4 ranges |
 * | 24 | 4 | v6Count: number of IPv6 ranges |
 * | 28 | 4 | asnCount: number of distinct ASNs |
 * | 32 | 4 | orgCount: number of distinct organisation strings |
 * | 36 | 4 | section count (SECTION_COUNT) |
 * | 40 | 8 x SECTION_COUNT | section table: (offset uint32, byte length uint32), in `Section` order |
 *
 * ## Sections, in `Section` order
 * | # | name | content |
 * |---|---|---|
 * | 0 | V4_STARTS | uint32[v4Count], first address of each IPv4 range, ascending |
 * | 1 | V4_ENDS | uint32[v4Count], last address of each IPv4 range |
 * | 2 | V4_ASNS | uint32[v4Count], the ASN announcing the range |
 * | 3 | V4_ORGS | uint32[v4Count], organisation id (index into ORG_OFFSETS) |
 * | 4 | V4_BUCKETS | uint32[65537]: entry b counts the IPv4 ranges starting before `b << 16` |
 * | 5 | V6_STARTS | 16 bytes x v6Count, first address of each IPv6 range, ascending |
 * | 6 | V6_ENDS | 16 bytes x v6Count, last address of each IPv6 range |
 * | 7 | V6_ASNS | uint32[v6Count] |
 * | 8 | V6_ORGS | uint32[v6Count] |
 * | 9 | ORG_OFFSETS | uint32[orgCount + 1], byte offsets into ORG_DATA; string i is `[off[i], off[i+1])` |
 * | 10 | ORG_DATA | UTF-8 organisation names, concatenated (an empty string means "unknown") |
 * | 11 | ASN_NUMBERS | uint32[asnCount], every ASN present, ascending |
 * | 12 | ASN_ORGS | uint32[asnCount], organisation id of the ASN (that of its first range) |
 * | 13 | ASN_V4_FIRST | uint32[asnCount + 1], CSR offsets: ASN i holds ASN_V4_RANGES[first[i] .. first[i+1]) |
 * | 14 | ASN_V4_RANGES | uint32[], IPv4 range indices grouped by ASN, ascending within a group |
 * | 15 | ASN_V6_FIRST | uint32[asnCount + 1], as ASN_V4_FIRST for IPv6 |
 * | 16 | ASN_V6_RANGES | uint32[], IPv6 range indices grouped by ASN |
 * | 17 | METADATA | UTF-8 JSON `StoredMetadata`: source package, its version, build date, row counts |
 *
 * V4_BUCKETS is derived data (256 KiB) that makes IPv4 lookups cheap in both
 * modes: the range holding an address whose top 16 bits are b has an index in
 * `buckets[b] - 1 .. buckets[b + 1] - 1`, a window of a few entries (at most
 * a few thousand), so a lookup reads one 8-byte bucket pair and one block of
 * starts instead of walking 19 steps of a binary search over the whole table.
 *
 * A reader rejects a file whose magic, version, header length, section count,
 * file length or section bounds disagree with this layout; any change to the
 * layout bumps FORMAT_VERSION (the build step rebuilds the file at install).
 */

import { decodeSectionHeader, fieldOffset, headerBytes, sectionTableOffset, type SectionFileFormat } from '../dataset/section-file.js';

/** ASCII `NIASNIDX`. */
export const MAGIC = new Uint8Array([0x4e, 0x49, 0x41, 0x53, 0x4e, 0x49, 0x44, 0x58]);

/** Bumped on any change to the layout. */
export const FORMAT_VERSION = 1;

/** The sections of the file, in the order of the section table. */
export const Section = {
  V4_STARTS: 0,
  V4_ENDS: 1,
  V4_ASNS: 2,
  V4_ORGS: 3,
  V4_BUCKETS: 4,
  V6_STARTS: 5,
  V6_ENDS: 6,
  V6_ASNS: 7,
  V6_ORGS: 8,
  ORG_OFFSETS: 9,
  ORG_DATA: 10,
  ASN_NUMBERS: 11,
  ASN_ORGS: 12,
  ASN_V4_FIRST: 13,
  ASN_V4_RANGES: 14,
  ASN_V6_FIRST: 15,
  ASN_V6_RANGES: 16,
  METADATA: 17,
} as const;

export type SectionId = (typeof Section)[keyof typeof Section];

export const SECTION_COUNT = 18;

/** IPv4 buckets are keyed by the top 16 bits of the address. */
export const V4_BUCKET_SHIFT = 16;

/** Entries of V4_BUCKETS: one per bucket plus the closing total. */
export const V4_BUCKET_ENTRIES = (1 << (32 - V4_BUCKET_SHIFT)) + 1;

/** The index as a section file: the header fields in the order of the table above. */
export const ASN_INDEX_FORMAT: SectionFileFormat = {
  magic: MAGIC,
  version: FORMAT_VERSION,
  sectionCount: SECTION_COUNT,
  fields: ['version', 'headerBytes', 'fileBytes', 'v4Count', 'v6Count', 'asnCount', 'orgCount', 'sectionCount'],
  padEnd: false,
  problems: {
    tooShort: 'file too short for a header',
    wrongMagic: 'not an ASN index (wrong magic)',
    version: (found, expected) => `format version ${found}, expected ${expected}`,
    fileLength: (actual, said) => `file is ${actual} bytes, header says ${said} (truncated or corrupt)`,
  },
};

/** Byte offsets of the header fields. */
export const HeaderField = {
  MAGIC: 0,
  VERSION: fieldOffset(ASN_INDEX_FORMAT, 'version'),
  HEADER_BYTES: fieldOffset(ASN_INDEX_FORMAT, 'headerBytes'),
  FILE_BYTES: fieldOffset(ASN_INDEX_FORMAT, 'fileBytes'),
  V4_COUNT: fieldOffset(ASN_INDEX_FORMAT, 'v4Count'),
  V6_COUNT: fieldOffset(ASN_INDEX_FORMAT, 'v6Count'),
  ASN_COUNT: fieldOffset(ASN_INDEX_FORMAT, 'asnCount'),
  ORG_COUNT: fieldOffset(ASN_INDEX_FORMAT, 'orgCount'),
  SECTION_COUNT: fieldOffset(ASN_INDEX_FORMAT, 'sectionCount'),
  SECTION_TABLE: sectionTableOffset(ASN_INDEX_FORMAT),
} as const;

export const HEADER_BYTES = headerBytes(ASN_INDEX_FORMAT);

/** Size of one stored IPv6 address. */
export const V6_BYTES = 16;

/** The build facts stored in the METADATA section. */
export interface StoredMetadata {
  /** npm package the ranges come from, e.g. `@ip-location-db/asn`. */
  source: string;
  /** Version of that package. */
  sourceVersion: string;
  /** When the index was compiled, ISO 8601 UTC. */
  builtAt: string;
  /** Source rows skipped as malformed. */
  malformedRows: number;
  /** Source rows that overlapped an earlier range and were resolved (see the compiler). */
  overlappingRows: number;
}

/** Counts and section table decoded from a header; sections as `[offset, byteLength]`. */
export interface Header {
  version: number;
  fileBytes: number;
  v4Count: number;
  v6Count: number;
  asnCount: number;
  orgCount: number;
  sections: Array<readonly [offset: number, byteLength: number]>;
}

/**
 * Decodes and checks a header against the layout and the actual file length.
 * Returns the reason the header is unusable as a string, or the header.
 */
export function decodeHeader(bytes: Uint8Array, actualFileBytes: number): Header | string {
  const decoded = decodeSectionHeader(ASN_INDEX_FORMAT, bytes, actualFileBytes);
  if (typeof decoded === 'string') return decoded;
  const { fields } = decoded;
  const header: Header = {
    version: decoded.version,
    fileBytes: decoded.fileBytes,
    v4Count: fields['v4Count']!,
    v6Count: fields['v6Count']!,
    asnCount: fields['asnCount']!,
    orgCount: fields['orgCount']!,
    sections: decoded.sections,
  };
  const expected = expectedSectionBytes(header);
  for (let i = 0; i < SECTION_COUNT; i++) {
    const want = expected[i];
    if (want !== undefined && want !== header.sections[i]![1]) return `section ${i} has the wrong length`;
  }
  return header;
}

/**
 * The byte length each fixed-size section must have for the header's counts
 * (undefined for the variable-size ones).
 */
export function expectedSectionBytes(counts: Pick<Header, 'v4Count' | 'v6Count' | 'asnCount' | 'orgCount'>): Array<number | undefined> {
  const { v4Count, v6Count, asnCount, orgCount } = counts;
  return [
    4 * v4Count, 4 * v4Count, 4 * v4Count, 4 * v4Count, 4 * V4_BUCKET_ENTRIES,
    V6_BYTES * v6Count, V6_BYTES * v6Count, 4 * v6Count, 4 * v6Count,
    4 * (orgCount + 1), undefined,
    4 * asnCount, 4 * asnCount,
    4 * (asnCount + 1), undefined,
    4 * (asnCount + 1), undefined,
    undefined,
  ];
}
