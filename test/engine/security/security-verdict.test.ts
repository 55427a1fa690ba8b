/**
 * Security verdicts end to end: lookupIp and checkVpn over the bundled
 * city/ASN data plus a data dir holding the compiled fixture feeds. Checks
 * the flags (true / false / null), the evidence items, the provider, the
 * threat rule, and that records share verdict objects per range and signals.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { AsnIndex } from '../../../src/engine/asn/asn-index.js';
import { createEngineContext } from '../../../src/engine/context.js';
import { dataFilePath } from '../../../src/engine/data/data-files.js';
import { ipDatabasesFor } from '../../../src/engine/ip/ip-databases.js';
import { specialPurposeOfV4 } from '../../../src/engine/address/special-ranges.js';
import { v4ToText } from '../../../src/engine/address/ip-address.js';
import { createIpTextLookup, lookupIp } from '../../../src/engine/ip/lookup-ip.js';
import { checkVpn } from '../../../src/engine/security/check-vpn.js';
import { tempDir } from '../../support/cli.js';
import { parseFeed } from '../../../src/engine/security/feed-formats.js';
import { FIXTURE_FEEDS, writeFixtureIndex } from './fixtures.js';

const dir = tempDir('netintel-verdict-');
writeFixtureIndex(dir.path);
const ctx = createEngineContext({ dataDir: dir.path });
const bare = createEngineContext({ dataDir: null });
afterAll(async () => {
  await ctx.close();
  dir.remove();
});

/** A public address no AS announces in the installed ASN data (the data changes; the property does not). */
function unannouncedAddress(): string {
  const index = AsnIndex.open(dataFilePath('asnIndex', null), { mode: 'memory' });
  try {
    let previousEnd = -1;
    for (let i = 0; i < index.v4Count; i++) {
      const start = index.v4StartAt(i);
      if (start > previousEnd + 2 && specialPurposeOfV4(previousEnd + 1) === null) return v4ToText(previousEnd + 1);
      previousEnd = index.v4EndAt(i);
    }
  } finally {
    index.close();
  }
  throw new Error('no unannounced public address in the ASN data');
}

