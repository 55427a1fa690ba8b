import { readFileSync } from 'node:fs';
import { NetintelError } from '../../errors.js';

/** country code -> region name as the geolocation data spells it -> ISO 3166-2 code. */
export type RegionCodeTable = Record<string, Record<string, string>>;

const tables = new Map<string, RegionCodeTable>();

/**
 * Loads the region-code table compiled at install time (see
 * `src/engine/geo/compile-region-codes.ts`): DB-IP names regions in English
 * and carries no ISO 3166-2 code, so the code is matched once, offline.
 */
export function loadRegionCodes(path: string): RegionCodeTable {
  let table = tables.get(path);
  if (!table) {
    try {
      table = JSON.parse(readFileSync(path, 'utf8')) as RegionCodeTable;
    } catch (error) {
      throw new NetintelError('data_unavailable', `cannot read the region-code table ${path}: run "npm run build:data"`, {
        cause: error,
        details: { path },
      });
    }
    tables.set(path, table);
  }
  return table;
}

/** The ISO 3166-2 code of a region, or null when it could not be derived. */
export function regionCode(table: RegionCodeTable, countryCode: string | null, region: string | null): string | null {
  if (!countryCode || !region) return null;
  return table[countryCode]?.[region] ?? null;
}
