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

function readTable(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new NetintelError('data_unavailable', `cannot read the region table ${path}: run "npm run build:data"`, {
      cause: error,
      details: { path },
    });
  }
}

/** The table of a file's bytes (UTF-8) or of its text. */
export function parseRegionTable(table: Buffer | string): RegionTable {
  // A one-off lookup asks for one region: finding its line costs less than
  // splitting all of them into a map at every start. What was found is kept,
  // so a bulk run searches the table once per distinct region.
  const bytes = typeof table === 'string' ? Buffer.from(table) : table;
  const found = new Map<string, string | null>();
  return {
    code(country, region) {
      if (!country || !region) return null;
      const key = `${country}\t${region}\t`;
      let code = found.get(key);
      if (code === undefined) {
        code = codeOfLine(bytes, key);
        found.set(key, code);
      }
      return code;
    },
  };
}

/**
 * The code on the line that starts with `key` (country, tab, region, tab), or
 * null. The code is read from the bytes: ISO 3166-2 codes are ASCII, so it
 * is a one-byte string of its own. Cut from the text of the whole table,
 * which holds non-Latin-1 region names, it would be a two-byte string, and
 * so would every JSON answer that holds it, which costs the API a conversion
 * of each answer from UTF-16 when it is written.
 */
function codeOfLine(bytes: Buffer, key: string): string | null {
  const keyBytes = Buffer.from(key);
  const atStart = bytes.subarray(0, keyBytes.length).equals(keyBytes);
  const start = atStart ? 0 : bytes.indexOf(`\n${key}`) + 1;
  if (start === 0 && !atStart) return null;
  const from = start + keyBytes.length;
  const end = bytes.indexOf(0x0a, from);
  const code = bytes.toString('latin1', from, end === -1 ? bytes.length : end);
  return code === '' ? null : code;
}

/** The table's text form: one entry per line, sorted by country and region. */
export function formatRegionTable(entries: readonly RegionEntry[]): string {
  return [...entries]
    .sort((a, b) => (a.country + a.region < b.country + b.region ? -1 : 1))
    .map((entry) => `${entry.country}\t${entry.region}\t${entry.code ?? ''}\n`)
    .join('');
}
