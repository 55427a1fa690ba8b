/**
 * `netintel headers` on a message that real Postfix instances relayed
 * (Debian package postfix): a DKIM-signed message is submitted to Postfix
 * A, which relays it to Postfix B over STARTTLS, which relays it to an
 * smtp-server sink on 127.0.0.1 that keeps it, adds the Return-Path and an
 * Authentication-Results field as a final receiver does, and seals it with
 * ARC (mailauth's sealer). The Received fields are Postfix's own; a DNS
 * peer on 127.0.0.1 serves the sender's DKIM key, SPF and DMARC records and
 * the sealer's key. Each Postfix runs from a temporary directory of its
 * own, as test/integration/smtp-postfix.test.ts runs one.
 *
 * Needs root (Postfix's master starts as root) and the postfix binaries;
 * skipped, with a warning, otherwise.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sealMessage } from 'mailauth/lib/arc/index.js';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../src/engine/context.js';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { analyzeHeaders, type HeadersReport } from '../../src/engine/mail/headers/analyze-headers.js';
import { REPO_ROOT, spawnCli } from '../support/cli.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';
import { findExecutable } from '../support/peers.js';
import { MASTER_CF, waitForPort } from '../support/postfix.js';
import { closedPort, createCertificateAuthority, issueCertificate } from '../support/smtp-servers.js';
import { dkimTxt, mailauthSign, rsaKey } from '../engine/mail/dkim-zone.js';

const run = promisify(execFile);

const POSTFIX = findExecutable('postfix');
const DAEMON_DIRECTORY = '/usr/lib/postfix/sbin';
const skipReason = !POSTFIX
  ? 'postfix not found on PATH or in /usr/sbin (Debian package postfix)'
  : !existsSync(join(DAEMON_DIRECTORY, 'smtpd'))
    ? `${DAEMON_DIRECTORY}/smtpd is missing (Debian package postfix)`
    : userInfo().uid !== 0
      ? 'Postfix has to be started as root'
      : null;
if (skipReason) console.warn(`SKIPPING test/integration/headers-postfix.test.ts: ${skipReason}`);

const key = rsaKey(2048);

interface Instance {
  name: string;
  dir: string;
  port: number;
}

/** A Postfix relaying everything from loopback to 127.0.0.1:`next`, offering STARTTLS, saying TLS in its Received fields. */
async function startRelay(name: string, next: number, ca: ReturnType<typeof createCertificateAuthority>): Promise<Instance> {
  const dir = await mkdtemp(join(tmpdir(), 'netintel-headers-postfix-'));
  await chmod(dir, 0o755);
  const port = await closedPort();
  const leaf = issueCertificate({ commonName: name, issuer: ca });
  await writeFile(join(dir, 'cert.pem'), leaf.cert);
  await writeFile(join(dir, 'key.pem'), leaf.key, { mode: 0o600 });
  await mkdir(join(dir, 'spool'));
  await mkdir(join(dir, 'data'));
  const { stdout: uid } = await run('id', ['-u', 'postfix']);
  await chown(join(dir, 'data'), Number(uid.trim()), 0);
  const mainCf = [
    'compatibility_level = 3.6',
    `queue_directory = ${dir}/spool`,
    `data_directory = ${dir}/data`,
    'meta_directory = /etc/postfix',
    'command_directory = /usr/sbin',
    `daemon_directory = ${DAEMON_DIRECTORY}`,
    'shlib_directory = no',
    'mail_owner = postfix',
    'setgid_group = postdrop',
    'inet_interfaces = 127.0.0.1',
    'inet_protocols = ipv4',
    `myhostname = ${name}`,
    'mydomain = relay.test',
    'mydestination =',
    'mynetworks = 127.0.0.0/8',
    'smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination',
    `relayhost = [127.0.0.1]:${next}`,
    'alias_maps =',
    'alias_database =',
    `smtpd_tls_cert_file = ${dir}/cert.pem`,
    `smtpd_tls_key_file = ${dir}/key.pem`,
    'smtpd_tls_security_level = may',
    'smtpd_tls_received_header = yes',
    'smtp_tls_security_level = may',
    `maillog_file = ${dir}/maillog`,
    `maillog_file_prefixes = ${dir}`,
    'biff = no',
  ].join('\n');
  await writeFile(join(dir, 'main.cf'), `${mainCf}\n`);
  await writeFile(join(dir, 'master.cf'), `127.0.0.1:${port} inet n - n - - smtpd\n${MASTER_CF.trimStart()}`);
  await run(POSTFIX!, ['-c', dir, 'start']).catch(async (error: Error) => {
    throw new Error(`postfix -c ${dir} start failed: ${error.message}\n${await readFile(join(dir, 'maillog'), 'utf8').catch(() => '')}`);
  });
  await waitForPort(port, 10_000);
  return { name, dir, port };
}

