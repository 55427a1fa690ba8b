import { mkdir, open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { NetintelError } from '../../errors.js';
import { writeFileAtomically } from '../../write-file-atomically.js';
import { AsnIndex, MAX_ASN } from './asn-index.js';
import { startSectionFile, StringTable } from '../dataset/section-file.js';
import {
  ASN_INDEX_FORMAT,
  Section,
  SECTION_COUNT,
  type StoredMetadata,
  V4_BUCKET_ENTRIES,
  V4_BUCKET_SHIFT,
  V6_BYTES,
} from './asn-index-format.js';
import { ipv6ToBigInt } from '../address/ipv6-integer.js';
import { parseIpv4Fast, parseIpv6Into } from '../address/ip-text.js';

/**
 * Compiles the ASN CSV files of `@ip-location-db/asn` into the binary index
 * described in `asn-index-format.ts`. Runs at install time (`npm run
 * build:data`), so that no run ever parses the 30 MB of CSV again.
 *
 * The CSV is split by hand rather than with a CSV library: only the last
 * column (the organisation) is ever quoted, the others are addresses and an
 * integer, and a 30-line RFC 4180 splitter keeps the install step free of a
 * dependency used nowhere else.
 */

/** Options of `compileAsnIndex`. */
export interface CompileAsnIndexOptions {
  /** Path of `asn-ipv4.csv`: `start,end,asn,organisation` with dotted-quad addresses. */
  v4Csv: string;
  /** Path of `asn-ipv6.csv`: the same with IPv6 text addresses. */
  v6Csv: string;
  /** Where to write the index; replaced atomically (temp file in the same directory, then rename). */
  outFile: string;
  /** Version of the source package, stored in the index metadata. */
  sourceVersion: string;
  /** Name of the source package, stored in the metadata. Default `@ip-location-db/asn`. */
  source?: string;
  /** Build date stored in the metadata. Default: now. */
  builtAt?: Date;
  /**
   * Fewer ranges than this after parsing means a broken or truncated source,
   * and the build fails instead of writing a useless index. Default
   * `{ v4: 100_000, v6: 10_000 }` (the package holds about 412k and 103k).
   */
  minRanges?: { v4: number; v6: number };
  /** The build fails when more than this share of the rows is malformed. Default 0.01. */
  maxMalformedRatio?: number;
}

/** A skipped source row, for diagnostics. */
export interface MalformedRow {
  file: string;
  /** 1-based line number of the first line of the record. */
  line: number;
  reason: string;
}

/** What `compileAsnIndex` wrote. */
export interface CompileAsnIndexResult {
  /** IPv4 ranges in the index (after overlap resolution). */
  v4Ranges: number;
  /** IPv6 ranges in the index. */
  v6Ranges: number;
  /** Distinct autonomous system numbers. */
  asns: number;
  /** Distinct organisation names. */
  organizations: number;
  /** Size of the written index file in bytes. */
  bytes: number;
  /** Source rows skipped as malformed. */
  malformedRows: number;
  /** The first few of them (at most 5). */
  malformedSamples: MalformedRow[];
  /** Source rows that started inside an earlier range (resolved as described on `compileAsnIndex`). */
  overlappingRows: number;
}

const DEFAULT_SOURCE = '@ip-location-db/asn';
const DEFAULT_MIN_RANGES = { v4: 100_000, v6: 10_000 };
const DEFAULT_MAX_MALFORMED_RATIO = 0.01;
const MAX_SAMPLES = 5;
/** A quoted field may span lines (RFC 4180), but no organisation name is this long. */
const MAX_RECORD_CHARS = 4096;

/**
 * Streams both CSV files line by line, validates every row (wrong field
 * count, bad address, start after end, ASN not a 32-bit decimal: skipped and
 * counted), and writes the index atomically.
 *
 * Overlapping source ranges are resolved so that every address keeps exactly
 * one answer: the covering row with the greatest start wins (the more
 * specific one when a range is nested in another; on an equal start, the
 * shorter one; for identical ranges, the first in the file). The row that
 * loses is cut around the winner.
 *
 * The new file is read back and verified entry by entry before it replaces
 * the old one. Throws `data_unavailable` when a CSV cannot be read, when too
 * many rows are malformed, when the result is suspiciously small (see
 * `minRanges`) or fails verification; the previous index, if any, is then
 * left in place.
 */
export async function compileAsnIndex(options: CompileAsnIndexOptions): Promise<CompileAsnIndexResult> {
  const orgs = new StringTable();
  const stats: ReadStats = { rows: 0, malformed: 0, samples: [] };

  const v4Rows = emptyRows<number>();
  await readRanges(options.v4Csv, stats, (fields) => {
    const start = parseIpv4Fast(fields[0]!);
    const end = parseIpv4Fast(fields[1]!);
    if (start < 0 || end < 0) return 'not an IPv4 address';
    if (start > end) return 'range start after end';
    return addRow(v4Rows, start, end, fields[2]!, fields[3]!, orgs);
  });

  const v6Rows = emptyRows<bigint>();
  const scratch = new Uint8Array(V6_BYTES);
  await readRanges(options.v6Csv, stats, (fields) => {
    if (!parseIpv6Into(fields[0]!, scratch)) return 'not an IPv6 address';
    const start = ipv6ToBigInt(scratch);
    if (!parseIpv6Into(fields[1]!, scratch)) return 'not an IPv6 address';
    const end = ipv6ToBigInt(scratch);
    if (start > end) return 'range start after end';
    return addRow(v6Rows, start, end, fields[2]!, fields[3]!, orgs);
  });

  const maxMalformedRatio = options.maxMalformedRatio ?? DEFAULT_MAX_MALFORMED_RATIO;
  if (stats.malformed > stats.rows * maxMalformedRatio) {
    throw new NetintelError(
      'data_unavailable',
      `ASN source has ${stats.malformed} malformed rows out of ${stats.rows} (first: ${describeSample(stats.samples[0])}); refusing to write ${options.outFile}`,
      { details: { v4_csv: options.v4Csv, v6_csv: options.v6Csv, malformed_rows: stats.malformed, rows: stats.rows } },
    );
  }

  const v4 = flatten(v4Rows, numberKeys);
  const v6 = flatten(v6Rows, bigintKeys);

  const minRanges = options.minRanges ?? DEFAULT_MIN_RANGES;
  if (v4.ranges.starts.length < minRanges.v4 || v6.ranges.starts.length < minRanges.v6) {
    throw new NetintelError(
      'data_unavailable',
      `ASN source gave only ${v4.ranges.starts.length} IPv4 and ${v6.ranges.starts.length} IPv6 ranges ` +
        `(expected at least ${minRanges.v4} and ${minRanges.v6}); refusing to write ${options.outFile}`,
      { details: { v4_csv: options.v4Csv, v6_csv: options.v6Csv } },
    );
  }

  const metadata: StoredMetadata = {
    source: options.source ?? DEFAULT_SOURCE,
    sourceVersion: options.sourceVersion,
    builtAt: (options.builtAt ?? new Date()).toISOString(),
    malformedRows: stats.malformed,
    overlappingRows: v4.overlapping + v6.overlapping,
  };
  const layout = layoutIndex(v4.ranges, v6.ranges, orgs.texts);
  const bytes = encodeIndex(layout, metadata);
  await writeVerified(options.outFile, bytes, (written) => {
    const index = AsnIndex.open(written, { mode: 'memory' });
    try {
      index.verify();
    } finally {
      index.close();
    }
  });

  return {
    v4Ranges: layout.v4.starts.length,
    v6Ranges: layout.v6.starts.length,
    asns: layout.asnNumbers.length,
    organizations: layout.orgs.texts.length,
    bytes: bytes.length,
    malformedRows: stats.malformed,
    malformedSamples: stats.samples,
    overlappingRows: metadata.overlappingRows,
  };
}

// Reading

interface ReadStats {
  rows: number;
  malformed: number;
  samples: MalformedRow[];
}

/** Column arrays of ranges; K is number for IPv4, bigint for IPv6. */
interface Rows<K> {
  starts: K[];
  ends: K[];
  asns: number[];
  orgs: number[];
}

function emptyRows<K>(): Rows<K> {
  return { starts: [], ends: [], asns: [], orgs: [] };
}

/** Validates the ASN column and appends the row; returns the reason when malformed. */
function addRow<K>(rows: Rows<K>, start: K, end: K, asnText: string, organization: string, orgs: StringTable): string | null {
  if (!/^\d{1,10}$/.test(asnText)) return 'ASN is not a decimal number';
  const asn = Number(asnText);
  if (asn > MAX_ASN) return `ASN above ${MAX_ASN}`;
  rows.starts.push(start);
  rows.ends.push(end);
  rows.asns.push(asn);
  rows.orgs.push(orgs.id(organization.trim()));
  return null;
}

/**
 * Reads a CSV file record by record; `accept` gets the four fields of each
 * record and returns null, or the reason the row is malformed.
 */
async function readRanges(file: string, stats: ReadStats, accept: (fields: string[]) => string | null): Promise<void> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    throw new NetintelError('data_unavailable', `cannot read ASN source ${file}: ${errorCode(error)}`, {
      cause: error,
      details: { path: file },
    });
  }
  const lines = createInterface({ input: handle.createReadStream({ encoding: 'utf8' }), crlfDelay: Infinity });
  const malformed = (line: number, reason: string): void => {
    stats.malformed++;
    if (stats.samples.length < MAX_SAMPLES) stats.samples.push({ file, line, reason });
  };
  let lineNumber = 0;
  let pending = '';
  let pendingLine = 0;
  try {
    for await (let line of lines) {
      lineNumber++;
      if (lineNumber === 1 && line.charCodeAt(0) === 0xfeff) line = line.slice(1);
      const text = pending === '' ? line : `${pending}\n${line}`;
      if (pending === '') {
        if (line === '') continue;
        pendingLine = lineNumber;
      }
      const fields = splitCsvRecord(text);
      if (fields === OPEN_QUOTE) {
        if (text.length <= MAX_RECORD_CHARS) {
          pending = text;
          continue;
        }
        pending = '';
        stats.rows++;
        malformed(pendingLine, 'unterminated quoted field');
        continue;
      }
      pending = '';
      stats.rows++;
      if (fields === null) malformed(pendingLine, 'invalid quoting');
      else if (fields.length !== 4) malformed(pendingLine, `${fields.length} fields, expected 4`);
      else {
        const reason = accept(fields);
        if (reason !== null) malformed(pendingLine, reason);
      }
    }
  } catch (error) {
    throw new NetintelError('data_unavailable', `cannot read ASN source ${file}: ${errorCode(error)}`, {
      cause: error,
      details: { path: file },
    });
  } finally {
    lines.close();
    await handle.close();
  }
  if (pending !== '') {
    stats.rows++;
    malformed(pendingLine, 'unterminated quoted field');
  }
}

