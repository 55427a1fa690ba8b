/**
 * `netintel smtp` in-process (main(argv, io) with memory streams) against
 * SMTP servers on 127.0.0.1 (test/support/smtp-servers.ts) and, for names
 * and PTR records, a DNS server on 127.0.0.1 (test/support/dns-server.ts);
 * one run of the built program as a child process.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SmtpResult } from '../../src/engine/smtp/smtp-result.js';
import { SMTP_SCHEMA } from '../../src/output/schemas/smtp-schema.js';
import { csvColumnsOf } from '../../src/output/record-schema.js';
import { parseCsv } from '../output/parse-csv.js';
import { REPO_ROOT, runCli, spawnCli, tempDir, type RunOptions, type RunResult } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import {
  closedPort,
  createCertificateAuthority,
  issueCertificate,
  startScriptedSmtpServer,
  startSmtpTestServer,
  type SmtpTestServer,
} from '../support/smtp-servers.js';

const HOST = 'mx.example.test';
const PASSWORD = 'S3cr3t-Pa55word';
const SECRET_FORMS = [PASSWORD, Buffer.from(PASSWORD).toString('base64'), Buffer.from(`\0alice\0${PASSWORD}`).toString('base64')];

const scratch = tempDir('netintel-smtp-');
let caFile: string;
let server: SmtpTestServer;
let relay: SmtpTestServer;
let dns: DnsTestServer;

beforeAll(async () => {
  const ca = createCertificateAuthority();
  caFile = join(scratch.path, 'ca.pem');
  writeFileSync(caFile, ca.cert);
  const certificate = issueCertificate({ commonName: HOST, issuer: ca });
  server = await startSmtpTestServer({ certificate, auth: { user: 'alice', pass: PASSWORD, methods: ['PLAIN', 'LOGIN', 'CRAM-MD5'] } });
  relay = await startSmtpTestServer({ certificate, openRelay: true });
  dns = await startDnsServer({
    records: [
      { name: HOST, type: 'A', data: '127.0.0.1' },
      { name: 'two.example.test', type: 'A', data: '127.0.0.1' },
      { name: 'two.example.test', type: 'A', data: '127.0.0.2' },
      { name: '1.0.0.127.in-addr.arpa', type: 'PTR', data: HOST },
    ],
    // DANE's TLSA lookup (port 25, where senders deliver, whatever port is probed) gets no answer.
    behaviours: { [`_25._tcp.${HOST}`]: 'servfail' },
  });
});

afterAll(async () => {
  await Promise.all([server.close(), relay.close(), dns.close()]);
  scratch.remove();
});

/** `smtp HOST --ip 127.0.0.1 -p PORT --tls-ca CA --no-ptr ...args` */
function smtp(port: number, args: string[] = [], options: RunOptions = {}): Promise<RunResult> {
  return runCli(['smtp', HOST, '--ip', '127.0.0.1', '-p', String(port), '--tls-ca', caFile, '--no-ptr', ...args], options);
}

function expectNoSecret(result: RunResult): void {
  for (const secret of SECRET_FORMS) {
    expect(result.stdout).not.toContain(secret);
    expect(result.stderr).not.toContain(secret);
  }
}

