import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { IP_SCHEMA } from '../../src/output/schemas/ip-schema.js';
import { parseCsv } from '../output/parse-csv.js';
import { expectProblemAnswer, startTestServer, type TestServer } from './harness.js';

/** The endpoints of docs/api.md, Endpoints (GET /api/quota aside). */
const DOCUMENTED_PATHS = [
  ['GET', '/api/ipinfo'],
  ['GET', '/api/dns-lookup'],
  ['GET', '/api/ptr'],
  ['GET', '/api/rdap'],
  ['GET', '/api/tls-check'],
  ['GET', '/api/smtp-test'],
  ['GET', '/api/asn-lookup'],
  ['GET', '/api/email-tests'],
  ['POST', '/api/email-tests/bulk'],
  ['GET', '/api/vpn-check'],
  ['GET', '/api/blacklist-check'],
  ['POST', '/api/bulk'],
  ['POST', '/api/headers'],
  ['POST', '/api/dmarc-reports'],
] as const;

function json(response: LightMyRequestResponse): any {
  return JSON.parse(response.body);
}


describe('the HTTP API (buildServer)', () => {
  let server: TestServer;
  let pro: string;
  let starter: string;
  let free: string;

  beforeAll(async () => {
    server = await startTestServer();
    pro = await server.key('pro');
    starter = await server.key('starter');
    free = await server.key('free');
  });
  afterAll(() => server.close());

  describe('GET /api/ipinfo', () => {
    it('answers the full IP record to a key whose plan has premium fields', async () => {
      const response = await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8', headers: { 'x-api-key': pro } });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(response.headers['x-netintel-withheld']).toBeUndefined();
      const record = json(response);
      expect(record).toMatchObject({ ip: '8.8.8.8', type: 'ipv4', location: { country_code: 'US' }, network: { asn: 15169 } });
      expect(record.security).toHaveProperty('threat_level');
      expect(record).not.toHaveProperty('note');
    });

    it('answers basic geolocation only on the free tier, and says which fields were left out', async () => {
      const response = await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8' });
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-netintel-withheld']).toBe('network, security');
      const record = json(response);
      expect(record).toMatchObject({ ip: '8.8.8.8', type: 'ipv4', location: { country_code: 'US', city: 'Mountain View' } });
      expect(record).not.toHaveProperty('network');
      expect(record).not.toHaveProperty('security');
      expect(record.note).toMatch(/API key/);
    });

    it('serves a key stored with the keyless free plan as the plan of new accounts: premium fields, never the free tier', async () => {
      const response = await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8', headers: { 'x-api-key': free } });
      expect(response.headers['x-netintel-withheld']).toBeUndefined();
      expect(json(response)).toMatchObject({ network: { asn: 15169 } });
      expect(json(await server.app.inject({ url: '/api/quota', headers: { 'x-api-key': free } }))).toMatchObject({ plan: 'free-account' });
    });

    it('looks up the caller when ip is omitted', async () => {
      const response = await server.app.inject({ url: '/api/ipinfo', headers: { 'x-api-key': pro }, remoteAddress: '9.9.9.9' });
      expect(json(response)).toMatchObject({ ip: '9.9.9.9', type: 'ipv4' });
    });

    it('answers IPv6 and IPv4-mapped IPv6 as the CLI does', async () => {
      const v6 = json(await server.app.inject({ url: '/api/ipinfo?ip=2001:4860:4860::8888', headers: { 'x-api-key': pro } }));
      expect(v6).toMatchObject({ ip: '2001:4860:4860::8888', type: 'ipv6' });
      const mapped = json(await server.app.inject({ url: '/api/ipinfo?ip=::ffff:8.8.8.8', headers: { 'x-api-key': pro } }));
      expect(mapped).toMatchObject({ ip: '8.8.8.8', type: 'ipv4' });
    });

    it('answers the CLI\'s CSV layout with format=csv, premium columns left out on the free tier', async () => {
      const keyed = await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8&format=csv', headers: { 'x-api-key': pro } });
      expect(keyed.headers['content-type']).toBe('text/csv; charset=utf-8; header=present');
      const rows = parseCsv(keyed.body);
      expect(rows[0]).toEqual(['query', ...IP_SCHEMA.columns, 'error.code', 'error.message']);
      expect(rows[1]![rows[0]!.indexOf('network.asn')]).toBe('15169');
      const anonymous = parseCsv((await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8&format=csv' })).body);
      expect(anonymous[0]!.some((column) => column.startsWith('network.') || column.startsWith('security.'))).toBe(false);
      expect(anonymous[1]![anonymous[0]!.indexOf('location.city')]).toBe('Mountain View');
    });

    it('answers the CLI\'s XML layout with format=xml', async () => {
      const response = await server.app.inject({ url: '/api/ipinfo?ip=1.1.1.1&format=xml', headers: { 'x-api-key': pro } });
      expect(response.headers['content-type']).toBe('application/xml; charset=utf-8');
      expect(response.body).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<netintel kind="ip">\n  <record>\n    <ip>1.1.1.1<\/ip>/);
      expect(response.body).toContain('<asn>13335</asn>');
    });

    it('refuses an unknown format and a bad address with problem+json', async () => {
      expectProblemAnswer(await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8&format=yaml' }), 400, 'usage');
      const body = expectProblemAnswer(await server.app.inject({ url: '/api/ipinfo?ip=1.2.3' }), 400, 'invalid_input');
      expect(body.detail).toBe('"1.2.3" is not a valid IPv4 or IPv6 address');
      expect(body.instance).toBe('/api/ipinfo');
    });

    it('answers a special-purpose address with "reserved", not an error', async () => {
      const record = json(await server.app.inject({ url: '/api/ipinfo?ip=10.1.2.3', headers: { 'x-api-key': pro } }));
      expect(record).toMatchObject({ ip: '10.1.2.3', reserved: 'private (RFC 1918)' });
    });
  });

  describe('GET /api/asn-lookup', () => {
    it('answers by ip, by asn, and for a bulk list in input order with per-item errors and a summary', async () => {
      const byIp = json(await server.app.inject({ url: '/api/asn-lookup?ip=8.8.8.8' }));
      expect(byIp).toMatchObject({ kind: 'asn', asn: 15169, route: '8.8.8.0/24' });
      const byAsn = json(await server.app.inject({ url: '/api/asn-lookup?asn=AS13335' }));
      expect(byAsn).toMatchObject({ kind: 'asn', asn: 13335, ip: null });
      const bulk = json(await server.app.inject({ url: '/api/asn-lookup?bulk=1.1.1.1,AS15169,nonsense,10.0.0.1' }));
      expect(bulk.results.map((item: { query: string }) => item.query)).toEqual(['1.1.1.1', 'AS15169', 'nonsense', '10.0.0.1']);
      expect(bulk.results[0].record).toMatchObject({ asn: 13335 });
      expect(bulk.results[2].error).toMatchObject({ code: 'invalid_input' });
      expect(bulk.results[3].error).toMatchObject({ code: 'not_found' });
      expect(bulk.summary).toEqual({ total: 4, succeeded: 2, failed: 2, errors: { invalid_input: 1, not_found: 1 } });
    });

    it('wants exactly one of ip, asn and bulk', async () => {
      expectProblemAnswer(await server.app.inject({ url: '/api/asn-lookup' }), 400, 'usage');
      expectProblemAnswer(await server.app.inject({ url: '/api/asn-lookup?ip=8.8.8.8&asn=1' }), 400, 'usage');
      expectProblemAnswer(await server.app.inject({ url: '/api/asn-lookup?ip=AS15169' }), 400, 'invalid_input');
      expectProblemAnswer(await server.app.inject({ url: '/api/asn-lookup?asn=8.8.8.8' }), 400, 'usage');
    });

    it('answers not_found (404) for an address no AS announces', async () => {
      expectProblemAnswer(await server.app.inject({ url: '/api/asn-lookup?ip=192.168.1.1' }), 404, 'not_found');
    });
  });

  describe('POST /api/bulk', () => {
    it('looks up every address in order with the fields asked for, errors per item and a summary', async () => {
      const response = await server.app.inject({
        method: 'POST',
        url: '/api/bulk',
        headers: { 'x-api-key': pro },
        payload: { ips: ['8.8.8.8', 'bad', '1.1.1.1'], fields: ['location', 'network'] },
      });
      expect(response.statusCode).toBe(200);
      const body = json(response);
      expect(body.results.map((item: { query: string }) => item.query)).toEqual(['8.8.8.8', 'bad', '1.1.1.1']);
      expect(body.results[0].record).toMatchObject({ ip: '8.8.8.8', type: 'ipv4', location: { country_code: 'US' }, network: { asn: 15169 } });
      expect(body.results[0].record).not.toHaveProperty('security');
      expect(body.results[1].error).toMatchObject({ code: 'invalid_input', message: '"bad" is not a valid IPv4 or IPv6 address' });
      expect(body.summary).toEqual({ total: 3, succeeded: 2, failed: 1, errors: { invalid_input: 1 } });
    });

    it('gives every group without fields', async () => {
      const body = json(await server.app.inject({ method: 'POST', url: '/api/bulk', headers: { 'x-api-key': pro }, payload: { ips: ['8.8.8.8'] } }));
      expect(Object.keys(body.results[0].record)).toEqual(expect.arrayContaining(['location', 'network', 'security']));
    });

    it('needs a key (401) whose plan includes bulk processing (403)', async () => {
      const payload = { ips: ['8.8.8.8'] };
      const anonymous = expectProblemAnswer(await server.app.inject({ method: 'POST', url: '/api/bulk', payload }), 401, 'unauthorized');
      expect(anonymous.detail).toMatch(/needs an API key/);
      const low = expectProblemAnswer(await server.app.inject({ method: 'POST', url: '/api/bulk', headers: { 'x-api-key': starter }, payload }), 403, 'forbidden');
      expect(low.details).toEqual({ plan: 'starter', feature: 'bulk' });
    });

    it('accepts 100 addresses and refuses 101, an empty list and unknown fields', async () => {
      const ips = Array.from({ length: 101 }, (_, i) => `8.8.${i >> 8}.${i & 255}`);
      const ok = await server.app.inject({ method: 'POST', url: '/api/bulk', headers: { 'x-api-key': pro }, payload: { ips: ips.slice(0, 100) } });
      expect(json(ok).summary.total).toBe(100);
      expectProblemAnswer(await server.app.inject({ method: 'POST', url: '/api/bulk', headers: { 'x-api-key': pro }, payload: { ips } }), 400, 'usage');
      expectProblemAnswer(await server.app.inject({ method: 'POST', url: '/api/bulk', headers: { 'x-api-key': pro }, payload: { ips: [] } }), 400, 'usage');
      expectProblemAnswer(
        await server.app.inject({ method: 'POST', url: '/api/bulk', headers: { 'x-api-key': pro }, payload: { ips: ['8.8.8.8'], fields: ['weather'] } }),
        400,
        'usage',
      );
    });

    it('counts each address against the daily allowance and the bucket', async () => {
      const key = await server.key('pro');
      const response = await server.app.inject({ method: 'POST', url: '/api/bulk', headers: { 'x-api-key': key }, payload: { ips: ['8.8.8.8', '1.1.1.1', 'x'] } });
      expect(response.headers['x-ratelimit-remaining']).toBe(String(100_000 - 3));
      expect(response.headers['x-ratelimit-burst-remaining']).toBe(String(1000 - 3));
    });

    it('refuses a body that is not JSON or is over the size limit', async () => {
      expectProblemAnswer(
        await server.app.inject({ method: 'POST', url: '/api/bulk', headers: { 'x-api-key': pro, 'content-type': 'application/json' }, payload: '{"ips": [' }),
        400,
        'usage',
      );
      const huge = await server.app.inject({
        method: 'POST',
        url: '/api/bulk',
        headers: { 'x-api-key': pro, 'content-type': 'application/json' },
        payload: JSON.stringify({ ips: ['x'.repeat(70_000)] }),
      });
      expectProblemAnswer(huge, 413, 'usage');
      expectProblemAnswer(
        await server.app.inject({ method: 'POST', url: '/api/bulk', headers: { 'x-api-key': pro, 'content-type': 'application/xml' }, payload: '<ips/>' }),
        415,
        'usage',
      );
    });
  });

  describe('bulk batch limits of the plans', () => {
    it('allows 10 items per asn-lookup bulk request on the free tier, 50 with a key', async () => {
      const list = (n: number) => Array.from({ length: n }, (_, i) => `AS${i + 1}`).join(',');
      expect((await server.app.inject({ url: `/api/asn-lookup?bulk=${list(10)}`, remoteAddress: '203.0.113.10' })).statusCode).toBe(200);
      const over = expectProblemAnswer(await server.app.inject({ url: `/api/asn-lookup?bulk=${list(11)}`, remoteAddress: '203.0.113.10' }), 403, 'forbidden');
      expect(over.details).toEqual({ plan: 'free', batch: 10, items: 11 });
      const key = await server.key('starter');
      expect((await server.app.inject({ url: `/api/asn-lookup?bulk=${list(50)}`, headers: { 'x-api-key': key } })).statusCode).toBe(200);
      expectProblemAnswer(await server.app.inject({ url: `/api/asn-lookup?bulk=${list(51)}`, headers: { 'x-api-key': key } }), 403, 'forbidden');
    });

    it('limits email-tests bulk to the plan\'s batch size too', async () => {
      const domains = Array.from({ length: 11 }, (_, i) => `d${i}.example`);
      const response = await server.app.inject({ method: 'POST', url: '/api/email-tests/bulk', payload: { domains }, remoteAddress: '203.0.113.11' });
      expectProblemAnswer(response, 403, 'forbidden');
    });
  });

  describe('the features of the plans', () => {
    it('refuses a premium-only endpoint without a key (401), and a bulk-only one with a plan lacking bulk (403)', async () => {
      expectProblemAnswer(await server.app.inject({ url: '/api/vpn-check?ip=1.1.1.1' }), 401, 'unauthorized');
      expectProblemAnswer(await server.app.inject({ method: 'POST', url: '/api/bulk', payload: { ips: ['8.8.8.8'] }, headers: { 'x-api-key': starter } }), 403, 'forbidden');
    });
  });

  describe('GET /api/quota', () => {
    it('shows the plan and what is left without charging', async () => {
      const key = await server.key('starter');
      await server.app.inject({ url: '/api/ipinfo?ip=8.8.8.8', headers: { 'x-api-key': key } });
      for (let i = 0; i < 3; i++) {
        const quota = json(await server.app.inject({ url: '/api/quota', headers: { 'x-api-key': key } }));
        expect(quota).toMatchObject({
          kind: 'quota',
          plan: 'starter',
          key_id: key.slice(3, 15),
          daily: { limit: 10_000, remaining: 9_999, reset_at: '2030-01-02T00:00:00.000Z' },
          burst: { capacity: 100, remaining: 99, per_minute: 50 },
          batch: 50,
          bulk_max: null,
        });
      }
      const anonymous = json(await server.app.inject({ url: '/api/quota', remoteAddress: '198.51.100.200' }));
      expect(anonymous).toMatchObject({ plan: 'free', key_id: null, client: '198.51.100.200', daily: { limit: 1000, remaining: 1000 } });
    });
  });

  describe('the documented paths, OpenAPI and docs', () => {
    it('serves every documented path exactly, and nothing at near misses', async () => {
      const document = json(await server.app.inject({ url: '/openapi.json' }));
      expect(document.openapi).toBe('3.1.0');
      for (const [method, path] of DOCUMENTED_PATHS) expect(document.paths[path], path).toHaveProperty(method.toLowerCase());
      expect(Object.keys(document.paths).filter((path) => path.startsWith('/api/')).sort()).toEqual(
        [...new Set([...DOCUMENTED_PATHS.map(([, path]) => path), '/api/quota'])].sort(),
      );
      expect((await server.app.inject({ url: '/api/ipinfo/' })).statusCode).toBe(404);
      expect((await server.app.inject({ url: '/api/IPINFO?ip=8.8.8.8' })).statusCode).toBe(404);
    });

    it('documents the key, the plans, the parameters and the 429 headers', async () => {
      const document = json(await server.app.inject({ url: '/openapi.json' }));
      expect(document.components.securitySchemes.ApiKey).toEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }));
      const ipinfo = document.paths['/api/ipinfo'].get;
      expect(ipinfo.parameters.map((param: { name: string }) => param.name)).toEqual(['ip', 'format']);
      expect(document.paths['/api/bulk'].post.security).toEqual([{ ApiKey: [] }]);
      expect(document.components.responses.TooManyRequests.headers).toHaveProperty('X-RateLimit-RetryAfter');
    });

    it('renders a readable docs page with the plans table and every endpoint', async () => {
      const response = await server.app.inject({ url: '/docs' });
      expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(response.body).toContain('<h1>netintel API');
      expect(response.body).toMatch(/Pro <code>pro<\/code><\/td><td>100,000<\/td><td>500<\/td><td>1,000<\/td>/);
      for (const [, path] of DOCUMENTED_PATHS) expect(response.body).toContain(`<code>${path}</code>`);
      expect(response.body).toContain('id="problem-rate_limited"');
    });

    it('answers /healthz with the state of the limit store', async () => {
      expect(json(await server.app.inject({ url: '/healthz' }))).toMatchObject({ status: 'ok', limits: { store: 'memory', ok: true } });
    });
  });
});

describe('the JSON of an IP record', () => {
  it('is JSON.stringify\'s, also when its parts come from the fragment cache', async () => {
    const { recordJson } = await import('../../src/operations/ip-answer.js');
    const shared = { city: 'Mountain View', latitude: 37.422 };
    const first = { ip: '8.8.8.8', type: 'ipv4', location: shared, reserved: null, skipped: undefined };
    const second = { ip: '8.8.4.4', type: 'ipv4', location: shared, reserved: 'x "quoted"' };
    expect(recordJson(first)).toBe(JSON.stringify(first));
    expect(recordJson(second)).toBe(JSON.stringify(second));
    expect(JSON.parse(recordJson(second, 'a note'))).toEqual({ ...second, note: 'a note' });
  });
});
