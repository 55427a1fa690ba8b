/**
 * `headers`: the same record from the CLI, in remote mode (the message sent
 * to POST /api/headers of a netintel server on 127.0.0.1) and from the
 * library.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeHeaders, createNetintel } from '../../src/lib/index.js';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { HEADERS_SIGNED_FILE, HEADERS_ZONE } from '../engine/mail/headers/headers-zone.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { expectSameRun, runCli } from '../support/cli.js';
import { startRemoteServer, type TestServer } from '../server/harness.js';

const FILE = 'test/engine/mail/fixtures/headers-relayed.eml';

describe('headers', () => {
  let dns: DnsTestServer;
  let server: TestServer & { url: string; apiKey: string };

  beforeAll(async () => {
    dns = await startDnsServer({ records: [...HEADERS_ZONE] });
    server = await startRemoteServer({ engine: { resolvers: [parseResolverAddress(dns.address)], timeoutMs: 2000, dnsRetries: 0 } });
  });
  afterAll(async () => {
    await server.close();
    await dns.close();
  });
  const resolver = () => ['--resolver', dns.address, '--retries', '0'];

  it('prints the same record and exit code in remote mode as locally, in every format', async () => {
    for (const [file, format] of [[FILE, 'json'], [FILE, 'csv'], [FILE, 'table'], [HEADERS_SIGNED_FILE, 'json']] as const) {
      const local = await runCli(['headers', file, '-f', format, '--fail-on', 'warning', ...resolver()]);
      const remote = await runCli(['headers', file, '-f', format, '--fail-on', 'warning', '--server', server.url, '--api-key', server.apiKey]);
      expect(local.code).toBe(file === FILE ? 10 : 0);
      expectSameRun(local, remote);
    }
  });

  it('sends a message read from stdin, and says a refused one as the local run does', async () => {
    const pasted = readFileSync(FILE, 'utf8').split('\r\n\r\n')[0]!;
    const local = await runCli(['headers', '-f', 'json', ...resolver()], { stdin: pasted });
    const remote = await runCli(['headers', '-f', 'json', '--server', server.url, '--api-key', server.apiKey], { stdin: pasted });
    expect(JSON.parse(remote.stdout)).toEqual(JSON.parse(local.stdout));
    const bad = await runCli(['headers', '--server', server.url, '--api-key', server.apiKey], { stdin: 'not a message\n' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/does not start with a header field/);
  });

  it('says a message over the server\'s body limit is refused, and exits 2', async () => {
    const big = `${readFileSync(FILE, 'utf8').split('\r\n\r\n')[0]!}\r\n\r\n${'x'.repeat(80 * 1024)}\r\n`;
    const remote = await runCli(['headers', '--server', server.url, '--api-key', server.apiKey], { stdin: big });
    expect(remote.code).toBe(2);
    expect(remote.stderr).toMatch(/larger than 65536 bytes/);
  });

  it('is analyzeHeaders in the library, from text or bytes', async () => {
    const client = createNetintel({ resolvers: [dns.address], timeoutMs: 2000 });
    try {
      const bytes = readFileSync(FILE);
      const fromBytes = await analyzeHeaders(client, bytes);
      const fromText = await analyzeHeaders(client, bytes.toString('utf8'));
      expect(fromText).toEqual(fromBytes);
      expect(fromBytes).toMatchObject({ kind: 'headers', source: 'message', total_transit_seconds: 460 });
      expect(fromBytes.hops).toHaveLength(5);
      await expect(analyzeHeaders(client, 'not a message')).rejects.toMatchObject({ code: 'invalid_input' });
    } finally {
      await client.close();
    }
  });
});
