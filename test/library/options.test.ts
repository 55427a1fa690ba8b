/**
 * createNetintel's options: what it accepts, how it says no, and that the
 * lookups honour them (a local DNS server on 127.0.0.1).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNetintel, lookupIp, NetintelError, resolveDns, type Netintel } from '../../src/lib/index.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';

describe('createNetintel', () => {
  it('resolves resolver strings to host:port labels and keeps the numbers', async () => {
    const client = createNetintel({ resolvers: ['9.9.9.9', '1.1.1.1:5353', '[2001:db8::53]'], timeoutMs: 1200, retries: 0 });
    expect(client.options).toEqual({ dataDir: null, resolvers: ['9.9.9.9:53', '1.1.1.1:5353', '[2001:db8::53]:53'], timeoutMs: 1200, retries: 0 });
    await client.close();
  });

  it.each([
    [{ resolvers: ['dns.google'] }, 'invalid_input'],
    [{ resolvers: ['1.1.1.1:0'] }, 'invalid_input'],
    [{ resolvers: [] }, 'usage'],
    [{ timeoutMs: 0 }, 'usage'],
    [{ timeoutMs: 1.5 }, 'usage'],
    [{ retries: -1 }, 'usage'],
  ])('refuses %j with %s', (options, code) => {
    expect(() => createNetintel(options)).toThrowError(expect.objectContaining({ name: 'NetintelError', code }));
  });

  it('takes any resolver text either as an address or with a NetintelError, never another throw', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.ipV4(), fc.ipV6(), fc.tuple(fc.ipV4(), fc.integer({ min: -5, max: 70000 })).map(([ip, port]) => `${ip}:${port}`)), (text) => {
        try {
          const client = createNetintel({ resolvers: [text] });
          expect(client.options.resolvers).toHaveLength(1);
          void client.close();
        } catch (error) {
          expect(error).toBeInstanceOf(NetintelError);
        }
      }),
    );
  });

  it('refuses an object that is not a client', async () => {
    await expect(lookupIp({} as Netintel, '192.0.2.1')).rejects.toMatchObject({ code: 'usage' });
  });
});

describe('a client against a local DNS server', () => {
  let dns: DnsTestServer;
  beforeAll(async () => {
    dns = await startDnsServer({
      records: [{ name: 'host.example.test', type: 'A', data: '192.0.2.7' }],
      behaviours: { 'silent.example.test': 'silent' },
    });
  });
  afterAll(() => dns.close());

  it('asks the resolvers it was given', async () => {
    await using client = createNetintel({ resolvers: [dns.address] });
    const [result] = await resolveDns(client, 'host.example.test');
    expect(result).toMatchObject({ status: 'answer', resolver: dns.address, answers: [{ data: '192.0.2.7' }] });
  });

  it('gives up after its timeout and retries, as a timeout NetintelError', async () => {
    await using client = createNetintel({ resolvers: [dns.address], timeoutMs: 200, retries: 0 });
    const started = Date.now();
    await expect(resolveDns(client, 'silent.example.test')).rejects.toMatchObject({ name: 'NetintelError', code: 'timeout' });
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
