/**
 * POST /api/headers: the message in the body, the record of `netintel
 * headers -f json` in the answer, every answer checked against the served
 * OpenAPI document (harness.ts); the body fuzzed within its schema.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { HEADERS_ZONE } from '../engine/mail/headers/headers-zone.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { expectProblemAnswer, startTestServer, type TestServer } from './harness.js';

const MESSAGE = readFileSync(new URL('../engine/mail/fixtures/headers-relayed.eml', import.meta.url), 'utf8');

let dns: DnsTestServer;
let server: TestServer;
beforeAll(async () => {
  // The sender domains' SPF, DKIM and DMARC are asked of this peer, never of the system's resolvers.
  dns = await startDnsServer({ records: [...HEADERS_ZONE] });
  server = await startTestServer({ engine: { resolvers: [parseResolverAddress(dns.address)], timeoutMs: 2000, dnsRetries: 0 } });
});
afterAll(async () => {
  await server?.close();
  await dns?.close();
});

describe('POST /api/headers', () => {
  it('answers the hops of a message, oldest first, with the public addresses described', async () => {
    const response = await server.app.inject({ method: 'POST', url: '/api/headers', payload: { message: MESSAGE } });
    expect(response.statusCode).toBe(200);
    const report = JSON.parse(response.body);
    expect(report).toMatchObject({ kind: 'headers', source: 'request', total_transit_seconds: 460, message: { subject: 'Quarterly figures — late' } });
    expect(report.hops.map((hop: { by_host: string | null }) => hop.by_host)).toEqual([null, 'mail.example.com', 'relay.example.net', 'mx.example.org', 'imap.example.org']);
    expect(report.hops[2].address).toMatchObject({ ip: '8.8.8.8', scope: 'public', asn: 15169 });
    expect(report.hops[3].address).toMatchObject({ ip: '203.0.113.25', scope: 'special' });
    expect(report.authentication).toMatchObject({ spf: { result: 'none', hop: 3 }, dkim: { result: 'none' }, dmarc: { result: 'none' } });
    expect(report.findings.map((item: { id: string }) => item.id)).toEqual(['headers_dkim_none', 'headers_unparsed_received', 'headers_delay_large', 'headers_clock_skew']);
  });

  it('recomputes the authentication of a signed message with the server\'s resolvers', async () => {
    const message = readFileSync(new URL('../engine/mail/fixtures/headers-signed.eml', import.meta.url), 'utf8');
    const report = JSON.parse((await server.app.inject({ method: 'POST', url: '/api/headers', payload: { message } })).body);
    expect(report.authentication).toMatchObject({ spf: { result: 'pass' }, dkim: { result: 'pass' }, dmarc: { result: 'pass', policy: 'quarantine' } });
    expect(report.authentication.stated).toHaveLength(3);
  });

  it('refuses a body that is not a message (400 invalid_input) and a missing message (400 usage)', async () => {
    expectProblemAnswer(await server.app.inject({ method: 'POST', url: '/api/headers', payload: { message: 'hello there' } }), 400, 'invalid_input');
    expectProblemAnswer(await server.app.inject({ method: 'POST', url: '/api/headers', payload: {} }), 400, 'usage');
  });

  it('refuses a body over the server\'s limit (413)', async () => {
    const response = await server.app.inject({ method: 'POST', url: '/api/headers', payload: { message: `Subject: x\r\n\r\n${'a'.repeat(70 * 1024)}` } });
    expect(response.statusCode).toBe(413);
  });

  it('answers any text within the schema with a record or a 400, never a 500', async () => {
    const key = await server.key('enterprise');
    const line = fc.oneof(fc.string({ maxLength: 60 }), fc.constantFrom('Received: from a (a [192.0.2.1]) by b; Tue, 1 Jul 2025 10:00:00 +0000', 'Date: Tue, 1 Jul 2025 09:00:00 +0000', ' folded', 'Subject: =?UTF-8?B?w6k=?='));
    await fc.assert(
      fc.asyncProperty(fc.array(line, { minLength: 1, maxLength: 12 }), async (lines) => {
        const response = await server.app.inject({ method: 'POST', url: '/api/headers', headers: { 'x-api-key': key }, payload: { message: lines.join('\r\n') || ' ' } });
        expect([200, 400]).toContain(response.statusCode);
      }),
      { numRuns: 150 },
    );
  });
});
