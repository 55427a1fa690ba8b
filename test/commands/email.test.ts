/**
 * `netintel email` in-process against a real DNS server and a real SMTP
 * server (smtp-server, STARTTLS) on 127.0.0.1; the test zone's MX hosts
 * resolve to 127.0.0.1 and --port points the probes at the SMTP server.
 */
import { readFileSync } from 'node:fs';
import type net from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli as runAnyCli, tempDir } from '../support/cli.js';
import { TEST_ROOT_ANCHOR_FILE } from '../support/signed-root.js';
import { serve } from '../support/served.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { parseCsv } from '../output/parse-csv.js';
import { render } from '../output/render.js';
import { EMAIL_SCHEMA } from '../../src/output/schemas/email-schema.js';
import { createSocket } from 'node:dgram';
import { MAIL_BEHAVIOURS, MAIL_ZONE } from '../engine/mail/mail-zone.js';

const fixture = (name: string) => readFileSync(new URL(`../engine/mail/fixtures/${name}`, import.meta.url));

/** The CLI with DNSSEC validated from the test root the DNS peers sign (signed-root.ts): the zone's names are unsigned. */
const runCli: typeof runAnyCli = (argv, options = {}) => runAnyCli(argv, { ...options, env: { NETINTEL_TRUST_ANCHOR: TEST_ROOT_ANCHOR_FILE, ...options.env } });

let dns: DnsTestServer;
let smtp: SMTPServer;
let smtpPort: string;
let dnsFlags: string[];

