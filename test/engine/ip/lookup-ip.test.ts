/**
 * lookupIp and lookupAsn on the installed datasets (DB-IP city lite, the
 * compiled ASN index, data/curated-asns.json). Only facts that hold across
 * data releases are asserted: who announces 8.8.8.8, 1.1.1.1 and Google's
 * IPv6 resolver, and the curated list's verdict on them.
 */
import { readFileSync } from 'node:fs';
import ipaddr from 'ipaddr.js';
import { afterAll, describe, expect, it } from 'vitest';
import { isAsnText, lookupAsn } from '../../../src/engine/asn/lookup-asn.js';
import { createEngineContext } from '../../../src/engine/context.js';
import { ipDatabasesFor } from '../../../src/engine/ip/ip-databases.js';
import { createIpTextLookup, lookupIp } from '../../../src/engine/ip/lookup-ip.js';
import { NO_RPKI_DATASET } from '../../../src/engine/rpki/route-validity.js';
import { netintelErrorOf } from '../../support/netintel-error.js';

const ctx = createEngineContext();
afterAll(() => ctx.close());

interface CuratedEntry {
  asn: number;
  category: string;
}
const curated = JSON.parse(readFileSync(new URL('../../../data/curated-asns.json', import.meta.url), 'utf8')) as { entries: CuratedEntry[] };
const categoryOf = (asn: number) => curated.entries.find((entry) => entry.asn === asn)?.category;

