/**
 * probeSmtp against real SMTP servers on 127.0.0.1: smtp-server (npm) for
 * correct ESMTP with STARTTLS, AUTH and relay policies, scripted raw TCP
 * servers for misbehaviour (silence, dropped connections, broken
 * STARTTLS, injected bytes, non-SMTP peers). Certificates are made per run
 * with node:crypto (test/support/smtp-servers.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { SEVERITIES } from '../../../src/engine/findings.js';
import { NetintelError } from '../../../src/errors.js';
import { probeSmtp, probeSmtpAll, type ProbeSmtpOptions } from '../../../src/engine/smtp/probe-smtp.js';
import type { SmtpResult } from '../../../src/engine/smtp/smtp-result.js';
import { presentMailServers } from '../../../src/output/schemas/email-schema.js';
import {
  closedPort,
  createCertificateAuthority,
  daysFromNow,
  ehloReply,
  issueCertificate,
  startScriptedSmtpServer,
  startSmtpTestServer,
  type ScriptedConnection,
  type SmtpTestServer,
  type TestCertificate,
} from '../../support/smtp-servers.js';

const HOST = 'mx.example.test';
let ca: TestCertificate;
let good: TestCertificate;
let ctx: EngineContext;

beforeAll(() => {
  ca = createCertificateAuthority();
  good = issueCertificate({ commonName: HOST, issuer: ca });
  ctx = createEngineContext({ timeoutMs: 2000 });
});

afterAll(async () => {
  await ctx.close();
});

/** Probes a local server as HOST, trusting the test CA, without PTR lookups. */
function probe(port: number, options: Partial<ProbeSmtpOptions> = {}): Promise<SmtpResult> {
  return probeSmtp(ctx, { host: HOST, address: '127.0.0.1', port, reverseDns: false, tlsCa: [ca.cert], transcript: true, ...options });
}

function ids(result: SmtpResult): string[] {
  return result.findings.map((item) => item.id);
}

function findingOf(result: SmtpResult, id: string) {
  const found = result.findings.find((item) => item.id === id);
  if (!found) throw new Error(`no finding ${id} in ${ids(result).join(', ')}`);
  return found;
}

async function withServer<T>(server: { close(): Promise<void> }, body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } finally {
    await server.close();
  }
}

/** A scripted server's usual opening: greeting, then an EHLO reply with these keywords. */
async function greetAndEhlo(connection: ScriptedConnection, keywords: string[]): Promise<boolean> {
  connection.send(`220 ${HOST} ESMTP scripted`);
  const ehlo = await connection.readLine();
  if (ehlo === null) return false;
  for (const line of ehloReply(HOST, keywords)) connection.send(line);
  return true;
}