describe('security verdicts with installed feeds', () => {
  it('flags a Tor exit high by rule tor_exit, with evidence from both Tor lists and the VPN-operator AS list', () => {
    const result = checkVpn(ctx, '185.220.101.1');
    expect(result).toMatchObject({
      kind: 'vpn',
      ip: '185.220.101.1',
      is_tor: true,
      is_proxy: false,
      is_vpn: true,
      threat_level: 'high',
      threat_rule: 'tor_exit',
      reserved: null,
    });
    expect(result.evidence).toEqual([
      { signal: 'tor_exit_list', source: 'tor-exit', matched: '185.220.101.1', provider: null, updated: '2026-11-21T10:00:00Z' },
      { signal: 'tor_exit_list', source: 'tor-exit-addresses', matched: '185.220.101.1', provider: null, updated: '2026-11-21T08:02:59Z' },
      { signal: 'vpn_asn', source: 'vpn-asn', matched: 'AS60729', provider: 'Tor Servers (Tor exit nodes)', updated: '2026-11-10T00:00:00Z' },
    ]);
  });

  it('flags a listed open proxy high by rule open_proxy, every listed port as evidence, the VPN range too', () => {
    const result = checkVpn(ctx, '45.83.104.20');
    expect([result.threat_level, result.threat_rule, result.is_proxy, result.is_vpn, result.is_tor]).toEqual(['high', 'open_proxy', true, true, false]);
    expect(result.evidence.map((item) => `${item.signal} ${item.source} ${item.matched}`)).toEqual([
      'proxy_list open-proxies 45.83.104.20:3128',
      'proxy_list open-proxies 45.83.104.20:8080',
      'vpn_range vpn-ipv4 45.83.104.0/24',
      'datacenter_range datacenter-ipv4 45.83.104.0/24',
      'hosting_asn curated-asns AS197540',
    ]);
  });

  it('keeps the most specific entry of a source: the /24 of the datacenter list, not the /16 around it', () => {
    const inside = checkVpn(ctx, '45.83.104.1').evidence.filter((item) => item.source === 'datacenter-ipv4');
    expect(inside.map((item) => item.matched)).toEqual(['45.83.104.0/24']);
    const outside = checkVpn(ctx, '45.83.105.1');
    expect(outside.evidence.filter((item) => item.source === 'datacenter-ipv4').map((item) => item.matched)).toEqual(['45.83.0.0/16']);
    expect([outside.is_vpn, outside.is_hosting, outside.threat_rule]).toEqual([false, true, 'hosting']);
  });

  it('names the cloud from the cloud feed and the curated list for an AWS address, threat low by rule hosting', () => {
    const result = checkVpn(ctx, '3.5.140.1');
    expect([result.is_hosting, result.is_vpn, result.threat_level, result.threat_rule, result.provider]).toEqual([true, false, 'low', 'hosting', 'Amazon Web Services']);
    expect(result.evidence[0]).toEqual({ signal: 'cloud_range', source: 'aws', matched: '3.5.140.0/22', provider: 'Amazon Web Services', updated: '2026-11-20T10:00:00Z' });
    expect(result.evidence.some((item) => item.source === 'curated-asns' && item.signal === 'hosting_asn')).toBe(true);
  });

  it('matches an Azure /32 exactly and not its neighbour', () => {
    expect(checkVpn(ctx, '20.7.239.202').evidence.filter((item) => item.source === 'azure').map((item) => item.matched)).toEqual(['20.7.239.202']);
    expect(checkVpn(ctx, '20.7.239.203').evidence.filter((item) => item.source === 'azure')).toEqual([]);
  });

  it('gives IPv6 verdicts from IPv6 entries (a Tor exit, a VPN /32, a proxy on [v6]:port)', () => {
    expect(checkVpn(ctx, '2a0b:f4c2::1')).toMatchObject({ is_tor: true, threat_rule: 'tor_exit' });
    const proxy = checkVpn(ctx, '2001:ac8:20::5');
    expect(proxy.evidence.map((item) => `${item.signal} ${item.matched}`).slice(0, 3)).toEqual([
      'proxy_list [2001:ac8:20::5]:1080',
      'vpn_range 2001:ac8::/32',
      'vpn_asn AS9009',
    ]);
    expect(checkVpn(ctx, '2a0b:f4c2::2').is_tor).toBe(false);
  });

  it('says false, not null, for what an installed feed could have said, and VPN from the provider of its list', () => {
    const result = checkVpn(ctx, '8.8.8.8');
    expect([result.is_tor, result.is_proxy, result.is_vpn, result.is_hosting]).toEqual([false, false, false, true]);
    expect(result.provider).toBe('Google');
  });

  it('judges an address no AS announces by the address lists alone: false where a list was consulted, hosting false too', () => {
    const address = unannouncedAddress();
    const result = checkVpn(ctx, address);
    expect(lookupIp(ctx, address).network.asn).toBeNull();
    expect([result.is_tor, result.is_proxy, result.is_vpn, result.is_hosting, result.threat_level, result.threat_rule]).toEqual([false, false, false, false, 'low', 'no_signal']);
    // Without feeds nothing at all is known of it.
    expect(checkVpn(bare, address)).toMatchObject({ is_tor: null, is_proxy: null, is_vpn: null, is_hosting: null, threat_level: null, threat_rule: null, evidence: [] });
  });

  it('consults nothing for a special-purpose address', () => {
    expect(checkVpn(ctx, '10.1.2.3')).toMatchObject({ reserved: 'private (RFC 1918)', is_tor: null, threat_level: null, evidence: [], meta: { data: {} } });
  });

  it('carries the date of every dataset used in meta', () => {
    const meta = lookupIp(ctx, '8.8.8.8').meta.data;
    expect(Object.keys(meta)).toEqual([
      'dbip-city-ipv4',
      'asn-ipv4',
      'curated-asns',
      'tor-exit',
      'tor-exit-addresses',
      'vpn-ipv4',
      'datacenter-ipv4',
      'aws',
      'google-cloud',
      'azure',
      'oracle-cloud',
      'cloudflare-ipv4',
      'open-proxies',
      'vpn-asn',
      'bad-asn',
    ]);
    expect(meta['tor-exit']).toBe('2026-11-21T10:00:00Z');
    expect(meta['dbip-city-ipv4']).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(lookupIp(ctx, '2001:4860:4860::8888').meta.data).toHaveProperty('dbip-city-ipv6');
  });

  it('shares one security object per (range, signals) pair across records, and the pread and memory modes agree', () => {
    const lookup = createIpTextLookup(ipDatabasesFor(ctx, 'memory'));
    expect(lookup('185.220.101.1').security).toBe(lookup('185.220.101.1').security);
    expect(lookup('8.8.8.8').security).toBe(lookup('8.8.8.9').security);
    expect(lookup('185.220.101.1').security).not.toBe(lookup('185.220.101.2').security);
    for (const address of ['185.220.101.1', '45.83.104.20', '3.5.140.1', '20.7.239.202', '8.8.8.8', '1.1.1.1', '2001:ac8:20::5']) {
      expect(lookup(address)).toEqual(lookupIp(ctx, address, 'pread'));
    }
  });
});

