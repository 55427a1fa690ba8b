/**
 * checkBlacklist against the tests' own DNS server (test/support/dns-server.ts)
 * playing the lists: real registry zone names served on 127.0.0.1, so the
 * registry's return codes, refusal codes and test points are exercised over
 * the wire. Nothing here leaves the machine.
 */
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkBlacklist, createBlacklistChecker } from '../../../src/engine/blacklist/check-blacklist.js';
import { findingFailures } from '../../../src/engine/check-failure.js';
import { createEngineContext } from '../../../src/engine/context.js';
import { createDnsTransport } from '../../../src/engine/dns/dns-transport.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { NetintelError } from '../../../src/errors.js';
import { startDnsServer, type DnsTestServer, type ZoneRecord } from '../../support/dns-server.js';
import { contextFor, listedName, zoneRecords } from './dnsbl-fixtures.js';

const SILENT_ZONE = 'pbl.spamhaus.org';
const MAIL_DOMAIN: ZoneRecord[] = [
  { name: 'mail.example', type: 'MX', data: { preference: 20, exchange: 'mx2.mail.example' } },
  { name: 'mail.example', type: 'MX', data: { preference: 10, exchange: 'mx1.mail.example' } },
  { name: 'mx1.mail.example', type: 'A', data: '192.0.2.10' },
  { name: 'mx1.mail.example', type: 'AAAA', data: '2001:db8::25' },
  { name: 'mx2.mail.example', type: 'A', data: '192.0.2.10' },
  { name: 'mx2.mail.example', type: 'A', data: '192.0.2.11' },
  { name: 'nomx.example', type: 'A', data: '192.0.2.12' },
  { name: 'nullmx.example', type: 'MX', data: { preference: 0, exchange: '.' } },
  { name: 'gone.example', type: 'MX', data: { preference: 10, exchange: 'missing.gone.example' } },
  { name: 'gone.example', type: 'MX', data: { preference: 20, exchange: 'mx1.mail.example' } },
  { name: 'halfmx.example', type: 'MX', data: { preference: 10, exchange: 'broken.halfmx.example' } },
  { name: 'halfmx.example', type: 'MX', data: { preference: 20, exchange: 'mx1.mail.example' } },
];

const RECORDS: ZoneRecord[] = [
  ...zoneRecords('zen.spamhaus.org', {
    '192.0.2.10': { a: ['127.0.0.2', '127.0.0.4'], txt: 'https://check.spamhaus.org/query/ip/192.0.2.10' },
    '192.0.2.66': { a: ['127.255.255.254'] },
  }),
  ...zoneRecords('bl.spamcop.net', { '2001:db8::25': { a: ['127.0.0.2'], txt: 'Blocked - see https://www.spamcop.net/bl.shtml?2001:db8::25' } }),
  // A resolver Spamhaus refuses: the test point itself answers the refusal code.
  ...zoneRecords('sbl.spamhaus.org', {}, { canaryCode: '127.255.255.254' }),
  // A resolver answering NXDOMAIN for everything (as Google does for Spamhaus): no record at all.
  // A retired list that answers every query as listed.
  ...zoneRecords('world.example.net', { '127.0.0.1': { a: ['127.0.0.2'] }, '192.0.2.10': { a: ['127.0.0.2'] } }),
  ...zoneRecords('psbl.surriel.com', {}),
  ...zoneRecords('dbl.spamhaus.org', { 'listed.example': { a: ['127.0.1.4'], txt: 'https://www.spamhaus.org/query/domain/listed.example' } }, {
    kind: 'domain',
    canaryName: 'dbltest.com',
  }),
  ...zoneRecords(
    'multi.uribl.com',
    { 'listed.example': { a: ['127.0.0.2'], txt: 'black listed' }, 'refused.example': { a: ['127.0.0.1'], txt: '127.0.0.1 -> Query Refused. [Your DNS IP: 192.0.2.53]' } },
    { kind: 'domain', canaryName: 'test.uribl.com', canaryCode: '127.0.0.14' },
  ),
  ...zoneRecords('odd.example.net', { '192.0.2.10': { a: ['203.0.113.5'] } }),
  // Answers the query, but its test points never answer.
  ...zoneRecords('hushed.example.net', { '192.0.2.10': { a: ['127.0.0.2'] } }, { canaries: false }),
  ...MAIL_DOMAIN,
];