const OPEN_QUOTE = Symbol('open quote');

/**
 * Splits one RFC 4180 record: fields separated by commas; a field starting
 * with `"` is quoted, may hold commas and line breaks, and writes `"` as `""`.
 * Returns OPEN_QUOTE when a quoted field is still open at the end of the text
 * (the record continues on the next line) and null when the quoting is invalid
 * (text after a closing quote, or a quote inside an unquoted field).
 */
function splitCsvRecord(text: string): string[] | null | typeof OPEN_QUOTE {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (text.charCodeAt(i) === 0x22) {
      let value = '';
      let from = i + 1;
      for (;;) {
        const quote = text.indexOf('"', from);
        if (quote === -1) return OPEN_QUOTE;
        value += text.slice(from, quote);
        if (text.charCodeAt(quote + 1) === 0x22) {
          value += '"';
          from = quote + 2;
          continue;
        }
        i = quote + 1;
        break;
      }
      fields.push(value);
      if (i === text.length) return fields;
      if (text.charCodeAt(i) !== 0x2c) return null;
      i++;
    } else {
      const comma = text.indexOf(',', i);
      const value = comma === -1 ? text.slice(i) : text.slice(i, comma);
      if (value.includes('"')) return null;
      fields.push(value);
      if (comma === -1) return fields;
      i = comma + 1;
    }
  }
}

