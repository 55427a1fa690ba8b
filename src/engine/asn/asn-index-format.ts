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

/** Byte offsets of the header fields. */
export const HeaderField = {
  MAGIC: 0,
  VERSION: 8,
  HEADER_BYTES: 12,
  FILE_BYTES: 16,
  V4_COUNT: 20,
  V6_COUNT: 24,
  ASN_COUNT: 28,
  ORG_COUNT: 32,
  SECTION_COUNT: 36,
  SECTION_TABLE: 40,
} as const;

export const HEADER_BYTES = HeaderField.SECTION_TABLE + 8 * SECTION_COUNT;

/** Sections start on multiples of this. */
export const SECTION_ALIGNMENT = 8;

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
  if (bytes.length < HEADER_BYTES || actualFileBytes < HEADER_BYTES) return 'file too short for a header';
  for (let i = 0; i < MAGIC.length; i++) if (bytes[i] !== MAGIC[i]) return 'not an ASN index (wrong magic)';
  const view = new DataView(bytes.buffer, bytes.byteOffset, HEADER_BYTES);
  const u32 = (offset: number): number => view.getUint32(offset, true);
  const version = u32(HeaderField.VERSION);
  if (version !== FORMAT_VERSION) return `format version ${version}, expected ${FORMAT_VERSION}`;
  if (u32(HeaderField.HEADER_BYTES) !== HEADER_BYTES) return 'unexpected header length';
  if (u32(HeaderField.SECTION_COUNT) !== SECTION_COUNT) return 'unexpected section count';
  const fileBytes = u32(HeaderField.FILE_BYTES);
  if (fileBytes !== actualFileBytes) return `file is ${actualFileBytes} bytes, header says ${fileBytes} (truncated or corrupt)`;
  const header: Header = {
    version,
    fileBytes,
    v4Count: u32(HeaderField.V4_COUNT),
    v6Count: u32(HeaderField.V6_COUNT),
    asnCount: u32(HeaderField.ASN_COUNT),
    orgCount: u32(HeaderField.ORG_COUNT),
    sections: [],
  };
  for (let i = 0; i < SECTION_COUNT; i++) {
    const offset = u32(HeaderField.SECTION_TABLE + 8 * i);
    const byteLength = u32(HeaderField.SECTION_TABLE + 8 * i + 4);
    if (offset < HEADER_BYTES || offset % SECTION_ALIGNMENT !== 0 || offset + byteLength > fileBytes) {
      return `section ${i} out of bounds`;
    }
    header.sections.push([offset, byteLength]);
  }
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

/** Rounds a byte offset up to the section alignment. */
export function alignSection(offset: number): number {
  return Math.ceil(offset / SECTION_ALIGNMENT) * SECTION_ALIGNMENT;
}

// Address encodings: the index stores IPv4 as uint32 and IPv6 as 16 network-order bytes. Their
// text forms are the IP engine's (ip-text.ts, ip-address.ts).

/** The 16 network-order bytes at `offset` as an unsigned 128-bit integer. */
export function ipv6ToBigInt(bytes: Uint8Array, offset = 0): bigint {
  const view = new DataView(bytes.buffer, bytes.byteOffset + offset, V6_BYTES);
  return (view.getBigUint64(0, false) << 64n) | view.getBigUint64(8, false);
}

/** Writes an unsigned 128-bit integer as 16 network-order bytes at `offset`. */
export function bigIntToIpv6(value: bigint, out: Uint8Array, offset = 0): void {
  const view = new DataView(out.buffer, out.byteOffset + offset, V6_BYTES);
  view.setBigUint64(0, value >> 64n, false);
  view.setBigUint64(8, value & 0xffff_ffff_ffff_ffffn, false);
}
