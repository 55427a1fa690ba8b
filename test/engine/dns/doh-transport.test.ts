import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDnsTransport, type DnsTransport } from '../../../src/engine/dns/dns-transport.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { NetintelError } from '../../../src/errors.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';
import { createTestPki, startDohServer, startDotServer, type EncryptedDnsServer, type TestPki } from './doh-servers.js';
import { EXAMPLE_ZONE } from './example-zone.js';
import { netintelRejectionOf } from '../../support/netintel-error.js';

let pki: TestPki;
let upstream: DnsTestServer;
const open: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  pki = createTestPki();
  upstream = await startDnsServer({ records: EXAMPLE_ZONE });
});
afterAll(async () => {
  await upstream.close();
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((item) => item.close()));
});

async function doh(options: { http2: boolean; wrongName?: boolean; mode?: EncryptedDnsServer['mode'] }): Promise<EncryptedDnsServer> {
  const server = await startDohServer({
    upstream,
    http2: options.http2,
    certificate: options.wrongName ? pki.wrongName : pki.server,
    ...(options.mode ? { mode: options.mode } : {}),
  });
  open.push(server);
  return server;
}

async function dot(options: { wrongName?: boolean; mode?: EncryptedDnsServer['mode'] } = {}): Promise<EncryptedDnsServer> {
  const server = await startDotServer({ upstream, certificate: options.wrongName ? pki.wrongName : pki.server, ...(options.mode ? { mode: options.mode } : {}) });
  open.push(server);
  return server;
}

function transportTo(resolvers: string[], options: { trustTestCa?: boolean; timeoutMs?: number } = {}): DnsTransport {
  const ca = options.trustTestCa === false ? {} : { ca: [pki.ca.cert] };
  const transport = createDnsTransport({ resolvers: resolvers.map((text) => parseResolverAddress(text, ca)), timeoutMs: options.timeoutMs ?? 2000, retries: 0 });
  open.push(transport);
  return transport;
}

