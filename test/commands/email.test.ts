/**
 * `netintel email` in-process against a real DNS server and a real SMTP
 * server (smtp-server, STARTTLS) on 127.0.0.1; the test zone's MX hosts
 * resolve to 127.0.0.1 and --port points the probes at the SMTP server.
 */
import { readFileSync } from 'node:fs';
import type net from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { MAIL_BEHAVIOURS, MAIL_ZONE } from '../engine/mail/mail-zone.js';

const fixture = (name: string) => readFileSync(new URL(`../engine/mail/fixtures/${name}`, import.meta.url));

let dns: DnsTestServer;
let smtp: SMTPServer;
let smtpPort: string;
let dnsFlags: string[];

beforeAll(async () => {
  dns = await startDnsServer({ records: MAIL_ZONE, behaviours: MAIL_BEHAVIOURS });
  dnsFlags = ['--resolver', dns.address, '--timeout', '1000', '--retries', '0'];
  smtp = new SMTPServer({ name: 'mx.mailhost.test', key: fixture('mta-sts.key'), cert: fixture('mta-sts.pem'), authOptional: true, disableReverseLookup: true, logger: false });
  smtp.on('error', () => {});
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  smtpPort = String((smtp.server.address() as net.AddressInfo).port);
});

afterAll(async () => {
  await new Promise<void>((resolve) => smtp.close(() => resolve()));
  await dns.close();
});

describe('netintel email', () => {
  it('prints the general report (form 2) with every check, the SMTP probe of each MX, and all findings', async () => {
    const run = await runCli(['email', 'mailhost.test', '--port', smtpPort, '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(Object.keys(report)).toEqual(['kind', 'test', 'domain', 'domainUnicode', 'server', 'port', 'mx', 'spf', 'dmarc', 'mtaSts', 'tlsRpt', 'smtp', 'errors', 'findings', 'summary', 'checkedAt']);
    expect(report).toMatchObject({ kind: 'email', test: 'general', domain: 'mailhost.test', errors: [] });
    expect(report.smtp[0]).toMatchObject({ host: 'mx.mailhost.test', address: '127.0.0.1', probe: { connected: true, tls: { established: true } } });
    for (const check of ['mx', 'spf', 'dmarc', 'mtaSts', 'tlsRpt']) expect(report[check], check).not.toBeNull();
    expect(report.summary.error + report.summary.warning + report.summary.info + report.summary.pass).toBe(report.findings.length);
  });

  it('shows findings grouped by severity in the table view and exits 10 under --fail-on', async () => {
    const run = await runCli(['email', 'over.test', '--no-smtp', '--fail-on', 'error', ...dnsFlags]);
    expect(run.code).toBe(10);
    const order = ['ERROR (', 'WARNING (', 'INFO (', 'PASS ('].map((heading) => run.stdout.indexOf(heading));
    expect(order.every((index) => index > -1)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(run.stdout).toContain('spf_lookup_limit');
  });

  it('runs one test with --type (form 1)', async () => {
    const spf = JSON.parse((await runCli(['email', 'good.test', '--type', 'spf', '-f', 'json', ...dnsFlags])).stdout);
    expect(spf).toMatchObject({ test: 'spf', mx: null, dmarc: null, smtp: null, spf: { kind: 'spf', status: 'valid' } });
    const mx = JSON.parse((await runCli(['email', 'nullmx.test', '--type', 'mx', '-f', 'json', ...dnsFlags])).stdout);
    expect(mx).toMatchObject({ test: 'mx', spf: null, mx: { status: 'null_mx' } });
    const smtp = await runCli(['email', '--type', 'smtp', '--host', '127.0.0.1', '--port', smtpPort, '-f', 'json', ...dnsFlags]);
    expect(smtp.code).toBe(0);
    expect(JSON.parse(smtp.stdout)).toMatchObject({ test: 'smtp', domain: null, server: '127.0.0.1', port: Number(smtpPort), smtp: [{ probe: { banner: { code: 220 } } }] });
  });

  it('lists a check that timed out under errors, exit 0, and never reads it as "no record"', async () => {
    const run = await runCli(['email', 'slowdmarc.test', '--no-smtp', '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.dmarc).toBeNull();
    expect(report.errors).toEqual([{ check: 'dmarc', code: 'timeout', message: expect.any(String) }]);
    expect(report.findings.map((item: { id: string }) => item.id)).toContain('dmarc_check_failed');
    expect(report.findings.map((item: { id: string }) => item.id)).not.toContain('dmarc_no_record');
  });

  it('checks many domains from stdin, one report per line, in input order', async () => {
    const run = await runCli(['email', '--no-smtp', '-f', 'ndjson', ...dnsFlags], { stdin: 'nullmx.test\nbad name\ngood.test\nover.test\n' });
    expect(run.code).toBe(7);
    const lines = run.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => line.domain ?? line.query)).toEqual(['nullmx.test', 'bad name', 'good.test', 'over.test']);
    expect(lines[1].error.code).toBe('invalid_input');
  });

  it('refuses --host without --type smtp, or with a domain', async () => {
    expect((await runCli(['email', '--host', 'mx.example.test', ...dnsFlags])).code).toBe(2);
    expect((await runCli(['email', 'example.test', '--type', 'smtp', '--host', 'mx.example.test', ...dnsFlags])).code).toBe(2);
    expect((await runCli(['email', 'example.test', '--type', 'dkim', ...dnsFlags])).code).toBe(2);
  });
});
