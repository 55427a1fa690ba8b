import { describe, expect, it } from 'vitest';
import { createEngineContext } from '../../../src/engine/context.js';
import { parseIpAddress } from '../../../src/engine/address/ip-address.js';
import { lookupIp } from '../../../src/engine/ip/lookup-ip.js';
import { specialPurposeOf, specialPurposeOfV4 } from '../../../src/engine/address/special-ranges.js';

const ctx = createEngineContext();

const RESERVED_V6 = 'reserved by the IETF, outside global unicast 2000::/3 (RFC 4291 §2.4)';

const NULL_LOCATION = {
  country: null,
  country_code: null,
  region: null,
  region_code: null,
  city: null,
  latitude: null,
  longitude: null,
  timezone: null,
  zip: null,
};
const NULL_NETWORK = { isp: null, organization: null, asn: null, domain: null, rpki: null };
const NULL_SECURITY = { is_vpn: null, is_proxy: null, is_tor: null, is_hosting: null, threat_level: null, threat_rule: null, provider: null, evidence: [], coverage: { consulted: [], missing: [] } };
/** A special-purpose address consults no dataset: no dates to report. */
const NO_DATA = { data: {} };

describe('special-purpose addresses', () => {
  it.each([
    ['10.0.0.1', '10.0.0.1', 'private (RFC 1918)'],
    ['10.255.255.255', '10.255.255.255', 'private (RFC 1918)'],
    ['172.16.0.1', '172.16.0.1', 'private (RFC 1918)'],
    ['172.31.255.254', '172.31.255.254', 'private (RFC 1918)'],
    ['192.168.1.1', '192.168.1.1', 'private (RFC 1918)'],
    ['127.0.0.1', '127.0.0.1', 'loopback (RFC 1122)'],
    ['127.255.255.254', '127.255.255.254', 'loopback (RFC 1122)'],
    ['169.254.10.20', '169.254.10.20', 'link-local (RFC 3927)'],
    ['192.0.2.1', '192.0.2.1', 'documentation, TEST-NET-1 (RFC 5737)'],
    ['198.51.100.7', '198.51.100.7', 'documentation, TEST-NET-2 (RFC 5737)'],
    ['203.0.113.200', '203.0.113.200', 'documentation, TEST-NET-3 (RFC 5737)'],
    ['100.64.0.1', '100.64.0.1', 'shared address space, carrier-grade NAT (RFC 6598)'],
    ['100.127.255.254', '100.127.255.254', 'shared address space, carrier-grade NAT (RFC 6598)'],
    ['224.0.0.1', '224.0.0.1', 'multicast (RFC 5771)'],
    ['239.255.255.250', '239.255.255.250', 'multicast (RFC 5771)'],
    ['0.0.0.0', '0.0.0.0', '"this network" (RFC 791)'],
    ['255.255.255.255', '255.255.255.255', 'limited broadcast (RFC 919)'],
    ['240.0.0.1', '240.0.0.1', 'reserved for future use (RFC 1112)'],
    ['198.18.0.1', '198.18.0.1', 'benchmarking (RFC 2544)'],
    ['::ffff:192.168.0.1', '192.168.0.1', 'private (RFC 1918)'],
  ])('answers %s with its label and no location, owner or flags', (input, ip, label) => {
    expect(lookupIp(ctx, input)).toEqual({
      ip,
      type: 'ipv4',
      location: NULL_LOCATION,
      network: NULL_NETWORK,
      security: NULL_SECURITY,
      reserved: label,
      meta: NO_DATA,
    });
  });

  it.each([
    ['::1', '::1', 'loopback (RFC 4291)'],
    ['::', '::', 'unspecified (RFC 4291)'],
    ['fe80::1', 'fe80::1', 'link-local (RFC 4291)'],
    ['FEBF:FFFF::1', 'febf:ffff::1', 'link-local (RFC 4291)'],
    ['2001:db8::1', '2001:db8::1', 'documentation (RFC 3849)'],
    ['3fff::1', '3fff::1', 'documentation (RFC 9637)'],
    ['fc00::1', 'fc00::1', 'unique local (RFC 4193)'],
    ['fd12:3456:789a::1', 'fd12:3456:789a::1', 'unique local (RFC 4193)'],
    ['ff02::1', 'ff02::1', 'multicast (RFC 4291)'],
    ['64:ff9b::8.8.8.8', '64:ff9b::808:808', 'NAT64 well-known prefix (RFC 6052)'],
    ['64:ff9b:1::1', '64:ff9b:1::1', 'NAT64 local-use prefix (RFC 8215)'],
    ['100::1', '100::1', 'discard-only (RFC 6666)'],
  ])('answers IPv6 %s with its label and no location, owner or flags', (input, ip, label) => {
    expect(lookupIp(ctx, input)).toEqual({
      ip,
      type: 'ipv6',
      location: NULL_LOCATION,
      network: NULL_NETWORK,
      security: NULL_SECURITY,
      reserved: label,
      meta: NO_DATA,
    });
  });

  it.each(['172.15.255.255', '172.32.0.0', '100.63.255.255', '100.128.0.0', '192.0.3.0', '223.255.255.255', '11.0.0.0', '9.255.255.255'])(
    'treats %s, just outside a special block, as public',
    (input) => {
      expect(specialPurposeOf(parseIpAddress(input))).toBeNull();
    },
  );

  it.each(['2001:db9::1', 'fbff:ffff::1', 'fec0::1', '2606:4700::1111'])('labels %s only when it is in a block', (input) => {
    const expected = input === 'fec0::1' ? 'deprecated site-local (RFC 3879)' : input === 'fbff:ffff::1' ? RESERVED_V6 : null;
    expect(specialPurposeOf(parseIpAddress(input))).toBe(expected);
  });

  // The IANA registries' "Globally Reachable" column decides, as Python's ipaddress (3.13) reads it.
  it.each([
    ['192.0.0.8', 'IETF protocol assignments (RFC 6890)'],
    ['192.0.0.9', null],
    ['192.0.0.10', null],
    ['192.0.0.11', 'IETF protocol assignments (RFC 6890)'],
    ['192.88.99.1', null],
    ['2001:100::1', 'IETF protocol assignments (RFC 2928)'],
    ['2001:1::4', 'IETF protocol assignments (RFC 2928)'],
    ['2001:1ff:ffff::1', 'IETF protocol assignments (RFC 2928)'],
    ['2001::1', null],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', null],
    ['2001:1::1', null],
    ['2001:1::2', null],
    ['2001:1::3', null],
    ['2001:2::1', 'benchmarking (RFC 5180)'],
    ['2001:3::1', null],
    ['2001:4:112::1', null],
    ['2001:4:113::1', 'IETF protocol assignments (RFC 2928)'],
    ['2001:10::1', 'deprecated ORCHID (RFC 4843)'],
    ['2001:20::1', null],
    ['2001:30::1', null],
    ['2001:200::1', null],
    ['::2', RESERVED_V6],
    ['::1.2.3.4', RESERVED_V6],
    ['::ffff:0:1.2.3.4', RESERVED_V6],
    ['100:0:0:1::', RESERVED_V6],
    ['4000::1', RESERVED_V6],
    ['dead::beef', RESERVED_V6],
    ['fe00::', RESERVED_V6],
    ['1fff:ffff::1', RESERVED_V6],
    ['2000::1', null],
    ['3fff:ffff::1', null],
  ])('follows IANA for %s', (input, expected) => {
    expect(specialPurposeOf(parseIpAddress(input))).toBe(expected);
  });

  it('gives the same label on the IPv4 fast path as on the general one, across every first octet', () => {
    const mismatches: string[] = [];
    for (let first = 0; first < 256; first++) {
      for (const rest of [[0, 0, 0], [255, 255, 255], [64, 0, 1], [88, 99, 1], [0, 2, 9], [51, 100, 3], [0, 113, 4], [254, 1, 1], [18, 0, 0]]) {
        const bytes = Uint8Array.from([first, ...rest]);
        const v4 = ((first << 24) | (rest[0]! << 16) | (rest[1]! << 8) | rest[2]!) >>> 0;
        const general = specialPurposeOf({ text: '', version: 4, bytes, v4 });
        if (specialPurposeOfV4(v4) !== general) mismatches.push(bytes.join('.'));
      }
    }
    expect(mismatches).toEqual([]);
  });
});
