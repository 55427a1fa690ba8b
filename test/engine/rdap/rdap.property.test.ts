/**
 * Property-based tests of what netintel reads from RDAP servers and IANA:
 * answers (RFC 9083, jCard of RFC 7095, RFC 9537 redactions), bootstrap
 * files (RFC 9224) and Retry-After never crash the reader and give a record
 * of the promised shape; the registrar referral, whatever link a registry
 * sends, meets the connect guard before any connection; the size cap holds
 * on both sides of its limit.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicTargetGuard, type ConnectGuard } from '../../../src/engine/connect-guard.js';
import { createEngineContext } from '../../../src/engine/context.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { HTTPS_FETCH_KINDS } from '../../../src/engine/http/guarded-get.js';
import { parseHttpDate, retryAfterValueMs } from '../../../src/engine/http/retry-after.js';
import { lookupRdap, rdapQuery } from '../../../src/engine/rdap/lookup-rdap.js';
import { asnServers, domainServers, networkServers, parseBootstrap } from '../../../src/engine/rdap/rdap-bootstrap.js';
import { contactOf, entityWithRole } from '../../../src/engine/rdap/rdap-entities.js';
import { cacheLifetimeMs, parseObject, retryAfterMs } from '../../../src/engine/rdap/rdap-fetch.js';
import { mergeParts, readAnswer, relatedLink, rfc3339Time } from '../../../src/engine/rdap/rdap-record.js';
import { NetintelError } from '../../../src/errors.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';
import { startRdapServer, type RdapTestServer } from '../../support/rdap-server.js';
import { expectValueOrNetintelError, fuzz, hostileAsn, hostileDomain, hostileIp } from '../hostile-inputs.js';

const text = fc.oneof(fc.string(), fc.constantFrom('REDACTED FOR PRIVACY', 'redacted', 'Data Protected', '', ' ', 'tel:+1.555;ext=9', 'mailto:a@b.test'));
const jcardProperty = fc.tuple(
  fc.constantFrom('fn', 'org', 'email', 'tel', 'adr', 'version', 'kind', 'FN', 'x'),
  fc.oneof(fc.constant({}), fc.record({ cc: fc.string({ maxLength: 3 }) }), fc.constant(null)),
  fc.constantFrom('text', 'uri'),
  fc.oneof(text, fc.array(fc.oneof(text, fc.array(text, { maxLength: 3 })), { maxLength: 8 }), fc.integer(), fc.constant(null)),
);
const entity: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  entity: fc.oneof(
    { depthSize: 'small' },
    fc.record(
      {
        handle: fc.oneof(text, fc.integer()),
        roles: fc.oneof(fc.array(fc.constantFrom('abuse', 'registrar', 'registrant', 'technical', 'ABUSE', 'x'), { maxLength: 3 }), text),
        vcardArray: fc.oneof(fc.tuple(fc.constant('vcard'), fc.array(jcardProperty, { maxLength: 6 })), fc.jsonValue({ maxDepth: 2 })),
        publicIds: fc.array(fc.record({ type: fc.constantFrom('IANA Registrar ID', 'x'), identifier: fc.oneof(text, fc.integer()) }), { maxLength: 2 }),
        entities: fc.array(tie('entity'), { maxLength: 3 }),
      },
      { requiredKeys: [] },
    ),
    fc.jsonValue({ maxDepth: 1 }),
  ),
})).entity;
const event = fc.record({ eventAction: fc.constantFrom('registration', 'expiration', 'last changed', 'x', 'EXPIRATION'), eventDate: fc.oneof(text, fc.date({ noInvalidDate: true }).map((date) => date.toISOString())) }, { requiredKeys: [] });
const answer = fc.record(
  {
    objectClassName: fc.constantFrom('domain', 'ip network', 'autnum', 'entity'),
    handle: text,
    name: fc.oneof(text, fc.integer()),
    ldhName: text,
    startAddress: text,
    endAddress: text,
    ipVersion: fc.constantFrom('v4', 'v6', 'v5', 4),
    country: text,
    startAutnum: fc.oneof(fc.integer(), fc.double(), text),
    cidr0_cidrs: fc.array(fc.record({ v4prefix: text, v6prefix: text, length: fc.oneof(fc.integer(), fc.double(), text) }, { requiredKeys: [] }), { maxLength: 3 }),
    status: fc.oneof(fc.array(fc.oneof(text, fc.integer()), { maxLength: 4 }), text),
    nameservers: fc.array(fc.oneof(fc.record({ ldhName: fc.oneof(text, fc.integer()) }), fc.jsonValue({ maxDepth: 1 })), { maxLength: 4 }),
    secureDNS: fc.oneof(fc.record({ delegationSigned: fc.oneof(fc.boolean(), text) }), fc.jsonValue({ maxDepth: 1 })),
    events: fc.oneof(fc.array(fc.oneof(event, fc.jsonValue({ maxDepth: 1 })), { maxLength: 4 }), text),
    entities: fc.oneof(fc.array(entity, { maxLength: 4 }), text),
    links: fc.array(fc.record({ rel: fc.constantFrom('related', 'self', 'RELATED'), href: fc.oneof(text, fc.webUrl()), type: fc.constantFrom('application/rdap+json', 'text/html', '') }, { requiredKeys: [] }), { maxLength: 3 }),
    redacted: fc.oneof(fc.array(fc.oneof(fc.record({ name: fc.oneof(fc.record({ type: text }), fc.record({ description: text }), text) }), fc.jsonValue({ maxDepth: 1 })), { maxLength: 4 }), text),
  },
  { requiredKeys: [] },
);

const nullableString = (value: unknown) => value === null || typeof value === 'string';

describe('RDAP answers of any shape', () => {
  it('are read without throwing into a record of the promised types', () => {
    fc.assert(
      fc.property(fc.oneof(answer, fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 }))), (json) => {
        const parts = readAnswer(json as Record<string, unknown>);
        for (const key of ['handle', 'name', 'start_address', 'end_address', 'network_type', 'expires', 'country', 'organisation', 'registered', 'last_changed'] as const) {
          expect(nullableString(parts[key]), key).toBe(true);
        }
        for (const key of ['cidrs', 'status', 'nameservers', 'redacted'] as const) expect(parts[key].every((item) => typeof item === 'string'), key).toBe(true);
        for (const value of Object.values(parts.abuse)) expect(nullableString(value)).toBe(true);
        for (const date of [parts.expires, parts.registered, parts.last_changed]) if (date !== null) expect(Number.isNaN(Date.parse(date))).toBe(false);
        expect(parts.delegation_signed === null || typeof parts.delegation_signed === 'boolean').toBe(true);
        expect(parts.start_autnum === null || Number.isSafeInteger(parts.start_autnum)).toBe(true);
        const merged = mergeParts(parts, readAnswer({}));
        expect(merged.redacted).toEqual([...new Set(parts.redacted)]);
        const link = relatedLink(json as Record<string, unknown>);
        expect(link === null || typeof link === 'string').toBe(true);
        expect(cacheLifetimeMs(json as Record<string, unknown>, new Date())).toBeGreaterThanOrEqual(60_000);
      }),
      fuzz(600),
    );
  });

  it('never say a withheld value as a value', () => {
    fc.assert(
      fc.property(entity, (raw) => {
        const found = entityWithRole({ entities: [raw] }, 'abuse');
        if (found === null) return;
        const contact = contactOf(found);
        for (const value of [contact.name, contact.organisation, contact.email, contact.phone]) if (value !== null) expect(value).not.toMatch(/^\s*redacted/i);
      }),
      fuzz(600),
    );
  });

  it('as bytes: a JSON object, or upstream', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.jsonValue().map((value) => JSON.stringify(value) ?? ''), fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes).toString('latin1'))), (body) => {
        expectValueOrNetintelError(() => parseObject(Buffer.from(body, 'latin1'), 'https://rdap.example/'), ['upstream']);
      }),
      fuzz(600),
    );
  });
});

describe('bootstrap files and Retry-After of any shape', () => {
  const service = fc.tuple(fc.array(fc.oneof(fc.string(), fc.constantFrom('com', '192.0.2.0/24', '2001:db8::/32', '64496-64511', '1-', 'a-b', '10.0.0.0/33')), { maxLength: 4 }), fc.array(fc.oneof(fc.webUrl(), fc.constantFrom('http://rdap.example/', 'https://rdap.example/', 'ftp://x/')), { maxLength: 3 }));
  it('either read as RFC 9224 (every server https) or refused with a reason', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.record({ services: fc.array(fc.oneof(service, fc.jsonValue({ maxDepth: 2 })), { maxLength: 5 }), publication: fc.string() }).map((doc) => JSON.stringify(doc))), fc.oneof(hostileDomain, hostileIp, hostileAsn), (bootstrap, target) => {
        let file;
        try {
          file = parseBootstrap(bootstrap);
        } catch (error) {
          expect(error).toBeInstanceOf(Error);
          return;
        }
        const servers = [...domainServers(file, target), ...asnServers(file, Number(target.replace(/^as/i, '')) || 0), ...networkServers(file, 4, 0n, 0n), ...networkServers(file, 6, 1n, 1n)];
        for (const server of servers) expect(server.toLowerCase().startsWith('https://')).toBe(true);
      }),
      fuzz(600),
    );
  });

  it('targets are read or refused with invalid_input or not_found', () => {
    fc.assert(fc.property(fc.oneof(hostileDomain, hostileIp, hostileAsn, fc.string()), (target) => expectValueOrNetintelError(() => rdapQuery(target, null), ['invalid_input', 'not_found'])), fuzz(1500));
  });

  it('Retry-After is a wait of zero or more milliseconds, or nothing', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.nat().map(String), fc.date({ noInvalidDate: true }).map((date) => date.toUTCString())), (value) => {
        const wait = retryAfterMs(value, new Date());
        expect(wait === null || (Number.isFinite(wait) && wait >= 0 && wait <= 24 * 3600_000)).toBe(true);
      }),
      fuzz(600),
    );
  });

  it('Retry-After of words around a number is no date, however Date.parse reads it', () => {
    const word = fc.stringMatching(/^[A-Za-z]{1,12}$/);
    fc.assert(
      fc.property(word, fc.integer({ min: 0, max: 99_999 }), fc.boolean(), (text, number, before) => {
        const value = before ? `${number} ${text}` : `${text} ${number}`;
        expect(retryAfterValueMs(value, Date.now())).toBeNull();
        expect(retryAfterMs(value, new Date())).toBeNull();
      }),
      fuzz(600),
    );
    for (const value of ['later 2099', 'soon 2']) expect(retryAfterValueMs(value, Date.now()), value).toBeNull();
    expect(retryAfterValueMs('999999999', 0)).toBe(999_999_999_000);
  });

  const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

  it('Retry-After as an HTTP-date of any moment reads back that moment, in each of the three forms', () => {
    const now = Date.UTC(2026, 10, 29);
    fc.assert(
      fc.property(fc.date({ min: new Date(Date.UTC(1980, 0, 1)), max: new Date(Date.UTC(2070, 0, 1)), noInvalidDate: true }), (date) => {
        const at = Math.floor(date.getTime() / 1000) * 1000;
        const fixdate = new Date(at).toUTCString();
        const [weekday, day, month, year, time] = fixdate.replace(',', '').split(' ') as [string, string, string, string, string];
        const rfc850 = `${WEEKDAYS[new Date(at).getUTCDay()]}, ${day}-${month}-${year.slice(2)} ${time} GMT`;
        const asctime = `${weekday} ${month} ${String(Number(day)).padStart(2, ' ')} ${time} ${year}`;
        // 1980 to 2069 in two digits: each within 50 years ahead of now, or else the past century's (RFC 9110 §5.6.7).
        for (const form of [fixdate, rfc850, asctime]) expect(parseHttpDate(form, now), form).toBe(at);
      }),
      fuzz(600),
    );
  });
});

describe('the referral and the size cap, against the local registry', () => {
  let rdap: RdapTestServer;
  let dns: DnsTestServer;
  beforeAll(async () => {
    rdap = await startRdapServer();
    dns = await startDnsServer({
      records: [
        { name: 'inside.test', type: 'A', data: '10.0.0.7' },
        { name: 'loop.test', type: 'A', data: '127.0.0.1' },
        { name: 'metadata.test', type: 'A', data: '169.254.169.254' },
        { name: 'mapped.test', type: 'AAAA', data: '::ffff:127.0.0.1' },
      ],
    });
  });
  afterAll(async () => {
    await rdap.close();
    await dns.close();
  });

  /** The registry (its first connection) is let through; every later address is judged as `netintel serve` judges it, and recorded. */
  function registryThenPublic(judged: string[]): ConnectGuard {
    const publicOnly = createPublicTargetGuard();
    let first = true;
    return (address, target) => {
      if (first && address === '127.0.0.1') {
        first = false;
        return;
      }
      judged.push(address);
      publicOnly(address, target);
    };
  }

  const privateHost = fc.constantFrom(
    '127.0.0.1', '127.1', '0x7f.0.0.1', '2130706433', '0177.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', '[64:ff9b::7f00:1]', '[2002:7f00:1::]',
    '10.0.0.1', '192.168.1.1', '172.16.0.1', '169.254.169.254', '[fd00:ec2::254]', '[fe80::1]', '100.64.0.1', '0.0.0.0', 'inside.test', 'loop.test', 'metadata.test', 'mapped.test',
  );
  const link = fc.tuple(privateHost, fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }), fc.webPath()).map(([host, port, path]) => `https://${host}${port === undefined ? '' : `:${port}`}${path}`);

  it('follows no registry link to a private, loopback, link-local or metadata address: the guard refuses it before connecting', async () => {
    const refusals: string[] = [];
    await fc.assert(
      fc.asyncProperty(link, async (href) => {
        const judged: string[] = [];
        rdap.setFuzz({ related: href });
        const asked = rdap.requests.length;
        const ctx = createEngineContext({ dataDir: rdap.freshDataDir(), timeoutMs: 1500, resolvers: [parseResolverAddress(dns.address)], dnsRetries: 0, connectGuard: registryThenPublic(judged) });
        try {
          const record = await lookupRdap(ctx, 'fuzz.test', { connect: { ca: rdap.ca } });
          expect(rdap.requests.length - asked, 'only the registry was asked').toBe(1);
          expect(record.sources).toHaveLength(1);
          const failure = record.findings.find((item) => item.id === 'rdap_referral_failed');
          expect(failure, href).toBeDefined();
          const { code } = failure!.evidence!.error as { code: string };
          expect(['forbidden', 'not_found', 'upstream', 'invalid_input']).toContain(code);
          refusals.push(code);
          // Every address the referral would have connected to was judged, and refused.
          expect(judged.length === 0 || code === 'forbidden').toBe(true);
        } finally {
          await ctx.close();
        }
      }),
      fuzz(60),
    );
    expect(refusals.filter((code) => code === 'forbidden').length).toBeGreaterThan(refusals.length / 2);
  });

  it('reads an answer up to the cap and refuses one over it', async () => {
    const cap = HTTPS_FETCH_KINDS.rdap.maxOctets;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: -2048, max: 2048 }), async (offset) => {
        rdap.setFuzz({ octets: cap + offset });
        const ctx = createEngineContext({ dataDir: rdap.freshDataDir(), timeoutMs: 3000 });
        try {
          const outcome = await lookupRdap(ctx, 'fuzz.test', { connect: { ca: rdap.ca } }).then(
            () => 'read',
            (error: unknown) => (error instanceof NetintelError && error.code === 'upstream' && error.message.includes('larger than') ? 'refused' : error),
          );
          expect(outcome).toBe(offset <= 0 ? 'read' : 'refused');
        } finally {
          await ctx.close();
        }
      }),
      fuzz(12),
    );
  });
});

