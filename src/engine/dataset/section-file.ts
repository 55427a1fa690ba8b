import type { DataFile } from './data-file-reader.js';

/**
 * The sectioned file both compiled datasets are stored in (the ASN index,
 * asn-index-format.ts; the signal index, signal-index-format.ts): written by
 * their compilers, read by their lookups.
 *
 * | offset | size | content |
 * |---|---|---|
 * | 0 | 8 | magic, 8 ASCII bytes naming the dataset |
 * | 8 | 4 x fields | the format's header fields, uint32 little-endian, in its order |
 * | 8 + 4 x fields | 8 x sections | section table: (offset uint32, byte length uint32) per section |
 *
 * Every format's fields include its version, its section count and the file
 * length (so that a truncated file is told at once); it may add its own
 * counts, the header length, or a zero word. Sections start on 8-byte
 * boundaries after the header, in table order; the bytes between them are
 * zero. What a section holds is the format's business; a table of strings
 * is two sections, uint32 offsets (count + 1) and the UTF-8 texts.
 */
export interface SectionFileFormat {
  /** The first 8 bytes of the file. */
  readonly magic: Uint8Array;
  /** Bumped on any change to the format's layout. */
  readonly version: number;
  readonly sectionCount: number;
  /** The header fields after the magic, in file order: those of HeaderFieldName, then the format's own counts. */
  readonly fields: readonly string[];
  /** Whether the file ends on a section boundary (zero bytes after the last section). */
  readonly padEnd: boolean;
  /** How the format's messages say what is wrong with a header. */
  readonly problems: HeaderProblems;
}

/** The header fields the section file fills and checks itself; a format's other fields are its own. */
export type HeaderFieldName = 'version' | 'sectionCount' | 'fileBytes' | 'headerBytes' | 'zero';

export interface HeaderProblems {
  readonly tooShort: string;
  readonly wrongMagic: string;
  version(found: number, expected: number): string;
  fileLength(actual: number, said: number): string;
}

/** A decoded header: every field by name, and the section table as `[offset, byteLength]`. */
export interface SectionFileHeader {
  version: number;
  fileBytes: number;
  fields: Readonly<Record<string, number>>;
  sections: Array<[offset: number, byteLength: number]>;
}

/** Sections start on multiples of this. */
export const SECTION_ALIGNMENT = 8;

const MAGIC_BYTES = 8;

/** Rounds a byte offset up to the section alignment. */
export function alignSection(offset: number): number {
  return Math.ceil(offset / SECTION_ALIGNMENT) * SECTION_ALIGNMENT;
}

/** Where a header field lies in the file. */
export function fieldOffset(format: SectionFileFormat, name: string): number {
  const index = format.fields.indexOf(name);
  if (index < 0) throw new RangeError(`the format has no header field ${name}`);
  return MAGIC_BYTES + 4 * index;
}

/** Where the section table starts. */
export function sectionTableOffset(format: SectionFileFormat): number {
  return MAGIC_BYTES + 4 * format.fields.length;
}

/** The header's length: magic, fields and section table. */
export function headerBytes(format: SectionFileFormat): number {
  return sectionTableOffset(format) + 8 * format.sectionCount;
}

/**
 * Decodes and checks a header against the format and the actual file length:
 * magic, version, header length (when the format stores it), section count,
 * file length, and every section inside the file on an aligned offset.
 * Returns what is wrong as a string (the format's words), or the header.
 */
export function decodeSectionHeader(format: SectionFileFormat, bytes: Uint8Array, actualFileBytes: number): SectionFileHeader | string {
  const length = headerBytes(format);
  if (bytes.length < length || actualFileBytes < length) return format.problems.tooShort;
  for (let i = 0; i < MAGIC_BYTES; i++) if (bytes[i] !== format.magic[i]) return format.problems.wrongMagic;
  const view = new DataView(bytes.buffer, bytes.byteOffset, length);
  const fields: Record<string, number> = {};
  format.fields.forEach((name, index) => (fields[name] = view.getUint32(MAGIC_BYTES + 4 * index, true)));
  const version = fields['version']!;
  if (version !== format.version) return format.problems.version(version, format.version);
  if (fields['headerBytes'] !== undefined && fields['headerBytes'] !== length) return 'unexpected header length';
  if (fields['sectionCount'] !== format.sectionCount) return 'unexpected section count';
  const fileBytes = fields['fileBytes']!;
  if (fileBytes !== actualFileBytes) return format.problems.fileLength(actualFileBytes, fileBytes);
  const table = sectionTableOffset(format);
  const sections: SectionFileHeader['sections'] = [];
  for (let i = 0; i < format.sectionCount; i++) {
    const offset = view.getUint32(table + 8 * i, true);
    const byteLength = view.getUint32(table + 8 * i + 4, true);
    if (offset < length || offset % SECTION_ALIGNMENT !== 0 || offset + byteLength > fileBytes) return `section ${i} out of bounds`;
    sections.push([offset, byteLength]);
  }
  return { version, fileBytes, fields, sections };
}

/** A section file being written: its bytes, header filled in, sections zero until the compiler fills them. */
export interface SectionFileWriter {
  readonly bytes: Buffer;
  readonly view: DataView;
  /** Where each section starts. */
  readonly offsets: readonly number[];
  /** Writes uint32 little-endian values from the start of a section. */
  putU32s(section: number, values: ArrayLike<number>): void;
  /** Copies bytes to the start of a section. */
  putBytes(section: number, bytes: Uint8Array): void;
  /** Writes a string table into its offsets section and its data section. */
  putStrings(offsetsSection: number, dataSection: number, strings: EncodedStrings): void;
}

