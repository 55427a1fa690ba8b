/**
 * `ptr`, the operation added by its descriptor alone: the same records from
 * the CLI, from GET /api/ptr, in remote mode and from the library, against
 * a DNS server on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { createNetintel, lookup } from '../../src/lib/index.js';
import { expectSameRun as same, runCli } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { startRemoteServer, type TestServer } from '../server/harness.js';

describe('ptr', () => {
  let dns: DnsTestServer;
  let server: TestServer & { url: string; apiKey: string };

  beforeAll(async () => {
    dns = await startDnsServer({
      records: [
        { name: '10.2.0.192.in-addr.arpa', type: 'PTR', data: 'host.example.test' },
        { name: '11.2.0.192.in-addr.arpa', type: 'PTR', data: 'one.example.test' },
        { name: '11.2.0.192.in-addr.arpa', type: 'PTR', data: 'two.example.test' },
        { name: '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa', type: 'PTR', data: 'v6.example.test' },
      ],
      behaviours: { '12.2.0.192.in-addr.arpa': 'servfail' },
    });
    server = await startRemoteServer({ engine: { resolvers: [parseResolverAddress(dns.address)], timeoutMs: 2000 } });
  });
  afterAll(async () => {
    await server.close();
    await dns.close();
  });

  const local = (args: string[], stdin?: string) => runCli([...args, '--resolver', dns.address, '--retries', '0'], { stdin });
  const remote = (args: string[], stdin?: string) => runCli([...args, '--server', server.url, '--api-key', server.apiKey], { stdin });

  it('gives the PTR names of an address with their TTLs', async () => {
    const result = await local(['ptr', '192.0.2.11', '-f', 'json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      kind: 'ptr',
      ip: '192.0.2.11',
      reverse_name: '11.2.0.192.in-addr.arpa',
      status: 'answer',
      names: [{ name: 'one.example.test', ttl_seconds: expect.any(Number) }, { name: 'two.example.test', ttl_seconds: expect.any(Number) }],
    });
  });

  it('answers GET /api/ptr on the free tier with the record the CLI prints, and refuses a bad address with 400', async () => {
    const response = await server.app.inject({ url: '/api/ptr?ip=2001:db8::1' });
    expect(response.statusCode).toBe(200);
    const cli = await local(['ptr', '2001:db8::1', '-f', 'json']);
    expect(JSON.parse(response.body)).toEqual(JSON.parse(cli.stdout));
    const bad = await server.app.inject({ url: '/api/ptr?ip=not-an-ip' });
    expect(bad.statusCode).toBe(400);
    expect(JSON.parse(bad.body).code).toBe('invalid_input');
    expect((await server.app.inject({ url: '/api/ptr' })).statusCode).toBe(400);
  });

  for (const format of ['json', 'table', 'csv', 'ndjson', 'xml']) {
    it(`prints the same ${format} in remote mode: names, none, a failed lookup and bad input`, async () => {
      const args = ['ptr', '192.0.2.10', '192.0.2.11', '192.0.2.99', '192.0.2.12', 'nope', '-f', format];
      const [a, b] = [await local(args), await remote(args)];
      expect(a.code).toBe(7);
      same(a, b);
    });
  }

  it('reads a list on stdin, locally and remotely', async () => {
    const input = '192.0.2.10\n# a comment\n2001:db8::1\n';
    const [a, b] = [await local(['ptr', '-f', 'csv'], input), await remote(['ptr', '-f', 'csv'], input)];
    expect(a.stdout.trimEnd().split('\n')).toHaveLength(3);
    same(a, b);
  });

  it('is a library lookup', async () => {
    const client = createNetintel({ resolvers: [dns.address], retries: 0 });
    try {
      const [record] = await lookup<{ names: Array<{ name: string }> }>(client, 'ptr', '192.0.2.10');
      expect(record!.names.map((each) => each.name)).toEqual(['host.example.test']);
      await expect(lookup(client, 'ptr', '192.0.2.12')).rejects.toMatchObject({ code: 'upstream' });
    } finally {
      await client.close();
    }
  });
});
