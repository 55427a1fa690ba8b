import tzLookup from '@photostructure/tz-lookup';

/**
 * IANA time zone at a point, from tz-lookup's compact world map. DB-IP Lite
 * leaves its time zone field empty; the lookup uses this where the region
 * table (computed at install) gives no single zone. Null without coordinates.
 */
export function timezoneAt(latitude: number | null, longitude: number | null): string | null {
  if (latitude === null || longitude === null) return null;
  try {
    return tzLookup(latitude, longitude);
  } catch {
    return null;
  }
}