function errorCode(error: unknown): string {
  if (error instanceof Error) return (error as NodeJS.ErrnoException).code ?? error.message;
  return String(error);
}

function describeSample(sample: MalformedRow | undefined): string {
  return sample === undefined ? 'none' : `${sample.file}:${sample.line} ${sample.reason}`;
}

// Overlap resolution

interface KeyOps<K> {
  compare(a: K, b: K): number;
  next(a: K): K;
  previous(a: K): K;
}

const numberKeys: KeyOps<number> = {
  compare: (a, b) => a - b,
  next: (a) => a + 1,
  previous: (a) => a - 1,
};

const bigintKeys: KeyOps<bigint> = {
  compare: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
  next: (a) => a + 1n,
  previous: (a) => a - 1n,
};

/**
 * Sorts the rows and cuts overlapping ones so that the result is sorted and
 * disjoint, with the rule given on `compileAsnIndex`. A sweep over the rows
 * in start order keeps a stack of the ranges still open; the top of the stack
 * (latest start) owns every address from the cursor up to the next start.
 */
function flatten<K>(rows: Rows<K>, keys: KeyOps<K>): { ranges: Rows<K>; overlapping: number } {
  const { starts, ends } = rows;
  const order = Array.from({ length: starts.length }, (_, i) => i);
  // Equal starts: longer first, so the shorter one is pushed later and wins; identical
  // ranges: later rows first, so the first row of the file wins.
  order.sort((a, b) => keys.compare(starts[a]!, starts[b]!) || keys.compare(ends[b]!, ends[a]!) || b - a);

  const out = emptyRows<K>();
  const emit = (row: number, from: K, to: K): void => {
    out.starts.push(from);
    out.ends.push(to);
    out.asns.push(rows.asns[row]!);
    out.orgs.push(rows.orgs[row]!);
  };
  const open: number[] = [];
  let overlapping = 0;
  let cursor = starts[order[0] ?? 0] as K;
  const closeUntil = (limit: K | null): void => {
    while (open.length > 0) {
      const top = open[open.length - 1]!;
      const end = ends[top]!;
      if (limit !== null && keys.compare(end, limit) >= 0) return;
      if (keys.compare(cursor, end) <= 0) {
        emit(top, cursor, end);
        cursor = keys.next(end);
      }
      open.pop();
    }
  };
  for (const row of order) {
    const start = starts[row]!;
    closeUntil(start);
    if (open.length > 0) {
      overlapping++;
      if (keys.compare(cursor, start) < 0) emit(open[open.length - 1]!, cursor, keys.previous(start));
    }
    cursor = start;
    open.push(row);
  }
  closeUntil(null);
  return { ranges: out, overlapping };
}

