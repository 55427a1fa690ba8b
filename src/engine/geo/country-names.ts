import { readFileSync } from 'node:fs';
import { NetintelError } from '../../errors.js';

/** ISO 3166-1 alpha-2 code -> English country name. */
export type CountryNameTable = Readonly<Record<string, string>>;

const tables = new Map<string, CountryNameTable>();

/**
 * Loads the country-name table written at install time from the ICU data
 * built into Node (`scripts/build-country-names.ts`). Building it per run
 * would cost more than the whole lookup: the first Intl.DisplayNames call
 * loads ICU's locale data (about 30 ms).
 */
export function loadCountryNames(path: string): CountryNameTable {
  let table = tables.get(path);
  if (!table) {
    try {
      table = JSON.parse(readFileSync(path, 'utf8')) as CountryNameTable;
    } catch (error) {
      throw new NetintelError('data_unavailable', `cannot read the country-name table ${path}: run "npm run build:data"`, {
        cause: error,
        details: { path },
      });
    }
    tables.set(path, table);
  }
  return table;
}

/** The English name of a country code, or null for an empty or unknown code. */
export function countryName(table: CountryNameTable, code: string | null): string | null {
  return code === null ? null : (table[code] ?? null);
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
