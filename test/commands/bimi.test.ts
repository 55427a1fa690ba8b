/** `netintel bimi` in-process against a real DNS server and a real HTTPS logo host on 127.0.0.1. */
import { writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import stripAnsi from 'strip-ansi';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { createCertificateAuthority, issueCertificate } from '../support/smtp-servers.js';

const LOGO_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" version="1.2" baseProfile="tiny-ps" viewBox="0 0 10 10"><title>Brand</title><rect width="10" height="10"/></svg>';

let dns: DnsTestServer;
let web: https.Server;
let dnsFlags: string[];
let scratch: { path: string; remove: () => void };
let caFile: string;

beforeAll(async () => {
  const ca = createCertificateAuthority('bimi command CA');
  const host = issueCertificate({ commonName: 'logo.brand.test', issuer: ca });
  web = https.createServer({ key: host.key, cert: host.cert }, (request, response) => {
    if (request.url === '/logo.svg') response.writeHead(200, { 'content-type': 'image/svg+xml' }).end(LOGO_SVG);
    else if (request.url === '/script.svg') response.writeHead(200, { 'content-type': 'image/svg+xml' }).end(LOGO_SVG.replace('<rect', '<script>x()</script><rect'));
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', () => resolve()));
  const port = (web.address() as AddressInfo).port;
  dns = await startDnsServer({
    records: [
      { name: 'logo.brand.test', type: 'A', data: '127.0.0.1' },
      { name: '_dmarc.brand.test', type: 'TXT', data: 'v=DMARC1; p=reject' },
      { name: 'default._bimi.brand.test', type: 'TXT', data: `v=BIMI1; l=https://logo.brand.test:${port}/logo.svg` },
      { name: 'bad._bimi.brand.test', type: 'TXT', data: `v=BIMI1; l=https://logo.brand.test:${port}/script.svg` },
      { name: '_dmarc.monitor.test', type: 'TXT', data: 'v=DMARC1; p=none' },
      { name: 'default._bimi.monitor.test', type: 'TXT', data: 'v=BIMI1; l=; a=' },
      { name: 'default._bimi.dmarcdown.test', type: 'TXT', data: `v=BIMI1; l=https://logo.brand.test:${port}/logo.svg` },
      { name: '_dmarc.logodown.test', type: 'TXT', data: 'v=DMARC1; p=reject' },
      { name: 'default._bimi.logodown.test', type: 'TXT', data: `v=BIMI1; l=https://down.brand.test:${port}/logo.svg` },
    ],
    behaviours: { 'default._bimi.broken.test': 'servfail', '_dmarc.dmarcdown.test': 'servfail', 'down.brand.test': 'servfail' },
  });
  dnsFlags = ['--resolver', dns.address, '--timeout', '2000', '--retries', '0'];
  scratch = tempDir();
  caFile = join(scratch.path, 'ca.pem');
  writeFileSync(caFile, ca.cert);
});

afterAll(async () => {
  scratch.remove();
  await new Promise<void>((resolve) => web.close(() => resolve()));
  await dns.close();
});

describe('netintel bimi', () => {
  it('prints the check as JSON, trusting the logo host through --tls-ca', async () => {
    const run = await runCli(['bimi', 'brand.test', '--tls-ca', caFile, '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(0);
    const record = JSON.parse(run.stdout);
    expect(record).toMatchObject({ kind: 'bimi', domain: 'brand.test', selector: 'default', status: 'pass', dmarc: { met: true }, logo: { svg: { title: 'Brand' }, error: null } });
    expect(record.findings.map((item: { id: string }) => item.id)).toEqual(expect.arrayContaining(['bimi_record_found', 'bimi_svg_valid', 'bimi_dmarc_enforced']));
  });

  it('without the test CA the logo fetch is a TLS error finding, not a failed run', async () => {
    const run = await runCli(['bimi', 'brand.test', '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'fail', logo: { error: { code: 'tls' } } });
  });

  it('shows the verdict first and the findings by severity in the human view, within 80 columns', async () => {
    const run = await runCli(['bimi', 'brand.test', '--selector', 'bad', '--tls-ca', caFile, ...dnsFlags], { env: { COLUMNS: '80' } });
    expect(run.code).toBe(0);
    const lines = stripAnsi(run.stdout).split('\n');
    expect(lines[0]).toMatch(/^brand\.test BIMI: 1 error/);
    expect(lines.find((line) => line.startsWith('status'))).toMatch(/fail/);
    expect(lines.find((line) => line.startsWith('selector'))).toMatch(/bad$/);
    expect(stripAnsi(run.stdout)).toContain('bimi_svg_script');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
  });

  it('exits 10 under --fail-on error, and reads domains from stdin as a table', async () => {
    expect((await runCli(['bimi', 'monitor.test', '--fail-on', 'error', '-f', 'json', ...dnsFlags])).code).toBe(10);
    const run = await runCli(['bimi', ...dnsFlags], { stdin: 'monitor.test\nbrand.test\n', env: { COLUMNS: '100' } });
    expect(run.code).toBe(0);
    const text = stripAnsi(run.stdout);
    expect(text).toMatch(/monitor\.test\W+declined\W+not met/);
    expect(text).toMatch(/brand\.test\W+fail\W+met/);
  });

  it('exits 7 when the record was read but its DMARC prerequisites could not be looked up: status unknown, not fail', async () => {
    const run = await runCli(['bimi', 'dmarcdown.test', '--tls-ca', caFile, '--fail-on', 'error', '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(7);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'unknown', dmarc: { met: null, error: { code: 'upstream' } } });
  });

  it('exits 7 when the logo\'s host could not be looked up: status unknown, the logo not checked, within 80 columns', async () => {
    const run = await runCli(['bimi', 'logodown.test', '--tls-ca', caFile, '--fail-on', 'error', ...dnsFlags], { env: { COLUMNS: '80' } });
    expect(run.code).toBe(7);
    const lines = stripAnsi(run.stdout).split('\n');
    expect(lines[0]).toMatch(/^logodown\.test BIMI: 1 not checked/);
    expect(run.stdout).toMatch(/^status +unknown: a part could not be checked for want of DNS/m);
    expect(run.stdout).toMatch(/^DMARC +met \(reject at _dmarc\.logodown\.test\)$/m);
    expect(run.stdout).toContain('bimi_svg_unavailable');
    expect(lines.every((line) => line.length <= 80)).toBe(true);
  });

  it('exits 5 when the _bimi lookup fails, and 2 with one line for a bad selector or --tls-ca', async () => {
    const broken = await runCli(['bimi', 'broken.test', '-f', 'json', ...dnsFlags]);
    expect(broken.code).toBe(5);
    expect(JSON.parse(broken.stdout).error.message).toContain('the BIMI lookup of default._bimi.broken.test failed');
    const selector = await runCli(['bimi', 'brand.test', '--selector', 'no good', ...dnsFlags]);
    expect(selector.code).toBe(2);
    expect(selector.stderr).toMatch(/^netintel: "no good" is not a BIMI selector: give DNS labels .*\n$/);
    expect(selector.stderr.split('\n')).toHaveLength(2);
    const ca = await runCli(['bimi', 'brand.test', '--tls-ca', join(scratch.path, 'missing.pem'), ...dnsFlags]);
    expect(ca.code).toBe(2);
    expect(ca.stderr).toMatch(/^netintel: cannot read the --tls-ca file .*missing\.pem \(ENOENT: give --tls-ca a PEM file of CA certificates\)\n$/);
    // A CA file is read with a cap: /dev/zero is one line, not all of memory.
    for (const args of [['bimi', 'brand.test', '--tls-ca', '/dev/zero'], ['smtp', '127.0.0.1', '--tls-ca', '/dev/zero'], ['dns', 'example.test', '--resolver-ca', '/dev/zero', '--resolver', 'tls://127.0.0.1:9']]) {
      const zero = await runCli([...args, ...(args[0] === 'bimi' ? dnsFlags : [])]);
      expect(zero.code, args.join(' ')).toBe(2);
      expect(zero.stderr).toMatch(/^netintel: the --(tls|resolver)-ca file \/dev\/zero is larger than the limit of 4 MiB \(4194304 bytes\); give --(tls|resolver)-ca a PEM file of CA certificates\n$/);
    }
  });

  it('refuses --tls-ca in remote mode, in one line', async () => {
    const run = await runCli(['bimi', 'brand.test', '--tls-ca', '/etc/hostname', '--server', 'http://127.0.0.1:9']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe('netintel: remote mode cannot send --tls-ca: the server trusts its own CAs; run without --server\n');
  });
});
