import { readFileSync } from 'node:fs';
import { NetintelError } from '../../errors.js';

/** ISO 3166-1 alpha-2 code -> English country name, as data/build/country-names.json holds them. */
export interface CountryNameTable {
  /** The name of a code, or undefined when the table has none. */
  get(code: string): string | undefined;
}

const tables = new Map<string, CountryNameTable>();

/**
 * Loads the country-name table written at install time from the ICU data
 * built into Node (`scripts/build-country-names.ts`). Building it per run
 * would cost more than the whole lookup: the first Intl.DisplayNames call
 * loads ICU's locale data (about 30 ms).
 *
 * The JSON text is searched for the code asked, not parsed whole: a
 * one-off lookup needs one name of 280, and parsing them all (an object of
 * 280 properties) costs it about 0.15 ms.
 */
export function loadCountryNames(path: string): CountryNameTable {
  let table = tables.get(path);
  if (!table) {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new NetintelError('data_unavailable', `cannot read the country-name table ${path}: run "npm run build:data"`, {
        cause: error,
        details: { path },
      });
    }
    table = searchableNames(text, path);
    tables.set(path, table);
  }
  return table;
}

/** The names of a JSON object of strings, read one key at a time as asked. */
function searchableNames(json: string, path: string): CountryNameTable {
  const found = new Map<string, string | undefined>();
  const find = (code: string): string | undefined => {
    // A key is `"XX":` with no escape in it (two capital letters), and no
    // string can hold that text: a quote inside one is escaped.
    if (!isCountryCode(code)) return undefined;
    const key = `"${code}":`;
    const at = json.indexOf(key);
    if (at < 0) return undefined;
    const start = at + key.length;
    let end = start + 1;
    let escaped = false;
    while (end < json.length && json[end] !== '"') {
      escaped ||= json[end] === '\\';
      end += json[end] === '\\' ? 2 : 1;
    }
    if (json[start] === '"' && end < json.length) {
      if (!escaped) return json.slice(start + 1, end);
      try {
        return JSON.parse(json.slice(start, end + 1)) as string;
      } catch {
        // Reported below.
      }
    }
    throw new NetintelError('data_unavailable', `the country-name table ${path} is malformed at ${code}: run "npm run build:data"`, { details: { path } });
  };
  return {
    get: (code) => {
      if (!found.has(code)) found.set(code, find(code));
      return found.get(code);
    },
  };
}

/** Two capital letters (checked by hand: a regular expression is compiled on its first use). */
function isCountryCode(code: string): boolean {
  if (code.length !== 2) return false;
  const first = code.charCodeAt(0);
  const second = code.charCodeAt(1);
  return first >= 65 && first <= 90 && second >= 65 && second <= 90;
}

/** The English name of a country code, or null for an empty or unknown code. */
export function countryName(table: CountryNameTable, code: string | null): string | null {
  return code === null ? null : (table.get(code) ?? null);
}

/** Every assigned ISO 3166-1 alpha-2 code with its English name, from ICU (used at build time). */
export function countryNamesFromIcu(): Record<string, string> {
  const names = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
  const table: Record<string, string> = {};
  for (let first = 65; first <= 90; first++) {
    for (let second = 65; second <= 90; second++) {
      const code = String.fromCharCode(first, second);
      const name = names.of(code);
      if (name !== undefined && name !== code) table[code] = name;
    }
  }
  return table;
}
