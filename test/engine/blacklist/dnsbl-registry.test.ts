import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { NetintelError } from '../../../src/errors.js';
import {
  dnsblRegistryPath,
  findRegisteredZone,
  loadDnsblRegistry,
  parseDnsblRegistry,
  selectZones,
} from '../../../src/engine/blacklist/dnsbl-registry.js';
import { tempDir } from '../../support/cli.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const registry = loadDnsblRegistry(null);

function usageError(fn: () => unknown): NetintelError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(NetintelError);
    return error as NetintelError;
  }
  throw new Error('expected an error');
}

describe('the shipped zone registry (data/dnsbl-zones.json)', () => {
  it('is versioned, documents its sources, and every entry names sources the document defines', () => {
    const doc = JSON.parse(readFileSync(dnsblRegistryPath(null), 'utf8')) as {
      version: string;
      description: string;
      sources: Record<string, string>;
      zones: Array<{ zone: string; sources: string[] }>;
    };
    expect(doc.version).toMatch(/^\d{4}\.\d+\.\d+$/);
    expect(doc.description).toContain('RFC 5782');
    for (const zone of doc.zones) {
      expect(zone.sources.length, zone.zone).toBeGreaterThan(0);
      for (const source of zone.sources) expect(Object.keys(doc.sources), `${zone.zone} cites ${source}`).toContain(source);
    }
    expect(registry.version).toBe(doc.version);
  });

  it('queries by default only live lists, and marks SORBS, NiX Spam and the CBL dead', () => {
    const defaults = registry.zones.filter((zone) => zone.default);
    expect(defaults.map((zone) => zone.zone)).toEqual(
      expect.arrayContaining(['zen.spamhaus.org', 'bl.spamcop.net', 'dbl.spamhaus.org', 'multi.uribl.com', 'multi.surbl.org']),
    );
    expect(defaults.every((zone) => zone.status === 'live')).toBe(true);
    const dead = Object.fromEntries(registry.zones.filter((zone) => zone.status === 'dead').map((zone) => [zone.zone, zone.deadSince]));
    expect(dead).toMatchObject({ 'dnsbl.sorbs.net': '2024-06-05', 'ix.dnsbl.manitu.net': '2025-01-16', 'cbl.abuseat.org': null });
  });

  it('knows the refusal codes that are never listings: Spamhaus 127.255.255.252/254/255, URIBL and SURBL 127.0.0.1, DBL 127.0.1.255', () => {
    const zen = findRegisteredZone(registry, 'zen.spamhaus.org')!;
    expect(Object.keys(zen.refusalCodes)).toEqual(expect.arrayContaining(['127.255.255.252', '127.255.255.254', '127.255.255.255']));
    expect(zen.refusesPublicResolvers).toBe(true);
    expect(findRegisteredZone(registry, 'multi.uribl.com')!.refusalCodes['127.0.0.1']).toMatch(/refused/);
    expect(findRegisteredZone(registry, 'multi.surbl.org')!.refusalCodes['127.0.0.1']).toMatch(/refused/);
    expect(findRegisteredZone(registry, 'dbl.spamhaus.org')!.refusalCodes['127.0.1.255']).toMatch(/IP address queries/);
  });

  it('gives every zone its RFC 5782 test points: 127.0.0.2 / 127.0.0.1 for IP lists, named test points for domain lists', () => {
    for (const zone of registry.zones.filter((item) => item.kind === 'ip')) {
      expect(zone.canaries, zone.zone).toEqual({ listed: '127.0.0.2', notListed: '127.0.0.1' });
    }
    expect(findRegisteredZone(registry, 'dbl.spamhaus.org')!.canaries).toEqual({ listed: 'dbltest.com', notListed: 'invalid' });
    expect(findRegisteredZone(registry, 'multi.uribl.com')!.canaries.listed).toBe('test.uribl.com');
    expect(findRegisteredZone(registry, 'multi.surbl.org')!.canaries.listed).toBe('test.surbl.org');
  });

  it('treats every zone under a dead operator\'s tree as dead', () => {
    const spam = findRegisteredZone(registry, 'spam.dnsbl.sorbs.net')!;
    expect(spam.status).toBe('dead');
    expect(spam.zone).toBe('spam.dnsbl.sorbs.net');
  });
});