// Writing

interface Layout {
  v4: Rows<number>;
  v6: Rows<bigint>;
  /** The organisations of the ranges kept, numbered in order of first use. */
  orgs: StringTable;
  asnNumbers: number[];
  asnOrgs: number[];
  asnV4First: number[];
  asnV4Ranges: number[];
  asnV6First: number[];
  asnV6Ranges: number[];
}

/**
 * Renumbers organisations in order of first use (so names of rows cut away
 * entirely are dropped) and groups range indices by ASN.
 */
function layoutIndex(v4: Rows<number>, v6: Rows<bigint>, orgValues: readonly string[]): Layout {
  const orgs = new StringTable();
  const renumber = (rows: Rows<unknown>): void => {
    for (let i = 0; i < rows.orgs.length; i++) rows.orgs[i] = orgs.id(orgValues[rows.orgs[i]!]!);
  };
  renumber(v4);
  renumber(v6);

  const groups = new Map<number, { org: number; v4: number[]; v6: number[] }>();
  const group = (asn: number, org: number) => {
    let entry = groups.get(asn);
    if (entry === undefined) {
      entry = { org, v4: [], v6: [] };
      groups.set(asn, entry);
    }
    return entry;
  };
  for (let i = 0; i < v4.asns.length; i++) group(v4.asns[i]!, v4.orgs[i]!).v4.push(i);
  for (let i = 0; i < v6.asns.length; i++) group(v6.asns[i]!, v6.orgs[i]!).v6.push(i);

  const asnNumbers = [...groups.keys()].sort((a, b) => a - b);
  const layout: Layout = {
    v4,
    v6,
    orgs,
    asnNumbers,
    asnOrgs: [],
    asnV4First: [0],
    asnV4Ranges: [],
    asnV6First: [0],
    asnV6Ranges: [],
  };
  for (const asn of asnNumbers) {
    const entry = groups.get(asn)!;
    layout.asnOrgs.push(entry.org);
    for (const index of entry.v4) layout.asnV4Ranges.push(index);
    for (const index of entry.v6) layout.asnV6Ranges.push(index);
    layout.asnV4First.push(layout.asnV4Ranges.length);
    layout.asnV6First.push(layout.asnV6Ranges.length);
  }
  return layout;
}

