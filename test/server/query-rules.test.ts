import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './harness.js';

describe('query parameters as /openapi.json declares them', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.close());

  it('refuses a parameter the route does not declare instead of answering another question (ip[]=8.8.8.8)', async () => {
    for (const url of ['/api/ipinfo?ip[]=8.8.8.8', '/api/ipinfo?ipp=8.8.8.8', '/api/vpn-check?ip[]=8.8.8.8', '/api/asn-lookup?asn=1&as=2', '/api/dns-lookup?domain=example.com&typ=MX']) {
      const response = await server.app.inject({ url, headers: { 'x-api-key': await server.key('pro') } });
      expect(response.statusCode, url).toBe(400);
      expect(JSON.parse(response.body)).toMatchObject({ code: 'usage', status: 400 });
    }
  });

  it('answers 400 to every query that breaks the documented rules between parameters', async () => {
    const broken = [
      '/api/asn-lookup',
      '/api/asn-lookup?ip=8.8.8.8&asn=15169',
      '/api/asn-lookup?asn=15169&bulk=AS1',
      '/api/asn-lookup?ip=8.8.8.8&asn=1&bulk=AS1',
      '/api/email-tests',
      '/api/email-tests?type=mx',
      '/api/email-tests?type=spf&smtp=false&domain=example.com',
      '/api/email-tests?type=smtp',
      '/api/email-tests?domain=example.com&server=mx.example.com',
      '/api/email-tests?server=mx.example.com',
      '/api/blacklist-check',
      '/api/blacklist-check?ip=192.0.2.1&domain=example.com',
    ];
    for (const url of broken) {
      expect(server.contract.queryBreaksRules('GET', url), url).toBe(true);
      const response = await server.app.inject({ url });
      expect(response.statusCode, url).toBe(400);
    }
    for (const url of ['/api/asn-lookup?asn=15169', '/api/email-tests?type=smtp&server=mx.example.com', '/api/email-tests?domain=example.com&smtp=false', '/api/blacklist-check?ip=192.0.2.1']) {
      expect(server.contract.queryBreaksRules('GET', url), url).toBe(false);
    }
  });
});
