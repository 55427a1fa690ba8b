/**
 * Layout of the compiled RPKI index (`rpki.idx` in the data dir): the
 * validated ROA payloads of the installed export, arranged so that the
 * payloads covering a route are found by one binary search and a walk up
 * a short chain, with positioned reads (a one-off lookup reads a few KiB,
 * whatever the size of the export). Little-endian throughout; a section
 * file (`src/engine/dataset/section-file.ts`).
 *
 * Header (24 bytes, then the section table): magic `NIRPKIDX`, format
 * version, section count, file length, zero.
 *
 * | id | name | content |
 * |---|---|---|
 * | 0 | META | UTF-8 JSON `RpkiIndexMeta` |
 * | 1 | V4_PREFIXES | 20 bytes per distinct IPv4 prefix: start u32, length u32, parent i32, first payload u32, payloads u32 |
 * | 2 | V6_PREFIXES | 32 bytes per distinct IPv6 prefix: start 4 x u32 (most significant first), length, parent, first payload, payloads |
 * | 3 | VRPS | 8 bytes per payload: asn u32, maxLength u16, trust anchor u16 (0xffff: none) |
 * | 4 | TA_OFFSETS | u32 per trust anchor name + 1 into TA_DATA |
 * | 5 | TA_DATA | UTF-8 trust anchor names |
 *
 * Prefixes are sorted by start, then length (shorter first). CIDR blocks
 * nest or are disjoint, so the prefixes form a tree; `parent` is the index
 * of the nearest shorter prefix holding the prefix (-1 at a root). The
 * payloads covering a route (RFC 6811 §2: same family, prefix length not
 * above the route's, the route's first bits equal to the prefix) are those
 * of the deepest covering prefix and its ancestors, and the deepest one is
 * the last prefix sorting at or before the route, or an ancestor of it.
 * Any change to the layout bumps FORMAT_VERSION.
 */
import { decodeSectionHeader, headerBytes, type SectionFileFormat } from '../dataset/section-file.js';

export const FORMAT_VERSION = 1;

export const Section = {
  META: 0,
  V4_PREFIXES: 1,
  V6_PREFIXES: 2,
  VRPS: 3,
  TA_OFFSETS: 4,
  TA_DATA: 5,
} as const;

export const SECTION_COUNT = 6;
export const V4_PREFIX_BYTES = 20;
export const V6_PREFIX_BYTES = 32;
export const VRP_BYTES = 8;
export const NO_TA = 0xffff;

export const RPKI_INDEX_FORMAT: SectionFileFormat = {
  magic: Buffer.from('NIRPKIDX', 'latin1'),
  version: FORMAT_VERSION,
  sectionCount: SECTION_COUNT,
  fields: ['version', 'sectionCount', 'fileBytes', 'zero'],
  padEnd: true,
  problems: {
    tooShort: 'shorter than its header',
    wrongMagic: 'not a netintel RPKI index (bad magic)',
    version: (found, expected) => `format version ${found}, this netintel reads ${expected} (run netintel data update rpki)`,
    fileLength: (actual, said) => `file length ${actual}, header says ${said} (truncated?)`,
  },
};

export const HEADER_BYTES = headerBytes(RPKI_INDEX_FORMAT);

/** What the index records of the export it was built from. */
export interface RpkiIndexMeta {
  builtAt: string;
  /** The export's own date, else the download's. */
  updated: string | null;
  source: string | null;
  vrps: number;
  v4Prefixes: number;
  v6Prefixes: number;
}

export interface RpkiIndexHeader {
  sections: Array<[offset: number, length: number]>;
  fileBytes: number;
}

/** Decodes and checks the header; returns a problem description instead of throwing. */
export function decodeRpkiHeader(bytes: Uint8Array, actualFileBytes: number): RpkiIndexHeader | string {
  const decoded = decodeSectionHeader(RPKI_INDEX_FORMAT, bytes, actualFileBytes);
  if (typeof decoded === 'string') return decoded;
  const { sections, fileBytes } = decoded;
  const whole = (id: number, unit: number) => sections[id]![1] % unit === 0;
  if (!whole(Section.V4_PREFIXES, V4_PREFIX_BYTES) || !whole(Section.V6_PREFIXES, V6_PREFIX_BYTES) || !whole(Section.VRPS, VRP_BYTES) || !whole(Section.TA_OFFSETS, 4)) {
    return 'a section length is not a whole number of entries';
  }
  return { sections, fileBytes };
}
