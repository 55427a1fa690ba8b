import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { NetintelError } from '../../errors.js';

/**
 * The region table compiled at install time (scripts/build-region-codes.ts)
 * from the bundled DB-IP city data. DB-IP names regions in English and
 * carries neither ISO 3166-2 codes nor time zones, so both are derived once,
 * offline. One line per region, tab-separated:
 *
 *   country-code  region-name  iso-3166-2-code-or-empty  time-zone-or-empty  [majority-zone]
 *
 * plus one line per country with an empty region name when the whole
 * country has a single time zone, or when records without a region span
 * several. A region's zone is given only when every location of that
 * region in the data lies in that one zone; otherwise the fifth field names
 * its most common zone, which a record has unless data/build/zones.idx
 * lists it (src/engine/geo/zone-exceptions.ts).
 *
 * The first line indexes where each country's lines are. Kept as UTF-8
 * bytes and searched with indexOf: a one-off lookup reads one country's
 * lines and one line of those, so decoding the whole table (a two-byte
 * string: the names are not all ASCII) or parsing it would cost more than
 * the lookup.
 */
export interface RegionTable {
  /** ISO 3166-2 code of a region, or null when it could not be derived. */
  code(countryCode: string | null, region: string | null): string | null;
  /** The single time zone of a region, else of the whole country, or null when neither has just one. */
  timezone(countryCode: string | null, region: string | null): string | null;
  /**
   * The most common zone of a region spanning several (region null: of the
   * country's records without one), or null. Only with the zone exception
   * list of the same city database: alone it is wrong for the others.
   */
  majorityZone(countryCode: string | null, region: string | null): string | null;
}

export interface RegionEntry {
  country: string;
  /** Empty for a country-wide line. */
  region: string;
  code: string | null;
  timezone: string | null;
  /** The most common zone when the records span several (then `timezone` is null). */
  majorityZone?: string | null;
}

const tables = new Map<string, RegionTable>();
const NEWLINE = 0x0a;
const HASH = 0x23;
/** The first read of a one-off lookup: the country index line, and often the country's lines too. */
const HEAD_BYTES = 8192;

/**
 * The region table of a file: read whole (`memory`, for runs of many
 * lookups), or (`pread`, a one-off lookup) only its first line, an index of
 * where each country's lines are, and the lines of the countries asked
 * about: 140 KB read into fresh memory cost a one-off lookup about 0.2 ms.
 * Either way a search looks at one country's lines, not the whole table.
 */
export function loadRegionTable(path: string, mode: 'pread' | 'memory' = 'memory'): RegionTable {
  const key = `${mode}\0${path}`;
  let table = tables.get(key);
  if (!table) {
    const linesOf = attempt(path, () => countryLines(mode === 'memory' ? wholeFileReader(path) : positionedReader(path)));
    table = searchableTable((country) => attempt(path, () => linesOf(country)));
    tables.set(key, table);
  }
  return table;
}

/** A file's bytes: `length` from `position` (fewer at its end), or all of them. */
interface Reader {
  read(position: number, length: number): Buffer;
  whole(): Buffer;
}

function wholeFileReader(path: string): Reader {
  let bytes: Buffer | undefined;
  const whole = (): Buffer => (bytes ??= readFileSync(path));
  return { read: (position, length) => whole().subarray(position, position + length), whole };
}

function positionedReader(path: string): Reader {
  return {
    read: (position, length) => {
      const fd = openSync(path, 'r');
      try {
        const bytes = Buffer.allocUnsafe(length);
        return bytes.subarray(0, readSync(fd, bytes, 0, length, position));
      } finally {
        closeSync(fd);
      }
    },
    whole: () => readFileSync(path),
  };
}

function attempt<T>(path: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw new NetintelError('data_unavailable', `cannot read the region table ${path}: run "npm run build:data"`, {
      cause: error,
      details: { path },
    });
  }
}

