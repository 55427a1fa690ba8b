import type tzLookupFunction from '@photostructure/tz-lookup';
import { createRequire } from 'node:module';

let tzLookup: typeof tzLookupFunction | undefined;

/**
 * tz-lookup on first use: a lookup without a location (vpn, asn) never
 * needs it. In the CommonJS
 * bundle `require` is the bundle's own; unbundled ES modules (the compiled
 * tree, tests) load the package through createRequire.
 */
function loadTzLookup(): typeof tzLookupFunction {
  return (tzLookup ??=
    typeof require === 'function'
      ? (require('@photostructure/tz-lookup') as typeof tzLookupFunction)
      : (createRequire(import.meta.url)('@photostructure/tz-lookup') as typeof tzLookupFunction));
}

/**
 * IANA time zone at a point, from tz-lookup's compact world map (DB-IP Lite
 * leaves its time zone field empty). Null without coordinates.
 */
export function timezoneAt(latitude: number | null, longitude: number | null): string | null {
  if (latitude === null || longitude === null) return null;
  try {
    return loadTzLookup()(latitude, longitude);
  } catch {
    return null;
  }
}