async function stopRelay(instance: Instance | undefined): Promise<void> {
  if (!instance) return;
  await run(POSTFIX!, ['-c', instance.dir, 'stop']).catch(() => run(POSTFIX!, ['-c', instance.dir, 'abort']).catch(() => {}));
  await rm(instance.dir, { recursive: true, force: true });
}

/** The final receiver: keeps each message with its envelope sender. */
async function startSink(): Promise<{ port: number; received: Array<{ from: string; message: Buffer }>; close(): Promise<void> }> {
  const received: Array<{ from: string; message: Buffer }> = [];
  const server = new SMTPServer({
    name: 'mx.sink.test',
    disableReverseLookup: true,
    hideSTARTTLS: true,
    authOptional: true,
    disabledCommands: ['AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', message: Buffer.concat(chunks) });
        callback();
      });
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as { port: number }).port;
  return { port, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe.skipIf(skipReason !== null)('a message relayed by two real Postfix instances', () => {
  let dns: DnsTestServer;
  let ctx: EngineContext;
  let sink: Awaited<ReturnType<typeof startSink>>;
  let relayA: Instance | undefined;
  let relayB: Instance | undefined;
  /** The message as the sink keeps it: Return-Path, Authentication-Results and the ARC set added. */
  let delivered = '';

  beforeAll(async () => {
    dns = await startDnsServer({
      records: [
        dkimTxt('s1._domainkey.sender.test', `v=DKIM1; k=rsa; p=${key.p}`),
        { name: 'sender.test', type: 'TXT', data: 'v=spf1 ip4:192.0.2.0/24 -all' },
        { name: '_dmarc.sender.test', type: 'TXT', data: 'v=DMARC1; p=reject' },
        dkimTxt('arc._domainkey.sink.test', `v=DKIM1; k=rsa; p=${key.p}`),
      ],
    });
    ctx = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 2000, dnsRetries: 0 });
    sink = await startSink();
    const ca = createCertificateAuthority('netintel headers Postfix test CA');
    relayB = await startRelay('b.relay.test', sink.port, ca);
    relayA = await startRelay('a.relay.test', relayB.port, ca);

    const content = [
      'From: Alice <alice@sender.test>',
      'To: Bob <bob@sink.test>',
      'Subject: relayed twice',
      `Date: ${new Date().toUTCString().replace('GMT', '+0000')}`,
      `Message-ID: <${Date.now()}@sender.test>`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'The figures are attached.',
      '',
    ].join('\r\n');
    const signed = await mailauthSign(content, { canonicalization: 'relaxed/relaxed', signatureData: [{ signingDomain: 'sender.test', selector: 's1', privateKey: key.pem }] });
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: relayA.port, secure: false, name: 'client.sender.test', tls: { rejectUnauthorized: false } });
    await transport.sendMail({ envelope: { from: 'bounce@sender.test', to: ['bob@sink.test'] }, raw: Buffer.from(signed.signatures + content) });
    transport.close();

    const deadline = Date.now() + 30_000;
    while (sink.received.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    if (sink.received.length === 0) {
      const logs = await Promise.all([relayA, relayB].map((each) => readFile(join(each!.dir, 'maillog'), 'utf8').catch(() => '')));
      throw new Error(`the sink received nothing within 30 s:\n${logs.join('\n')}`);
    }
    const { from, message } = sink.received[0]!;
    const results = `mx.sink.test; dkim=pass header.d=sender.test header.s=s1; dmarc=pass header.from=sender.test`;
    const arrived = `Return-Path: <${from}>\r\nAuthentication-Results: ${results}\r\n${message.toString('latin1')}`;
    const arc = await sealMessage(Buffer.from(arrived, 'latin1'), { signingDomain: 'sink.test', selector: 'arc', privateKey: key.pem, ...({ authResults: results, cv: 'none' } as object) });
    delivered = arc.toString('latin1') + arrived;
  }, 90_000);

  afterAll(async () => {
    await stopRelay(relayA);
    await stopRelay(relayB);
    await sink?.close();
    await ctx?.close();
    await dns?.close();
  });

  const hopsOf = (report: HeadersReport) => report.hops.map((hop) => ({ by: hop.by_host, parsed: hop.parsed, ip: hop.from_ip, scope: hop.address?.scope, special: hop.address?.special_purpose }));

  it('reads both Postfix hops oldest first, the TLS between them, and delays without skew', async () => {
    const report = await analyzeHeaders(ctx, Buffer.from(delivered, 'latin1'), 'delivered');
    expect(hopsOf(report)).toEqual([
      { by: 'a.relay.test', parsed: true, ip: '127.0.0.1', scope: 'special', special: 'loopback (RFC 1122)' },
      { by: 'b.relay.test', parsed: true, ip: '127.0.0.1', scope: 'special', special: 'loopback (RFC 1122)' },
    ]);
    const [first, second] = report.hops;
    // The client (nodemailer) and Postfix A both use STARTTLS when offered; Postfix writes the TLS facts with smtpd_tls_received_header.
    expect(first).toMatchObject({ from_helo: 'client.sender.test', from_rdns: 'localhost', protocol: 'ESMTPS', for: 'bob@sink.test' });
    expect(second).toMatchObject({ from_helo: 'a.relay.test', from_rdns: 'localhost', protocol: 'ESMTPS', for: 'bob@sink.test' });
    for (const hop of report.hops) {
      expect(hop.tls_version).toMatch(/^TLSv1\.[23]$/);
      expect(hop.tls_cipher).toMatch(/^[A-Z0-9_-]+$/);
      expect(hop.id).toMatch(/^[0-9A-Za-z]+$/);
      expect(hop.clock_skew_seconds).toBeNull();
      expect(hop.delay_seconds).toBeGreaterThanOrEqual(0);
    }
    expect(report.total_transit_seconds).toBeLessThan(60);
    // Postfix's queue ids are the ids its log gives the message.
    const logA = await readFile(join(relayA!.dir, 'maillog'), 'utf8');
    expect(logA).toContain(`${first!.id}:`);
  });

  it('recomputes DKIM, DMARC and ARC as passing, SPF as not checked (every hop is loopback), agreeing with the stated results', async () => {
    const report = await analyzeHeaders(ctx, Buffer.from(delivered, 'latin1'), 'delivered');
    expect(report.authentication).toMatchObject({
      spf: { result: 'not_checked', hop: null },
      dkim: { result: 'pass', signatures: [{ domain: 'sender.test', result: 'pass', aligned: true }] },
      dmarc: { result: 'pass', policy: 'reject', dkim_aligned: true },
      arc: { result: 'pass', instances: 1, seals: [{ instance: 1, domain: 'sink.test', cv: 'none' }] },
    });
    expect(report.findings.filter((item) => item.severity === 'error' || item.severity === 'warning' || item.severity === 'unknown')).toEqual([]);
  });

  it('finds a body changed after delivery: DKIM and ARC fail, DMARC fails under p=reject, the stated results disagree', async () => {
    const tampered = delivered.replace('attached.', 'attached. New bank details below.');
    const report = await analyzeHeaders(ctx, Buffer.from(tampered, 'latin1'), 'tampered');
    expect([report.authentication.dkim.result, report.authentication.dmarc.result, report.authentication.arc.result]).toEqual(['fail', 'fail', 'fail']);
    expect(report.findings.map((item) => item.id)).toEqual(expect.arrayContaining(['headers_dkim_fail', 'headers_dmarc_fail', 'headers_arc_broken', 'headers_auth_results_disagree']));
  });

  it('prints the same through the built CLI, one CSV row per hop', async () => {
    if (!existsSync(join(REPO_ROOT, 'dist', 'bundle', 'main.cjs'))) throw new Error('dist/ is missing: run `npm run build` first');
    const json = await spawnCli(['headers', '-', '-f', 'json', '--resolver', dns.address, '--retries', '0'], { input: delivered });
    expect(json.stderr).toBe('');
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ kind: 'headers', source: 'stdin', authentication: { dkim: { result: 'pass' }, arc: { result: 'pass' } } });
    const csv = await spawnCli(['headers', '-', '-f', 'csv', '--resolver', dns.address, '--retries', '0'], { input: delivered });
    expect(csv.code).toBe(0);
    expect(csv.stdout.trim().split('\n')).toHaveLength(3);
  });
});
