import { readFileSync } from 'node:fs';
import { NetintelError } from '../../errors.js';

/**
 * The region table compiled at install time (scripts/build-region-codes.ts)
 * from the bundled DB-IP city data. DB-IP names regions in English and
 * carries neither ISO 3166-2 codes nor time zones, so both are derived once,
 * offline. One line per region, tab-separated:
 *
 *   country-code  region-name  iso-3166-2-code-or-empty  time-zone-or-empty
 *
 * plus one line per country with an empty region name when the whole
 * country has a single time zone. A region's zone is given only when every
 * location of that region in the data lies in that one zone.
 *
 * Kept as text and searched with indexOf: a one-off lookup reads one line of
 * it, so parsing the whole table (as JSON) would cost more than the lookup.
 */
export interface RegionTable {
  /** ISO 3166-2 code of a region, or null when it could not be derived. */
  code(countryCode: string | null, region: string | null): string | null;
  /** The single time zone of a region, else of the whole country, or null when neither has just one. */
  timezone(countryCode: string | null, region: string | null): string | null;
}

export interface RegionEntry {
  country: string;
  /** Empty for a country-wide line. */
  region: string;
  code: string | null;
  timezone: string | null;
}

const tables = new Map<string, RegionTable>();

export function loadRegionTable(path: string): RegionTable {
  let table = tables.get(path);
  if (!table) {
    let text: string;
    try {
      text = `\n${readFileSync(path, 'utf8')}`;
    } catch (error) {
      throw new NetintelError('data_unavailable', `cannot read the region table ${path}: run "npm run build:data"`, {
        cause: error,
        details: { path },
      });
    }
    table = searchableTable(text);
    tables.set(path, table);
  }
  return table;
}

function searchableTable(text: string): RegionTable {
  // By country, then region: the names come from the city database's shared
  // strings, whose hashes V8 keeps, so a repeated lookup builds no key.
  const found = new Map<string, Map<string, string[] | null>>();
  const line = (country: string, region: string): string[] | null => {
    let regions = found.get(country);
    if (regions === undefined) {
      regions = new Map();
      found.set(country, regions);
    }
    let fields = regions.get(region);
    if (fields === undefined) {
      const at = text.indexOf(`\n${country}\t${region}\t`);
      fields = at < 0 ? null : text.slice(at + 1, text.indexOf('\n', at + 1) >>> 0).split('\t');
      regions.set(region, fields);
    }
    return fields;
  };
  return {
    code: (country, region) => (country && region ? line(country, region)?.[2] || null : null),
    // A region's own zone, else the country's when the whole country has one.
    timezone: (country, region) =>
      country ? (region ? line(country, region)?.[3] || null : null) ?? (line(country, '')?.[3] || null) : null,
  };
}

/** The table's text form, sorted, one entry per line. */
export function formatRegionTable(entries: readonly RegionEntry[]): string {
  return [...entries]
    .sort((a, b) => (a.country + a.region < b.country + b.region ? -1 : 1))
    .map((entry) => `${entry.country}\t${entry.region}\t${entry.code ?? ''}\t${entry.timezone ?? ''}\n`)
    .join('');
}
