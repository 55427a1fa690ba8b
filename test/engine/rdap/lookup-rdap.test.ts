/**
 * lookupRdap() against the local RDAP service of test/support/rdap-server.ts
 * (a registry and a registrar over HTTPS on 127.0.0.1): the records of
 * networks, AS numbers and domains, the registrar referral, redactions,
 * 404, 429 with Retry-After, malformed, slow and oversized answers, the
 * connect guard on the referral, the cache of answers.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicTargetGuard } from '../../../src/engine/connect-guard.js';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { daysUntil, lookupRdap, rdapQuery } from '../../../src/engine/rdap/lookup-rdap.js';
import { cacheLifetimeMs, retryAfterMs } from '../../../src/engine/rdap/rdap-fetch.js';
import { NetintelError } from '../../../src/errors.js';
import { runCli, tempDir } from '../../support/cli.js';
import { closedPort } from '../../support/peers.js';
import { startRdapServer, writeBootstrap, type RdapTestServer } from '../../support/rdap-server.js';

let server: RdapTestServer;

beforeAll(async () => {
  server = await startRdapServer({ slowMs: 3000 });
});

afterAll(async () => {
  await server.close();
});

function context(settings: Partial<EngineContext> = {}): EngineContext {
  return createEngineContext({ dataDir: server.freshDataDir(), timeoutMs: 1500, ...settings });
}

const connect = () => ({ ca: server.ca });

async function failure(work: Promise<unknown>): Promise<NetintelError> {
  try {
    await work;
  } catch (error) {
    expect(error).toBeInstanceOf(NetintelError);
    return error as NetintelError;
  }
  throw new Error('expected the lookup to fail');
}

describe('rdapQuery', () => {
  it('reads addresses, CIDR blocks, AS numbers and domains, and finds their servers in the bootstrap files', () => {
    expect(rdapQuery('192.0.2.7', server.dataDir)).toMatchObject({ object: 'ip network', path: 'ip/192.0.2.7', servers: [server.registry] });
    expect(rdapQuery('192.0.2.9/25', server.dataDir)).toMatchObject({ query: '192.0.2.0/25', path: 'ip/192.0.2.0/25' });
    expect(rdapQuery('2001:DB8::1', server.dataDir)).toMatchObject({ query: '2001:db8::1', path: 'ip/2001:db8::1' });
    expect(rdapQuery('as64500', server.dataDir)).toMatchObject({ object: 'autnum', query: 'AS64500', path: 'autnum/64500' });
    expect(rdapQuery('WWW.Example.TEST.', server.dataDir)).toMatchObject({ object: 'domain', path: 'domain/www.example.test' });
  });

  it('says not_found for what no service covers, invalid_input for what is no target', () => {
    expect(() => rdapQuery('203.0.113.1', server.dataDir)).toThrow(expect.objectContaining({ code: 'not_found' }) as Error);
    expect(() => rdapQuery('example.invalid', server.dataDir)).toThrow(expect.objectContaining({ code: 'not_found' }) as Error);
    expect(() => rdapQuery('localhost', server.dataDir)).toThrow(expect.objectContaining({ code: 'invalid_input' }) as Error);
    expect(() => rdapQuery('192.0.2.1-192.0.2.9', server.dataDir)).toThrow(NetintelError);
  });

  it('uses the bundled starter copy without a data dir', () => {
    expect(rdapQuery('8.8.8.8', null).servers[0]).toBe('https://rdap.arin.net/registry/');
    expect(rdapQuery('193.0.6.139', null).servers[0]).toBe('https://rdap.db.ripe.net/');
    expect(rdapQuery('example.com', null).servers[0]).toBe('https://rdap.verisign.com/com/v1/');
    expect(rdapQuery('AS15169', null).servers[0]).toBe('https://rdap.arin.net/registry/');
  });
});

describe('the clock of a record', () => {
  const now = new Date('2026-11-29T12:00:00Z');

  it('counts whole days until the expiry, and once passed at least one day since', () => {
    expect(daysUntil(Date.parse('2026-12-09T12:00:00Z'), now)).toBe(10);
    expect(daysUntil(Date.parse('2026-11-30T11:59:59Z'), now)).toBe(0);
    expect(daysUntil(Date.parse('2026-11-29T11:00:00Z'), now)).toBe(-1);
    expect(daysUntil(Date.parse('2026-11-27T11:00:00Z'), now)).toBe(-2);
  });

  it('keeps an answer a day, or until its next event when that comes sooner, and at least a minute', () => {
    const events = (...dates: string[]) => ({ events: dates.map((eventDate) => ({ eventAction: 'expiration', eventDate })) });
    expect(cacheLifetimeMs({}, now)).toBe(24 * 3600_000);
    expect(cacheLifetimeMs(events('2020-01-01T00:00:00Z', '2030-01-01T00:00:00Z'), now)).toBe(24 * 3600_000);
    expect(cacheLifetimeMs(events('2026-11-29T14:00:00Z'), now)).toBe(2 * 3600_000);
    expect(cacheLifetimeMs(events('2026-11-29T12:00:10Z'), now)).toBe(60_000);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('120', now)).toBe(120_000);
    expect(retryAfterMs('Sun, 29 Nov 2026 12:01:00 GMT', now)).toBe(60_000);
    expect(retryAfterMs('Sun, 29 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('soon', now)).toBeNull();
    expect(retryAfterMs(null, now)).toBeNull();
  });

  it('reads only the HTTP-date forms of RFC 9110 as dates, and holds any wait to a day', () => {
    expect(retryAfterMs('Sunday, 29-Nov-26 12:01:00 GMT', now)).toBe(60_000);
    expect(retryAfterMs('Sun Nov 29 12:01:00 2026', now)).toBe(60_000);
    for (const value of ['later 2099', 'soon 2', 'Sun, 31 Feb 2027 00:00:00 GMT', '2027-01-01', 'NaN', '-5', '']) expect(retryAfterMs(value, now), value).toBeNull();
    for (const value of ['999999999', '1e999', 'Thu, 01 Jan 2099 00:00:00 GMT']) expect(retryAfterMs(value, now), value).toBe(24 * 3600_000);
  });
});

describe('lookupRdap against a registry and a registrar', () => {
  it('gives a network with its range, organisation and the nested abuse contact', async () => {
    const ctx = context();
    const record = await lookupRdap(ctx, '192.0.2.7', { connect: connect() });
    expect(record).toMatchObject({
      object: 'ip network',
      handle: 'NET-192-0-2-0-1',
      start_address: '192.0.2.0',
      end_address: '192.0.2.255',
      cidrs: ['192.0.2.0/24'],
      ip_version: 4,
      country: 'NL',
      organisation: 'Example Networks B.V.',
      abuse: { name: 'Example abuse team', email: 'abuse@example.net', phone: '+31-20-555-0100' },
      registered: '2010-01-01T00:00:00Z',
      last_changed: '2020-06-07T08:09:10Z',
      redacted: [],
    });
    expect(record.findings).toEqual([]);
  });

  it("follows a registry's redirect to the RIR that holds the block", async () => {
    const ctx = context();
    const record = await lookupRdap(ctx, '198.51.100.1', { connect: connect() });
    expect(record).toMatchObject({ handle: 'OTHER-RIR-NET', start_address: '198.51.100.0', cidrs: ['198.51.100.0/24'] });
    const answered = `https://127.0.0.1:${server.port}/other-rir/ip/198.51.100.1`;
    expect(record.sources).toEqual([{ url: answered, cached: false }]);
    expect((await lookupRdap(ctx, '198.51.100.1', { connect: connect() })).sources).toEqual([{ url: answered, cached: true }]);
  });

  it("passes over a service's server that cannot be reached, to the next one it lists", async () => {
    const ctx = context();
    const closed = await closedPort();
    writeBootstrap(ctx.dataDir!, `https://127.0.0.1:${closed}/registry/`);
    const servers = (file: string, list: (urls: string[]) => string[]) => {
      const path = join(ctx.dataDir!, 'sources', file);
      const doc = JSON.parse(readFileSync(path, 'utf8')) as { services: string[][][] };
      doc.services[0]![1] = list(doc.services[0]![1]!);
      writeFileSync(path, JSON.stringify(doc));
    };
    servers('rdap-asn.json', (urls) => [...urls, server.registry]);
    const record = await lookupRdap(ctx, 'AS64496', { connect: connect() });
    expect(record.sources[0]!.url).toBe(`${server.registry}autnum/64496`);
    // A 404 is an answer: the closed server listed after the registry is not asked.
    servers('rdap-dns.json', (urls) => [server.registry, ...urls]);
    expect((await failure(lookupRdap(ctx, 'missing.test', { connect: connect() }))).code).toBe('not_found');
  });

  it('gives an AS number', async () => {
    const record = await lookupRdap(context(), 'AS64496', { connect: connect() });
    expect(record).toMatchObject({ object: 'autnum', start_autnum: 64496, end_autnum: 64496, name: 'EXAMPLE-AS', abuse: { email: 'noc@example.net' } });
  });

  it('follows a domain to its registrar and merges the two records', async () => {
    const now = new Date();
    const record = await lookupRdap(context({ now: () => now }), 'example.test', { connect: connect() });
    expect(record).toMatchObject({
      object: 'domain',
      registrar: { name: 'Example Registrar, Inc.', iana_id: '9999' },
      status: ['client transfer prohibited'],
      nameservers: ['ns1.example.test', 'ns2.example.test'],
      delegation_signed: true,
      organisation: 'Example Holdings Ltd',
      country: null,
      abuse: { email: 'abuse@registrar.test', phone: '+1.5555550100' },
      registered: '2001-02-03T04:05:06Z',
    });
    expect(record.days_until_expiry).toBeGreaterThanOrEqual(399);
    expect(record.sources.map((source) => source.url)).toEqual([`${server.registry}domain/example.test`, `https://127.0.0.1:${server.port}/registrar/domain/example.test`]);
  });

  it('says withheld fields are redacted, not missing', async () => {
    const record = await lookupRdap(context(), 'redacted.test', { connect: connect() });
    expect(record.abuse).toEqual({ name: null, email: null, phone: null });
    expect(record.organisation).toBeNull();
    expect(record.redacted).toEqual(expect.arrayContaining(['Registrant Name', 'Registrant Email', 'abuse.email', 'abuse.phone', 'organisation']));
    expect(record.findings.map((item) => item.id)).toEqual(['rdap_no_abuse_contact', 'rdap_redacted']);
    expect(record.findings[0]!.message).toContain('withheld');
  });

  it('warns before a domain expires and calls an expired one an error', async () => {
    const soon = await lookupRdap(context(), 'soon.test', { connect: connect(), expiryDays: 30 });
    expect(soon.findings.find((item) => item.id === 'rdap_domain_expires_soon')?.severity).toBe('warning');
    const later = await lookupRdap(context(), 'soon.test', { connect: connect(), expiryDays: 5 });
    expect(later.findings.some((item) => item.id.startsWith('rdap_domain_exp'))).toBe(false);
    const gone = await lookupRdap(context(), 'gone.test', { connect: connect() });
    expect(gone.days_until_expiry).toBeLessThan(0);
    expect(gone.findings.find((item) => item.id === 'rdap_domain_expired')?.severity).toBe('error');
  });

  it('says a domain without an expiration date could not be checked, not that it passed', async () => {
    const record = await lookupRdap(context(), 'no-expiry.test', { connect: connect(), expiryDays: 30 });
    expect(record.expires).toBeNull();
    expect(record.days_until_expiry).toBeNull();
    expect(record.findings.find((item) => item.id === 'rdap_expiry_unknown')).toMatchObject({ severity: 'unknown', rfc: 'RFC 9083 §4.5' });
    const network = await lookupRdap(context(), '192.0.2.1', { connect: connect() });
    expect(network.findings.some((item) => item.id === 'rdap_expiry_unknown')).toBe(false);
    const dated = await lookupRdap(context(), 'example.test', { connect: connect() });
    expect(dated.findings.some((item) => item.id === 'rdap_expiry_unknown')).toBe(false);
  });

  it('exits 7 (partial), never 0, for the cron check of a domain without an expiration date', async () => {
    const scratch = tempDir('netintel-rdap-expiry-');
    try {
      const caFile = join(scratch.path, 'ca.pem');
      writeFileSync(caFile, server.ca);
      const cron = (target: string) => runCli(['rdap', target, '--expiry-days', '30', '--fail-on', 'warning', '--data-dir', server.freshDataDir(), '--tls-ca', caFile]);
      const unknown = await cron('no-expiry.test');
      expect(unknown.code, unknown.stderr).toBe(7);
      expect(unknown.stdout).toContain('expiry was not checked');
      expect((await cron('example.test')).code).toBe(0);
      expect((await cron('soon.test')).code).toBe(10);
    } finally {
      scratch.remove();
    }
  });

  it('reads only RFC 3339 dates: a loosely written expiry is unknown, never another day read into it', async () => {
    const record = await lookupRdap(context(), 'loose-date.test', { connect: connect(), expiryDays: 30 });
    expect(record).toMatchObject({ expires: null, days_until_expiry: null });
    expect(record.findings.map((item) => item.id)).toContain('rdap_expiry_unknown');
    expect(record.findings.map((item) => item.id)).not.toContain('rdap_domain_expired');
  });

  it('takes the earliest of two expiration events, so the sooner one is warned of', async () => {
    const record = await lookupRdap(context(), 'two-expiry.test', { connect: connect(), expiryDays: 30 });
    expect(record.days_until_expiry).toBeLessThanOrEqual(2);
    expect(record.findings.find((item) => item.id === 'rdap_domain_expires_soon')?.severity).toBe('warning');
  });

  it("refuses a registry's record of another domain or of another class of object (upstream), and a registrar's as a failed referral", async () => {
    const other = await failure(lookupRdap(context(), 'other-name.test', { connect: connect() }));
    expect(other).toMatchObject({ code: 'upstream', message: expect.stringContaining('answered about "somewhere-else.test", not "other-name.test"') });
    const wrong = await failure(lookupRdap(context(), 'wrong-class.test', { connect: connect() }));
    expect(wrong).toMatchObject({ code: 'upstream', message: expect.stringContaining('an "ip network" object, not a domain') });
    const stray = await lookupRdap(context(), 'stray-registrar.test', { connect: connect() });
    expect(stray.sources).toHaveLength(1);
    expect(stray.findings.find((item) => item.id === 'rdap_referral_failed')?.message).toContain('answered about "somewhere-else.test"');
  });

  it('keeps the registry record when the registrar fails, with an unknown finding', async () => {
    const record = await lookupRdap(context(), 'lost-registrar.test', { connect: connect() });
    expect(record.registrar.name).toBe('Example Registrar, Inc.');
    expect(record.sources).toHaveLength(1);
    expect(record.findings.find((item) => item.id === 'rdap_referral_failed')).toMatchObject({ severity: 'unknown', evidence: { error: { code: 'not_found', message: expect.any(String) } } });
  });
});

describe('lookupRdap against misbehaving answers', () => {
  it('says not_found for a 404', async () => {
    expect((await failure(lookupRdap(context(), 'missing.test', { connect: connect() }))).code).toBe('not_found');
  });

  it('waits out a short Retry-After once and then answers', async () => {
    const started = Date.now();
    const record = await lookupRdap(context(), 'busy.test', { connect: connect() });
    expect(record.object).toBe('domain');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('does not wait for a long Retry-After, and does not ask the host again until it passes', async () => {
    const ctx = context();
    const error = await failure(lookupRdap(ctx, 'limited.test', { connect: connect() }));
    expect(error.code).toBe('upstream');
    expect(error.details).toMatchObject({ status: 429, retry_after_seconds: 3600 });
    const asked = server.requests.length;
    const again = await failure(lookupRdap(ctx, 'example.test', { connect: connect() }));
    expect(again.details).toMatchObject({ status: 429 });
    expect(server.requests.length).toBe(asked);
  });

  it('holds a Retry-After of years to a day: the host is asked again once the day has passed', async () => {
    let now = new Date();
    const ctx = context({ now: () => now });
    const error = await failure(lookupRdap(ctx, 'forever.test', { connect: connect() }));
    expect(error.details).toMatchObject({ status: 429, retry_after_seconds: 86_400 });
    const asked = server.requests.length;
    expect((await failure(lookupRdap(ctx, 'example.test', { connect: connect() }))).details).toMatchObject({ status: 429 });
    expect(server.requests.length).toBe(asked);
    now = new Date(now.getTime() + 24 * 3600_000 + 1000);
    expect((await lookupRdap(ctx, 'example.test', { connect: connect() })).object).toBe('domain');
    expect(server.requests.length).toBeGreaterThan(asked);
  });

  it('asks a host again whose remembered wait is longer than a day (written before waits were held to one)', async () => {
    const ctx = context();
    const host = new URL(server.registry).host;
    mkdirSync(join(ctx.dataDir!, 'rdap-cache'), { recursive: true });
    const file = join(ctx.dataDir!, 'rdap-cache', `${createHash('sha256').update(`backoff ${host}`).digest('hex')}.json`);
    writeFileSync(file, JSON.stringify({ host, until: '2099-01-01T00:00:00.000Z' }));
    expect((await lookupRdap(ctx, '192.0.2.1', { connect: connect() })).object).toBe('ip network');
  });

  it('calls an answer that is not JSON upstream', async () => {
    const error = await failure(lookupRdap(context(), 'broken.test', { connect: connect() }));
    expect(error.code).toBe('upstream');
    expect(error.message).toContain('not JSON');
  });

  it('stops a slow answer at the deadline', async () => {
    const started = Date.now();
    const error = await failure(lookupRdap(context({ timeoutMs: 500 }), 'slow.test', { connect: connect() }));
    expect(error.code).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('refuses an answer over the size cap', async () => {
    const error = await failure(lookupRdap(context(), 'huge.test', { connect: connect() }));
    expect(error.code).toBe('upstream');
    expect(error.message).toContain('larger than');
  });

  it('does not trust the server without its CA', async () => {
    expect((await failure(lookupRdap(context(), 'example.test'))).code).toBe('tls');
  });
});

describe('the connect guard and the cache', () => {
  it('judges the registry and the referral: a server refuses loopback and a private registrar', async () => {
    const guarded = context({ connectGuard: createPublicTargetGuard() });
    expect((await failure(lookupRdap(guarded, 'example.test', { connect: connect() }))).code).toBe('forbidden');
    const seen: string[] = [];
    const onlyLoopback = context({
      connectGuard: (address, target) => {
        seen.push(address);
        if (address !== '127.0.0.1') createPublicTargetGuard()(address, target);
      },
    });
    const record = await lookupRdap(onlyLoopback, 'to-private.test', { connect: connect() });
    expect(seen).toEqual(['127.0.0.1', '10.0.0.1']);
    expect(record.findings.find((item) => item.id === 'rdap_referral_failed')).toMatchObject({ severity: 'unknown', evidence: { error: { code: 'forbidden', message: expect.any(String) } } });
  });

  it('answers a second lookup from the cache in the data dir, and asks again after the answer expires', async () => {
    let now = new Date();
    const ctx = context({ now: () => now });
    await lookupRdap(ctx, '192.0.2.1', { connect: connect() });
    const asked = server.requests.length;
    const second = await lookupRdap(ctx, '192.0.2.1', { connect: connect() });
    expect(second.sources).toEqual([{ url: `${server.registry}ip/192.0.2.1`, cached: true }]);
    expect(server.requests.length).toBe(asked);
    expect(readdirSync(join(ctx.dataDir!, 'rdap-cache')).every((name) => name.endsWith('.json'))).toBe(true);
    now = new Date(now.getTime() + 25 * 3600 * 1000);
    const third = await lookupRdap(ctx, '192.0.2.1', { connect: connect() });
    expect(third.sources[0]!.cached).toBe(false);
    expect(server.requests.length).toBe(asked + 1);
  });

  it('reads the bundled starter copy without a data dir, which leaves the documentation ranges to nobody', async () => {
    const ctx = createEngineContext({ dataDir: null, timeoutMs: 1500 });
    const asked = server.requests.length;
    expect((await failure(lookupRdap(ctx, '192.0.2.1', { connect: connect() }))).code).toBe('not_found');
    expect(server.requests.length).toBe(asked);
  });

  it('leaves the data dir without a cache when the registry did not answer', async () => {
    const ctx = context();
    await failure(lookupRdap(ctx, 'missing.test', { connect: connect() }));
    expect(existsSync(join(ctx.dataDir!, 'rdap-cache'))).toBe(false);
  });
});
