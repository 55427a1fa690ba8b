/**
 * Records built by hand with fixed values, so that the golden files depend
 * on the output layer alone, never on the version of the installed data.
 * The strings carry what formats must escape: commas, quotes, XML specials,
 * a leading `=` (spreadsheet formula), non-ASCII letters.
 */
import type { AsnResult } from '../../src/engine/asn/lookup-asn.js';
import type { IpInfoRecord } from '../../src/engine/ip/ip-record.js';
import type { Outcome } from '../../src/engine/outcome.js';
import { NetintelError } from '../../src/errors.js';

export const GOOGLE_DNS: IpInfoRecord = {
  ip: '8.8.8.8',
  type: 'ipv4',
  location: {
    country: 'United States',
    country_code: 'US',
    region: 'California',
    region_code: 'US-CA',
    city: 'Mountain View',
    latitude: 37.422,
    longitude: -122.085,
    timezone: 'America/Los_Angeles',
    zip: null,
  },
  network: {
    isp: 'Google LLC',
    organization: 'Google LLC',
    asn: 15169,
    domain: null,
    rpki: { status: 'valid', reason: null, route: '8.8.8.0/24', origin_asn: 15169, vrps: [{ asn: 15169, prefix: '8.8.8.0/24', max_length: 24, ta: 'arin', matches: true }] },
  },
  security: { is_vpn: false, is_proxy: null, is_tor: null, is_hosting: true, threat_level: 'low' },
  reserved: null,
};

export const AWKWARD_V6: IpInfoRecord = {
  ip: '2a02:1234:5678::1',
  type: 'ipv6',
  location: {
    country: 'Switzerland',
    country_code: 'CH',
    region: 'Zurich',
    region_code: 'CH-ZH',
    city: 'Zürich',
    latitude: 47.3769,
    longitude: 8.5417,
    timezone: 'Europe/Zurich',
    zip: '8001',
  },
  network: {
    isp: '=HYPERLINK("http://x")',
    organization: 'Müller & Söhne, "Netz" <AG>',
    asn: 64500,
    domain: 'example.ch',
    rpki: { status: 'invalid', reason: 'origin_not_authorised', route: '2001:db8::/32', origin_asn: 64500, vrps: [{ asn: 64496, prefix: '2001:db8::/32', max_length: 48, ta: 'ripe', matches: false }] },
  },
  security: { is_vpn: true, is_proxy: false, is_tor: false, is_hosting: false, threat_level: 'medium' },
  reserved: null,
};

export const PRIVATE_V4: IpInfoRecord = {
  ip: '10.0.0.1',
  type: 'ipv4',
  location: {
    country: null,
    country_code: null,
    region: null,
    region_code: null,
    city: null,
    latitude: null,
    longitude: null,
    timezone: null,
    zip: null,
  },
  network: { isp: null, organization: null, asn: null, domain: null, rpki: null },
  security: { is_vpn: null, is_proxy: null, is_tor: null, is_hosting: null, threat_level: null },
  reserved: 'private (RFC 1918)',
};

export const INVALID_IP_ERROR = new NetintelError('invalid_input', '"not-an-ip" is not a valid IPv4 or IPv6 address', {
  details: { input: 'not-an-ip' },
});

export const ASN_BY_NUMBER: AsnResult = {
  kind: 'asn',
  query: 'AS64500',
  asn: 64500,
  organization: 'Example Networks, "Ltd"',
  ip: null,
  route: null,
  rpki: null,
  prefixes: { ipv4: ['192.0.2.0/24', '198.51.100.0/23'], ipv6: ['2001:db8::/32'] },
  counts: { ipv4_prefixes: 2, ipv6_prefixes: 1, ipv4_addresses: 768, ipv6_addresses: '79228162514264337593543950336' },
};

export const ASN_EMPTY_V4: AsnResult = {
  kind: 'asn',
  query: '64501',
  asn: 64501,
  organization: 'V6 Only',
  ip: null,
  route: null,
  rpki: null,
  prefixes: { ipv4: [], ipv6: ['2001:db8:1::/48'] },
  counts: { ipv4_prefixes: 0, ipv6_prefixes: 1, ipv4_addresses: 0, ipv6_addresses: '1208925819614629174706176' },
};

export const ASN_BY_IP: AsnResult = {
  kind: 'asn',
  query: '8.8.8.8',
  asn: 15169,
  organization: 'Google LLC',
  ip: '8.8.8.8',
  route: '8.8.8.0/24',
  rpki: { status: 'valid', reason: null, route: '8.8.8.0/24', origin_asn: 15169, vrps: [{ asn: 15169, prefix: '8.8.8.0/24', max_length: 24, ta: 'arin', matches: true }] },
  prefixes: null,
  counts: null,
};

export const ASN_NOT_FOUND = new NetintelError('not_found', 'AS4294967295 announces no prefix in the ASN data', {
  details: { input: 'AS4294967295', asn: 4294967295 },
});

export function ok<T>(query: string, value: T): Outcome<T> {
  return { ok: true, query, value };
}

export function failed(query: string, error: NetintelError): Outcome<never> {
  return { ok: false, query, error };
}

export const IP_SINGLE: Array<Outcome<unknown>> = [ok('8.8.8.8', GOOGLE_DNS)];
export const IP_MANY: Array<Outcome<unknown>> = [
  ok('8.8.8.8', GOOGLE_DNS),
  failed('not-an-ip', INVALID_IP_ERROR),
  ok('2a02:1234:5678:0::1', AWKWARD_V6),
  ok('10.0.0.1', PRIVATE_V4),
];
export const ASN_SINGLE: Array<Outcome<unknown>> = [ok('AS64500', ASN_BY_NUMBER)];
export const ASN_MANY: Array<Outcome<unknown>> = [
  ok('AS64500', ASN_BY_NUMBER),
  ok('8.8.8.8', ASN_BY_IP),
  failed('AS4294967295', ASN_NOT_FOUND),
  ok('64501', ASN_EMPTY_V4),
];
export const BULK_MANY: Array<Outcome<unknown>> = [
  ok('8.8.8.8', GOOGLE_DNS),
  ok('AS64500', ASN_BY_NUMBER),
  failed('not-an-ip', new NetintelError('invalid_input', 'line 3: "not-an-ip" is not a valid IPv4 or IPv6 address', { details: { input: 'not-an-ip', line: 3 } })),
  ok('10.0.0.1', PRIVATE_V4),
];
