/**
 * GET /api/tls-check: the record of `netintel tls` from the server, under
 * its SSRF rules (every spelling of a loopback address refused before any
 * connection, TLS service ports only) and the OpenAPI contract (the
 * harness checks every answer against the server's own document).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { createCertificateAuthority, issueCertificate } from '../support/smtp-servers.js';
import { startTlsServer, type TlsTestServer } from '../support/tls-servers.js';
import { startTestServer, type TestServer } from './harness.js';

const LOOPBACK_HOSTS = ['127.0.0.1', '::ffff:127.0.0.1', '64:ff9b::127.0.0.1', '[::1]', '0x7f.1', '2130706433', '127.1', 'loop.test', 'loop6.test'];

describe('GET /api/tls-check', () => {
  let dns: DnsTestServer;
  let tlsServer: TlsTestServer;
  let guarded: TestServer;
  let open: TestServer;
  let get: (server: TestServer, url: string) => Promise<{ status: number; body: any }>;

  beforeAll(async () => {
    const ca = createCertificateAuthority();
    tlsServer = await startTlsServer({ certificate: issueCertificate({ commonName: 'loop.test', issuer: ca }) });
    dns = await startDnsServer({
      records: [
        { name: 'loop.test', type: 'A', data: '127.0.0.1' },
        { name: 'loop6.test', type: 'AAAA', data: '::ffff:127.0.0.1' },
      ],
    });
    const engine = { resolvers: [parseResolverAddress(dns.address)], timeoutMs: 1500 };
    guarded = await startTestServer({ engine, tlsPorts: [443, tlsServer.port] });
    open = await startTestServer({ engine, allowPrivateTargets: true, tlsPorts: [tlsServer.port] });
    get = async (server, url) => {
      const response = await server.app.inject({ url, headers: { 'x-api-key': await server.key('pro') } });
      return { status: response.statusCode, body: JSON.parse(response.body) };
    };
  });

  afterAll(async () => {
    await Promise.all([guarded.close(), open.close(), dns.close(), tlsServer.close()]);
  });

  it.each(LOOPBACK_HOSTS)('refuses host=%s with 403 forbidden, without connecting', async (host) => {
    const { status, body } = await get(guarded, `/api/tls-check?host=${encodeURIComponent(host)}&port=${tlsServer.port}`);
    expect(status).toBe(403);
    expect(body).toMatchObject({ code: 'forbidden', details: { rule: 'private-target' } });
    expect(tlsServer.connections()).toBe(0);
    expect(guarded.contractViolations).toEqual([]);
  });

  it('refuses a port that is not a TLS service port, before resolving the host', async () => {
    const { status, body } = await get(guarded, '/api/tls-check?host=www.example.com:22');
    expect(status).toBe(403);
    expect(body).toMatchObject({ code: 'forbidden', details: { rule: 'tls-port', port: 22 } });
    expect(dns.queries.some((query) => query.name === 'www.example.com')).toBe(false);
  });

  it('refuses a target that is not host[:port] with 400', async () => {
    const { status, body } = await get(guarded, `/api/tls-check?host=${encodeURIComponent('a b:443')}`);
    expect(status).toBe(400);
    expect(body.code).toBe('invalid_input');
  });

  it('answers the record with --allow-private-targets, as netintel tls -f json has it', async () => {
    const { status, body } = await get(open, `/api/tls-check?host=loop.test:${tlsServer.port}&expiry_days=400&dane=false`);
    expect(status).toBe(200);
    expect(body).toMatchObject({ kind: 'tls', target: `loop.test:${tlsServer.port}`, host: 'loop.test', address: '127.0.0.1', established: true, protocols: { tls1_3: 'accepted' } });
    expect(body.certificate).toMatchObject({ hostname_match: true, trusted: false, chain_incomplete: true });
    expect(body.findings.map((finding: { id: string }) => finding.id)).toEqual(expect.arrayContaining(['tls_expires_soon', 'tls_chain_incomplete']));
    const split = await get(open, `/api/tls-check?host=loop.test&port=${tlsServer.port}&versions=false&dane=false`);
    expect(split.body).toMatchObject({ port: tlsServer.port, protocols: null, dane: null });
    expect(open.contractViolations).toEqual([]);
  });
});
