/**
 * The feed parsers on small texts in each published format, and the checks a
 * download must pass before it replaces the installed version.
 */
import { describe, expect, it } from 'vitest';
import { parseAddressRange, v4RangeText, v6RangeText } from '../../../src/engine/security/address-range.js';
import { checkParsedFeed, parseFeed, type ParsedFeed } from '../../../src/engine/security/feed-formats.js';
import { NetintelError } from '../../../src/errors.js';
import { AWS_JSON, AZURE_JSON, BAD_ASN_CSV, GOOGLE_JSON, ORACLE_JSON, PROXIES, TOR_BULK, TOR_EXIT_ADDRESSES, VPN_ASNS, VPN_CIDRS } from './fixtures.js';

/** Every entry of a parsed feed as text: ranges as their list would write them, AS numbers as AS<n>, with label and port. */
function entries(parsed: ParsedFeed): string[] {
  const e = parsed.entries;
  const out: string[] = [];
  const label = (id: number) => (id < 0 ? '' : ` [${e.labels[id]}]`);
  for (let i = 0; i < e.v4Count; i++) out.push(`${v4RangeText(e.v4Starts[i]!, e.v4Ends[i]!)}${e.v4Ports[i] ? `:${e.v4Ports[i]}` : ''}${label(e.v4Labels[i]!)}`);
  for (let i = 0; i < e.v6Starts.length; i++) out.push(`${v6RangeText(e.v6Starts[i]!, e.v6Ends[i]!)}${e.v6Ports[i] ? `:${e.v6Ports[i]}` : ''}${label(e.v6Labels[i]!)}`);
  for (let i = 0; i < e.asns.length; i++) out.push(`AS${e.asns[i]}${label(e.asnLabels[i]!)}`);
  return out;
}

function rejected(fn: () => void): NetintelError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(NetintelError);
    return error as NetintelError;
  }
  throw new Error('expected a rejection');
}

describe('address ranges as feeds write them', () => {
  it('reads addresses, CIDRs and a-b ranges of both families, clearing host bits under a prefix', () => {
    expect(parseAddressRange('1.2.3.4')).toEqual({ version: 4, start: 0x01020304, end: 0x01020304 });
    expect(parseAddressRange('10.1.2.3/8')).toEqual({ version: 4, start: 0x0a000000, end: 0x0affffff });
    expect(parseAddressRange('0.0.0.0/0')).toEqual({ version: 4, start: 0, end: 0xffffffff });
    expect(parseAddressRange('1.0.0.0-1.0.0.9')).toEqual({ version: 4, start: 0x01000000, end: 0x01000009 });
    expect(parseAddressRange('2001:db8::/32')).toEqual({ version: 6, start: 0x20010db8n << 96n, end: (0x20010db8n << 96n) | ((1n << 96n) - 1n) });
    expect(parseAddressRange('2001:0620:20d0:0000:0000:0000:0000:0019')?.version).toBe(6);
  });

  it('unwraps IPv4-mapped IPv6, as lookups do', () => {
    expect(parseAddressRange('::ffff:1.2.3.4')).toEqual({ version: 4, start: 0x01020304, end: 0x01020304 });
    expect(parseAddressRange('::ffff:1.2.3.0/120')).toEqual({ version: 4, start: 0x01020300, end: 0x010203ff });
  });

  it('rejects what is not an address', () => {
    for (const text of ['', '1.2.3', '1.2.3.4/33', '256.1.1.1', '::g', '2001:db8::/129', '1.2.3.9-1.2.3.1', 'ASN,Entity', '<html>', '01.2.3.4']) {
      expect(parseAddressRange(text)).toBeNull();
    }
  });

  it('writes a single address, a CIDR, or a-b', () => {
    expect(v4RangeText(0x01020304, 0x01020304)).toBe('1.2.3.4');
    expect(v4RangeText(0x01020300, 0x010203ff)).toBe('1.2.3.0/24');
    expect(v4RangeText(0, 0xffffffff)).toBe('0.0.0.0/0');
    expect(v4RangeText(0x01020301, 0x01020302)).toBe('1.2.3.1-1.2.3.2');
    expect(v6RangeText(0x20010db8n << 96n, (0x20010db8n << 96n) | ((1n << 96n) - 1n))).toBe('2001:db8::/32');
  });
});