describe('netintel smtp', () => {
  it('prints the record as one JSON object and exits 0', async () => {
    const result = await smtp(server.port, ['-f', 'json']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const record = JSON.parse(result.stdout) as SmtpResult;
    expect(record).toMatchObject({
      kind: 'smtp',
      host: HOST,
      address: '127.0.0.1',
      port: server.port,
      connected: true,
      completed: true,
      transcript: null,
      tls: { established: true, certificate: { trusted: true, hostname_match: true } },
    });
    expect(Object.keys(record)).toEqual([
      'kind', 'host', 'port', 'address', 'tls_mode', 'ehlo_name', 'checked_at', 'connected', 'failure', 'stopped_at', 'completed',
      'banner', 'ehlo', 'extensions', 'tls', 'auth', 'envelope', 'reverse_dns', 'dane', 'timings', 'findings', 'transcript',
    ]);
  });

  it('shows the facts and findings, then the transcript in swaks notation', async () => {
    const result = await smtp(server.port, ['--transcript']);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^banner +220 /m);
    const [table, transcript] = result.stdout.split(`\ntranscript of ${HOST} (127.0.0.1 port ${server.port}):\n`);
    expect(table).not.toMatch(/^Transcript/m);
    expect(transcript!.split('\n')[0]).toMatch(/^\s+\d+\.\d ms === connected to 127\.0\.0\.1 port \d+/);
    expect(result.stdout).toMatch(/^TLS +TLSv1\.3, /m);
    expect(result.stdout).toMatch(/^\d+ checks passed\n {2}.*smtp_tls_ok/m);
    expect(result.stdout).toMatch(/\d+\.\d ms === connected to 127\.0\.0\.1 port \d+/);
    expect(result.stdout).toMatch(/\d+\.\d ms <-  220 mx\.example\.test ESMTP/);
    expect(result.stdout).toMatch(/\d+\.\d ms  -> STARTTLS/);
    expect(result.stdout).toMatch(/\d+\.\d ms === TLS started: TLSv1\.3/);
    expect(result.stdout).toMatch(/\d+\.\d ms  ~> EHLO \[127\.0\.0\.1\]/);
    expect(result.stdout).toMatch(/\d+\.\d ms <~  221 /);
  });

  it('writes CSV with the schema columns whatever the record holds, and well-formed XML', async () => {
    const csv = await smtp(server.port, ['-f', 'csv', '--quit-after', 'banner']);
    expect(csv.code).toBe(0);
    const rows = parseCsv(csv.stdout);
    expect(rows[0]).toEqual(['query', ...csvColumnsOf(SMTP_SCHEMA, SMTP_SCHEMA.columns), 'error.code', 'error.message']);
    expect(rows[0]).toContain('findings.max_severity');
    expect(rows).toHaveLength(2);
    const xml = await smtp(server.port, ['-f', 'xml', '--transcript']);
    expect(xml.code).toBe(0);
    expect(XMLValidator.validate(xml.stdout)).toBe(true);
    expect(xml.stdout).toContain('<netintel kind="smtp">');
  });

  it('tests AUTH with credentials from the environment', async () => {
    const result = await smtp(server.port, ['-f', 'json'], { env: { NETINTEL_SMTP_USER: 'alice', NETINTEL_SMTP_PASS: PASSWORD } });
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as SmtpResult).auth).toMatchObject({ tested: 'PLAIN', result: 'success' });
    expectNoSecret(result);
  });

  it.each(['json', 'ndjson', 'table', 'csv', 'xml'])('never prints the password or its encodings (-f %s, every mechanism, failures too)', async (format) => {
    for (const mechanism of ['PLAIN', 'LOGIN', 'CRAM-MD5']) {
      const ok = await smtp(server.port, ['-f', format, '--transcript', '--auth-user', 'alice', '--auth-pass', PASSWORD, '--auth-mechanism', mechanism, '-v']);
      expect(ok.code).toBe(0);
      expect(ok.stdout).toContain('[redacted]');
      expectNoSecret(ok);
    }
    const wrong = await smtp(server.port, ['-f', format, '--transcript', '--auth-user', 'mallory', '--auth-pass', PASSWORD]);
    expect(wrong.stdout).toMatch(/smtp_auth_failed/);
    expectNoSecret(wrong);
    const injected = await smtp(server.port, ['-f', format, '--auth-user', 'alice', '--auth-pass', `${PASSWORD}\r\nQUIT`]);
    expect(injected.code).toBe(2);
    expectNoSecret(injected);
  });

  it('exits 5 with the record when nothing listens, 4 when no greeting comes', async () => {
    const port = await closedPort();
    const refused = await smtp(port, ['-f', 'json']);
    expect(refused.code).toBe(5);
    expect(JSON.parse(refused.stdout)).toMatchObject({ connected: false, failure: { code: 'unreachable', stage: 'connect' } });
    expect(refused.stderr).toBe(`netintel: cannot connect to 127.0.0.1 port ${port}: connection refused (nothing listens on that port)\n`);
    // The table view says it once: its finding, with no failure fact and no stderr line beside it.
    const viewed = await smtp(port, ['-f', 'table']);
    expect(viewed.code).toBe(5);
    expect(viewed.stderr).toBe('');
    expect(viewed.stdout.split('\n')[0]).toMatch(new RegExp(` port ${port} SMTP: unreachable at connect$`));
    expect(viewed.stdout.replace(/\s+/g, ' ').split('connection refused').length - 1).toBe(1);

    const silent = await startScriptedSmtpServer(() => {});
    try {
      const quiet = await smtp(silent.port, ['-f', 'json', '--greeting-timeout', '300']);
      expect(quiet.code).toBe(4);
      expect(JSON.parse(quiet.stdout)).toMatchObject({ connected: true, failure: { code: 'timeout', stage: 'banner' } });
      expect(quiet.stderr).toMatch(/no greeting within 300 ms/);
    } finally {
      await silent.close();
    }
  });

  it('reports a 554 greeting as data: exit 0, or 10 with --fail-on error', async () => {
    const refusing = await startSmtpTestServer({ refuse: { message: 'no service for you' } });
    try {
      const plain = await smtp(refusing.port, ['-f', 'json']);
      expect(plain.code).toBe(0);
      expect(JSON.parse(plain.stdout)).toMatchObject({ banner: { code: 554 }, failure: null });
      expect((await smtp(refusing.port, ['--fail-on', 'error'])).code).toBe(10);
    } finally {
      await refusing.close();
    }
  });

  it('runs the relay test without DATA; --fail-on error exits 10 for an open relay', async () => {
    const open = await smtp(relay.port, ['--relay-test', '--fail-on', 'error', '-f', 'json']);
    expect(open.code).toBe(10);
    expect(JSON.parse(open.stdout)).toMatchObject({ envelope: { relay_test: true, relay_verdict: 'accepted' } });
    expect(relay.dataSeen()).toBe(false);
    const closed = await smtp(server.port, ['--relay-test', '--to', 'someone@example.org', '--fail-on', 'error', '-f', 'json']);
    expect(closed.code).toBe(0);
    expect(JSON.parse(closed.stdout)).toMatchObject({ envelope: { to: 'someone@example.org', relay_verdict: 'denied' } });
    expect(server.dataSeen()).toBe(false);
  });

  it('checks a recipient of your own with --to, without a relay verdict', async () => {
    const result = await smtp(server.port, ['--to', 'postmaster@example.test', '-f', 'json']);
    expect(result.code).toBe(0);
    const record = JSON.parse(result.stdout) as SmtpResult;
    expect(record.envelope).toMatchObject({ to: 'postmaster@example.test', relay_test: false, relay_verdict: null, rcpt: { code: 250 } });
    expect(record.findings.some((item) => item.id.startsWith('smtp_relay') || item.id === 'smtp_open_relay')).toBe(false);
  });

  it('probes every address of a name and exits 7 when only some answer', async () => {
    const result = await runCli(['smtp', 'two.example.test', '-p', String(server.port), '--resolver', dns.address, '--no-ptr', '--quit-after', 'banner', '-f', 'json']);
    expect(result.code).toBe(7);
    const records = JSON.parse(result.stdout) as SmtpResult[];
    expect(records.map((record) => [record.address, record.connected])).toEqual([
      ['127.0.0.1', true],
      ['127.0.0.2', false],
    ]);
    expect(records[0]!.timings.dns_ms).not.toBeNull();
  });

  it('exits 7, --fail-on or not, when the TLSA lookup of --dane gets no answer: DANE was not checked', async () => {
    const result = await smtp(server.port, ['--dane', '--resolver', dns.address, '--retries', '0', '-f', 'json']);
    expect(result.code).toBe(7);
    const record = JSON.parse(result.stdout) as SmtpResult;
    expect(record).toMatchObject({ connected: true, failure: null, dane: { verdict: 'failed', tlsa: { status: 'failed' } } });
    expect(record.findings.find((item) => item.id === 'dane_tlsa_lookup_failed')).toMatchObject({ severity: 'unknown' });
    expect((await smtp(server.port, ['--dane', '--resolver', dns.address, '--retries', '0', '--fail-on', 'warning', '-f', 'json'])).code).toBe(7);
  });

  it('checks the PTR of the address against the greeting and EHLO names', async () => {
    const result = await runCli(['smtp', HOST, '-p', String(server.port), '--resolver', dns.address, '--quit-after', 'ehlo', '-f', 'json']);
    expect(result.code).toBe(0);
    const record = JSON.parse(result.stdout) as SmtpResult;
    expect(record.reverse_dns).toEqual({ names: [HOST], forward_confirmed: true });
    expect(record.findings.find((item) => item.id === 'smtp_hostnames_consistent')?.severity).toBe('pass');
  });

  it('exits 3 when the host name does not exist', async () => {
    const result = await runCli(['smtp', 'missing.example.test', '--resolver', dns.address, '-f', 'json']);
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout)).toMatchObject({ error: { code: 'not_found' } });
  });

  const injections: Array<[string, string[]]> = [
    ['a CRLF in --ehlo', ['--ehlo', 'x.example\r\nMAIL FROM:<a@b.example>']],
    ['a LF in --from', ['--relay-test', '--from', 'a@b.example\nRCPT TO:<c@d.example>']],
    ['a NUL in --to', ['--to', 'a@b.example\0']],
    ['a CR in --auth-user', ['--auth-user', 'alice\rQUIT', '--auth-pass', 'x']],
    ['port 0', ['-p', '0']],
    ['port 70000', ['-p', '70000']],
    ['a port that is not a number', ['-p', '25abc']],
    ['a bad --ip', ['--ip', '127.0.0.1\r\n']],
  ];
  it.each(injections)('refuses %s as invalid_input (exit 2) without connecting', async (_label, args) => {
    const before = server.connections();
    const result = await runCli(['smtp', HOST, '--ip', '127.0.0.1', '-p', String(server.port), '--no-ptr', ...args, '-f', 'json']);
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ error: { code: 'invalid_input' } });
    expect(server.connections()).toBe(before);
  });

  it('refuses a host holding spaces or line breaks', async () => {
    for (const host of ['mx example.test', 'mx.example.test\r\nQUIT', 'mx.example.test\0']) {
      const result = await runCli(['smtp', host, '--no-ptr', '-f', 'json']);
      expect(result.code).toBe(2);
      expect(JSON.parse(result.stdout)).toMatchObject({ error: { code: 'invalid_input' } });
    }
  });

  it('refuses contradictory or incomplete flags as usage errors', async () => {
    expect((await smtp(server.port, ['--tls', '--tls-on-connect'])).code).toBe(2);
    const noUser = await smtp(server.port, ['--auth-pass', 'x', '-f', 'json']);
    expect(noUser.code).toBe(2);
    expect(JSON.parse(noUser.stdout)).toMatchObject({ error: { code: 'usage' } });
    expect((await smtp(server.port, ['--quit-after', 'data'])).code).toBe(2);
  });

  it('runs as a process from the built bundle', async () => {
    if (!existsSync(join(REPO_ROOT, 'dist', 'bundle', 'main.cjs'))) throw new Error('dist/ is missing: run `npm run build` first');
    const result = await spawnCli(['smtp', HOST, '--ip', '127.0.0.1', '-p', String(server.port), '--tls-ca', caFile, '--no-ptr', '--tls', '-f', 'ndjson'], {
      env: { NETINTEL_SMTP_USER: 'alice', NETINTEL_SMTP_PASS: PASSWORD },
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ tls_mode: 'required', auth: { result: 'success' }, tls: { established: true } });
  });
});