const SILENT_NAMES = [
  ...['192.0.2.10', '127.0.0.2', '127.0.0.1'].map((ip) => listedName(ip, SILENT_ZONE)),
  ...['127.0.0.2', '127.0.0.1'].map((ip) => listedName(ip, 'hushed.example.net')),
];

let server: DnsTestServer;

beforeAll(async () => {
  server = await startDnsServer({
    records: RECORDS,
    behaviours: {
      ...Object.fromEntries(SILENT_NAMES.map((name) => [name, 'silent' as const])),
      'brokenmx.example': 'servfail',
      'broken.halfmx.example': 'servfail',
    },
  });
});

afterAll(async () => {
  await server.close();
});

function queriesFor(suffix: string): string[] {
  return server.queries.map((query) => query.name.toLowerCase()).filter((name) => name.endsWith(suffix));
}

describe('checkBlacklist: IP addresses', () => {
  it('reports a listing with every return code, its meaning, the TXT reason and the latency', async () => {
    const result = await checkBlacklist(contextFor(server.address), '192.0.2.10', { zones: 'zen.spamhaus.org,psbl.surriel.com' });
    expect(result).toMatchObject({ kind: 'blacklist', target: '192.0.2.10', target_type: 'ip', mx: null, resolvers: [server.address] });
    const [zen, psbl] = result.zones;
    expect(zen).toMatchObject({
      zone: 'zen.spamhaus.org',
      name: 'Spamhaus ZEN',
      query: '10.2.0.192.zen.spamhaus.org',
      status: 'listed',
      canary: 'passed',
      reason: 'https://check.spamhaus.org/query/ip/192.0.2.10',
      delist_url: 'https://check.spamhaus.org/',
      resolver: server.address,
      mx_hosts: [],
    });
    expect(zen!.return_codes).toEqual([
      { address: '127.0.0.2', meaning: expect.stringMatching(/^SBL/) },
      { address: '127.0.0.4', meaning: expect.stringMatching(/^XBL/) },
    ]);
    expect(zen!.latency_ms).toBeGreaterThan(0);
    expect(psbl).toMatchObject({ zone: 'psbl.surriel.com', status: 'clean', return_codes: [], reason: null, canary: 'passed' });
    expect(result.verdict).toMatchObject({ status: 'listed', listed_zones: 1, listings: 1, checked_zones: 2, unchecked_zones: 0, zones: 2, failure: null });
    expect(result.verdict.message).toBe('192.0.2.10 is listed on 1 of 2 lists (zen.spamhaus.org)');
    const listed = result.findings.find((item) => item.id === 'blacklist_listed');
    expect(listed).toMatchObject({ severity: 'error', rfc: 'RFC 5782 §2.1' });
    expect(listed!.message).toContain('removal: https://check.spamhaus.org/');
  });

  it('never reports a refusal code as listed or clean, and counts the zone as not checked', async () => {
    const result = await checkBlacklist(contextFor(server.address), '192.0.2.66', { zones: 'zen.spamhaus.org,psbl.surriel.com' });
    const zen = result.zones[0]!;
    expect(zen.status).toBe('refused');
    expect(zen.return_codes).toEqual([{ address: '127.255.255.254', meaning: expect.stringMatching(/public\/open resolver/) }]);
    expect(result.verdict).toMatchObject({ status: 'incomplete', listed_zones: 0, listings: 0, checked_zones: 1, unchecked_zones: 1 });
    expect(result.verdict.message).toBe(
      '192.0.2.66 is not listed on the 1 list that answered; 1 of 2 could not be checked (zen.spamhaus.org: refused)',
    );
    expect(result.verdict.failure).toMatchObject({ code: 'upstream' });
    const refused = result.findings.find((item) => item.id === 'blacklist_zone_refused')!;
    // Nothing is known there: not a problem of the address, and no warning to fail on.
    expect(refused.severity).toBe('unknown');
    expect(refused.message).toMatch(/resolver of your own \(--resolver\)/);
    expect(refused.message).toContain(server.address);
  });

  it('marks a zone refused when its test point answers a refusal code, even though the query itself said NXDOMAIN', async () => {
    const result = await checkBlacklist(contextFor(server.address), '192.0.2.10', { zones: 'sbl.spamhaus.org' });
    expect(result.zones[0]).toMatchObject({ status: 'refused', canary: 'refused', return_codes: [] });
    expect(result.zones[0]!.detail).toMatch(/test point 127\.0\.0\.2 answered 127\.255\.255\.254/);
    expect(result.verdict).toMatchObject({ status: 'unknown', checked_zones: 0, unchecked_zones: 1 });
    expect(result.verdict.message).toBe('192.0.2.10 could not be checked: DNS refused or gave no usable answer (sbl.spamhaus.org: refused)');
    expect(result.verdict.failure).toEqual({ code: 'upstream', reason: 'DNS refused or gave no usable answer', message: expect.stringMatching(/^sbl\.spamhaus\.org: the list refused its test points/) });
  });

  it('does not call a zone clean when its listed test point is not listed (a resolver answering NXDOMAIN for everything)', async () => {
    const result = await checkBlacklist(contextFor(server.address), '192.0.2.10', { zones: 'xbl.spamhaus.org' });
    expect(result.zones[0]).toMatchObject({ status: 'error', canary: 'failed' });
    expect(result.zones[0]!.detail).toMatch(/test point 127\.0\.0\.2 is not listed \(RFC 5782 §5/);
    expect(result.verdict.status).toBe('unknown');
    expect(result.findings.find((item) => item.id === 'blacklist_zone_unchecked')).toMatchObject({ severity: 'unknown', rfc: 'RFC 5782 §5' });
  });

  it('does not call a listing real when the zone lists its negative test point 127.0.0.1 (lists the world)', async () => {
    const result = await checkBlacklist(contextFor(server.address), '192.0.2.10', { zones: 'world.example.net' });
    expect(result.zones[0]).toMatchObject({ status: 'error', canary: 'failed', return_codes: [{ address: '127.0.0.2', meaning: null }] });
    expect(result.zones[0]!.detail).toMatch(/127\.0\.0\.1 is listed .*answers every query as listed/);
    expect(result.verdict).toMatchObject({ status: 'unknown', listings: 0 });
  });

  it('reads an answer outside 127.0.0.0/8 as an error', async () => {
    const result = await checkBlacklist(contextFor(server.address), '192.0.2.10', { zones: 'odd.example.net' });
    expect(result.zones[0]).toMatchObject({ status: 'error', canary: 'passed', return_codes: [{ address: '203.0.113.5', meaning: null }] });
  });

  it('does not count a listing from a zone whose test points did not answer in time', async () => {
    const result = await checkBlacklist(contextFor(server.address, 500), '192.0.2.10', { zones: 'hushed.example.net' });
    expect(result.zones[0]).toMatchObject({ status: 'timeout', canary: 'timeout', return_codes: [{ address: '127.0.0.2', meaning: null }] });
    expect(result.zones[0]!.detail).toMatch(/test points did not answer in time/);
    expect(result.verdict).toMatchObject({ status: 'unknown', listings: 0, unchecked_zones: 1 });
  });

  it('says that no list could be asked when none has data for the address', async () => {
    const result = await checkBlacklist(contextFor(server.address), '2001:db8::99', { zones: 'psbl.surriel.com' });
    expect(result.zones).toEqual([]);
    expect(result.verdict).toMatchObject({ status: 'unknown', zones: 0, message: 'no list could be asked about 2001:db8::99' });
    expect(result.findings.map((item) => item.id)).toEqual(['blacklist_ipv6_unsupported', 'blacklist_special_address', 'blacklist_no_zones']);
  });

  it('times out a silent zone at the one deadline while the other zones answer', async () => {
    const started = performance.now();
    const result = await checkBlacklist(contextFor(server.address, 600), '192.0.2.10', { zones: `zen.spamhaus.org,${SILENT_ZONE}` });
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(590);
    expect(elapsed).toBeLessThan(1100);
    expect(result.zones.map((row) => [row.zone, row.status])).toEqual([
      ['zen.spamhaus.org', 'listed'],
      [SILENT_ZONE, 'timeout'],
    ]);
    expect(result.zones[1]!.detail).toMatch(/600 ms/);
    expect(result.verdict).toMatchObject({ status: 'listed', listed_zones: 1, unchecked_zones: 1 });
    expect(result.verdict.message).toBe(`192.0.2.10 is listed on 1 of 2 lists (zen.spamhaus.org); 1 of 2 could not be checked (${SILENT_ZONE}: timeout)`);
  });

  it('asks IPv6 addresses as reversed nibbles of lists with IPv6 data, and skips the others without a query', async () => {
    const before = queriesFor('psbl.surriel.com').length;
    const result = await checkBlacklist(contextFor(server.address), '2001:db8::25', { zones: 'bl.spamcop.net,psbl.surriel.com' });
    expect(result.zones).toHaveLength(1);
    expect(result.zones[0]).toMatchObject({
      zone: 'bl.spamcop.net',
      status: 'listed',
      query: '5.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.bl.spamcop.net',
      reason: 'Blocked - see https://www.spamcop.net/bl.shtml?2001:db8::25',
    });
    expect(server.queries.some((query) => query.name === result.zones[0]!.query && query.type === 'A')).toBe(true);
    expect(result.skipped).toEqual([
      { zone: 'psbl.surriel.com', subject: '2001:db8::25', reason: 'ipv6_unsupported', detail: 'psbl.surriel.com has no IPv6 data' },
    ]);
    expect(queriesFor('psbl.surriel.com').length).toBe(before);
    expect(result.findings.map((item) => item.id)).toContain('blacklist_ipv6_unsupported');
  });

  it('never asks a dead list, even when --zones names it, and says so', async () => {
    const result = await checkBlacklist(contextFor(server.address), '192.0.2.10', { zones: 'psbl.surriel.com,dnsbl.sorbs.net,spam.dnsbl.sorbs.net' });
    expect(queriesFor('sorbs.net')).toEqual([]);
    expect(result.zones.map((row) => row.zone)).toEqual(['psbl.surriel.com']);
    expect(result.skipped.map((item) => [item.zone, item.reason])).toEqual([
      ['dnsbl.sorbs.net', 'dead'],
      ['spam.dnsbl.sorbs.net', 'dead'],
    ]);
    expect(result.skipped[0]!.detail).toMatch(/dead since 2024-06-05/);
    expect(result.findings.filter((item) => item.id === 'blacklist_zone_dead')).toHaveLength(2);
  });

  it('asks only live default lists when no zones are given', async () => {
    const before = server.queries.length;
    const result = await checkBlacklist(contextFor(server.address), '192.0.2.10');
    const asked = new Set(server.queries.slice(before).map((query) => query.name.toLowerCase()));
    const defaults = result.zones.map((row) => row.zone);
    expect(defaults).toEqual(expect.arrayContaining(['zen.spamhaus.org', 'bl.spamcop.net']));
    for (const name of asked) expect(defaults.some((zone) => name.endsWith(`.${zone}`)), name).toBe(true);
    expect([...asked].some((name) => /sorbs|manitu|abuseat/.test(name))).toBe(false);
    // Lists this server does not serve fail their test points: errors, never clean.
    expect(result.zones.find((row) => row.zone === 'bl.mailspike.net')).toMatchObject({ status: 'error', canary: 'failed' });
  });

  it('asks each zone\'s test points once per run, whatever the number of targets', async () => {
    const checker = await createBlacklistChecker(contextFor(server.address), { zones: 'bl.spamcop.net' });
    try {
      const canary = listedName('127.0.0.2', 'bl.spamcop.net');
      const before = server.queries.filter((query) => query.name === canary).length;
      const results = await Promise.all(['192.0.2.20', '192.0.2.21', '192.0.2.22'].map((ip) => checker.check(ip)));
      await checker.check('192.0.2.23');
      expect(results.every((result) => result.zones[0]!.status === 'clean')).toBe(true);
      expect(server.queries.filter((query) => query.name === canary).length - before).toBe(1);
    } finally {
      await checker.close();
    }
  });

  it('does not take an answer from a resolver the test points did not vouch for: a failover to one that filters the list is no "clean"', async () => {
    // The first resolver serves the list but loses the one query (a dropped datagram; each attempt gets a
    // third of the 3 s, and the next attempt goes to the next resolver); the second answers NXDOMAIN to
    // everything, as Google does for Spamhaus. The test points went through the first.
    const query = listedName('192.0.2.10', 'zen.spamhaus.org');
    const lossy = await startDnsServer({ records: RECORDS, behaviours: { [query]: 'silent' } });
    const filtering = await startDnsServer({ records: [] });
    try {
      const ctx = createEngineContext({ resolvers: [parseResolverAddress(lossy.address), parseResolverAddress(filtering.address)], timeoutMs: 3000, dnsRetries: 2 });
      const result = await checkBlacklist(ctx, '192.0.2.10', { zones: 'zen.spamhaus.org' });
      expect(filtering.queries.map((asked) => asked.name.toLowerCase())).toContain(query);
      expect(result.zones[0]).toMatchObject({ status: 'error', canary: 'passed', resolver: filtering.address });
      expect(result.zones[0]!.detail).toBe(`the answer came from ${filtering.address}, but the zone's RFC 5782 test points were answered by ${lossy.address}, so this answer cannot be trusted`);
      expect(result.verdict.status).not.toBe('clean');
    } finally {
      await Promise.all([lossy.close(), filtering.close()]);
    }
  });

  it('reads an NXDOMAIN that holds A records as a broken answer, neither listed nor clean', async () => {
    const query = listedName('192.0.2.10', 'zen.spamhaus.org');
    const contradicting = await startDnsServer({
      records: RECORDS,
      script: (asked) => {
        if (asked.questions![0]!.name.toLowerCase() !== query) return undefined;
        const reply = dnsPacket.encode({ id: asked.id, type: 'response', flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | 3, questions: asked.questions, answers: [{ name: query, type: 'A', ttl: 60, data: '127.0.0.2' }] });
        return [{ message: reply }];
      },
    });
    try {
      const result = await checkBlacklist(contextFor(contradicting.address), '192.0.2.10', { zones: 'zen.spamhaus.org' });
      expect(result.zones[0]).toMatchObject({ status: 'error', return_codes: [{ address: '127.0.0.2', meaning: null }] });
      expect(result.zones[0]!.detail).toContain('NXDOMAIN and yet holds A records (127.0.0.2)');
    } finally {
      await contradicting.close();
    }
  });

  it('names a public resolver in a finding when the run asks lists that refuse them', async () => {
    const real = createDnsTransport({ resolvers: [parseResolverAddress(server.address)], timeoutMs: 1000, retries: 0 });
    const google = { resolvers: [parseResolverAddress('8.8.8.8')], query: real.query.bind(real), close: () => real.close() };
    try {
      const result = await checkBlacklist(contextFor(server.address), '192.0.2.66', { zones: 'zen.spamhaus.org', transport: google });
      const finding = result.findings.find((item) => item.id === 'blacklist_public_resolver')!;
      expect(finding.severity).toBe('warning');
      expect(finding.message).toMatch(/^8\.8\.8\.8:53 is Google Public DNS, a public resolver: zen\.spamhaus\.org refuse/);
      expect(result.findings.find((item) => item.id === 'blacklist_zone_refused')!.message).toContain('8.8.8.8:53 is Google Public DNS');
    } finally {
      await real.close();
    }
  });

  it('rejects a target that is neither an IP address nor a domain name', async () => {
    await expect(checkBlacklist(contextFor(server.address), 'not a host')).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(checkBlacklist(contextFor(server.address), 'localhost')).rejects.toBeInstanceOf(NetintelError);
  });
});

describe('checkBlacklist: domains', () => {
  it('asks the domain lists about the domain and the IP lists about its MX addresses, naming the MX of each', async () => {
    const result = await checkBlacklist(contextFor(server.address), 'Mail.Example.', { zones: 'dbl.spamhaus.org,zen.spamhaus.org,multi.uribl.com' });
    expect(result.target).toBe('mail.example');
    expect(result.target_type).toBe('domain');
    expect(result.mx).toEqual({
      status: 'answer',
      error: null,
      hosts: [
        { exchange: 'mx1.mail.example', preference: 10, status: 'resolved', addresses: ['192.0.2.10', '2001:db8::25'], error: null },
        { exchange: 'mx2.mail.example', preference: 20, status: 'resolved', addresses: ['192.0.2.10', '192.0.2.11'], error: null },
      ],
    });
    expect(result.zones.map((row) => [row.zone, row.subject, row.mx_hosts, row.status])).toEqual([
      ['dbl.spamhaus.org', 'mail.example', [], 'clean'],
      ['zen.spamhaus.org', '192.0.2.10', ['mx1.mail.example', 'mx2.mail.example'], 'listed'],
      ['zen.spamhaus.org', '2001:db8::25', ['mx1.mail.example'], 'clean'],
      ['zen.spamhaus.org', '192.0.2.11', ['mx2.mail.example'], 'clean'],
      ['multi.uribl.com', 'mail.example', [], 'clean'],
    ]);
    expect(result.verdict).toMatchObject({ status: 'listed', listed_zones: 1, listings: 1, zones: 3, checked_zones: 3 });
    const listed = result.findings.find((item) => item.id === 'blacklist_listed')!;
    expect(listed.message).toMatch(/^192\.0\.2\.10, the address of MX mx1\.mail\.example, mx2\.mail\.example, is listed on zen\.spamhaus\.org/);
  });

  it('reads domain list codes: DBL phishing, URIBL black with its TXT, URIBL 127.0.0.1 as refused', async () => {
    const listed = await checkBlacklist(contextFor(server.address), 'listed.example', { zones: 'dbl.spamhaus.org,multi.uribl.com' });
    expect(listed.mx).toBeNull();
    expect(listed.zones.map((row) => [row.zone, row.status, row.return_codes[0]?.meaning, row.reason])).toEqual([
      ['dbl.spamhaus.org', 'listed', 'phishing domain', 'https://www.spamhaus.org/query/domain/listed.example'],
      ['multi.uribl.com', 'listed', 'black: domain used by spammers', 'black listed'],
    ]);
    expect(listed.zones[0]!.query).toBe('listed.example.dbl.spamhaus.org');
    const refused = await checkBlacklist(contextFor(server.address), 'refused.example', { zones: 'multi.uribl.com' });
    expect(refused.zones[0]).toMatchObject({ status: 'refused', return_codes: [{ address: '127.0.0.1', meaning: expect.stringMatching(/refused/) }] });
    expect(refused.verdict.status).toBe('unknown');
  });

  it('checks the domain\'s own addresses when it has no MX records (RFC 5321 §5.1)', async () => {
    const result = await checkBlacklist(contextFor(server.address), 'nomx.example', { zones: 'zen.spamhaus.org' });
    expect(result.mx).toEqual({
      status: 'implicit',
      error: null,
      hosts: [{ exchange: 'nomx.example', preference: null, status: 'resolved', addresses: ['192.0.2.12'], error: null }],
    });
    expect(result.zones.map((row) => [row.subject, row.mx_hosts, row.status])).toEqual([['192.0.2.12', ['nomx.example'], 'clean']]);
    expect(result.findings.map((item) => item.id)).toContain('blacklist_implicit_mx');
    expect(result.verdict.status).toBe('clean');
    expect(result.findings.find((item) => item.id === 'blacklist_clean')).toMatchObject({ severity: 'pass' });
  });

  it('has no mail hosts to check behind a null MX (RFC 7505)', async () => {
    const result = await checkBlacklist(contextFor(server.address), 'nullmx.example', { zones: 'zen.spamhaus.org,dbl.spamhaus.org' });
    expect(result.mx).toEqual({ status: 'null_mx', hosts: [], error: null });
    expect(result.zones.map((row) => row.zone)).toEqual(['dbl.spamhaus.org']);
    expect(result.findings.map((item) => item.id)).toContain('blacklist_null_mx');
  });

  it('calls the verdict incomplete, not clean, when the MX lookup fails', async () => {
    const result = await checkBlacklist(contextFor(server.address), 'brokenmx.example', { zones: 'zen.spamhaus.org,dbl.spamhaus.org' });
    expect(result.mx).toMatchObject({ status: 'error', hosts: [] });
    expect(result.mx!.error).toEqual({ code: 'upstream', message: expect.stringMatching(/SERVFAIL for brokenmx\.example MX/) });
    expect(result.verdict.status).toBe('incomplete');
    expect(result.verdict.message).toMatch(/mail hosts could not all be resolved/);
    expect(result.verdict.failure).toMatchObject({ code: 'upstream' });
    // The finding carries the failed lookup as every unknown finding does (docs/exit-codes.md): findingFailures reads it.
    const unresolved = result.findings.filter((item) => item.id === 'blacklist_mx_unresolved');
    expect(unresolved).toEqual([expect.objectContaining({ severity: 'unknown', evidence: { domain: 'brokenmx.example', error: result.mx!.error } })]);
    expect(findingFailures(unresolved)).toEqual([result.mx!.error]);
  });

  it('says a domain whose MX lookup failed, asked of IP lists only, could not be checked: not "no list could be asked", no blacklist_no_zones', async () => {
    const result = await checkBlacklist(contextFor(server.address), 'brokenmx.example', { zones: 'zen.spamhaus.org' });
    expect(result.zones).toEqual([]);
    expect(result.verdict).toMatchObject({ status: 'unknown', failure: { code: 'upstream' } });
    expect(result.verdict.message).toBe('brokenmx.example could not be checked: DNS refused or gave no usable answer; its mail hosts could not be resolved, so no list was asked about their addresses');
    const ids = result.findings.map((item) => item.id);
    expect(ids).toContain('blacklist_mx_unresolved');
    expect(ids).not.toContain('blacklist_no_zones');
  });

  it('says which MX host could not be resolved, with the code and every failed lookup, and checks the others', async () => {
    const result = await checkBlacklist(contextFor(server.address), 'halfmx.example', { zones: 'zen.spamhaus.org' });
    const broken = result.mx!.hosts.find((host) => host.exchange === 'broken.halfmx.example')!;
    expect(broken).toMatchObject({ status: 'error', addresses: [], error: { code: 'upstream', message: expect.stringMatching(/SERVFAIL for broken\.halfmx\.example A.*; .*SERVFAIL for broken\.halfmx\.example AAAA/) } });
    expect(result.zones.map((row) => row.subject)).toContain('192.0.2.10');
    expect(result.verdict).toMatchObject({ status: 'listed', failure: { code: 'upstream' } });
    const unresolved = result.findings.filter((item) => item.id === 'blacklist_mx_host_unresolved');
    expect(unresolved).toEqual([expect.objectContaining({ severity: 'unknown', evidence: { exchange: 'broken.halfmx.example', error: broken.error } })]);
    expect(findingFailures(unresolved)).toEqual([broken.error]);
  });

  it('reports an MX host without addresses and still checks the others', async () => {
    const result = await checkBlacklist(contextFor(server.address), 'gone.example', { zones: 'zen.spamhaus.org' });
    expect(result.mx!.hosts.map((host) => [host.exchange, host.status])).toEqual([
      ['missing.gone.example', 'nxdomain'],
      ['mx1.mail.example', 'resolved'],
    ]);
    expect(result.zones.map((row) => [row.subject, row.status])).toEqual([
      ['192.0.2.10', 'listed'],
      ['2001:db8::25', 'clean'],
    ]);
    expect(result.findings.map((item) => item.id)).toContain('blacklist_mx_host_without_address');
  });
});

describe('checkBlacklist: parallel queries under one deadline', () => {
  let slow: DnsTestServer;
  const zones = Array.from({ length: 8 }, (_, i) => `z${i}.slow.example`);

  beforeAll(async () => {
    slow = await startDnsServer({ records: zones.flatMap((zone) => zoneRecords(zone, {})), delayMs: 150 });
  });

  afterAll(async () => {
    await slow.close();
  });

  it('asks every zone and its test points at once: eight 150 ms zones take about 150 ms, not 1.2 s', async () => {
    const result = await checkBlacklist(contextFor(slow.address, 3000), '192.0.2.30', { zones: zones.join(',') });
    expect(result.zones.every((row) => row.status === 'clean' && row.canary === 'passed')).toBe(true);
    expect(slow.queries.length).toBe(24);
    expect(result.latency_ms).toBeGreaterThanOrEqual(140);
    expect(result.latency_ms).toBeLessThan(450);
  });
});