describe('parseFeed', () => {
  it('reads the Tor bulk exit list (one address per line, both families) as a cidr-list', () => {
    const parsed = parseFeed('cidr-list', TOR_BULK);
    expect(entries(parsed)).toEqual(['185.220.101.1', '185.220.101.2', '2a0b:f4c2::1']);
    expect(parsed.malformed).toBe(0);
  });

  it('reads CIDR lists with comments, CRLF line ends, a BOM and CSV lines (first field)', () => {
    const parsed = parseFeed('cidr-list', `\ufeff${VPN_CIDRS}\n"5.101.96.0/21",NL,NL-NH,Amsterdam,1098 XH\n; another comment\n`);
    expect(entries(parsed)).toEqual(['45.83.104.0/24', '194.156.98.0/23', '5.101.96.0/21', '2001:ac8::/32']);
    expect(parsed.records).toBe(4);
  });

  it('skips a CSV header line before the first entry (jhassine-style "cidr","hostmin",...)', () => {
    const parsed = parseFeed('cidr-list', '"cidr","hostmin","hostmax","vendor"\n"1.178.1.0/24","1.178.1.0","1.178.1.255","AWS"\n');
    expect([entries(parsed), parsed.records, parsed.malformed]).toEqual([['1.178.1.0/24'], 1, 0]);
  });

  it('takes the date a list states in its header comment', () => {
    expect(parseFeed('cidr-list', '# provider: Aws\n# last_update: 2025-07-03-04-13-14\n1.2.3.0/24\n').date).toBe('2025-07-03T04:13:14Z');
    expect(parseFeed('cidr-list', '# Last modified: 2025-07-24 10:00:06.525037\n1.2.3.0/24\n').date).toBe('2025-07-24T10:00:06Z');
  });

  it('reads the exit-addresses format: ExitAddress lines are entries, the newest one dates the feed', () => {
    const parsed = parseFeed('tor-exit-addresses', TOR_EXIT_ADDRESSES);
    expect(entries(parsed)).toEqual(['185.220.101.3', '185.220.101.1']);
    expect(parsed.date).toBe('2026-11-21T08:02:59Z');
    expect(parsed.malformed).toBe(0);
    expect(parseFeed('tor-exit-addresses', 'ExitNode ABC\nExitAddress not-an-ip 2026-01-01 00:00:00\n<html>\n').malformed).toBe(2);
  });

  it('reads proxy lists as ip:port, [v6]:port and scheme://ip:port, keeping each port', () => {
    expect(entries(parseFeed('proxy-list', PROXIES))).toEqual(['45.83.104.20:8080', '194.156.98.7:3128', '45.83.104.20:3128', '2001:ac8:20::5:1080']);
    const odd = parseFeed('proxy-list', '1.2.3.4:0\n1.2.3.4:99999\nuser:pw@5.6.7.8:8080\n9.9.9.9\n');
    expect(entries(odd)).toEqual(['5.6.7.8:8080', '9.9.9.9']);
    expect(odd.malformed).toBe(2);
  });

  it('reads AWS ip-ranges.json: both families, its createDate and syncToken', () => {
    const parsed = parseFeed('aws-ip-ranges', AWS_JSON);
    expect(entries(parsed)).toEqual(['3.5.140.0/22', '3.5.140.0/22', '52.94.76.0/22', '2600:1f18::/33']);
    expect(parsed.date).toBe('2026-11-20T10:00:00Z');
    expect(parsed.version).toBe('syncToken 1763632800');
  });

  it('reads Google cloud.json (and goog.json): ipv4Prefix / ipv6Prefix, creationTime as UTC', () => {
    const parsed = parseFeed('google-cloud', GOOGLE_JSON);
    expect(entries(parsed)).toEqual(['34.35.0.0/16', '2600:1900:8000::/44']);
    expect(parsed.date).toBe('2026-11-19T19:16:28Z');
  });

  it('reads Azure Service Tags: every addressPrefixes list, changeNumber as the version', () => {
    const parsed = parseFeed('azure-service-tags', AZURE_JSON);
    expect(entries(parsed)).toEqual(['20.7.239.202', '13.66.143.220/30', '20.7.239.202', '2603:1000:4::/48']);
    expect(parsed.version).toBe('changeNumber 364');
    expect(parsed.date).toBeNull();
  });

  it('reads Oracle public_ip_ranges.json by region', () => {
    const parsed = parseFeed('oracle-cloud', ORACLE_JSON);
    expect(entries(parsed)).toEqual(['129.80.0.0/16', '129.144.0.0/16']);
    expect(parsed.date).toBe('2026-11-18T07:13:25Z');
  });

  it('reads ASN lists: "AS<n> # name", bare numbers, and the ASN,Entity CSV (quoted or not)', () => {
    expect(entries(parseFeed('asn-list', VPN_ASNS))).toEqual(['AS9009 [M247, GB (NordVPN)]', 'AS60729 [Tor Servers (Tor exit nodes)]']);
    const csv = parseFeed('asn-list', BAD_ASN_CSV);
    expect(entries(csv)).toEqual(['AS16509 [AMAZON-02 - Amazon.com, Inc., US]', 'AS15169 [GOOGLE - Google Inc., US]']);
    expect([csv.records, csv.malformed]).toEqual([2, 0]); // the header line is no record
    expect(entries(parseFeed('asn-list', '13335\nas174\n'))).toEqual(['AS13335', 'AS174']);
  });

  it('throws data_unavailable for a JSON feed that is not JSON or lacks its structure', () => {
    expect(rejected(() => parseFeed('aws-ip-ranges', '<html>503</html>', 'aws')).message).toMatch(/^aws: rejected the download: not JSON/);
    expect(rejected(() => parseFeed('google-cloud', '{"items": []}', 'google-cloud')).message).toBe(
      'google-cloud: rejected the download: not google-cloud JSON (no "prefixes" array)',
    );
    expect(rejected(() => parseFeed('azure-service-tags', '[1,2]', 'azure')).code).toBe('data_unavailable');
  });
});