describe('rfc3339Time (RDAP event dates, RFC 9083 §4.5)', () => {
  const instant = fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true });

  it('reads every RFC 3339 date-time to the instant it names, whatever its offset', () => {
    fc.assert(
      fc.property(instant, fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }), (date, offset) => {
        expect(rfc3339Time(date.toISOString())).toBe(date.getTime());
        // The same instant written at another offset: local wall time plus the offset.
        const local = new Date(date.getTime() + offset * 60_000).toISOString().slice(0, 23);
        const sign = offset < 0 ? '-' : '+';
        const zone = `${sign}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}:${String(Math.abs(offset) % 60).padStart(2, '0')}`;
        fc.pre(!local.startsWith('-') && !local.startsWith('+'));
        expect(rfc3339Time(`${local}${zone}`)).toBe(date.getTime());
      }),
      { numRuns: 2000 },
    );
  });

  it('reads no other text as a date: what V8 would guess at is unknown', () => {
    for (const loose of ['2026-12-10 junk', 'Dec 4', '2026-12-10', '2026-12-10T00:00:00', '2026-02-30T00:00:00Z', '2026-12-10T24:00:00Z', '2026-12-10T10:00:05+05', '20261210T000000Z']) {
      expect(rfc3339Time(loose), loose).toBeNull();
    }
    fc.assert(
      fc.property(fc.string(), (text) => {
        const at = rfc3339Time(text);
        expect(at === null || Number.isFinite(at)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
