import { readFileSync } from 'node:fs';
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
 * Kept as UTF-8 bytes and searched with indexOf: a one-off lookup reads one
 * line of it, so decoding the whole table (a two-byte string: the names are
 * not all ASCII) or parsing it would cost more than the lookup.
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

export function loadRegionTable(path: string): RegionTable {
  let table = tables.get(path);
  if (!table) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (error) {
      throw new NetintelError('data_unavailable', `cannot read the region table ${path}: run "npm run build:data"`, {
        cause: error,
        details: { path },
      });
    }
    table = searchableTable(bytes);
    tables.set(path, table);
  }
  return table;
}

function searchableTable(bytes: Buffer): RegionTable {
  // By country, then region: the names come from the city database's shared
  // strings, whose hashes V8 keeps, so a repeated lookup builds no key.
  const found = new Map<string, Map<string, string[] | null>>();
  const find = (country: string, region: string): string[] | null => {
    const key = `${country}\t${region}\t`;
    const after = bytes.indexOf(`\n${key}`);
    // lastIndexOf from 0 looks at the start only: the first line has no newline before it.
    const at = after >= 0 ? after + 1 : bytes.lastIndexOf(key, 0) === 0 ? 0 : -1;
    if (at < 0) return null;
    const end = bytes.indexOf(NEWLINE, at);
    return bytes.toString('utf8', at, end < 0 ? bytes.length : end).split('\t');
  };
  const line = (country: string, region: string): string[] | null => {
    let regions = found.get(country);
    if (regions === undefined) {
      regions = new Map();
      found.set(country, regions);
    }
    let fields = regions.get(region);
    if (fields === undefined) {
      fields = find(country, region);
      regions.set(region, fields);
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

/** The table's text form, sorted, one entry per line. */
export function formatRegionTable(entries: readonly RegionEntry[]): string {
  return [...entries]
    .sort((a, b) => (a.country + a.region < b.country + b.region ? -1 : 1))
    .map((entry) => `${entry.country}\t${entry.region}\t${entry.code ?? ''}\t${entry.timezone ?? ''}${entry.majorityZone ? `\t${entry.majorityZone}` : ''}\n`)
    .join('');
}
