/**
 * Small security feeds in every published format, written for the tests
 * (the addresses are real operators' so that the bundled ASN data agrees,
 * but the lists are invented and tiny), and a helper that compiles them into
 * a data dir's security.idx the way `netintel data update` does.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileSignalIndex, type SignalSourceInput } from '../../../src/engine/security/compile-signal-index.js';
import { parseFeed, type FeedFormat } from '../../../src/engine/security/feed-formats.js';

export const TOR_BULK = ['185.220.101.1', '185.220.101.2', '2a0b:f4c2::1', ''].join('\n');

export const TOR_EXIT_ADDRESSES = [
  'ExitNode 0011BD2485AD45D984EC4159C88FC066E5E3300E',
  'Published 2026-11-20 09:10:11',
  'LastStatus 2026-11-20 10:02:41',
  'ExitAddress 185.220.101.3 2026-11-20 10:07:38',
  'ExitNode 0077BCBA7244DB3E6A5ED2746E86170066684887',
  'Published 2026-11-20 07:38:38',
  'LastStatus 2026-11-20 08:02:38',
  'ExitAddress 185.220.101.1 2026-11-21 08:02:59',
  '',
].join('\n');

/** X4BNet style: CIDRs, one per line; a comment and a CRLF for good measure. */
export const VPN_CIDRS = ['# VPN ranges (fixture)', '45.83.104.0/24', '194.156.98.0/23\r', '2001:ac8::/32', ''].join('\n');

/** A /16 around a /24 of the VPN list, and a range written start-end. */
export const DATACENTER_CIDRS = ['45.83.0.0/16', '45.83.104.0/24', '104.16.0.0-104.16.0.255', '2001:ac8::/29', ''].join('\n');

export const AWS_JSON = JSON.stringify({
  syncToken: '1763632800',
  createDate: '2026-11-20-10-00-00',
  prefixes: [
    { ip_prefix: '3.5.140.0/22', region: 'ap-northeast-2', service: 'AMAZON', network_border_group: 'ap-northeast-2' },
    { ip_prefix: '3.5.140.0/22', region: 'ap-northeast-2', service: 'EC2', network_border_group: 'ap-northeast-2' },
    { ip_prefix: '52.94.76.0/22', region: 'us-west-2', service: 'AMAZON', network_border_group: 'us-west-2' },
  ],
  ipv6_prefixes: [{ ipv6_prefix: '2600:1f18::/33', region: 'us-east-1', service: 'AMAZON', network_border_group: 'us-east-1' }],
});

export const GOOGLE_JSON = JSON.stringify({
  syncToken: '1763632800000',
  creationTime: '2026-11-19T19:16:28.780563',
  prefixes: [
    { ipv4Prefix: '34.35.0.0/16', service: 'Google Cloud', scope: 'africa-south1' },
    { ipv6Prefix: '2600:1900:8000::/44', service: 'Google Cloud', scope: 'africa-south1' },
  ],
});

export const AZURE_JSON = JSON.stringify({
  changeNumber: 364,
  cloud: 'Public',
  values: [
    { name: 'ActionGroup', id: 'ActionGroup', properties: { changeNumber: 50, region: '', addressPrefixes: ['20.7.239.202/32', '13.66.143.220/30', '2603:1000:4::/48'] } },
    { name: 'AzureCloud', id: 'AzureCloud', properties: { changeNumber: 9, region: '', addressPrefixes: ['20.7.239.202/32'] } },
  ],
});

export const ORACLE_JSON = JSON.stringify({
  last_updated_timestamp: '2026-11-18T07:13:25.457838',
  regions: [{ region: 'us-ashburn-1', cidrs: [{ cidr: '129.80.0.0/16', tags: ['OCI'] }, { cidr: '129.144.0.0/16', tags: ['OCI'] }] }],
});

export const CLOUDFLARE_V4 = ['173.245.48.0/20', '104.16.0.0/13', ''].join('\n');

