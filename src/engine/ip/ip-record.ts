import type { SecurityVerdict } from '../security/security-signals.js';
import { NO_COVERAGE } from '../security/signals.js';
import type { RpkiValidity } from '../rpki/route-validity.js';

/**
 * The IP information record of GET /api/ipinfo, with its field names
 * exactly as the API spells them (docs/api.md, The IP record). Every key
 * is always present; null means the data has no value (never a guess).
 */
export interface IpLocation {
  country: string | null;
  country_code: string | null;
  region: string | null;
  /** ISO 3166-2 code, where it can be derived from the region name. */
  region_code: string | null;
  city: string | null;
  latitude: number | null;
  longitude: number | null;
  /** IANA zone name in area/city form. */
  timezone: string | null;
  zip: string | null;
}

export interface IpNetwork {
  isp: string | null;
  organization: string | null;
  asn: number | null;
  domain: string | null;
  /** The RPKI validity of the route announcing the address (docs/commands/ip.md, RPKI); null when no AS announces it. */
  rpki: RpkiValidity | null;
}

export type { ThreatLevel } from '../security/threat-rule.js';

/**
 * The API's security flags and threat_level (docs/api.md, The IP record),
 * plus what explains them: the rule row that set the level, the operator
 * when known, and every signal that fired (see src/engine/security/).
 */
export type IpSecurity = SecurityVerdict;

/** The dates of the datasets an answer used (dataset name -> ISO 8601 date). */
export interface IpRecordMeta {
  data: Readonly<Record<string, string | null>>;
}

export interface IpInfoRecord {
  ip: string;
  type: 'ipv4' | 'ipv6';
  location: IpLocation;
  network: IpNetwork;
  security: IpSecurity;
  /** The special-purpose block the address is in (e.g. "private (RFC 1918)"), or null for a public address. */
  reserved: string | null;
  /** Provenance: the datasets the answer used and their dates (json/ndjson/xml; not a CSV column). */
  meta: IpRecordMeta;
}

export const EMPTY_LOCATION: IpLocation = Object.freeze({
  country: null,
  country_code: null,
  region: null,
  region_code: null,
  city: null,
  latitude: null,
  longitude: null,
  timezone: null,
  zip: null,
});

export const EMPTY_NETWORK: IpNetwork = Object.freeze({ isp: null, organization: null, asn: null, domain: null, rpki: null });

export const UNKNOWN_SECURITY: IpSecurity = Object.freeze({
  is_vpn: null,
  is_proxy: null,
  is_tor: null,
  is_hosting: null,
  threat_level: null,
  threat_rule: null,
  provider: null,
  evidence: Object.freeze([]),
  coverage: NO_COVERAGE,
});

/** The meta of an answer that used no dataset (a special-purpose address). */
export const NO_DATA_META: IpRecordMeta = Object.freeze({ data: Object.freeze({}) });