describe('lookupIp on the installed data', () => {
  it('finds 8.8.8.8 in AS15169 "Google LLC", in the US, flagged as hosting by the curated list', () => {
    const record = lookupIp(ctx, '8.8.8.8');
    expect(record.ip).toBe('8.8.8.8');
    expect(record.type).toBe('ipv4');
    expect(record.reserved).toBeNull();
    expect(record.location.country_code).toBe('US');
    expect(record.location.country).toBe('United States');
    expect(record.network).toEqual({ isp: 'Google LLC', organization: 'Google LLC', asn: 15169, domain: null, rpki: NO_RPKI_DATASET });
    expect(categoryOf(15169)).toBe('cloud');
    expect(record.security).toEqual({
      is_vpn: false,
      is_proxy: null,
      is_tor: null,
      is_hosting: true,
      // No Tor exit or proxy list is installed: hosting alone is not a clean low.
      threat_level: 'unknown',
      threat_rule: 'signals_missing',
      provider: 'Google',
      evidence: [{ signal: 'hosting_asn', source: 'curated-asns', matched: 'AS15169', provider: 'Google', updated: expect.any(String) }],
      coverage: {
        consulted: ['vpn_asn', 'hosting_asn'],
        missing: ['tor_exit_list', 'proxy_list', 'vpn_range', 'cloud_range', 'datacenter_range'],
      },
    });
  });

  it('finds 2001:4860:4860::8888 in AS15169 "Google LLC" too', () => {
    const record = lookupIp(ctx, '2001:4860:4860::8888');
    expect(record.ip).toBe('2001:4860:4860::8888');
    expect(record.type).toBe('ipv6');
    expect(record.network.asn).toBe(15169);
    expect(record.network.organization).toBe('Google LLC');
    expect(record.security.is_hosting).toBe(true);
    expect(record.security.is_proxy).toBeNull();
    expect(record.security.is_tor).toBeNull();
  });

  it('finds 1.1.1.1 in AS13335, a CDN on the curated list, so is_hosting is true', () => {
    const record = lookupIp(ctx, '1.1.1.1');
    expect(record.network.asn).toBe(13335);
    expect(categoryOf(13335)).toBe('cdn');
    expect(record.security.is_hosting).toBe(true);
    expect(record.security.is_vpn).toBe(false);
    expect(record.security.is_proxy).toBeNull();
    expect(record.security.is_tor).toBeNull();
  });

  it('answers every text form of one address with the same record', () => {
    const expected = lookupIp(ctx, '2001:4860:4860::8888');
    expect(lookupIp(ctx, '2001:4860:4860:0000:0000:0000:0000:8888')).toEqual(expected);
    expect(lookupIp(ctx, '2001:4860:4860::8888'.toUpperCase())).toEqual(expected);
    expect(lookupIp(ctx, '::ffff:8.8.8.8')).toEqual(lookupIp(ctx, '8.8.8.8'));
  });

  it('gives the same record in memory mode as with positioned reads', () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '2001:4860:4860::8888', '81.2.69.160']) {
      expect(lookupIp(ctx, ip, 'memory')).toEqual(lookupIp(ctx, ip, 'pread'));
    }
  });

  it('gives every address of a long run the record a fresh lookup gives, while its caches fill and evict', () => {
    let state = 20261125;
    const random = () => {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = Math.imul(state ^ (state >>> 15), state | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return (t ^ (t >>> 14)) >>> 0;
    };
    const text = (n: number) => `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
    const run = createIpTextLookup(ipDatabasesFor(ctx, 'memory'));
    // Far more distinct addresses than the caches hold, with repeats (hits) in between.
    const addresses = Array.from({ length: 60_000 }, (_, i) => (i % 5 === 4 ? text(random() & 0xffffff00) : text(random())));
    const mismatches: string[] = [];
    addresses.forEach((address, i) => {
      const record = run(address);
      if (i % 20 === 0 || i >= 59_000) {
        const fresh = lookupIp(ctx, address, 'pread');
        if (JSON.stringify(record) !== JSON.stringify(fresh)) mismatches.push(address);
      }
    });
    expect(mismatches).toEqual([]);
  });

  it('keeps every key of the record, location values typed or null', () => {
    const record = lookupIp(ctx, '8.8.8.8');
    expect(Object.keys(record)).toEqual(['ip', 'type', 'location', 'network', 'security', 'reserved', 'meta']);
    expect(Object.keys(record.location)).toEqual(['country', 'country_code', 'region', 'region_code', 'city', 'latitude', 'longitude', 'timezone', 'zip']);
    const { latitude, longitude, timezone } = record.location;
    expect(typeof latitude === 'number' && latitude >= -90 && latitude <= 90).toBe(true);
    expect(typeof longitude === 'number' && longitude >= -180 && longitude <= 180).toBe(true);
    expect(timezone).toMatch(/^America\//);
  });

  it('marks an address of a curated VPN operator as is_vpn with threat level medium', () => {
    const vpnAsns = curated.entries.filter((entry) => entry.category === 'vpn').map((entry) => entry.asn);
    let checked = 0;
    for (const asn of vpnAsns) {
      let prefixes: string[];
      try {
        prefixes = lookupAsn(ctx, `AS${asn}`).prefixes!.ipv4;
      } catch {
        continue; // this release of the ASN data announces nothing for it
      }
      const first = prefixes[0];
      if (!first) continue;
      const record = lookupIp(ctx, first.split('/')[0]!);
      if (record.network.asn !== asn) continue; // a more specific route of another AS
      expect(record.security).toMatchObject({ is_vpn: true, is_proxy: null, is_tor: null, is_hosting: false, threat_level: 'medium', threat_rule: 'vpn' });
      expect(record.security.evidence).toEqual([expect.objectContaining({ signal: 'vpn_asn', source: 'curated-asns', matched: `AS${asn}` })]);
      checked += 1;
    }
    expect(checked).toBeGreaterThan(0);
  });

  it('throws invalid_input for text that is not an address, before opening any dataset', () => {
    const error = netintelErrorOf(() => lookupIp(createEngineContext({ dataDir: '/nonexistent' }), 'not-an-ip'));
    expect(error.code).toBe('invalid_input');
    expect(error.message).toBe('"not-an-ip" is not a valid IPv4 or IPv6 address');
  });

  it('shares one set of databases per data dir and access mode', () => {
    expect(ipDatabasesFor(ctx, 'pread')).toBe(ipDatabasesFor(createEngineContext(), 'pread'));
    expect(ipDatabasesFor(ctx, 'memory')).not.toBe(ipDatabasesFor(ctx, 'pread'));
  });
});

describe('lookupAsn on the installed data', () => {
  it('lists the prefixes of AS15169, 8.8.8.0/24 among them, with counts that match the lists', () => {
    const result = lookupAsn(ctx, 'AS15169');
    expect(result.kind).toBe('asn');
    expect(result.query).toBe('AS15169');
    expect(result.asn).toBe(15169);
    expect(result.organization).toBe('Google LLC');
    expect(result.ip).toBeNull();
    expect(result.route).toBeNull();
    const { ipv4, ipv6 } = result.prefixes!;
    expect(ipv4).toContain('8.8.8.0/24');
    expect(ipv6.length).toBeGreaterThan(0);
    expect(new Set(ipv4).size).toBe(ipv4.length);
    for (const cidr of [...ipv4, ...ipv6]) expect(() => ipaddr.parseCIDR(cidr)).not.toThrow();
    const v4Addresses = ipv4.reduce((sum, cidr) => sum + 2 ** (32 - Number(cidr.split('/')[1])), 0);
    const v6Addresses = ipv6.reduce((sum, cidr) => sum + 2n ** BigInt(128 - Number(cidr.split('/')[1])), 0n);
    expect(result.counts).toEqual({
      ipv4_prefixes: ipv4.length,
      ipv6_prefixes: ipv6.length,
      ipv4_addresses: v4Addresses,
      ipv6_addresses: v6Addresses.toString(),
    });
  });

  it('reads 15169, as15169 and AS15169 as the same AS, echoing the query as given', () => {
    const upper = lookupAsn(ctx, 'AS15169');
    for (const query of ['15169', 'as15169', 'As15169']) {
      const result = lookupAsn(ctx, query);
      expect({ ...result, query: 'AS15169' }).toEqual(upper);
      expect(result.query).toBe(query);
    }
  });

  it('tells AS numbers from addresses and other text', () => {
    for (const asn of ['15169', 'AS15169', 'as15169', 'AS4294967295', '0']) expect(isAsnText(asn), asn).toBe(true);
    for (const other of ['8.8.8.8', '15169.0', '::1', '2001:db8::', 'AS4294967296', 'AS15169x', 'AS 15169', 'AS12345678901', '', 'AS']) expect(isAsnText(other), other).toBe(false);
  });

  it('names the route 8.8.8.0/24 of AS15169 for the IP 8.8.8.8', () => {
    expect(lookupAsn(ctx, '8.8.8.8')).toEqual({
      kind: 'asn',
      query: '8.8.8.8',
      asn: 15169,
      organization: 'Google LLC',
      ip: '8.8.8.8',
      route: '8.8.8.0/24',
      rpki: NO_RPKI_DATASET,
      prefixes: null,
      counts: null,
    });
  });

  it('names a route of AS15169 holding 2001:4860:4860::8888', () => {
    const result = lookupAsn(ctx, '2001:4860:4860::8888');
    expect(result.asn).toBe(15169);
    expect(result.ip).toBe('2001:4860:4860::8888');
    expect(ipaddr.parse('2001:4860:4860::8888').match(ipaddr.parseCIDR(result.route!))).toBe(true);
  });

  it('names the route of 1.1.1.1 in AS13335', () => {
    const result = lookupAsn(ctx, '1.1.1.1');
    expect(result.asn).toBe(13335);
    expect(ipaddr.parse('1.1.1.1').match(ipaddr.parseCIDR(result.route!))).toBe(true);
  });

  it.each([
    ['10.0.0.1', '10.0.0.1 is private (RFC 1918): no autonomous system announces it'],
    ['192.0.2.1', '192.0.2.1 is documentation, TEST-NET-1 (RFC 5737): no autonomous system announces it'],
    ['fe80::1', 'fe80::1 is link-local (RFC 4291): no autonomous system announces it'],
  ])('throws not_found for the reserved address %s', (query, message) => {
    const error = netintelErrorOf(() => lookupAsn(ctx, query));
    expect(error.code).toBe('not_found');
    expect(error.message).toBe(message);
  });

  it.each([
    ['AS4294967295', 4294967295],
    ['AS4200000000', 4200000000],
  ])('throws not_found for %s, an AS that announces nothing', (query, asn) => {
    const error = netintelErrorOf(() => lookupAsn(ctx, query));
    expect(error.code).toBe('not_found');
    expect(error.message).toBe(`AS${asn} announces no prefix in the ASN data`);
    expect(error.details).toEqual({ input: query, asn });
  });

  it.each(['AS4294967296', '4294967296', `AS${'9'.repeat(40)}`])('throws invalid_input for %s, past the last four-octet AS number', (query) => {
    const error = netintelErrorOf(() => lookupAsn(ctx, query));
    expect(error.code).toBe('invalid_input');
    expect(error.message).toBe(`${JSON.stringify(query)} is out of range: AS numbers run from 0 to 4294967295`);
  });

  it.each(['garbage', 'AS', 'AS-1', '15169x', 'AS 15169', '', '1.2.3', '\u0000'])(
    'throws invalid_input for %j, naming it',
    (query) => {
      const error = netintelErrorOf(() => lookupAsn(ctx, query));
      expect(error.code).toBe('invalid_input');
      expect(error.message).toBe(`${JSON.stringify(query)} is neither an AS number (AS15169, 15169) nor an IP address`);
    },
  );
});