beforeAll(async () => {
  dns = await startDnsServer({ records: MAIL_ZONE, behaviours: MAIL_BEHAVIOURS, signedRoot: true });
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
    expect(Object.keys(report)).toEqual(['kind', 'test', 'domain', 'domain_unicode', 'server', 'port', 'mx', 'spf', 'dmarc', 'mta_sts', 'tls_rpt', 'dkim', 'bimi', 'dnssec', 'smtp', 'dane', 'errors', 'checked', 'failure', 'findings', 'summary', 'checked_at']);
    expect(report).toMatchObject({ kind: 'email', test: 'general', domain: 'mailhost.test', errors: [], checked: 'all', failure: null });
    expect(report.smtp[0]).toMatchObject({ host: 'mx.mailhost.test', address: '127.0.0.1', probe: { connected: true, tls: { established: true } } });
    for (const check of ['mx', 'spf', 'dmarc', 'mta_sts', 'tls_rpt']) expect(report[check], check).not.toBeNull();
    expect(report.summary.error + report.summary.warning + report.summary.unknown + report.summary.info + report.summary.pass).toBe(report.findings.length);
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

  it('shows a DMARC policy that hangs on a failed lookup as unknown, never as "no policy", and exits 7', async () => {
    // ghostfail.rfc9989.test answers SERVFAIL, so whether np (it does not exist) or sp (it does) applies is unknown.
    const run = await runCli(['email', 'ghostfail.rfc9989.test', '--no-smtp', ...dnsFlags]);
    expect(run.code).toBe(7);
    expect(run.stdout).toMatch(/DMARC +policy unknown \(from rfc9989\.test\)/);
    expect(run.stdout).toContain('dmarc_existence_unknown');
    const known = await runCli(['email', 'real.rfc9989.test', '--no-smtp', ...dnsFlags]);
    expect(known.stdout).toMatch(/DMARC +policy none \(from rfc9989\.test\)/);
  });

  it('exits 7 when a part of a check could not run: the MTA-STS policy host that DNS did not answer for', async () => {
    const run = await runCli(['email', 'stsdown.test', '--no-smtp', '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(7);
    const report = JSON.parse(run.stdout);
    expect(report.errors).toEqual([]);
    expect(report).toMatchObject({ checked: 'some', failure: { code: 'upstream', message: expect.stringContaining('mta-sts.stsdown.test') } });
    expect(report.findings.filter((item: { severity: string }) => item.severity === 'unknown').map((item: { id: string }) => item.id)).toEqual(['mta_sts_policy_unavailable']);
    const table = await runCli(['email', 'stsdown.test', '--no-smtp', ...dnsFlags], { env: { COLUMNS: '80' } });
    expect(table.code).toBe(7);
    expect(table.stdout.split('\n\n')[0]!.replace(/\s+/g, ' ')).toMatch(/; could not check MTA-STS \(in part\): DNS refused or gave no usable answer$/);
    expect(table.stdout).toMatch(/^MTA-STS +policy not fetched: upstream$/m);
  });

  it('names the DANE part that could not run, and why: an MX host whose TLSA lookup got SERVFAIL; a bogus answer is said as bogus', async () => {
    const tlsaDown = await startDnsServer({ records: MAIL_ZONE, behaviours: { ...MAIL_BEHAVIOURS, '_25._tcp.mx.mailhost.test': 'servfail' }, signedRoot: true });
    try {
      const flags = ['--resolver', tlsaDown.address, '--timeout', '1000', '--retries', '0'];
      const json = await runCli(['email', 'mailhost.test', '--no-smtp', '-f', 'json', ...flags]);
      expect(json.code).toBe(7);
      const report = JSON.parse(json.stdout);
      expect(report.dane[0].tlsa.error).toEqual({ code: 'upstream', message: expect.stringContaining('SERVFAIL for _25._tcp.mx.mailhost.test TLSA') });
      expect(report).toMatchObject({ checked: 'some', failure: { code: 'upstream', message: report.dane[0].tlsa.error.message } });
      const table = await runCli(['email', 'mailhost.test', '--no-smtp', ...flags], { env: { COLUMNS: '80' } });
      expect(table.code).toBe(7);
      expect(table.stdout.split('\n\n')[0]!.replace(/\s+/g, ' ')).toMatch(/; could not check DANE \(in part\): DNS refused or gave no usable answer$/);
      expect(table.stdout).toMatch(/^DANE +mx\.mailhost\.test: TLSA lookup failed$/m);
      expect(table.stdout).toMatch(/^failure +DNS server \S+ answered SERVFAIL for$/m);
      // The same verdict (failed) from a bogus answer is not a lookup that failed.
      const bogus = { ...report, dane: [{ ...report.dane[0], tlsa: { ...report.dane[0].tlsa, status: 'answer', error: null }, dnssec: { status: 'bogus', reason: 'RRSIG expired', error: null } }] };
      const view = await render(EMAIL_SCHEMA, 'table', [{ ok: true, query: 'mailhost.test', value: bogus }], { single: true, width: 80 });
      expect(view).toMatch(/^DANE +mx\.mailhost\.test: TLSA records fail DNSSEC validation \(bogus\)$/m);
    } finally {
      await tlsaDown.close();
    }
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

  it('lists a check that timed out under errors as unknown, never as "no record", and exits 7: the others ran', async () => {
    const run = await runCli(['email', 'slowdmarc.test', '--no-smtp', '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(7);
    const report = JSON.parse(run.stdout);
    expect(report.dmarc).toBeNull();
    expect(report.errors).toEqual([{ check: 'dmarc', code: 'timeout', message: expect.any(String) }]);
    // The DMARC check, and BIMI's DMARC prerequisites, which ask the same name: both unknown, neither an error.
    expect(report).toMatchObject({ checked: 'some', failure: { code: 'timeout', reason: 'DNS did not answer' }, summary: { unknown: 2 } });
    expect(report.findings.find((item: { id: string }) => item.id === 'dmarc_check_failed')).toMatchObject({ severity: 'unknown' });
    expect(report.findings.find((item: { id: string }) => item.id === 'bimi_dmarc_unavailable')).toMatchObject({ severity: 'unknown' });
    expect(report.findings.map((item: { id: string }) => item.id)).not.toContain('dmarc_no_record');
    const table = await runCli(['email', 'slowdmarc.test', '--no-smtp', '--fail-on', 'warning', ...dnsFlags]);
    // Partial comes before --fail-on's 10: the report is not whole.
    expect(table.code).toBe(7);
    expect(table.stdout.split('\n\n')[0]!.replace(/\s+/g, ' ')).toMatch(/^slowdmarc\.test mail: .*; could not check DMARC, BIMI \(in part\): DNS did not answer$/);
    expect(table.stdout).toMatch(/^not checked +DMARC: DNS did not answer \(timeout\)$/m);
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
  return text.replace(/"(\w*(?:Ms|_ms))": ?[\d.]+/g, '"$1":0').replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, 'T');
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
      // The server validates from its own anchor: a NETINTEL_TRUST_ANCHOR of this machine is not read, let alone sent.
      const anchored = await runCli(args, { env: { NETINTEL_SERVER: served.url, NETINTEL_TRUST_ANCHOR: '/nonexistent/anchor.key' } });
      expect(anchored.code, anchored.stderr).toBe(0);
      expect(steady(anchored.stdout)).toBe(steady(local.stdout));
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

/** A UDP port on 127.0.0.1 that takes queries and never answers (no ICMP refusal either): a resolver that is down. Counts what it receives. */
async function silentResolver(): Promise<{ address: string; received: Array<{ name: string; type: string }>; close: () => Promise<void> }> {
  const { default: dnsPacket } = await import('dns-packet');
  const socket = createSocket('udp4');
  const received: Array<{ name: string; type: string }> = [];
  socket.on('message', (message) => {
    const question = dnsPacket.decode(message).questions?.[0];
    if (question) received.push({ name: question.name, type: question.type });
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { address: `127.0.0.1:${socket.address().port}`, received, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
}

describe('netintel email when DNS does not answer', () => {
  let dead: Awaited<ReturnType<typeof silentResolver>>;
  beforeAll(async () => {
    dead = await silentResolver();
  });
  afterAll(async () => {
    await dead.close();
  });
  const deadFlags = () => ['--resolver', dead.address, '--timeout', '300', '--retries', '0'];

  it('says it could not check, lists every check once as not checked, tells what to do once, and exits 4, --fail-on or not', async () => {
    const run = await runCli(['email', 'example.com', ...deadFlags()]);
    expect(run.code).toBe(4);
    const [head, facts, ...rest] = run.stdout.split('\n\n');
    expect(head).toBe('example.com mail: could not check: DNS did not answer');
    expect(facts!.replace(/\s+/g, ' ')).toMatch(/^not checked MX, SPF, DMARC, MTA-STS, TLS-RPT, DKIM, BIMI, DNSSEC: DNS did not answer \(timeout\) SMTP, DANE: the MX hosts could not be looked up failure /);
    // The resolver's silence is said once in the record, not once per check (no findings block: the facts above are all there is).
    expect(run.stdout.match(/no answer from DNS server/g)).toHaveLength(1);
    expect(rest).toEqual([]);
    expect(run.stderr.match(/did not answer within 300 ms/g)).toHaveLength(1);
    expect(run.stderr).toMatch(/--resolver.*--timeout/);
    // The view says why the report could not be checked: stderr does not repeat it.
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect((await runCli(['email', 'example.com', '--fail-on', 'error', ...deadFlags()])).code).toBe(4);
  });

  it('carries it in json and csv: checked none, the failure, every finding unknown', async () => {
    const json = await runCli(['email', 'example.com', '--no-smtp', '-f', 'json', ...deadFlags()]);
    expect(json.code).toBe(4);
    const report = JSON.parse(json.stdout);
    expect(report).toMatchObject({ checked: 'none', failure: { code: 'timeout', reason: 'DNS did not answer', message: expect.stringContaining(dead.address) } });
    // Without the view, stderr says it too, after the resolver's hint: a cron job's mail is never empty.
    expect(json.stderr.trim().split('\n')).toEqual([expect.stringContaining('did not answer within 300 ms'), `netintel: ${report.failure.message}`]);
    expect(report.findings.length).toBeGreaterThan(0);
    expect(report.findings.every((item: { severity: string }) => item.severity === 'unknown')).toBe(true);
    expect(report.summary).toMatchObject({ error: 0, warning: 0, unknown: report.findings.length });
    const csv = await runCli(['email', 'example.com', '--no-smtp', '-f', 'csv', ...deadFlags()]);
    const [header, row] = parseCsv(csv.stdout);
    const cell = (column: string) => row![header!.indexOf(column)];
    expect([cell('checked'), cell('failure.code'), cell('failure.reason'), cell('findings.max_severity')]).toEqual(['none', 'timeout', 'DNS did not answer', 'unknown']);
  });

  it('exits 4 over many domains when none could be checked, 7 when some could', async () => {
    const none = await runCli(['email', '--no-smtp', '-f', 'ndjson', ...deadFlags()], { stdin: 'a.example\nb.example\n' });
    expect(none.code).toBe(4);
    expect(none.stderr).toMatch(/2 rows, 0 ok, 2 failed \(timeout: 2\)/);
    const mixed = await runCli(['email', '--no-smtp', '-f', 'ndjson', ...dnsFlags], { stdin: 'good.test\nslowdmarc.test\n' });
    expect(mixed.code).toBe(7);
    expect(mixed.stderr).toMatch(/2 rows, 1 ok, 1 checked in part, 0 failed/);
  });

  it('asks a dead first resolver nothing once it has let a question time out: the DNSSEC chain goes to the one that answers', async () => {
    const before = dead.received.length;
    const run = await runCli(['email', 'good.test', '--no-smtp', '-f', 'json', '--resolver', `${dead.address},${dns.address}`, '--timeout', '300', '--retries', '0']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ checked: 'all', errors: [], mx: { status: 'mx' } });
    // The DNSSEC validations start once the MX hosts are known, after the first timeout: not one of their questions went to the dead resolver.
    expect(dns.queries.some((query) => query.type === 'DNSKEY')).toBe(true);
    expect(dead.received.slice(before).filter((query) => query.type === 'DNSKEY' || query.type === 'DS')).toEqual([]);
    expect(run.stderr.match(/did not answer within 300 ms/g)).toHaveLength(1);
  });

  it('leaves DNSSEC and DANE out with --no-dnssec: no DNSKEY or DS question is asked', async () => {
    const before = dns.queries.length;
    const run = await runCli(['email', 'good.test', '--no-smtp', '--no-dnssec', '-f', 'json', ...dnsFlags]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report).toMatchObject({ dnssec: null, dane: null, checked: 'all', errors: [] });
    expect(report.findings.some((item: { id: string }) => item.id.startsWith('dnssec_') || item.id.startsWith('dane_'))).toBe(false);
    expect(dns.queries.slice(before).filter((query) => query.type === 'DNSKEY' || query.type === 'DS' || query.type === 'TLSA')).toEqual([]);
    for (const contradiction of [['--type', 'dnssec'], ['--type', 'dane'], ['--trust-anchor', '/dev/null']]) {
      const refused = await runCli(['email', 'good.test', '--no-dnssec', ...contradiction, ...dnsFlags]);
      expect(refused.code, contradiction.join(' ')).toBe(2);
      expect(refused.stderr).toMatch(/--no-dnssec/);
    }
  });

  it('draws a table of several reports with long findings cells at once (the fuzz case that was killed at its time limit)', async () => {
    const run = await runCli(['email', '-t', '800', '--retries', '0', '--resolver', dns.address, '--no-smtp', '-t', ' 50', '--fields', 'findings', '', 'bücher.example', 'over.test', 'good.test']);
    expect(run.code).toBe(7);
    expect(run.stderr).toMatch(/^netintel: invalid domain name "": the name is empty$/m);
    // The message is on stderr; the table names the failure in its place without repeating it.
    expect(run.stdout).toMatch(/^│ : failed \(invalid_input\) +│$/m);
    expect(run.stdout).not.toContain('the name is empty');
    expect(run.stdout).toContain('bücher.example');
  });
});