describe('selectZones (--zones)', () => {
  it('uses the default set when --zones is absent, with no dead zone in it', () => {
    const selection = selectZones(registry, null);
    expect(selection.zones.length).toBeGreaterThanOrEqual(6);
    expect(selection.zones.every((zone) => zone.default && zone.status === 'live')).toBe(true);
    expect(selection.dead).toEqual([]);
  });

  it('"all" adds the live non-default lists and still leaves the dead ones out', () => {
    const all = selectZones(registry, 'all');
    expect(all.zones.map((zone) => zone.zone)).toContain('b.barracudacentral.org');
    expect(all.zones.some((zone) => zone.status === 'dead')).toBe(false);
  });

  it('never queries a dead zone named on the command line: it comes back apart, to be reported', () => {
    const selection = selectZones(registry, 'bl.spamcop.net,dnsbl.sorbs.net,ix.dnsbl.manitu.net');
    expect(selection.zones.map((zone) => zone.zone)).toEqual(['bl.spamcop.net']);
    expect(selection.dead.map((zone) => zone.zone)).toEqual(['dnsbl.sorbs.net', 'ix.dnsbl.manitu.net']);
  });

  it('takes zones outside the registry with RFC 5782 defaults: IPv4 list, :ipv6, :domain', () => {
    const selection = selectZones(registry, 'BL.Example.NET,v6.example.net:ipv6,rhs.example.net:domain, bl.example.net');
    expect(selection.zones.map((zone) => [zone.zone, zone.kind, zone.ipv6, zone.registered])).toEqual([
      ['bl.example.net', 'ip', false, false],
      ['v6.example.net', 'ip', true, false],
      ['rhs.example.net', 'domain', false, false],
    ]);
    expect(selection.zones[2]!.canaries).toEqual({ listed: 'test', notListed: 'invalid' });
  });

  it('lets :ipv6 and :ip switch IPv6 queries of a registered IP list', () => {
    expect(selectZones(registry, 'bl.mailspike.net:ipv6').zones[0]!.ipv6).toBe(true);
    expect(selectZones(registry, 'zen.spamhaus.org:ip').zones[0]!.ipv6).toBe(false);
  });

  it('rejects an empty list, a bad kind, a single label and a kind that contradicts the registry', () => {
    expect(usageError(() => selectZones(registry, ' , ')).code).toBe('usage');
    expect(usageError(() => selectZones(registry, 'bl.example.net:uri')).message).toMatch(/ip, ipv6 or domain/);
    expect(usageError(() => selectZones(registry, 'localhost')).message).toMatch(/not a DNS list zone/);
    expect(usageError(() => selectZones(registry, 'zen.spamhaus.org:domain')).message).toMatch(/lists IP addresses/);
    expect(usageError(() => selectZones(registry, 'bad zone.example')).code).toBe('usage');
  });
});

describe('parseDnsblRegistry', () => {
  const entry = {
    zone: 'bl.example.net',
    kind: 'ip',
    status: 'live',
    default: true,
    codes: { '127.0.0.2': 'listed' },
    refusalCodes: { '127.255.255.0/24': 'error range' },
  };

  it('fills the RFC 5782 defaults for optional fields', () => {
    const parsed = parseDnsblRegistry(JSON.stringify({ version: '1', zones: [entry] }), 'test.json');
    expect(parsed.zones[0]).toMatchObject({ canaries: { listed: '127.0.0.2', notListed: '127.0.0.1' }, ipv6: false, listingSeverity: 'error', registered: true });
  });

  it('refuses malformed documents with data_unavailable naming the entry', () => {
    const bad = (doc: unknown) => usageError(() => parseDnsblRegistry(typeof doc === 'string' ? doc : JSON.stringify(doc), 'test.json'));
    expect(bad('{').code).toBe('data_unavailable');
    expect(bad({ zones: [] }).message).toMatch(/version/);
    expect(bad({ version: '1', zones: [{ ...entry, kind: 'uri' }] }).message).toMatch(/zones\[0\].*kind/);
    expect(bad({ version: '1', zones: [{ ...entry, codes: { 'not-an-ip': 'x' } }] }).message).toMatch(/codes/);
    expect(bad({ version: '1', zones: [{ ...entry, status: 'dead', default: true }] }).message).toMatch(/dead zone cannot be queried by default/);
    expect(bad({ version: '1', zones: [entry, entry] }).message).toMatch(/twice/);
    expect(bad({ version: '1', zones: [{ ...entry, canaries: { listed: 'test', notListed: 'invalid' } }] }).message).toMatch(/IPv4 addresses/);
  });

  it('reads a registry from --data-dir in place of the shipped one', () => {
    const dir = tempDir();
    try {
      writeFileSync(join(dir.path, 'dnsbl-zones.json'), JSON.stringify({ version: 'local-1', zones: [entry] }));
      const local = loadDnsblRegistry(dir.path);
      expect(local.version).toBe('local-1');
      expect(local.zones.map((zone) => zone.zone)).toEqual(['bl.example.net']);
    } finally {
      dir.remove();
    }
  });
});
