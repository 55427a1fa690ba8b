/**
 * `netintel email` in-process against a real DNS server and a real SMTP
 * server (smtp-server, STARTTLS) on 127.0.0.1; the test zone's MX hosts
 * resolve to 127.0.0.1 and --port points the probes at the SMTP server.
 */
import { readFileSync } from 'node:fs';
import type net from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../support/cli.js';
import { serve } from '../support/served.js';
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
    expect(Object.keys(report)).toEqual(['kind', 'test', 'domain', 'domainUnicode', 'server', 'port', 'mx', 'spf', 'dmarc', 'mtaSts', 'tlsRpt', 'dkim', 'bimi', 'dnssec', 'smtp', 'dane', 'errors', 'findings', 'summary', 'checkedAt']);
    expect(report).toMatchObject({ kind: 'email', test: 'general', domain: 'mailhost.test', errors: [] });
    expect(report.smtp[0]).toMatchObject({ host: 'mx.mailhost.test', address: '127.0.0.1', probe: { connected: true, tls: { established: true } } });
    for (const check of ['mx', 'spf', 'dmarc', 'mtaSts', 'tlsRpt']) expect(report[check], check).not.toBeNull();
    expect(report.summary.error + report.summary.warning + report.summary.info + report.summary.pass).toBe(report.findings.length);
  });

  it('shows findings grouped by severity in the table view and exits 10 under --fail-on', async () => {
    const run = await runCli(['email', 'over.test', '--no-smtp', '--fail-on', 'error', ...dnsFlags]);
    expect(run.code).toBe(10);
    // The view's severity groups: "2 errors", "1 warning", "3 notes", "5 checks passed".
    const order = [/^\d+ errors?$/m, /^\d+ warnings?$/m, /^\d+ notes?$/m, /^\d+ checks? passed$/m].map((heading) => run.stdout.search(heading));
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
    expect((await runCli(['email', 'example.test', '--type', 'arc', ...dnsFlags])).code).toBe(2);
  });
});

/** Times and timestamps differ from run to run; everything else must not. */
function steady(text: string): string {
  return text.replace(/"(\w*Ms)": ?[\d.]+/g, '"$1":0').replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, 'T');
}

describe('netintel email --type smtp --server HOST', () => {
  it('tests the mail server a non-URL --server names, as --host does', async () => {
    const named = await runCli(['email', '--type', 'smtp', '--server', '127.0.0.1', '--port', smtpPort, '-f', 'json', ...dnsFlags]);
    expect(named.code).toBe(0);
    expect(JSON.parse(named.stdout)).toMatchObject({ test: 'smtp', server: '127.0.0.1', port: Number(smtpPort), smtp: [{ probe: { banner: { code: 220 } } }] });
    const host = await runCli(['email', '--type', 'smtp', '--host', '127.0.0.1', '--port', smtpPort, '-f', 'json', ...dnsFlags]);
    expect(steady(named.stdout)).toBe(steady(host.stdout));
  });

  it('asks the netintel server of NETINTEL_SERVER, which tests HOST, and prints what the local test prints', async () => {
    const db = tempDir('netintel-email-serve-');
    const served = await serve(['--db', `${db.path}/keys.db`, '--allow-private-targets', '--smtp-ports', smtpPort, ...dnsFlags]);
    try {
      const args = ['email', '--type', 'smtp', '--server', '127.0.0.1', '--port', smtpPort, '-f', 'json'];
      const remote = await runCli(args, { env: { NETINTEL_SERVER: served.url } });
      const local = await runCli([...args, ...dnsFlags]);
      expect(remote.stderr).toBe('');
      expect(remote.code).toBe(0);
      expect(steady(remote.stdout)).toBe(steady(local.stdout));
      // The server's log shows the request reached it.
      expect(served.stderr()).toContain('/api/email-tests');
      // An http(s) URL keeps its global meaning: the same remote test, the mail server given with --host.
      const url = await runCli(['email', '--type', 'smtp', '--host', '127.0.0.1', '--port', smtpPort, '-f', 'json', '--server', served.url]);
      expect(steady(url.stdout)).toBe(steady(local.stdout));
    } finally {
      served.child.kill('SIGTERM');
      await served.exit;
      db.remove();
    }
  });

  it('says what is wrong: --server HOST without --type smtp, with --host too, with a domain, or --api-key without a server URL', async () => {
    const general = await runCli(['email', 'example.test', '--server', 'mx.example.test', ...dnsFlags]);
    expect(general.code).toBe(2);
    expect(general.stderr).toContain('--server mx.example.test names a mail server (it is not an http:// or https:// URL), which goes with --type smtp');
    const both = await runCli(['email', '--type', 'smtp', '--server', 'mx.example.test', '--host', 'mx.example.test', ...dnsFlags]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('give one');
    const domain = await runCli(['email', 'example.test', '--type', 'smtp', '--server', 'mx.example.test', ...dnsFlags]);
    expect(domain.code).toBe(2);
    expect(domain.stderr).toContain('--type smtp --server tests one server: give no domain');
    const key = await runCli(['email', '--type', 'smtp', '--server', '127.0.0.1', '--api-key', 'k', ...dnsFlags]);
    expect(key.code).toBe(2);
    expect(key.stderr).toContain('--api-key needs --server URL (or NETINTEL_SERVER)');
    const badEnv = await runCli(['email', '--type', 'smtp', '--server', '127.0.0.1', ...dnsFlags], { env: { NETINTEL_SERVER: 'localhost:8080' } });
    expect(badEnv.code).toBe(2);
    expect(badEnv.stderr).toContain('NETINTEL_SERVER must be an http:// or https:// URL');
  });
});
