import type { CoveringVrp, RouteKey } from './rpki-index.js';
import { prefixOf } from './vrp-json.js';

/** RFC 6811 §2's three states, and `unknown` when no RPKI dataset was consulted. */
export type RpkiStatus = 'valid' | 'invalid' | 'not_found' | 'unknown';

/**
 * Why: `origin_not_authorised` (no covering ROA names the origin AS),
 * `max_length_exceeded` (a ROA names it, but the route is longer than its
 * maxLength), `no_dataset` (no RPKI dataset installed: nothing is known).
 */
export type RpkiReason = 'origin_not_authorised' | 'max_length_exceeded' | 'no_dataset';

/** A validated ROA payload covering the route, and whether it matches it. */
export interface RpkiVrp {
  asn: number;
  prefix: string;
  max_length: number;
  ta: string | null;
  /** Names the route's origin and allows its length (RFC 6811 §2, "matched"). */
  matches: boolean;
}

/** The RPKI route-origin validity of the route announcing an address (docs/commands/ip.md, RPKI). */
export interface RpkiValidity {
  status: RpkiStatus;
  reason: RpkiReason | null;
  /** The route validated: the announced block holding the address, as the ASN data gives it; null when unknown. */
  route: string | null;
  /** The route's origin AS; null when unknown. */
  origin_asn: number | null;
  /** The covering payloads, those matching first, at most MAX_LISTED_VRPS. */
  vrps: RpkiVrp[];
}

export const MAX_LISTED_VRPS = 32;

/** The route of a CIDR text, or null when it is not one. */
export function routeKeyOf(cidr: string): RouteKey | null {
  const parsed = prefixOf(cidr);
  return typeof parsed === 'string' ? null : parsed;
}

/**
 * Route-origin validation (RFC 6811 §2): not found when no payload covers
 * the route; valid when one covering payload names the origin AS and allows
 * the route's length; invalid otherwise. A payload of AS 0 covers but never
 * matches (RFC 6483 §4, RFC 7607), and neither does any payload a route of
 * origin AS 0 meets.
 */
export function validateRoute(route: string, length: number, originAsn: number, covering: readonly CoveringVrp[]): RpkiValidity {
  const vrps = covering.map(
    (vrp): RpkiVrp => ({ asn: vrp.asn, prefix: vrp.prefix, max_length: vrp.maxLength, ta: vrp.ta, matches: vrp.asn !== 0 && vrp.asn === originAsn && length <= vrp.maxLength }),
  );
  vrps.sort((a, b) => Number(b.matches) - Number(a.matches));
  const listed = vrps.slice(0, MAX_LISTED_VRPS);
  if (vrps.length === 0) return { status: 'not_found', reason: null, route, origin_asn: originAsn, vrps: listed };
  if (vrps[0]!.matches) return { status: 'valid', reason: null, route, origin_asn: originAsn, vrps: listed };
  const sameOrigin = originAsn !== 0 && vrps.some((vrp) => vrp.asn === originAsn);
  return { status: 'invalid', reason: sameOrigin ? 'max_length_exceeded' : 'origin_not_authorised', route, origin_asn: originAsn, vrps: listed };
}

/** The answer when no RPKI dataset is installed: one object for every address, nothing computed. */
export const NO_RPKI_DATASET: RpkiValidity = Object.freeze({ status: 'unknown', reason: 'no_dataset', route: null, origin_asn: null, vrps: Object.freeze([]) as unknown as RpkiVrp[] });

/**
 * The validity of a route from an index, or `unknown` without one (the
 * dataset is not installed). `route` is a CIDR from the ASN data.
 */
export function routeValidity(index: { covering(route: RouteKey): CoveringVrp[] } | null, route: string, originAsn: number): RpkiValidity {
  if (index === null) return NO_RPKI_DATASET;
  const key = routeKeyOf(route);
  if (key === null) throw new RangeError(`not a route: ${route}`);
  return validateRoute(route, key.length, originAsn, index.covering(key));
}