describe('security verdicts without evidence (rows that show the flags only)', () => {
  /** Every fixture entry's first, middle and last address, and the addresses just outside it (IPv4). */
  function fixtureAddresses(): string[] {
    const addresses = new Set<string>();
    for (const feed of FIXTURE_FEEDS) {
      const { entries } = parseFeed(feed.format, feed.text, feed.name);
      for (let i = 0; i < entries.v4Count; i++) {
        const [start, end] = [entries.v4Starts[i]!, entries.v4Ends[i]!];
        for (const value of [start - 1, start, Math.floor((start + end) / 2), end, end + 1]) {
          if (value >= 0 && value <= 0xffffffff) addresses.add(v4ToText(value));
        }
      }
    }
    return [...addresses, '2001:ac8:20::5', '2a0b:f4c2::1', '8.8.8.8', unannouncedAddress()];
  }

  it('gives every listed address the flags, threat level and rule, and provider of the verdict with evidence', () => {
    const full = createIpTextLookup(ipDatabasesFor(ctx, 'memory'));
    const flagsOnly = createIpTextLookup(ipDatabasesFor(ctx, 'memory'), { evidence: false });
    const addresses = fixtureAddresses();
    let listed = 0;
    for (const address of addresses) {
      const [withEvidence, without] = [full(address), flagsOnly(address)];
      const { evidence, ...flags } = withEvidence.security as { evidence: unknown[] };
      expect({ address, ...without.security, evidence: undefined }).toEqual({ address, ...flags, evidence: undefined });
      expect({ ...without, security: null }).toEqual({ ...withEvidence, security: null });
      // Only an address a list holds loses its evidence; an AS-only verdict is the shared one, evidence and all.
      if (without.security.evidence.length === 0 && evidence.some((item) => !['hosting_asn', 'vpn_asn'].includes((item as { signal: string }).signal))) listed++;
      else expect(without.security).toBe(withEvidence.security);
    }
    expect(listed).toBeGreaterThan(20);
    // Again in the other order, the verdicts now found by the sources and operators of each address's entries.
    for (const address of [...addresses].reverse()) {
      const { evidence, ...flags } = full(address).security as { evidence: unknown[] };
      expect({ address, ...flagsOnly(address).security, evidence: undefined }).toEqual({ address, ...flags, evidence: undefined });
    }
  });

  it('shares one verdict object among listed addresses that say the same', () => {
    const flagsOnly = createIpTextLookup(ipDatabasesFor(ctx, 'memory'), { evidence: false });
    // Two Tor exits of one AS on the bulk exit list: the same flags, rule and provider.
    const [one, two] = [flagsOnly('185.220.101.1').security, flagsOnly('185.220.101.2').security];
    expect(one).toMatchObject({ is_tor: true, threat_level: 'high', threat_rule: 'tor_exit', evidence: [] });
    expect(two).toBe(one);
    // With evidence each has its own: the entries matched differ.
    const full = createIpTextLookup(ipDatabasesFor(ctx, 'memory'));
    expect(full('185.220.101.1').security).not.toBe(full('185.220.101.2').security);
    expect(Object.isFrozen(flagsOnly('185.220.101.1').security)).toBe(true);
  });
});

