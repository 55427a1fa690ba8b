/**
 * Interoperability: netintel's SMTP probe against a real Postfix (Debian
 * package `postfix`), a private instance started by this file with its own
 * configuration directory, queue and log, listening on 127.0.0.1 on a free
 * port, with STARTTLS on a certificate issued by a test CA. Runs the full
 * conversation (greeting, EHLO, STARTTLS, EHLO, MAIL, RCPT, RSET, QUIT)
 * through the engine and through the built CLI, and reads Postfix's own log
 * to confirm what it received (and that DATA never came).
 *
 * Needs root (Postfix's master starts as root and drops to the postfix
 * user) and the postfix binaries; skipped, with a warning, otherwise.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext } from '../../src/engine/context.js';
import { probeSmtp } from '../../src/engine/smtp/probe-smtp.js';
import type { SmtpResult } from '../../src/engine/smtp/smtp-result.js';
import { REPO_ROOT, spawnCli } from '../support/cli.js';
import { findExecutable } from '../support/peers.js';
import { closedPort, createCertificateAuthority, issueCertificate } from '../support/smtp-servers.js';
import { MASTER_CF, waitForPort } from '../support/postfix.js';

const run = promisify(execFile);

const POSTFIX = findExecutable('postfix');
const DAEMON_DIRECTORY = '/usr/lib/postfix/sbin';
const isRoot = userInfo().uid === 0;
const skipReason = !POSTFIX
  ? 'postfix not found on PATH or in /usr/sbin (Debian package postfix)'
  : !existsSync(join(DAEMON_DIRECTORY, 'smtpd'))
    ? `${DAEMON_DIRECTORY}/smtpd is missing (Debian package postfix)`
    : !isRoot
      ? 'Postfix has to be started as root'
      : null;
if (skipReason) console.warn(`SKIPPING test/integration/smtp-postfix.test.ts: ${skipReason}`);

const HOST = 'mx.postfix.test';

describe.skipIf(skipReason !== null)('a real Postfix on a loopback port', () => {
  let dir = '';
  let port = 0;
  let caFile = '';
  let caPem = '';

  async function maillog(): Promise<string> {
    return readFile(join(dir, 'maillog'), 'utf8').catch(() => '');
  }

  /**
   * Postfix's summary line of the next session logged after `offset`
   * (postlogd writes it shortly after the session); the bare connections
   * of the start-up wait log `commands=0/0` and are passed over.
   */
  async function disconnectLine(offset: number): Promise<string> {
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      const found = (await maillog()).slice(offset).split('\n').find((line) => line.includes(' disconnect from ') && !line.includes('commands=0/0'));
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no disconnect line in the Postfix log:\n${await maillog()}`);
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'netintel-postfix-'));
    // The postfix user must reach its queue and data directories below this one.
    await chmod(dir, 0o755);
    port = await closedPort();
    const ca = createCertificateAuthority('netintel Postfix test CA');
    const leaf = issueCertificate({ commonName: HOST, issuer: ca });
    caPem = ca.cert;
    caFile = join(dir, 'ca.pem');
    await writeFile(caFile, ca.cert);
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
      `myhostname = ${HOST}`,
      'mydomain = postfix.test',
      'mydestination = postfix.test',
      // Loopback is not a trusted network here, so the relay test is refused as it would be from outside.
      'mynetworks = 192.0.2.0/24',
      'smtpd_relay_restrictions = permit_mynetworks, reject_unauth_destination',
      'alias_maps =',
      'alias_database =',
      'smtpd_banner = $myhostname ESMTP netintel-interop',
      `smtpd_tls_cert_file = ${dir}/cert.pem`,
      `smtpd_tls_key_file = ${dir}/key.pem`,
      'smtpd_tls_security_level = may',
      `maillog_file = ${dir}/maillog`,
      `maillog_file_prefixes = ${dir}`,
      'biff = no',
    ].join('\n');
    await writeFile(join(dir, 'main.cf'), `${mainCf}\n`);
    await writeFile(join(dir, 'master.cf'), `127.0.0.1:${port} inet n - n - - smtpd\n${MASTER_CF.trimStart()}`);
    await run(POSTFIX!, ['-c', dir, 'start']).catch(async (error: Error) => {
      throw new Error(`postfix -c ${dir} start failed: ${error.message}\n${await maillog()}`);
    });
    await waitForPort(port, 10_000);
  });

  afterAll(async () => {
    if (!dir) return;
    await run(POSTFIX!, ['-c', dir, 'stop']).catch(() => run(POSTFIX!, ['-c', dir, 'abort']).catch(() => {}));
    await rm(dir, { recursive: true, force: true });
  });

  it('runs the whole conversation with STARTTLS and a relay test, and Postfix logs exactly those commands', async () => {
    const ctx = createEngineContext({ timeoutMs: 5000 });
    const offset = (await maillog()).length;
    let result: SmtpResult;
    try {
      result = await probeSmtp(ctx, {
        host: HOST,
        address: '127.0.0.1',
        port,
        ehloName: 'interop.netintel.test',
        tlsCa: [caPem],
        reverseDns: false,
        relayTest: {},
        transcript: true,
      });
    } finally {
      await ctx.close();
    }
    expect(result).toMatchObject({
      connected: true,
      failure: null,
      completed: true,
      stopped_at: 'rcpt',
      banner: { code: 220, text: `${HOST} ESMTP netintel-interop`, hostname: HOST },
      ehlo: { command: 'EHLO', code: 250, hostname: HOST },
      tls: { offered: true, method: 'starttls', established: true, error: null },
      auth: { mechanisms_before_tls: [], mechanisms_after_tls: [] },
      envelope: { relay_test: true, relay_verdict: 'denied', mail: { code: 250, enhanced_code: '2.1.0' }, rcpt: { code: 554, enhanced_code: '5.7.1' } },
    });
    expect(result.tls.protocol).toMatch(/^TLSv1\.[23]$/);
    expect(result.tls.certificate).toMatchObject({ subject: `CN=${HOST}`, trusted: true, hostname_match: true, expired: false });
    expect(result.extensions).toMatchObject({
      pipelining: true,
      size: true,
      size_limit_bytes: 10_240_000,
      enhanced_status_codes: true,
      eight_bit_mime: true,
      dsn: true,
      smtp_utf8: true,
      chunking: true,
      // The extensions read are those after TLS, where STARTTLS is no longer offered.
      starttls: false,
    });
    expect(result.envelope!.rcpt!.text).toMatch(/Relay access denied/);
    expect(result.findings.filter((item) => item.severity === 'error' || item.severity === 'warning')).toEqual([]);
    expect(result.findings.map((item) => item.id)).toEqual(
      expect.arrayContaining(['smtp_banner_ok', 'smtp_tls_ok', 'smtp_certificate_ok', 'smtp_relay_denied']),
    );
    const line = await disconnectLine(offset);
    expect(line).toMatch(/ehlo=2 starttls=1 mail=1 rcpt=0\/1 rset=1 quit=1 commands=6\/7$/);
    expect(line).not.toMatch(/data=/);
  });

  it('judges the certificate as untrusted when its CA is not given, while STARTTLS still works (address-literal EHLO)', async () => {
    const ctx = createEngineContext({ timeoutMs: 5000 });
    const offset = (await maillog()).length;
    const result = await probeSmtp(ctx, { host: HOST, address: '127.0.0.1', port, reverseDns: false, quitAfter: 'tls' }).finally(() => ctx.close());
    expect(result.ehlo_name).toBe('[127.0.0.1]');
    expect(await disconnectLine(offset)).toMatch(/ehlo=2 starttls=1 quit=1 commands=4$/);
    expect(result).toMatchObject({ completed: true, stopped_at: 'tls', tls: { established: true, certificate: { trusted: false, hostname_match: true } } });
    expect(result.findings.find((item) => item.id === 'smtp_certificate_untrusted')?.message).toBe(
      'STARTTLS works but the certificate is not issued by a trusted authority (UNABLE_TO_VERIFY_LEAF_SIGNATURE)',
    );
  });

  it('works through the built CLI: --tls --transcript -f json, exit 0', async () => {
    if (!existsSync(join(REPO_ROOT, 'dist', 'bundle', 'main.cjs'))) throw new Error('dist/ is missing: run `npm run build` first');
    const cli = await spawnCli(['smtp', HOST, '--ip', '127.0.0.1', '-p', String(port), '--tls', '--tls-ca', caFile, '--no-ptr', '--transcript', '-f', 'json']);
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    const record = JSON.parse(cli.stdout) as SmtpResult;
    expect(record).toMatchObject({ kind: 'smtp', host: HOST, port, tls_mode: 'required', completed: true, tls: { established: true } });
    const sent = record.transcript!.filter((line) => line.direction === 'sent').map((line) => `${line.tls ? 'tls' : 'plain'} ${line.text.split(' ')[0]}`);
    expect(sent).toEqual(['plain EHLO', 'plain STARTTLS', 'tls EHLO', 'tls QUIT']);
  });
});