describe('checkParsedFeed', () => {
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `10.${i >> 8}.${i & 255}.0/24`).join('\n');

  it('accepts a feed with enough entries and few malformed lines', () => {
    expect(() => checkParsedFeed('x', parseFeed('cidr-list', `${lines(100)}\nnot a cidr\n`), { minEntries: 50 })).not.toThrow();
  });

  it('rejects garbage: over 5% of the records are not entries of the format', () => {
    const error = rejected(() => checkParsedFeed('vpn-ipv4', parseFeed('cidr-list', '<!doctype html>\n<html><body>\nRate limited\n</body></html>\n1.2.3.0/24\n'), { minEntries: 1 }));
    expect(error.code).toBe('data_unavailable');
    expect(error.message).toMatch(/^vpn-ipv4: rejected the download: 4 of 5 records are not cidr-list entries/);
  });

  it('rejects a feed with fewer entries than the source ever holds (a truncated or empty download)', () => {
    expect(rejected(() => checkParsedFeed('tor-exit', parseFeed('cidr-list', lines(10)), { minEntries: 100 })).message).toBe(
      'tor-exit: rejected the download: 10 entries, fewer than the 100 a real cidr-list feed of this source holds (truncated or empty?)',
    );
  });

  it('rejects a feed that shrank below the share of the installed version, unless no previous count is given', () => {
    const parsed = parseFeed('cidr-list', lines(30));
    expect(rejected(() => checkParsedFeed('x', parsed, { minEntries: 1, previousEntries: 1000, minShareOfPrevious: 0.2 })).message).toMatch(/30 entries, down from 1000/);
    expect(() => checkParsedFeed('x', parsed, { minEntries: 1, previousEntries: null, minShareOfPrevious: 0.2 })).not.toThrow();
  });
});