/**
 * The lines of one country, found through the index line (`#index CC:start:length ...`,
 * byte positions after that line). A file without one is searched whole.
 */
function countryLines(file: Reader): (country: string) => Buffer {
  const head = file.read(0, HEAD_BYTES);
  const indexEnd = head.indexOf(NEWLINE);
  if (head[0] !== HASH || indexEnd < 0) {
    const whole = head.length < HEAD_BYTES ? head : file.whole();
    return () => whole;
  }
  const index = head.toString('latin1', 0, indexEnd);
  const bodyStart = indexEnd + 1;
  return (country) => {
    const entry = index.indexOf(` ${country}:`);
    if (entry < 0) return EMPTY;
    const entryEnd = index.indexOf(' ', entry + 1);
    const [start, length] = index.slice(entry + country.length + 2, entryEnd < 0 ? index.length : entryEnd).split(':').map(Number);
    if (!Number.isInteger(start) || !Number.isInteger(length)) throw new Error(`malformed index entry for ${country}`);
    const from = bodyStart + start!;
    return from + length! <= head.length ? head.subarray(from, from + length!) : file.read(from, length!);
  };
}

const EMPTY = Buffer.alloc(0);

function searchableTable(linesOf: (country: string) => Buffer): RegionTable {
  // By country, then region: the names come from the city database's shared
  // strings, whose hashes V8 keeps, so a repeated lookup builds no key.
  const found = new Map<string, { bytes: Buffer; regions: Map<string, string[] | null> }>();
  const find = (bytes: Buffer, country: string, region: string): string[] | null => {
    const key = `${country}\t${region}\t`;
    const after = bytes.indexOf(`\n${key}`);
    // lastIndexOf from 0 looks at the start only: the first line has no newline before it.
    const at = after >= 0 ? after + 1 : bytes.lastIndexOf(key, 0) === 0 ? 0 : -1;
    if (at < 0) return null;
    const end = bytes.indexOf(NEWLINE, at);
    return bytes.toString('utf8', at, end < 0 ? bytes.length : end).split('\t');
  };
  const line = (country: string, region: string): string[] | null => {
    let lines = found.get(country);
    if (lines === undefined) {
      lines = { bytes: linesOf(country), regions: new Map() };
      found.set(country, lines);
    }
    let fields = lines.regions.get(region);
    if (fields === undefined) {
      fields = find(lines.bytes, country, region);
      lines.regions.set(region, fields);
    }
    return fields;
  };
  return {
    code: (country, region) => (country && region ? line(country, region)?.[2] || null : null),
    // A region's own zone, else the country's when the whole country has one.
    timezone: (country, region) =>
      country ? (region ? line(country, region)?.[3] || null : null) ?? (line(country, '')?.[3] || null) : null,
    majorityZone: (country, region) => (country ? line(country, region ?? '')?.[4] || null : null),
  };
}

/**
 * The table's text form: the index line, then one entry per line, sorted
 * (a country's lines together, its country-wide line first).
 */
export function formatRegionTable(entries: readonly RegionEntry[]): string {
  const lines = [...entries]
    .sort((a, b) => (a.country + a.region < b.country + b.region ? -1 : 1))
    .map((entry) => `${entry.country}\t${entry.region}\t${entry.code ?? ''}\t${entry.timezone ?? ''}${entry.majorityZone ? `\t${entry.majorityZone}` : ''}\n`);
  // Each country's first byte and byte count, after the index line.
  const spans = new Map<string, [start: number, length: number]>();
  let position = 0;
  for (const line of lines) {
    const country = line.slice(0, line.indexOf('\t'));
    const bytes = Buffer.byteLength(line);
    const span = spans.get(country);
    if (span === undefined) spans.set(country, [position, bytes]);
    else span[1] += bytes;
    position += bytes;
  }
  const index = [...spans].map(([country, [start, length]]) => ` ${country}:${start}:${length}`).join('');
  return `#index${index}\n${lines.join('')}`;
}
