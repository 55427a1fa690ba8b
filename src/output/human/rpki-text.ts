import type { RpkiValidity } from '../../engine/rpki/route-validity.js';

/**
 * The RPKI validity of a route in one line: `valid (AS15169, 8.8.8.0/24 max
 * /24)`, `invalid: AS64500 is not authorised; ROA allows AS15169`, `not
 * found`, `unknown (...)`. Null when there is no route.
 */
export function rpkiText(rpki: RpkiValidity | null | undefined): string | null {
  if (!rpki) return null;
  const vrps = rpki.vrps ?? [];
  switch (rpki.status) {
    case 'valid': {
      const match = vrps.find((vrp) => vrp.matches);
      return match ? `valid (AS${match.asn}, ${match.prefix} max /${match.max_length})` : 'valid';
    }
    case 'invalid': {
      if (rpki.reason === 'max_length_exceeded') {
        const own = vrps.find((vrp) => vrp.asn === rpki.origin_asn);
        const length = rpki.route?.slice(rpki.route.lastIndexOf('/')) ?? '';
        return own ? `invalid: ${length} is more specific than the ROA allows (AS${own.asn}, ${own.prefix} max /${own.max_length})` : 'invalid: more specific than the ROA allows';
      }
      const allowed = [...new Set(vrps.map((vrp) => (vrp.asn === 0 ? 'none (AS0)' : `AS${vrp.asn}`)))];
      const origin = rpki.origin_asn === null ? 'the origin' : `AS${rpki.origin_asn}`;
      return `invalid: ${origin} is not authorised${allowed.length > 0 ? `; ROA allows ${allowed.slice(0, 4).join(', ')}${allowed.length > 4 ? ', ...' : ''}` : ''}`;
    }
    case 'not_found':
      return rpki.route ? `not found (no ROA covers ${rpki.route})` : 'not found';
    default:
      return 'unknown (no RPKI dataset: netintel data update rpki)';
  }
}