describe('security verdicts without feeds (the curated list only)', () => {
  it('keeps is_tor and is_proxy null (unknown) and explains is_hosting by the curated AS', () => {
    expect(lookupIp(bare, '8.8.8.8').security).toEqual({
      is_vpn: false,
      is_proxy: null,
      is_tor: null,
      is_hosting: true,
      threat_level: 'unknown',
      threat_rule: 'signals_missing',
      provider: 'Google',
      evidence: [{ signal: 'hosting_asn', source: 'curated-asns', matched: 'AS15169', provider: 'Google', updated: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/) }],
      coverage: {
        consulted: ['vpn_asn', 'hosting_asn'],
        missing: ['tor_exit_list', 'proxy_list', 'vpn_range', 'cloud_range', 'datacenter_range'],
      },
    });
  });

  it('never gives a Tor exit a clean low: the verdict is unknown by rule signals_missing, the blind signals listed', () => {
    const result = checkVpn(bare, '185.220.101.1');
    expect([result.is_tor, result.is_proxy, result.threat_level, result.threat_rule]).toEqual([null, null, 'unknown', 'signals_missing']);
    expect(result.coverage.missing).toEqual(expect.arrayContaining(['tor_exit_list', 'proxy_list']));
    expect(result.coverage.consulted).not.toContain('tor_exit_list');
  });

  it('gives verdicts without evidence the same coverage, in the same key order', () => {
    const full = createIpTextLookup(ipDatabasesFor(bare, 'memory'))('8.8.8.8').security;
    const flagsOnly = createIpTextLookup(ipDatabasesFor(ctx, 'memory'), { evidence: false })('45.83.104.20').security;
    expect(Object.keys(flagsOnly)).toEqual(Object.keys(full));
    expect(Object.keys(full).slice(-2)).toEqual(['evidence', 'coverage']);
    expect(flagsOnly.coverage.missing).toEqual([]);
  });
});

describe('signal coverage with feeds installed', () => {
  it('is complete for an announced address: every signal consulted, none missing, and the verdict a real low', () => {
    const result = checkVpn(ctx, '8.8.8.8');
    expect(result.coverage).toEqual({
      consulted: ['tor_exit_list', 'proxy_list', 'vpn_range', 'vpn_asn', 'cloud_range', 'datacenter_range', 'hosting_asn'],
      missing: [],
    });
    expect([result.threat_level, result.threat_rule]).toEqual(['low', 'hosting']);
  });

  it('leaves the AS signals out of both lists for an address no AS announces', () => {
    expect(checkVpn(ctx, unannouncedAddress()).coverage).toEqual({
      consulted: ['tor_exit_list', 'proxy_list', 'vpn_range', 'cloud_range', 'datacenter_range'],
      missing: [],
    });
  });

  it('consults nothing and misses nothing for a special-purpose address', () => {
    expect(checkVpn(ctx, '10.1.2.3').coverage).toEqual({ consulted: [], missing: [] });
  });
});