describe('a healthy server with STARTTLS and AUTH', () => {
  let server: SmtpTestServer;
  beforeAll(async () => {
    server = await startSmtpTestServer({ certificate: good, auth: { user: 'alice', pass: 'Tr0ub4dor&3', methods: ['PLAIN', 'LOGIN', 'CRAM-MD5'] } });
  });
  afterAll(() => server.close());

  it('runs every stage in order and records the facts of each', async () => {
    const result = await probe(server.port, { auth: { user: 'alice', pass: 'Tr0ub4dor&3' } });
    expect(result).toMatchObject({
      kind: 'smtp',
      host: HOST,
      address: '127.0.0.1',
      port: server.port,
      tls_mode: 'opportunistic',
      ehlo_name: '[127.0.0.1]',
      connected: true,
      failure: null,
      completed: true,
      stopped_at: 'auth',
      banner: { code: 220, hostname: HOST },
      ehlo: { command: 'EHLO', code: 250, hostname: HOST },
      tls: { offered: true, method: 'starttls', established: true, protocol: 'TLSv1.3', error: null },
      auth: { mechanisms_before_tls: [], mechanisms_after_tls: ['PLAIN', 'LOGIN', 'CRAM-MD5'], tested: 'PLAIN', result: 'success', skipped_reason: null },
      envelope: null,
      reverse_dns: null,
    });
    expect(result.auth.reply).toMatchObject({ code: 235, enhanced_code: '2.7.0' });
    expect(result.extensions).toMatchObject({
      size: true,
      size_limit_bytes: 10_485_760,
      pipelining: true,
      eight_bit_mime: true,
      smtp_utf8: true,
      dsn: true,
      enhanced_status_codes: true,
      require_tls: true,
      starttls: false,
      auth: ['PLAIN', 'LOGIN', 'CRAM-MD5'],
    });
    expect(result.tls.certificate).toMatchObject({
      subject: `CN=${HOST}`,
      san: [`DNS:${HOST}`],
      trusted: true,
      expired: false,
      hostname_match: true,
      self_signed: false,
      verify_error: null,
    });
    expect(result.tls.certificate!.days_left).toBeGreaterThan(360);
    expect(result.tls.certificate!.chain.map((item) => item.subject)).toEqual([`CN=${HOST}`, 'O=netintel tests, CN=netintel test CA']);
    for (const key of ['connect_ms', 'banner_ms', 'ehlo_ms', 'tls_ms', 'ehlo_after_tls_ms', 'auth_ms', 'total_ms'] as const) {
      expect(result.timings[key]).toBeGreaterThanOrEqual(0);
    }
    expect(result.timings).toMatchObject({ dns_ms: null, mail_ms: null, rcpt_ms: null });
    expect(ids(result)).toEqual(['smtp_banner_ok', 'smtp_tls_ok', 'smtp_certificate_ok', 'smtp_auth_succeeded']);
    expect(server.commands().map((line) => line.split(' ')[0])).toEqual(['EHLO', 'STARTTLS', 'EHLO', 'AUTH', 'QUIT']);
  });

  it('tests LOGIN and CRAM-MD5 when asked, and reports a wrong password as a failure', async () => {
    const login = await probe(server.port, { auth: { user: 'alice', pass: 'Tr0ub4dor&3', mechanism: 'LOGIN' } });
    expect(login.auth).toMatchObject({ tested: 'LOGIN', result: 'success' });
    const cram = await probe(server.port, { auth: { user: 'alice', pass: 'Tr0ub4dor&3', mechanism: 'CRAM-MD5' } });
    expect(cram.auth).toMatchObject({ tested: 'CRAM-MD5', result: 'success' });
    const wrong = await probe(server.port, { auth: { user: 'alice', pass: 'wrong-password' } });
    expect(wrong.auth).toMatchObject({ tested: 'PLAIN', result: 'failure', reply: { code: 535 } });
    expect(findingOf(wrong, 'smtp_auth_failed')).toMatchObject({ severity: 'error', evidence: { mechanism: 'PLAIN', code: 535 } });
    expect(wrong.completed).toBe(true);
  });

  it('never records the password or its encodings, and redacts every credential line', async () => {
    for (const mechanism of ['PLAIN', 'LOGIN', 'CRAM-MD5'] as const) {
      const result = await probe(server.port, { auth: { user: 'alice', pass: 'Tr0ub4dor&3', mechanism } });
      const text = JSON.stringify(result);
      expect(text).not.toContain('Tr0ub4dor&3');
      expect(text).not.toContain(Buffer.from('Tr0ub4dor&3').toString('base64'));
      expect(text).not.toContain(Buffer.from('\0alice\0Tr0ub4dor&3').toString('base64'));
      const sent = result.transcript!.filter((line) => line.direction === 'sent').map((line) => line.text);
      const afterAuth = sent.slice(sent.findIndex((line) => line.startsWith('AUTH')));
      expect(afterAuth[0]).toMatch(mechanism === 'PLAIN' ? /^AUTH PLAIN \[redacted\]$/ : new RegExp(`^AUTH ${mechanism}$`));
      expect(afterAuth.slice(1, -1).every((line) => line === '[redacted]')).toBe(true);
    }
  });

  it('keeps the conversation with direction, TLS state and times', async () => {
    const result = await probe(server.port);
    const transcript = result.transcript!;
    expect(transcript.map((line) => line.at_ms)).toEqual([...transcript.map((line) => line.at_ms)].sort((a, b) => a - b));
    const starttls = transcript.findIndex((line) => line.direction === 'sent' && line.text === 'STARTTLS');
    expect(transcript[starttls + 1]).toMatchObject({ direction: 'received', tls: false, text: expect.stringMatching(/^220 /) });
    expect(transcript.find((line) => line.direction === 'info' && line.text.startsWith('TLS started'))).toBeDefined();
    expect(transcript.filter((line) => line.direction === 'sent').map((line) => [line.text.split(' ')[0], line.tls])).toEqual([
      ['EHLO', false],
      ['STARTTLS', false],
      ['EHLO', true],
      ['QUIT', true],
    ]);
    expect((await probe(server.port, { transcript: false })).transcript).toBeNull();
  });

  it('stops after each stage asked for, with QUIT', async () => {
    const sent = async (quitAfter: ProbeSmtpOptions['quitAfter'], extra: Partial<ProbeSmtpOptions> = {}) => {
      const result = await probe(server.port, { quitAfter, ...extra });
      return { result, sent: result.transcript!.filter((line) => line.direction === 'sent').map((line) => line.text.split(' ')[0]) };
    };
    const connect = await sent('connect');
    expect(connect.sent).toEqual([]);
    expect(connect.result).toMatchObject({ stopped_at: 'connect', completed: true, banner: null });
    expect((await sent('banner')).sent).toEqual(['QUIT']);
    const ehlo = await sent('ehlo');
    expect(ehlo.sent).toEqual(['EHLO', 'QUIT']);
    expect(ehlo.result).toMatchObject({ stopped_at: 'ehlo', completed: true, tls: { offered: true, established: false } });
    expect((await sent('tls')).sent).toEqual(['EHLO', 'STARTTLS', 'EHLO', 'QUIT']);
    expect((await sent('auth', { auth: { user: 'alice', pass: 'Tr0ub4dor&3' } })).sent).toEqual(['EHLO', 'STARTTLS', 'EHLO', 'AUTH', 'QUIT']);
    const mail = await sent('mail');
    expect(mail.sent).toEqual(['EHLO', 'STARTTLS', 'EHLO', 'MAIL', 'QUIT']);
    expect(mail.result.envelope).toMatchObject({ from: 'relay-test@example.com', relay_test: false, relay_verdict: null, rcpt: null });
    const rcpt = await sent('rcpt');
    expect(rcpt.sent).toEqual(['EHLO', 'STARTTLS', 'EHLO', 'MAIL', 'RCPT', 'RSET', 'QUIT']);
    expect(rcpt.result).toMatchObject({ stopped_at: 'rcpt', completed: true });
  });

  it('sends the EHLO name given', async () => {
    const result = await probe(server.port, { ehloName: 'probe.example.org', quitAfter: 'ehlo' });
    expect(result.ehlo_name).toBe('probe.example.org');
    expect(server.commands()).toContain('EHLO probe.example.org');
  });
});

