/**
 * `tls`: the same records from the CLI, from GET /api/tls-check, in remote
 * mode and from the library, against a TLS server on 127.0.0.1 (a server
 * with --allow-private-targets and the test port among its TLS ports).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNetintel, lookup } from '../../src/lib/index.js';
import { expectSameRun as same, runCli } from '../support/cli.js';
import { closedPort } from '../support/peers.js';
import { createCertificateAuthority, daysFromNow, issueCertificate } from '../support/smtp-servers.js';
import { startTlsServer, type TlsTestServer } from '../support/tls-servers.js';
import { startRemoteServer, type TestServer } from '../server/harness.js';

describe('tls', () => {
  let tlsServer: TlsTestServer;
  let server: TestServer & { url: string; apiKey: string };
  let closed: number;

  beforeAll(async () => {
    const ca = createCertificateAuthority();
    tlsServer = await startTlsServer({ certificate: issueCertificate({ commonName: 'localhost', ipAddresses: ['127.0.0.1'], issuer: ca, notAfter: daysFromNow(15.5) }) });
    closed = await closedPort();
    server = await startRemoteServer({ allowPrivateTargets: true, tlsPorts: [tlsServer.port, closed] });
  });
  afterAll(async () => {
    await server.close();
    await tlsServer.close();
  });

  const local = (args: string[], stdin?: string) => runCli(args, { stdin });
  const remote = (args: string[], stdin?: string) => runCli([...args, '--server', server.url, '--api-key', server.apiKey], { stdin });

  for (const format of ['json', 'table', 'csv']) {
    it(`prints the same ${format} in remote mode: a certificate, a closed port and bad input`, async () => {
      const args = ['tls', `127.0.0.1:${tlsServer.port}`, `127.0.0.1:${closed}`, 'not a host', '--no-dane', '--expiry-days', '30', '-f', format];
      const [a, b] = [await local(args), await remote(args)];
      expect(a.code).toBe(7);
      same(a, b);
    });
  }

  it('gives the record with its findings, and --fail-on warning exits 10 for a certificate under --expiry-days', async () => {
    const result = await local(['tls', `127.0.0.1:${tlsServer.port}`, '-f', 'json', '--fail-on', 'warning']);
    expect(result.code).toBe(10);
    const record = JSON.parse(result.stdout);
    expect(record).toMatchObject({ kind: 'tls', host: '127.0.0.1', port: tlsServer.port, established: true, certificate: { days_left: 15, hostname_match: true } });
    expect(record.findings.map((finding: { id: string }) => finding.id)).toEqual(expect.arrayContaining(['tls_expires_soon', 'tls_chain_incomplete']));
    const [a, b] = [await local(['tls', `127.0.0.1:${tlsServer.port}`, '--expiry-days', '10', '-f', 'json']), await remote(['tls', `127.0.0.1:${tlsServer.port}`, '--expiry-days', '10', '-f', 'json'])];
    same(a, b);
    expect(JSON.parse(a.stdout).findings.map((finding: { id: string }) => finding.id)).not.toContain('tls_expires_soon');
  });

  it('refuses --ca in remote mode before asking anything', async () => {
    const result = await remote(['tls', `127.0.0.1:${tlsServer.port}`, '--ca', '/dev/null']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('remote mode cannot send --ca');
  });

  it('is a library lookup', async () => {
    const client = createNetintel({ retries: 0 });
    try {
      const [record] = await lookup<{ kind: string; certificate: { days_left: number } }>(client, 'tls', `127.0.0.1:${tlsServer.port}`);
      expect(record).toMatchObject({ kind: 'tls', certificate: { days_left: 15 } });
      const [failed] = await lookup<{ failure: { code: string } }>(client, 'tls', `127.0.0.1:${closed}`);
      expect(failed!.failure.code).toBe('unreachable');
      await expect(lookup(client, 'tls', 'not a host')).rejects.toMatchObject({ code: 'invalid_input' });
    } finally {
      await client.close();
    }
  });
});