/**
 * Lays out a section file of sections of the given byte lengths, in order,
 * and writes its header: the section file's own fields, then `counts` for
 * the format's others.
 *
 * @throws what `tooLarge` makes when the file would pass the 4 GiB its
 *   offsets can address; RangeError for a count the format does not have.
 */
export function startSectionFile(
  format: SectionFileFormat,
  lengths: readonly number[],
  counts: Readonly<Record<string, number>>,
  tooLarge: (fileBytes: number) => Error,
): SectionFileWriter {
  if (lengths.length !== format.sectionCount) throw new RangeError(`${lengths.length} section lengths for ${format.sectionCount} sections`);
  const offsets: number[] = [];
  let end = headerBytes(format);
  for (const length of lengths) {
    const offset = alignSection(end);
    offsets.push(offset);
    end = offset + length;
  }
  const fileBytes = format.padEnd ? alignSection(end) : end;
  if (fileBytes > 0xffff_ffff) throw tooLarge(fileBytes);
  const own: Record<HeaderFieldName, number> = { version: format.version, sectionCount: format.sectionCount, fileBytes, headerBytes: headerBytes(format), zero: 0 };
  const bytes = Buffer.alloc(fileBytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  bytes.set(format.magic, 0);
  format.fields.forEach((name, index) => {
    const value = name in own ? own[name as HeaderFieldName] : counts[name];
    if (value === undefined) throw new RangeError(`no value for the header field ${name}`);
    view.setUint32(MAGIC_BYTES + 4 * index, value, true);
  });
  const table = sectionTableOffset(format);
  lengths.forEach((length, section) => {
    view.setUint32(table + 8 * section, offsets[section]!, true);
    view.setUint32(table + 8 * section + 4, length, true);
  });
  const putU32s = (section: number, values: ArrayLike<number>): void => {
    const at = offsets[section]!;
    for (let i = 0; i < values.length; i++) view.setUint32(at + 4 * i, values[i]!, true);
  };
  return {
    bytes,
    view,
    offsets,
    putU32s,
    putBytes: (section, data) => bytes.set(data, offsets[section]!),
    putStrings(offsetsSection, dataSection, strings) {
      putU32s(offsetsSection, strings.offsets);
      bytes.set(strings.data, offsets[dataSection]!);
    },
  };
}

/** A string table as stored: offsets into the data (one per string, then the end), and the UTF-8 data. */
export interface EncodedStrings {
  offsets: number[];
  data: Buffer;
}

/** Strings each stored once, numbered in the order they were first seen. */
export class StringTable {
  readonly texts: string[] = [];
  private readonly ids = new Map<string, number>();

  /** The string's number, given it the first time. */
  id(text: string): number {
    let id = this.ids.get(text);
    if (id === undefined) {
      id = this.texts.length;
      this.texts.push(text);
      this.ids.set(text, id);
    }
    return id;
  }

  encode(): EncodedStrings {
    const encoded = this.texts.map((text) => Buffer.from(text, 'utf8'));
    const offsets = [0];
    for (const bytes of encoded) offsets.push(offsets[offsets.length - 1]! + bytes.length);
    return { offsets, data: Buffer.concat(encoded) };
  }
}

/** How a reader says a file is unusable, in its dataset's words. */
export type Corrupt = (reason: string) => Error;

/**
 * Reads of the sections of an open section file, each checked to lie inside
 * its section: a read outside one is the format's corrupt-file error, never
 * a read of another section's bytes.
 */
export class SectionReader {
  constructor(
    private readonly data: DataFile,
    private readonly sections: ReadonlyArray<readonly [offset: number, byteLength: number]>,
    private readonly corrupt: Corrupt,
    /** A binary search reads single entries until this many bytes of the section are left, then reads them at once. */
    private readonly windowBytes: number,
  ) {}

  /** `length` bytes at `byteOffset` of a section. */
  read(section: number, byteOffset: number, length: number): Buffer {
    const [offset, byteLength] = this.sections[section]!;
    if (byteOffset < 0 || byteOffset + length > byteLength) throw this.corrupt(`read outside section ${section}`);
    return this.data.read(offset + byteOffset, length);
  }

  u32(section: number, index: number): number {
    return this.read(section, 4 * index, 4).readUInt32LE(0);
  }

  i32(section: number, index: number): number {
    return this.read(section, 4 * index, 4).readInt32LE(0);
  }

  /** Where string `id` of a string table lies in its data section: `[from, to)`, as stored (unchecked). */
  stringBounds(offsetsSection: number, id: number): [from: number, to: number] {
    const bounds = this.read(offsetsSection, 4 * id, 8);
    return [bounds.readUInt32LE(0), bounds.readUInt32LE(4)];
  }

  /**
   * The first index in `from .. to` of a section of sorted `unit`-byte
   * entries whose entry is above the value sought (`to` if none):
   * `compare(bytes, at)` gives the sign of (the entry at `at` of `bytes`)
   * minus that value.
   */
  upperBound(section: number, from: number, to: number, unit: number, compare: (bytes: Buffer, at: number) => number): number {
    let lo = from;
    let hi = to;
    while (unit * (hi - lo) > this.windowBytes) {
      const mid = (lo + hi) >>> 1;
      if (compare(this.read(section, unit * mid, unit), 0) <= 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo >= hi) return lo;
    const window = this.read(section, unit * lo, unit * (hi - lo));
    const base = lo;
    let a = 0;
    let b = hi - lo;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (compare(window, unit * mid) <= 0) a = mid + 1;
      else b = mid;
    }
    return base + a;
  }

  /** {@link SectionReader.upperBound} over a section of sorted uint32 little-endian entries. */
  upperBoundU32(section: number, from: number, to: number, value: number): number {
    return this.upperBound(section, from, to, 4, (bytes, at) => (bytes.readUInt32LE(at) <= value ? -1 : 1));
  }
}