describe.concurrent('the certificate is judged apart from the handshake', () => {
  async function judged(certificate: TestCertificate, options: Partial<ProbeSmtpOptions> = {}) {
    const server = await startSmtpTestServer({ certificate });
    return withServer(server, () => probe(server.port, options));
  }

  it('reports "STARTTLS works but the certificate is expired" as one finding, not as missing TLS', async () => {
    const result = await judged(issueCertificate({ commonName: HOST, issuer: ca, notBefore: daysFromNow(-400), notAfter: daysFromNow(-30) }));
    expect(result.tls).toMatchObject({ offered: true, established: true, error: null });
    expect(result.tls.certificate).toMatchObject({ expired: true, trusted: true, hostname_match: true, verify_error: 'CERT_HAS_EXPIRED' });
    expect(result.tls.certificate!.days_left).toBeLessThanOrEqual(-30);
    const problems = result.findings.filter((item) => item.severity !== 'pass' && item.severity !== 'info');
    expect(problems.map((item) => item.id)).toEqual(['smtp_certificate_expired']);
    expect(problems[0]!.message).toMatch(/^STARTTLS works but the certificate expired on \d{4}-\d{2}-\d{2} \(3\d days ago\)$/);
    expect(ids(result)).toContain('smtp_tls_ok');
    expect(ids(result)).not.toContain('smtp_starttls_failed');
    expect(ids(result)).not.toContain('smtp_starttls_missing');
    expect(result.completed).toBe(true);
  });

  it('reports a self-signed certificate as untrusted', async () => {
    const result = await judged(issueCertificate({ commonName: HOST }));
    expect(result.tls.certificate).toMatchObject({ trusted: false, self_signed: true, expired: false, hostname_match: true, verify_error: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    expect(findingOf(result, 'smtp_certificate_untrusted').message).toBe('STARTTLS works but the certificate is self-signed');
  });

  it('sees both problems of an expired self-signed certificate (OpenSSL names only the expiry; verify_error names the other)', async () => {
    const result = await judged(issueCertificate({ commonName: HOST, notBefore: daysFromNow(-100), notAfter: daysFromNow(-2) }));
    expect(result.tls.certificate).toMatchObject({ trusted: false, self_signed: true, expired: true, verify_error: 'DEPTH_ZERO_SELF_SIGNED_CERT' });
    expect(ids(result)).toEqual(expect.arrayContaining(['smtp_certificate_expired', 'smtp_certificate_untrusted']));
  });

  it('reports a certificate for another name', async () => {
    const result = await judged(issueCertificate({ commonName: 'other.example.test', issuer: ca }));
    expect(result.tls.certificate).toMatchObject({ trusted: true, hostname_match: false, checked_name: HOST, san: ['DNS:other.example.test'] });
    expect(findingOf(result, 'smtp_certificate_name_mismatch').message).toBe(
      `STARTTLS works but the certificate does not name ${HOST} (it names DNS:other.example.test)`,
    );
  });

  it('reports a certificate issued by an unknown authority, and one that expires soon', async () => {
    const otherCa = createCertificateAuthority('some other CA');
    const result = await judged(issueCertificate({ commonName: HOST, issuer: otherCa, notAfter: daysFromNow(5) }));
    expect(result.tls.certificate).toMatchObject({ trusted: false, self_signed: false, verify_error: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
    expect(ids(result)).toEqual(expect.arrayContaining(['smtp_certificate_untrusted', 'smtp_certificate_expiring']));
  });

  it('matches an IP address host against IP subjectAltNames', async () => {
    const server = await startSmtpTestServer({ certificate: issueCertificate({ commonName: 'ip cert', dnsNames: [], ipAddresses: ['127.0.0.1'], issuer: ca }) });
    const result = await withServer(server, () => probeSmtp(ctx, { host: '127.0.0.1', port: server.port, reverseDns: false, tlsCa: [ca.cert] }));
    expect(result.tls.certificate).toMatchObject({ hostname_match: true, checked_name: '127.0.0.1', trusted: true });
  });
});

describe.concurrent('TLS modes', () => {
  it('speaks TLS from the first byte under implicit TLS', async () => {
    const server = await startSmtpTestServer({ certificate: good, implicitTls: true, auth: { user: 'bob', pass: 'pa55word!' } });
    const result = await withServer(server, () => probe(server.port, { tls: 'implicit', auth: { user: 'bob', pass: 'pa55word!' } }));
    expect(result).toMatchObject({
      tls_mode: 'implicit',
      completed: true,
      tls: { offered: true, method: 'implicit', established: true },
      auth: { mechanisms_before_tls: null, mechanisms_after_tls: ['PLAIN', 'LOGIN'], result: 'success' },
    });
    expect(result.transcript!.filter((line) => line.direction !== 'info').every((line) => line.tls)).toBe(true);
    expect(findingOf(result, 'smtp_tls_ok').message).toMatch(/^TLS on connect works: TLSv1\.3/);
  });

  it('fails as a tls failure when the implicit TLS handshake fails', async () => {
    const server = await startScriptedSmtpServer((connection) => connection.send('220 plain text where TLS was expected'));
    const result = await withServer(server, () => probe(server.port, { tls: 'implicit' }));
    expect(result).toMatchObject({ connected: true, failure: { code: 'tls', stage: 'connect' }, tls: { established: false, method: 'implicit' } });
    expect(findingOf(result, 'smtp_tls_handshake_failed').severity).toBe('error');
  });

  it('reports a missing STARTTLS, and ends the test there when TLS is required', async () => {
    const server = await startSmtpTestServer();
    await withServer(server, async () => {
      const optional = await probe(server.port);
      expect(optional).toMatchObject({ completed: true, tls: { offered: false, established: false, method: null } });
      expect(findingOf(optional, 'smtp_starttls_missing').message).toMatch(/^STARTTLS is not offered/);
      // Most serious first.
      const ranks = optional.findings.map((item) => SEVERITIES.indexOf(item.severity));
      expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
      expect(optional.findings[0]!.severity).toBe('error');
      const required = await probe(server.port, { tls: 'required' });
      expect(required).toMatchObject({ completed: false, stopped_at: 'tls' });
      expect(findingOf(required, 'smtp_starttls_missing').message).toMatch(/required/);
      expect(server.commands().slice(-2)).toEqual(['EHLO [127.0.0.1]', 'QUIT']);
    });
  });

  it('reports STARTTLS advertised but failing in the handshake, never as "no TLS"', async () => {
    const server = await startScriptedSmtpServer(async (connection) => {
      if (!(await greetAndEhlo(connection, ['PIPELINING', 'STARTTLS']))) return;
      if ((await connection.readLine()) !== 'STARTTLS') return;
      connection.send('220 2.0.0 Ready to start TLS');
      connection.socket.write('this is not a TLS server hello\r\n');
      setTimeout(() => connection.close(), 50);
    });
    const result = await withServer(server, () => probe(server.port));
    expect(result.tls).toMatchObject({ offered: true, method: 'starttls', established: false, certificate: null });
    expect(result.tls.error).toBeTruthy();
    expect(result).toMatchObject({ connected: true, failure: null, completed: false, stopped_at: 'tls' });
    const failed = findingOf(result, 'smtp_starttls_failed');
    expect(failed.message).toMatch(/^STARTTLS is advertised and accepted, but the TLS handshake fails: /);
    expect(ids(result)).not.toContain('smtp_starttls_missing');
  });

  it('reports a refused STARTTLS and goes on without TLS (opportunistic)', async () => {
    const server = await startScriptedSmtpServer(async (connection) => {
      if (!(await greetAndEhlo(connection, ['STARTTLS']))) return;
      for (let line = await connection.readLine(); line !== null; line = await connection.readLine()) {
        if (line === 'STARTTLS') connection.send('454 4.7.0 TLS not available due to local problem');
        else if (line === 'QUIT') {
          connection.send('221 2.0.0 Bye');
          connection.close();
        }
      }
    });
    const result = await withServer(server, () => probe(server.port));
    expect(result).toMatchObject({ completed: true, tls: { offered: true, established: false, error: '454 4.7.0 TLS not available due to local problem' } });
    expect(findingOf(result, 'smtp_starttls_failed').evidence).toMatchObject({ reply: { code: 454, enhanced_code: '4.7.0' } });
  });

  it('discards bytes injected between the STARTTLS reply and the handshake', async () => {
    const server = await startScriptedSmtpServer(async (connection) => {
      if (!(await greetAndEhlo(connection, ['STARTTLS']))) return;
      if ((await connection.readLine()) !== 'STARTTLS') return;
      connection.socket.write(`220 2.0.0 Go ahead\r\n250-injected\r\n250 AUTH PLAIN\r\n`);
      if (!(await connection.upgrade(good))) return;
      if ((await connection.readLine()) === null) return;
      for (const line of ehloReply(HOST, ['PIPELINING', 'SIZE 1000'])) connection.send(line);
      if ((await connection.readLine()) === 'QUIT') connection.send('221 Bye');
      connection.close();
    });
    const result = await withServer(server, () => probe(server.port));
    expect(result.tls.established).toBe(true);
    expect(result.extensions).toMatchObject({ keywords: ['PIPELINING', 'SIZE'], size_limit_bytes: 1000, auth: [] });
    expect(findingOf(result, 'smtp_starttls_injection').evidence).toEqual({ discarded_bytes: 30 });
  });
});

describe.concurrent('servers that misbehave', () => {
  it('reports a 554 greeting as data: connected, code and text, QUIT sent', async () => {
    const server = await startSmtpTestServer({ refuse: { message: 'mx.example.test Service unavailable; client [127.0.0.1] blocked' } });
    const result = await withServer(server, () => probe(server.port));
    expect(result).toMatchObject({ connected: true, failure: null, completed: false, stopped_at: 'banner', banner: { code: 554, hostname: HOST } });
    expect(findingOf(result, 'smtp_banner_refused')).toMatchObject({ severity: 'error', rfc: 'RFC 5321 §3.1' });
    expect(result.transcript!.filter((line) => line.direction === 'sent').map((line) => line.text)).toEqual(['QUIT']);
  });

  it('waits out a slow greeting and calls it a delay, not a failure', async () => {
    const server = await startSmtpTestServer({ greetingDelayMs: 700 });
    const result = await withServer(server, () => probe(server.port, { quitAfter: 'banner', thresholds: { greetingDelayMs: 500 } }));
    expect(result).toMatchObject({ failure: null, completed: true, banner: { code: 220 } });
    expect(result.timings.banner_ms).toBeGreaterThanOrEqual(650);
    const delay = findingOf(result, 'smtp_greeting_delay');
    expect(delay.severity).toBe('info');
    expect(delay.message).toMatch(/deliberate delay .* rather than a failure/);
  });

  it('gives the greeting at least 30 s by default, more than the stage timeout', async () => {
    const server = await startSmtpTestServer({ greetingDelayMs: 1200 });
    const result = await withServer(server, () => probe(server.port, { quitAfter: 'banner', stageTimeoutMs: 500 }));
    expect(result).toMatchObject({ failure: null, banner: { code: 220 } });
  });

  it('reports a server that never greets as a banner timeout', async () => {
    const server = await startScriptedSmtpServer(() => {});
    const result = await withServer(server, () => probe(server.port, { greetingTimeoutMs: 300 }));
    expect(result).toMatchObject({ connected: true, banner: null, completed: false, failure: { code: 'timeout', stage: 'banner' } });
    expect(result.failure!.message).toBe(`connected to 127.0.0.1 port ${server.port}, but no greeting within 300 ms`);
    expect(findingOf(result, 'smtp_banner_timeout').message).toMatch(/raise the greeting timeout/);
  });

  it('reports a server that closes after EHLO at the stage where it happened', async () => {
    const server = await startScriptedSmtpServer(async (connection) => {
      if (await greetAndEhlo(connection, ['PIPELINING', 'STARTTLS'])) connection.close();
    });
    const result = await withServer(server, () => probe(server.port));
    expect(result).toMatchObject({ connected: true, failure: null, completed: false, stopped_at: 'tls', extensions: { starttls: true } });
    expect(findingOf(result, 'smtp_connection_closed').evidence).toMatchObject({ stage: 'tls' });
  });

  it('reports a server that stops answering after the greeting as a stage timeout', async () => {
    const server = await startScriptedSmtpServer((connection) => connection.send(`220 ${HOST} ESMTP`));
    const result = await withServer(server, () => probe(server.port, { stageTimeoutMs: 300 }));
    expect(result).toMatchObject({ failure: null, banner: { code: 220 }, ehlo: null, stopped_at: 'ehlo' });
    expect(findingOf(result, 'smtp_stage_timeout').evidence).toEqual({ stage: 'ehlo', timeout_ms: 300 });
    // No EHLO reply was read: whether STARTTLS is offered is not known, and not said to be "no".
    expect(result.tls).toMatchObject({ offered: null, established: false, method: null });
    expect(presentMailServers([{ host: HOST, preference: 10, address: '127.0.0.1', port: server.port, probe: result, error: null }])).toContain('STARTTLS not learnt (no EHLO reply)');
  });

  it('falls back to HELO when EHLO is refused', async () => {
    const server = await startScriptedSmtpServer(async (connection) => {
      connection.send(`220 ${HOST} SMTP`);
      for (let line = await connection.readLine(); line !== null; line = await connection.readLine()) {
        if (line.startsWith('EHLO')) connection.send('502 5.5.2 Command not recognized');
        else if (line.startsWith('HELO')) connection.send(`250 ${HOST}`);
        else if (line === 'QUIT') connection.send('221 Bye');
      }
    });
    const result = await withServer(server, () => probe(server.port));
    expect(result).toMatchObject({ completed: true, ehlo: { command: 'HELO', code: 250 }, extensions: { keywords: [], starttls: false } });
    expect(ids(result)).toEqual(expect.arrayContaining(['smtp_ehlo_refused', 'smtp_starttls_missing']));
    expect(ids(result)).not.toContain('smtp_extensions_missing');
  });

  it('reports a peer that is not an SMTP server', async () => {
    const server = await startScriptedSmtpServer((connection) => connection.send('SSH-2.0-OpenSSH_9.2p1 Debian-2'));
    const result = await withServer(server, () => probe(server.port, { port: server.port }));
    expect(result).toMatchObject({ connected: true, banner: null, failure: null });
    expect(findingOf(result, 'smtp_protocol_error').evidence).toMatchObject({ stage: 'banner', line: 'SSH-2.0-OpenSSH_9.2p1 Debian-2' });
  });

  it('escapes control characters the server sends', async () => {
    const server = await startScriptedSmtpServer((connection) => {
      connection.socket.write(`220 ${HOST} \u001b[31mred\u0007\r\n`);
      connection.close();
    });
    const result = await withServer(server, () => probe(server.port, { quitAfter: 'banner' }));
    expect(result.banner!.text).toBe(`${HOST} \\x1b[31mred\\x07`);
    expect(JSON.stringify(result)).not.toMatch(/\\u001b|\\u0007/);
  });

  it('notes common extensions that are missing', async () => {
    const server = await startSmtpTestServer({ hide: ['PIPELINING', '8BITMIME'] });
    const result = await withServer(server, () => probe(server.port, { quitAfter: 'ehlo' }));
    expect(findingOf(result, 'smtp_extensions_missing')).toMatchObject({ severity: 'info', evidence: { missing: ['PIPELINING', '8BITMIME'] } });
  });

  it('returns connected:false with an unreachable failure when nothing listens', async () => {
    const port = await closedPort();
    const result = await probe(port);
    expect(result).toMatchObject({ connected: false, completed: false, banner: null, failure: { code: 'unreachable', stage: 'connect' } });
    expect(result.failure!.message).toBe(`cannot connect to 127.0.0.1 port ${port}: connection refused (nothing listens on that port)`);
    expect(ids(result)).toEqual(['smtp_connect_failed']);
    expect(result.transcript).toEqual([]);
  });
});

describe.concurrent('AUTH is sent only inside TLS unless allowed', () => {
  it('skips AUTH without TLS and says why; flags AUTH offered before TLS', async () => {
    const server = await startSmtpTestServer({ auth: { user: 'carol', pass: 'hunter2!', beforeTls: true } });
    await withServer(server, async () => {
      const skipped = await probe(server.port, { auth: { user: 'carol', pass: 'hunter2!' } });
      expect(skipped.auth).toMatchObject({ mechanisms_before_tls: ['PLAIN', 'LOGIN'], mechanisms_after_tls: null, tested: null, result: 'skipped' });
      expect(skipped.auth.skipped_reason).toMatch(/not encrypted/);
      expect(findingOf(skipped, 'smtp_auth_skipped').severity).toBe('info');
      expect(findingOf(skipped, 'smtp_auth_before_tls').severity).toBe('warning');
      expect(server.commands().some((line) => line.startsWith('AUTH'))).toBe(false);

      const allowed = await probe(server.port, { auth: { user: 'carol', pass: 'hunter2!', allowPlaintext: true } });
      expect(allowed.auth).toMatchObject({ tested: 'PLAIN', result: 'success' });
      expect(JSON.stringify(allowed)).not.toContain('hunter2!');
    });
  });

  it('says so when credentials are given and the server offers no AUTH', async () => {
    const server = await startSmtpTestServer({ certificate: good });
    const result = await withServer(server, () => probe(server.port, { auth: { user: 'dave', pass: 'secret-pass' } }));
    expect(result.auth).toMatchObject({ result: 'skipped', skipped_reason: 'the server does not offer AUTH' });
    expect(findingOf(result, 'smtp_auth_not_offered').severity).toBe('warning');
  });
});

describe.concurrent('the relay test never sends DATA', () => {
  it('passes a server that refuses an outside recipient', async () => {
    const server = await startSmtpTestServer({ certificate: good });
    const result = await withServer(server, async () => {
      const value = await probe(server.port, { relayTest: {} });
      expect(server.dataSeen()).toBe(false);
      return value;
    });
    expect(result.envelope).toMatchObject({
      from: 'relay-test@example.com',
      to: 'relay-test@example.net',
      authenticated: false,
      relay_test: true,
      relay_verdict: 'denied',
      mail: { code: 250 },
      rcpt: { code: 554 },
    });
    expect(findingOf(result, 'smtp_relay_denied').severity).toBe('pass');
    expect(result.completed).toBe(true);
  });

  it('flags an open relay and explains that a 250 at RCPT can be a deferred rejection', async () => {
    const server = await startSmtpTestServer({ certificate: good, openRelay: true });
    const result = await withServer(server, async () => {
      const value = await probe(server.port, { relayTest: { from: 'probe@example.org', to: 'someone@example.net' } });
      expect(server.dataSeen()).toBe(false);
      expect(server.commands().map((line) => line.split(/[ :]/)[0])).toEqual(['EHLO', 'STARTTLS', 'EHLO', 'MAIL', 'RCPT', 'RSET', 'QUIT']);
      return value;
    });
    expect(result.envelope).toMatchObject({ relay_verdict: 'accepted', rcpt: { code: 250 } });
    const relay = findingOf(result, 'smtp_open_relay');
    expect(relay.severity).toBe('error');
    expect(relay.message).toMatch(/deferred rejection/);
    expect(relay.message).toMatch(/never sends DATA/);
  });
});

describe('input is checked before anything is sent', () => {
  let server: SmtpTestServer;
  beforeAll(async () => {
    server = await startSmtpTestServer();
  });
  afterAll(() => server.close());

  const bad: Array<[string, Partial<ProbeSmtpOptions>]> = [
    ['a CRLF in the EHLO name', { ehloName: 'x.example\r\nMAIL FROM:<a@b.example>' }],
    ['a LF in the host', { host: 'mx.example.test\nRCPT TO:<x@y.example>' }],
    ['a NUL in the host', { host: 'mx.example.test\0' }],
    ['a space in the host', { host: 'mx example.test' }],
    ['a CR in the relay sender', { relayTest: { from: 'a@b.example\rRCPT TO:<c@d.example>' } }],
    ['a LF in the relay recipient', { relayTest: { to: 'a@b.example\nDATA' } }],
    ['a CRLF in the user name', { auth: { user: 'alice\r\nQUIT', pass: 'x' } }],
    ['a LF in the password', { auth: { user: 'alice', pass: 'pass\nword' } }],
    ['port 0', { port: 0 }],
    ['port 65536', { port: 65536 }],
    ['a fractional port', { port: 25.5 }],
    ['a bad address', { address: '127.0.0.1\r\n' }],
    ['a bad EHLO address literal', { ehloName: '[300.1.1.1]' }],
  ];
  it.each(bad)('refuses %s as invalid_input, without connecting', async (_label, options) => {
    const error = await probe(server.port, options).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NetintelError);
    expect((error as NetintelError).code).toBe('invalid_input');
    expect(server.connections()).toBe(0);
  });

  it('keeps the password out of the error message', async () => {
    const error = (await probe(server.port, { auth: { user: 'alice', pass: 'S3cret\r\nQUIT' } }).catch((caught: unknown) => caught)) as NetintelError;
    expect(error.message).toBe('the AUTH password holds a CR, LF or NUL character, which could inject SMTP commands');
    expect(JSON.stringify(error.toJSON())).not.toContain('S3cret');
  });
});

describe('every address of a host', () => {
  it('probes each resolved address', async () => {
    const { startDnsServer } = await import('../../support/dns-server.js');
    const dns = await startDnsServer({
      records: [
        { name: 'multi.example.test', type: 'A', data: '127.0.0.1' },
        { name: 'multi.example.test', type: 'A', data: '127.0.0.2' },
      ],
    });
    const server = await startSmtpTestServer();
    const local = createEngineContext({ timeoutMs: 2000, resolvers: [parseResolverAddress(dns.address)] });
    try {
      const results = await probeSmtpAll(local, { host: 'multi.example.test', port: server.port, reverseDns: false, quitAfter: 'banner' });
      expect(results.map((result) => [result.address, result.connected])).toEqual([
        ['127.0.0.1', true],
        ['127.0.0.2', false],
      ]);
      expect(results.every((result) => result.timings.dns_ms !== null)).toBe(true);
    } finally {
      await local.close();
      await server.close();
      await dns.close();
    }
  });
});
