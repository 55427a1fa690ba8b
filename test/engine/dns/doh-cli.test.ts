import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCli, tempDir, writeConfigFile } from '../../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../../support/dns-server.js';
import { createTestPki, startDohServer, startDotServer, type EncryptedDnsServer, type TestPki } from './doh-servers.js';
import { EXAMPLE_ZONE } from './example-zone.js';

// The built program (npm run build) as a child process, against DoH and DoT servers on 127.0.0.1.
let pki: TestPki;
let upstream: DnsTestServer;
let dohServer: EncryptedDnsServer;
let dotServer: EncryptedDnsServer;
let dir: ReturnType<typeof tempDir>;
let caFile: string;

beforeAll(async () => {
  pki = createTestPki();
  upstream = await startDnsServer({ records: EXAMPLE_ZONE });
  dohServer = await startDohServer({ upstream, certificate: pki.server, http2: true });
  dotServer = await startDotServer({ upstream, certificate: pki.server });
  dir = tempDir('netintel-doh-');
  caFile = join(dir.path, 'ca.pem');
  writeFileSync(caFile, pki.ca.cert);
});

afterAll(async () => {
  await Promise.all([upstream.close(), dohServer.close(), dotServer.close()]);
  dir.remove();
});

describe('netintel dns over DoH and DoT', () => {
  it('answers over HTTPS with the CA from --resolver-ca', async () => {
    const run = await spawnCli(['dns', 'example.test', '--type', 'MX', '-f', 'json', '--resolver', `https://127.0.0.1:${dohServer.port}/dns-query`, '--resolver-ca', caFile]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const record = JSON.parse(run.stdout) as { transport: string; resolver: string; answers: Array<{ data: unknown }> };
    expect(record.transport).toBe('https');
    expect(record.resolver).toBe(`https://127.0.0.1:${dohServer.port}/dns-query`);
    expect(record.answers.map((answer) => answer.data)).toEqual([
      { preference: 10, exchange: 'mx1.example.test' },
      { preference: 20, exchange: 'mx2.example.test' },
    ]);
  });

  it('answers over TLS with the CA from the config file', async () => {
    const xdg = writeConfigFile(dir.path, { 'resolver-ca': caFile, resolver: [`tls://127.0.0.1:${dotServer.port}`] });
    const run = await spawnCli(['dns', 'example.test', '-f', 'csv', '--fields', 'type,status,transport'], { env: { XDG_CONFIG_HOME: xdg } });
    expect(run.stderr).toBe('');
    expect(run.stdout.split('\n')[1]).toBe('example.test,example.test,A,answer,tls,,');
  });

  it('refuses an untrusted certificate: one line, exit 5', async () => {
    const run = await spawnCli(['dns', 'example.test', '--resolver', `tls://127.0.0.1:${dotServer.port}`]);
    expect(run.code).toBe(5);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/^netintel: TLS with DNS server tls:\/\/127\.0\.0\.1:\d+ failed for example\.test A: the certificate is not signed by a trusted CA/);
  });

  it.each([
    [['--resolver', 'http://127.0.0.1/dns-query'], {}, /^netintel: invalid resolver "http:\/\/127\.0\.0\.1\/dns-query": the scheme "http:\/\/" is not one netintel speaks/],
    [['--resolver', 'tls://127.0.0.1'], { NETINTEL_RESOLVER_CA: '/nonexistent/ca.pem' }, /^netintel: cannot read the --resolver-ca file \/nonexistent\/ca\.pem \(ENOENT: give --resolver-ca a PEM file of CA certificates\)/],
  ])('refuses bad settings %j with one line and exit 2', async (flags, env, message) => {
    const run = await spawnCli(['dns', 'example.test', ...flags], { env });
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(message);
  });
});
