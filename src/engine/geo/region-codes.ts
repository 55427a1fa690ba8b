import { readFileSync } from 'node:fs';
import { NetintelError } from '../../errors.js';

/**
 * The region table compiled at install time (scripts/build-region-codes.ts)
 * from the bundled DB-IP city data. DB-IP names regions in English and
 * carries no ISO 3166-2 codes, so they are derived once, offline, by name
 * matching against two sources. One line per region, tab-separated:
 *
 *   country-code  region-name  iso-3166-2-code-or-empty
 */
export interface RegionTable {
  /** ISO 3166-2 code of a region, or null when it could not be derived. */
  code(countryCode: string | null, region: string | null): string | null;
}

export interface RegionEntry {
  country: string;
  region: string;
  code: string | null;
}

const tables = new Map<string, RegionTable>();

/** The region table of a file, read and parsed on first use. */
export function loadRegionTable(path: string): RegionTable {
  let table = tables.get(path);
  if (!table) {
    table = parseRegionTable(readTable(path));
    tables.set(path, table);
  }
  return table;
}

function readTable(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new NetintelError('data_unavailable', `cannot read the region table ${path}: run "npm run build:data"`, {
      cause: error,
      details: { path },
    });
  }
}

export function parseRegionTable(text: string): RegionTable {
  const codes = new Map<string, string>();
  for (const line of text.split('\n')) {
    // The key is the line up to its second tab: country and region as a lookup joins them.
    const keyEnd = line.indexOf('\t', line.indexOf('\t') + 1);
    const code = keyEnd > 0 ? line.slice(keyEnd + 1) : '';
    if (code !== '') codes.set(line.slice(0, keyEnd), code);
  }
  return {
    code: (country, region) => (country && region ? (codes.get(`${country}\t${region}`) ?? null) : null),
  };
}

/** The table's text form: one entry per line, sorted by country and region. */
export function formatRegionTable(entries: readonly RegionEntry[]): string {
  return [...entries]
    .sort((a, b) => (a.country + a.region < b.country + b.region ? -1 : 1))
    .map((entry) => `${entry.country}\t${entry.region}\t${entry.code ?? ''}\n`)
    .join('');
}