export const PROXIES = ['45.83.104.20:8080', 'http://194.156.98.7:3128', '[2001:ac8:20::5]:1080', '45.83.104.20:3128', ''].join('\n');

export const VPN_ASNS = ['AS9009 # M247, GB (NordVPN)', 'AS60729 # Tor Servers (Tor exit nodes)', ''].join('\n');

export const BAD_ASN_CSV = ['ASN,Entity', '"16509","AMAZON-02 - Amazon.com, Inc., US"', '15169, "GOOGLE - Google Inc., US"', ''].join('\n');

export interface FixtureFeed {
  name: string;
  format: FeedFormat;
  signal: string;
  provider: string | null;
  text: string;
  updated: string;
}

/** The fixture feeds under the names `netintel data status` gives the sources. */
export const FIXTURE_FEEDS: readonly FixtureFeed[] = [
  { name: 'tor-exit', format: 'cidr-list', signal: 'tor_exit_list', provider: null, text: TOR_BULK, updated: '2026-11-21T10:00:00Z' },
  { name: 'tor-exit-addresses', format: 'tor-exit-addresses', signal: 'tor_exit_list', provider: null, text: TOR_EXIT_ADDRESSES, updated: '2026-11-21T08:02:59Z' },
  { name: 'vpn-ipv4', format: 'cidr-list', signal: 'vpn_range', provider: null, text: VPN_CIDRS, updated: '2026-11-20T00:00:00Z' },
  { name: 'datacenter-ipv4', format: 'cidr-list', signal: 'datacenter_range', provider: null, text: DATACENTER_CIDRS, updated: '2026-11-20T00:00:00Z' },
  { name: 'aws', format: 'aws-ip-ranges', signal: 'cloud_range', provider: 'Amazon Web Services', text: AWS_JSON, updated: '2026-11-20T10:00:00Z' },
  { name: 'google-cloud', format: 'google-cloud', signal: 'cloud_range', provider: 'Google Cloud', text: GOOGLE_JSON, updated: '2026-11-19T19:16:28Z' },
  { name: 'azure', format: 'azure-service-tags', signal: 'cloud_range', provider: 'Microsoft Azure', text: AZURE_JSON, updated: '2026-11-16T00:00:00Z' },
  { name: 'oracle-cloud', format: 'oracle-cloud', signal: 'cloud_range', provider: 'Oracle Cloud', text: ORACLE_JSON, updated: '2026-11-18T07:13:25Z' },
  { name: 'cloudflare-ipv4', format: 'cidr-list', signal: 'cloud_range', provider: 'Cloudflare', text: CLOUDFLARE_V4, updated: '2026-11-01T00:00:00Z' },
  { name: 'open-proxies', format: 'proxy-list', signal: 'proxy_list', provider: null, text: PROXIES, updated: '2026-11-21T06:00:00Z' },
  { name: 'vpn-asn', format: 'asn-list', signal: 'vpn_asn', provider: null, text: VPN_ASNS, updated: '2026-11-10T00:00:00Z' },
  { name: 'bad-asn', format: 'asn-list', signal: 'hosting_asn', provider: null, text: BAD_ASN_CSV, updated: '2026-11-10T00:00:00Z' },
];

export function compileFixtures(feeds: readonly FixtureFeed[] = FIXTURE_FEEDS, builtAt = new Date('2026-11-21T12:00:00Z')): Uint8Array {
  const inputs: SignalSourceInput[] = feeds.map((feed) => ({
    meta: { name: feed.name, signal: feed.signal, provider: feed.provider, updated: feed.updated, version: null, licence: 'test', attribution: null },
    entries: parseFeed(feed.format, feed.text, feed.name).entries,
  }));
  return compileSignalIndex(inputs, builtAt).bytes;
}

/** Writes the compiled fixture feeds as `dir/security.idx` (a data dir as `data update` leaves it, index-wise). */
export function writeFixtureIndex(dir: string, feeds: readonly FixtureFeed[] = FIXTURE_FEEDS): string {
  const path = join(dir, 'security.idx');
  writeFileSync(path, compileFixtures(feeds));
  return path;
}
