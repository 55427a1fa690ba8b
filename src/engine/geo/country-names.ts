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
 * built into Node (scripts/build-region-codes.ts): building it per run would
 * load ICU's locale data, which costs more than the whole lookup.
 */
export function loadCountryNames(path: string): CountryNameTable {
  let table = tables.get(path);
  if (!table) {
    table = new Map(Object.entries(readNames(path)));
    tables.set(path, table);
  }
  return table;
}

function readNames(path: string): Record<string, string> {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>;
  } catch (error) {
    throw new NetintelError('data_unavailable', `cannot read the country-name table ${path}: run "npm run build:data"`, {
      cause: error,
      details: { path },
    });
  }
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
