import { createRequire } from 'node:module';

type TzLookup = (latitude: number, longitude: number) => string;
let tzLookup: TzLookup | undefined;

/**
 * IANA time zone at a point. DB-IP Lite leaves its time zone field empty, so
 * the zone is derived from the record's coordinates with tz-lookup's compact
 * world map (loaded on first use). Null when there are no coordinates.
 */
export function timezoneAt(latitude: number | null, longitude: number | null): string | null {
  if (latitude === null || longitude === null) return null;
  tzLookup ??= createRequire(import.meta.url)('@photostructure/tz-lookup') as TzLookup;
  try {
    return tzLookup(latitude, longitude);
  } catch {
    return null;
  }
}
