import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { startSmtpTestServer, type SmtpTestServer } from '../support/smtp-servers.js';
import { startTestServer, type TestServer } from './harness.js';

/** The check endpoints (SMTP, e-mail tests, VPN, blacklist) wired to their engines, against local peers. */
describe('the check endpoints', () => {
  let dns: DnsTestServer;
  let smtp: SmtpTestServer;
  let guarded: TestServer;
  let open: TestServer;
  let pro: string;

  beforeAll(async () => {
    smtp = await startSmtpTestServer({ name: 'mx.example.test' });
    dns = await startDnsServer({
      records: [
        { name: 'example.test', type: 'MX', data: { preference: 10, exchange: 'mx.example.test' } },
        { name: 'example.test', type: 'TXT', data: ['v=spf1 -all'] },
        { name: 'mx.example.test', type: 'A', data: '127.0.0.1' },
        { name: 'selector1._domainkey.example.test', type: 'TXT', data: ['v=DKIM1; k=ed25519; p=11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo='] },
        { name: 'default._bimi.example.test', type: 'TXT', data: ['v=BIMI1; l=; a='] },
        { name: '_25._tcp.mx.example.test', type: 'TLSA', data: { usage: 3, selector: 1, matchingType: 1, certificate: Buffer.alloc(32, 7) } },
        { name: 'inside.test', type: 'A', data: '10.0.0.25' },
        // A DNSBL zone: 192.0.2.1 listed, and the zone's own test points.
        { name: '1.2.0.192.bl.test', type: 'A', data: '127.0.0.2' },
        { name: '2.0.0.127.bl.test', type: 'A', data: '127.0.0.2' },
      ],
    });
    const engine = { resolvers: [parseResolverAddress(dns.address)], timeoutMs: 2000 };
    guarded = await startTestServer({ engine });
    open = await startTestServer({ engine, allowPrivateTargets: true, smtpPorts: [25, smtp.port] });
    pro = await guarded.key('pro');
  });
  afterAll(async () => {
    await Promise.all([guarded.close(), open.close(), dns.close(), smtp.close()]);
  });

  const body = (response: { body: string }) => JSON.parse(response.body);

  describe('GET /api/smtp-test', () => {
    it('refuses loopback, private and name-to-private targets, and non-mail ports, before connecting', async () => {
      for (const url of ['/api/smtp-test?host=127.0.0.1', '/api/smtp-test?host=inside.test', `/api/smtp-test?host=mx.example.test&port=${smtp.port}`, '/api/smtp-test?host=8.8.8.8&port=22']) {
        const response = await guarded.app.inject({ url });
        expect(response.statusCode, url).toBe(403);
        expect(body(response).code).toBe('forbidden');
      }
      expect(body(await guarded.app.inject({ url: '/api/smtp-test?host=inside.test' })).detail).toMatch(/inside\.test resolves to 10\.0\.0\.25/);
      expect(smtp.connections()).toBe(0);
    });

    it('probes the checked address with --allow-private-targets and configured ports', async () => {
      const response = await open.app.inject({ url: `/api/smtp-test?host=mx.example.test&port=${smtp.port}&tls=false` });
      expect(response.statusCode).toBe(200);
      expect(body(response)).toMatchObject({ kind: 'smtp', connected: true });
      expect(smtp.connections()).toBe(1);
      expect(smtp.commands().some((command) => /^EHLO/i.test(command))).toBe(true);
    });
  });

  describe('GET /api/email-tests and POST /api/email-tests/bulk', () => {
    it('runs the mail security tests (dkim, bimi, dnssec, dane), each answer allowed by /openapi.json', async () => {
      const connections = smtp.connections();
      const dkim = body(await guarded.app.inject({ url: '/api/email-tests?type=dkim&domain=example.test&selector=selector1' }));
      expect(dkim).toMatchObject({ test: 'dkim', dkim: { status: 'valid', probed: 'given', selectors: [{ selector: 'selector1', key: { type: 'ed25519', bits: 256 } }] }, mx: null, smtp: null });
      const bimi = body(await guarded.app.inject({ url: '/api/email-tests?type=bimi&domain=example.test' }));
      expect(bimi).toMatchObject({ test: 'bimi', bimi: { status: 'declined', selector: 'default' } });
      // This DNS server passes no DNSSEC records on (no root DNSKEY): DNSSEC could not be checked, and the answer says so, with no verdict.
      const dnssec = body(await guarded.app.inject({ url: '/api/email-tests?type=dnssec&domain=example.test' }));
      expect(dnssec).toMatchObject({ test: 'dnssec', dnssec: null, errors: [{ check: 'dnssec', code: 'upstream', message: expect.stringMatching(/does not pass DNSSEC records on/) }], checked: 'none', failure: { code: 'upstream' } });
      // DANE's TLSA records are looked up; the MX host on loopback is not probed by a guarded server.
      const dane = body(await guarded.app.inject({ url: '/api/email-tests?type=dane&domain=example.test' }));
      expect(dane).toMatchObject({ test: 'dane', mx: null, smtp: null, dane: [{ host: 'mx.example.test', tlsa: { status: 'answer', records: [{ usage: 3, selector: 1, matching_type: 1 }] } }] });
      for (const url of ['/api/email-tests?type=mx&domain=example.test&selector=s1', '/api/email-tests?domain=example.test&selector=s1', '/api/email-tests?type=dkim&domain=example.test&selector=a%20b']) {
        const refused = await guarded.app.inject({ url });
        expect(refused.statusCode, url).toBe(400);
      }
      expect(smtp.connections()).toBe(connections);
    });

    it('runs the typed tests (mx, spf) and the general test', async () => {
      expect(body(await guarded.app.inject({ url: '/api/email-tests?type=mx&domain=example.test' }))).toMatchObject({ kind: 'email', test: 'mx', domain: 'example.test' });
      const spf = body(await guarded.app.inject({ url: '/api/email-tests?type=spf&domain=example.test' }));
      expect(spf).toMatchObject({ test: 'spf', spf: expect.any(Object), mx: null });
      const general = body(await guarded.app.inject({ url: '/api/email-tests?domain=example.test' }));
      expect(general).toMatchObject({ test: 'general', domain: 'example.test' });
      // The MX host is on loopback: not probed by a guarded server.
      expect(general.smtp[0]).toMatchObject({ host: 'mx.example.test', probe: null, error: { code: 'forbidden' } });
      expect(smtp.connections()).toBe(1);
    });

    it('leaves DNSSEC and DANE out of the general test with dnssec=false (as `netintel email --no-dnssec`), on GET and on the bulk form', async () => {
      // A key of its own: the other cases count on the limits of theirs.
      const headers = { 'x-api-key': await guarded.key('pro') };
      const before = dns.queries.length;
      const general = body(await guarded.app.inject({ url: '/api/email-tests?domain=example.test&smtp=false&dnssec=false', headers }));
      expect(general).toMatchObject({ test: 'general', dnssec: null, dane: null, checked: 'all', failure: null });
      const bulk = body(await guarded.app.inject({ method: 'POST', url: '/api/email-tests/bulk', headers, payload: { domains: ['example.test'], smtp: false, dnssec: false } }));
      expect(bulk.results[0].record).toMatchObject({ dnssec: null, dane: null });
      expect(dns.queries.slice(before).filter((query) => ['DNSKEY', 'DS', 'TLSA'].includes(query.type))).toEqual([]);
      // Only the general test has it.
      expect(body(await guarded.app.inject({ url: '/api/email-tests?type=dnssec&domain=example.test&dnssec=false', headers })).code).toBe('usage');
    });

    it('refuses a private SMTP server in the typed smtp form, and wants the right parameters', async () => {
      expect(body(await guarded.app.inject({ url: '/api/email-tests?type=smtp&server=127.0.0.1' })).code).toBe('forbidden');
      expect(body(await guarded.app.inject({ url: '/api/email-tests?type=mx' })).code).toBe('usage');
      expect(body(await guarded.app.inject({ url: '/api/email-tests' })).code).toBe('usage');
      expect(body(await guarded.app.inject({ url: '/api/email-tests?type=arc&domain=example.test' })).code).toBe('usage');
    });

    it('tests many domains in order, with an error item for a bad one, within the plan\'s batch size', async () => {
      const response = await guarded.app.inject({ method: 'POST', url: '/api/email-tests/bulk', headers: { 'x-api-key': pro }, payload: { domains: ['example.test', 'bad..domain'] } });
      const answer = body(response);
      expect(answer.results.map((item: { query: string }) => item.query)).toEqual(['example.test', 'bad..domain']);
      expect(answer.results[0].record).toMatchObject({ kind: 'email', domain: 'example.test' });
      expect(answer.results[1].error.code).toBe('invalid_input');
      expect(response.headers['x-ratelimit-burst-remaining']).toBe('998');
      const eleven = Array.from({ length: 11 }, (_, i) => `d${i}.example.test`);
      const over = await guarded.app.inject({ method: 'POST', url: '/api/email-tests/bulk', payload: { domains: eleven }, remoteAddress: '198.51.100.9' });
      expect(over.statusCode).toBe(403);
    });
  });

  describe('GET /api/vpn-check', () => {
    it('answers the security verdict with its evidence to a premium key', async () => {
      const response = await guarded.app.inject({ url: '/api/vpn-check?ip=8.8.8.8', headers: { 'x-api-key': pro } });
      expect(response.statusCode).toBe(200);
      expect(body(response)).toMatchObject({ kind: 'vpn', ip: '8.8.8.8', is_hosting: true, evidence: expect.any(Array) });
      expect(body(await guarded.app.inject({ url: '/api/vpn-check?ip=bad', headers: { 'x-api-key': pro } })).code).toBe('invalid_input');
    });
  });

  describe('GET /api/blacklist-check', () => {
    it('checks an address against the zones asked for', async () => {
      const listed = body(await guarded.app.inject({ url: '/api/blacklist-check?ip=192.0.2.1&zones=bl.test:ip' }));
      expect(listed).toMatchObject({ kind: 'blacklist', target: '192.0.2.1', verdict: { status: 'listed' } });
      const clean = body(await guarded.app.inject({ url: '/api/blacklist-check?ip=192.0.2.9&zones=bl.test:ip' }));
      expect(clean.verdict.status).toBe('clean');
      expect(body(await guarded.app.inject({ url: '/api/blacklist-check' })).code).toBe('usage');
    });
  });

  it('answers 501 for an endpoint whose engine is taken away, without charging', async () => {
    const server = await startTestServer({ routes: (routes) => routes.map((route) => (route.url === '/api/smtp-test' ? { ...route, handler: null, pending: 'the SMTP probe engine is being built' } : route)) });
    try {
      const response = await server.app.inject({ url: '/api/smtp-test?host=mx.example.com' });
      expect(response.statusCode).toBe(501);
      expect(body(response)).toMatchObject({ code: 'not_implemented', detail: 'GET /api/smtp-test is not available yet: the SMTP probe engine is being built' });
      expect(response.headers['x-ratelimit-remaining']).toBe('1000');
      expect(body(await server.app.inject({ url: '/openapi.json' })).paths['/api/smtp-test'].get.responses).toHaveProperty('501');
    } finally {
      await server.close();
    }
  });
});