/** Serialises the layout into the bytes of the index file. */
function encodeIndex(layout: Layout, metadata: StoredMetadata): Buffer {
  const orgs = layout.orgs.encode();
  const metadataBytes = Buffer.from(JSON.stringify(metadata), 'utf8');

  const v4Count = layout.v4.starts.length;
  const v6Count = layout.v6.starts.length;
  const sectionBytes: number[] = new Array<number>(SECTION_COUNT);
  sectionBytes[Section.V4_STARTS] = 4 * v4Count;
  sectionBytes[Section.V4_ENDS] = 4 * v4Count;
  sectionBytes[Section.V4_ASNS] = 4 * v4Count;
  sectionBytes[Section.V4_ORGS] = 4 * v4Count;
  sectionBytes[Section.V4_BUCKETS] = 4 * V4_BUCKET_ENTRIES;
  sectionBytes[Section.V6_STARTS] = V6_BYTES * v6Count;
  sectionBytes[Section.V6_ENDS] = V6_BYTES * v6Count;
  sectionBytes[Section.V6_ASNS] = 4 * v6Count;
  sectionBytes[Section.V6_ORGS] = 4 * v6Count;
  sectionBytes[Section.ORG_OFFSETS] = 4 * orgs.offsets.length;
  sectionBytes[Section.ORG_DATA] = orgs.data.length;
  sectionBytes[Section.ASN_NUMBERS] = 4 * layout.asnNumbers.length;
  sectionBytes[Section.ASN_ORGS] = 4 * layout.asnOrgs.length;
  sectionBytes[Section.ASN_V4_FIRST] = 4 * layout.asnV4First.length;
  sectionBytes[Section.ASN_V4_RANGES] = 4 * layout.asnV4Ranges.length;
  sectionBytes[Section.ASN_V6_FIRST] = 4 * layout.asnV6First.length;
  sectionBytes[Section.ASN_V6_RANGES] = 4 * layout.asnV6Ranges.length;
  sectionBytes[Section.METADATA] = metadataBytes.length;

  const counts = { v4Count, v6Count, asnCount: layout.asnNumbers.length, orgCount: layout.orgs.texts.length };
  const file = startSectionFile(ASN_INDEX_FORMAT, sectionBytes, counts, (fileBytes) =>
    new NetintelError('data_unavailable', `ASN index would be ${fileBytes} bytes, beyond the 4 GiB the format addresses`),
  );
  const { view, offsets, putU32s } = file;
  const putV6s = (section: number, values: readonly bigint[]): void => {
    let at = offsets[section]!;
    for (const value of values) {
      view.setBigUint64(at, value >> 64n, false);
      view.setBigUint64(at + 8, value & 0xffff_ffff_ffff_ffffn, false);
      at += V6_BYTES;
    }
  };
  putU32s(Section.V4_STARTS, layout.v4.starts);
  putU32s(Section.V4_ENDS, layout.v4.ends);
  putU32s(Section.V4_ASNS, layout.v4.asns);
  putU32s(Section.V4_ORGS, layout.v4.orgs);
  putU32s(Section.V4_BUCKETS, v4Buckets(layout.v4.starts));
  putV6s(Section.V6_STARTS, layout.v6.starts);
  putV6s(Section.V6_ENDS, layout.v6.ends);
  putU32s(Section.V6_ASNS, layout.v6.asns);
  putU32s(Section.V6_ORGS, layout.v6.orgs);
  file.putStrings(Section.ORG_OFFSETS, Section.ORG_DATA, orgs);
  putU32s(Section.ASN_NUMBERS, layout.asnNumbers);
  putU32s(Section.ASN_ORGS, layout.asnOrgs);
  putU32s(Section.ASN_V4_FIRST, layout.asnV4First);
  putU32s(Section.ASN_V4_RANGES, layout.asnV4Ranges);
  putU32s(Section.ASN_V6_FIRST, layout.asnV6First);
  putU32s(Section.ASN_V6_RANGES, layout.asnV6Ranges);
  file.putBytes(Section.METADATA, metadataBytes);
  return file.bytes;
}

/** Entry b: how many of the sorted starts are below `b << V4_BUCKET_SHIFT`. */
function v4Buckets(starts: readonly number[]): number[] {
  const buckets: number[] = [];
  let i = 0;
  for (let bucket = 0; bucket < V4_BUCKET_ENTRIES; bucket++) {
    const limit = bucket * 2 ** V4_BUCKET_SHIFT;
    while (i < starts.length && starts[i]! < limit) i++;
    buckets.push(i);
  }
  return buckets;
}

/**
 * Writes the index so that a reader sees the old file or a verified new
 * one, never a partial or unchecked file.
 */
async function writeVerified(path: string, bytes: Uint8Array, check: (written: string) => void): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true });
    await writeFileAtomically(path, bytes, { check });
  } catch (error) {
    if (error instanceof NetintelError) throw error;
    throw new NetintelError('data_unavailable', `cannot write ASN index ${path}: ${errorCode(error)}`, {
      cause: error,
      details: { path },
    });
  }
}