describe('DNS over HTTPS (RFC 8484)', () => {
  it('asks over HTTP/2 with POST when the server offers h2, and reuses the connection', async () => {
    const server = await doh({ http2: true });
    const transport = transportTo([`https://127.0.0.1:${server.port}/dns-query`]);
    const [a, mx] = await Promise.all([transport.query('example.test', 'A'), transport.query('example.test', 'MX')]);
    expect(a.rcode).toBe('NOERROR');
    expect(a.answers.map((answer) => answer.data)).toEqual(['192.0.2.10', '192.0.2.11']);
    expect(a.transport).toBe('https');
    expect(a.resolver).toBe(`https://127.0.0.1:${server.port}/dns-query`);
    expect(mx.answers[0]?.data).toEqual({ preference: 10, exchange: 'mx1.example.test' });
    await transport.query('example.test', 'TXT');
    expect(server.requests.map((r) => `${r.method} ${r.httpVersion}`)).toEqual(['POST 2.0', 'POST 2.0', 'POST 2.0']);
    expect(server.connections()).toBe(1);
  });

  it.each([true, false])('connects again after the server closed the connection (HTTP/2: %s)', async (http2) => {
    const server = await doh({ http2 });
    const transport = transportTo([`https://127.0.0.1:${server.port}/dns-query`]);
    expect((await transport.query('example.test', 'A')).rcode).toBe('NOERROR');
    server.dropConnections();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await transport.query('example.test', 'MX')).rcode).toBe('NOERROR');
    expect(server.connections()).toBe(2);
  });

  it('asks with GET and a base64url dns parameter for the {?dns} template', async () => {
    const server = await doh({ http2: true });
    const transport = transportTo([`https://127.0.0.1:${server.port}/dns-query{?dns}`]);
    const answer = await transport.query('example.test', 'A');
    expect(answer.answers.map((item) => item.data)).toEqual(['192.0.2.10', '192.0.2.11']);
    expect(server.requests).toEqual([{ method: 'GET', httpVersion: '2.0', path: '/dns-query' }]);
  });

  it('falls back to HTTP/1.1 when the server offers only that, GET and POST', async () => {
    const server = await doh({ http2: false });
    const post = transportTo([`https://127.0.0.1:${server.port}/dns-query`]);
    const get = transportTo([`https://127.0.0.1:${server.port}/dns-query{?dns}`]);
    const answers = await Promise.all([post.query('example.test', 'A'), post.query('example.test', 'MX'), get.query('example.test', 'A')]);
    expect(answers.map((answer) => answer.rcode)).toEqual(['NOERROR', 'NOERROR', 'NOERROR']);
    expect(answers[2]!.answers.map((item) => item.data)).toEqual(['192.0.2.10', '192.0.2.11']);
    expect(server.requests.map((r) => `${r.method} ${r.httpVersion}`).sort()).toEqual(['GET 1.1', 'POST 1.1', 'POST 1.1']);
  });

  it.each([true, false])('answers a burst of concurrent queries in full (HTTP/2: %s)', async (http2) => {
    const server = await doh({ http2 });
    const transport = transportTo([`https://127.0.0.1:${server.port}/dns-query`], { timeoutMs: 10_000 });
    const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => transport.query(i % 2 === 0 ? 'example.test' : `n${i}.example.test`, 'A')));
    expect(answers.filter((answer) => answer.rcode === 'NOERROR')).toHaveLength(150);
    expect(answers.filter((answer) => answer.rcode === 'NXDOMAIN')).toHaveLength(150);
    expect(server.connections()).toBeLessThanOrEqual(http2 ? 1 : 17);
  });

  it('gives NXDOMAIN as an answer', async () => {
    const server = await doh({ http2: true });
    const answer = await transportTo([`https://127.0.0.1:${server.port}/dns-query`]).query('nope.example.test', 'A');
    expect(answer.rcode).toBe('NXDOMAIN');
  });

  it('refuses a certificate for another name with a tls error', async () => {
    const server = await doh({ http2: true, wrongName: true });
    const error = await netintelRejectionOf(transportTo([`https://127.0.0.1:${server.port}/dns-query`]).query('example.test', 'A'));
    expect(error.code).toBe('tls');
    expect(error.message).toMatch(/TLS with DNS server https:\/\/127\.0\.0\.1:\d+\/dns-query failed for example\.test A: the certificate is not valid for 127\.0\.0\.1/);
    expect(server.requests).toEqual([]);
  });

  it('refuses a certificate from a CA it was not given, and says how to trust one', async () => {
    const server = await doh({ http2: true });
    const error = await netintelRejectionOf(transportTo([`https://127.0.0.1:${server.port}/dns-query`], { trustTestCa: false }).query('example.test', 'A'));
    expect(error.code).toBe('tls');
    expect(error.message).toContain('not signed by a trusted CA');
    expect(error.message).toContain('--resolver-ca FILE');
  });

  it.each([
    ['garbage', /did not answer example\.test A with a DNS message: its answer is not a DNS reply to the question/],
    ['html', /it answered with "text\/html", not application\/dns-message/],
    ['status-500', /it answered HTTP 500 instead of a DNS message/],
  ] as const)('reports a server that answers %s as upstream', async (mode, message) => {
    for (const http2 of [true, false]) {
      const server = await doh({ http2, mode });
      const error = await netintelRejectionOf(transportTo([`https://127.0.0.1:${server.port}/dns-query`]).query('example.test', 'A'));
      expect(error.code).toBe('upstream');
      expect(error.message).toMatch(message);
    }
  });

  it('times out on a server that never answers', async () => {
    const server = await doh({ http2: true, mode: 'silent' });
    const started = Date.now();
    const error = await netintelRejectionOf(transportTo([`https://127.0.0.1:${server.port}/dns-query`], { timeoutMs: 300 }).query('example.test', 'A'));
    expect(error.code).toBe('timeout');
    expect(error.message).toContain('within 300 ms');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('moves on to the next resolver after a failed one', async () => {
    const broken = await doh({ http2: true, mode: 'status-500' });
    const transport = transportTo([`https://127.0.0.1:${broken.port}/dns-query`, upstream.address]);
    const answer = await transport.query('example.test', 'A');
    expect(answer.transport).toBe('udp');
    expect(answer.resolver).toBe(upstream.address);
  });

  it('ends waiting queries when the transport closes', async () => {
    const server = await doh({ http2: true, mode: 'silent' });
    const transport = transportTo([`https://127.0.0.1:${server.port}/dns-query`], { timeoutMs: 5000 });
    const pending = netintelRejectionOf(transport.query('example.test', 'A'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    await transport.close();
    expect((await pending).code).toBe('unreachable');
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('DNS over TLS (RFC 7858)', () => {
  it('asks over TLS with two-octet framing', async () => {
    const server = await dot();
    const transport = transportTo([`tls://127.0.0.1:${server.port}`]);
    const answer = await transport.query('example.test', 'MX');
    expect(answer.transport).toBe('tls');
    expect(answer.resolver).toBe(`tls://127.0.0.1:${server.port}`);
    expect(answer.answers[0]?.data).toEqual({ preference: 10, exchange: 'mx1.example.test' });
    expect(server.requests).toHaveLength(1);
  });

  it('refuses a certificate for another name with a tls error', async () => {
    const server = await dot({ wrongName: true });
    const error = await netintelRejectionOf(transportTo([`tls://127.0.0.1:${server.port}`]).query('example.test', 'A'));
    expect(error.code).toBe('tls');
    expect(error.message).toContain(`TLS with DNS server tls://127.0.0.1:${server.port} failed`);
    expect(error.message).toContain('the certificate is not valid for 127.0.0.1');
    expect(server.requests).toEqual([]);
  });

  it('refuses an untrusted CA', async () => {
    const server = await dot();
    const error = await netintelRejectionOf(transportTo([`tls://127.0.0.1:${server.port}`], { trustTestCa: false }).query('example.test', 'A'));
    expect(error.code).toBe('tls');
  });

  it('reports a server that sends garbage as upstream', async () => {
    const server = await dot({ mode: 'garbage' });
    const error = await netintelRejectionOf(transportTo([`tls://127.0.0.1:${server.port}`], { timeoutMs: 1000 }).query('example.test', 'A'));
    expect(error.code).toBe('upstream');
    expect(error.message).toMatch(/^DNS server tls:\/\/127\.0\.0\.1:\d+ did not answer example\.test A with a DNS message: it sent 16 octets that are not a DNS message$/);
  });

  it('carries concurrent queries on one connection, answered in any order, and reconnects after the server closes it', async () => {
    const server = await dot();
    const transport = transportTo([`tls://127.0.0.1:${server.port}`], { timeoutMs: 10_000 });
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => transport.query(i % 2 === 0 ? 'example.test' : `n${i}.example.test`, 'A')));
    expect(answers.filter((answer) => answer.rcode === 'NOERROR')).toHaveLength(100);
    expect(answers.filter((answer) => answer.rcode === 'NXDOMAIN')).toHaveLength(100);
    expect(server.connections()).toBe(1);
    server.dropConnections();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await transport.query('example.test', 'MX')).rcode).toBe('NOERROR');
    expect(server.connections()).toBe(2);
  });

  it('sends a query again on a new connection when the server closes a used one under it', async () => {
    const server = await dot({ mode: 'close-on-second' });
    const transport = transportTo([`tls://127.0.0.1:${server.port}`]);
    expect((await transport.query('example.test', 'A')).rcode).toBe('NOERROR');
    const again = await transport.query('example.test', 'MX');
    expect(again.rcode).toBe('NOERROR');
    expect(server.connections()).toBe(2);
    expect(server.requests).toHaveLength(3);
  });

  it('times out on a server that never answers', async () => {
    const server = await dot({ mode: 'silent' });
    const error = await netintelRejectionOf(transportTo([`tls://127.0.0.1:${server.port}`], { timeoutMs: 300 }).query('example.test', 'A'));
    expect(error.code).toBe('timeout');
  });

  it('is unreachable when nothing listens', async () => {
    const server = await dot();
    const port = server.port;
    await server.close();
    const error = await netintelRejectionOf(transportTo([`tls://127.0.0.1:${port}`]).query('example.test', 'A'));
    expect(error.code).toBe('unreachable');
  });
});

describe('the connect guard (a caller-chosen resolver on the server)', () => {
  it.each(['https', 'tls'] as const)('judges the addresses a %s resolver name resolves to, before connecting', async (protocol) => {
    const server = protocol === 'https' ? await doh({ http2: true }) : await dot();
    const judged: string[] = [];
    const guard = (address: string, target: { what: string }) => {
      judged.push(address);
      throw new NetintelError('forbidden', `${target.what} localhost resolves to ${address}, which is loopback`);
    };
    const text = protocol === 'https' ? `https://localhost:${server.port}/dns-query` : `tls://localhost:${server.port}`;
    const transport = createDnsTransport({ resolvers: [parseResolverAddress(text, { ca: [pki.ca.cert] })], timeoutMs: 2000, retries: 0, connectGuard: guard });
    open.push(transport);
    const error = await netintelRejectionOf(transport.query('example.test', 'A'));
    expect(error.code).toBe('forbidden');
    expect(error.message).toMatch(/^DNS resolver localhost resolves to (127\.0\.0\.1|::1), which is loopback$/);
    expect(judged.length).toBeGreaterThan(0);
    expect(server.connections()).toBe(0);
  });

  it('judges an IP address before any socket opens', () => {
    const guard = () => {
      throw new NetintelError('forbidden', 'refused');
    };
    expect(() => createDnsTransport({ resolvers: [parseResolverAddress('tls://127.0.0.1:853')], connectGuard: guard })).toThrow(expect.objectContaining({ code: 'forbidden' }));
  });
});

