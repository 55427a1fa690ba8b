/**
 * The parts of the SMTP probe on their own: the reply reader over a real
 * socket (fragmented, multi-line, oversized, hostile input), EHLO parsing,
 * host names in greetings, input normalisation, the findings judged from a
 * record (severities by port, the PTR/greeting/EHLO triad), and the text
 * presentation of findings and transcripts.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { leadingHostname, parseEhloExtensions } from '../../../src/engine/smtp/ehlo-extensions.js';
import { createEngineContext } from '../../../src/engine/context.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { resolveReverseDns } from '../../../src/engine/smtp/reverse-dns.js';
import { resolveMx } from '../../../src/engine/mail/resolve-mx.js';
import { judgeSmtpResult } from '../../../src/engine/smtp/smtp-findings.js';
import { addressLiteral, normaliseEhloName, normaliseMailbox, normaliseSmtpHost, parsePort } from '../../../src/engine/smtp/smtp-input.js';
import type { SmtpCertificate, SmtpResult } from '../../../src/engine/smtp/smtp-result.js';
import { SmtpSession, type ReplyOutcome } from '../../../src/engine/smtp/smtp-session.js';
import { NetintelError } from '../../../src/errors.js';
import { presentFindings, presentTranscript, SMTP_SCHEMA } from '../../../src/output/schemas/smtp-schema.js';
import { startDnsServer } from '../../support/dns-server.js';

/** A session reading what `serve` writes on the other end of a real TCP connection. */
async function sessionAgainst(serve: (socket: net.Socket) => void): Promise<{ session: SmtpSession; close: () => Promise<void> }> {
  const server = net.createServer((socket) => {
    socket.on('error', () => {});
    serve(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  const socket = await new Promise<net.Socket>((resolve) => {
    const client = net.connect({ host: '127.0.0.1', port }, () => resolve(client));
  });
  const session = new SmtpSession({ socket, startedAt: performance.now(), secrets: ['hunter22'] });
  return {
    session,
    close: async () => {
      session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function reply(outcome: ReplyOutcome) {
  if (outcome.kind !== 'reply') throw new Error(`expected a reply, got ${outcome.kind}`);
  return outcome.reply;
}

describe('the reply reader', () => {
  it('joins a multi-line reply sent one byte at a time, with its enhanced code', async () => {
    const text = '250-mx.example.test Hello\r\n250-PIPELINING\r\n250 2.0.0 SIZE 1000\r\n';
    const { session, close } = await sessionAgainst((socket) => {
      let i = 0;
      const timer = setInterval(() => {
        if (i >= text.length) return clearInterval(timer);
        socket.write(text[i++]!);
      }, 1);
    });
    try {
      expect(reply(await session.readReply(2000))).toEqual({ code: 250, enhanced_code: null, text: 'mx.example.test Hello\nPIPELINING\n2.0.0 SIZE 1000' });
      expect(session.transcript.map((line) => line.text)).toEqual(['250-mx.example.test Hello', '250-PIPELINING', '250 2.0.0 SIZE 1000']);
    } finally {
      await close();
    }
  });

  it('reads replies that arrive together one at a time, and bare-LF line ends', async () => {
    const { session, close } = await sessionAgainst((socket) => socket.write('220 ready\n250 2.1.0 Ok\r\n554 5.7.1 no\r\n'));
    try {
      expect(reply(await session.readReply(1000))).toMatchObject({ code: 220, text: 'ready' });
      expect(reply(await session.readReply(1000))).toMatchObject({ code: 250, enhanced_code: '2.1.0' });
      expect(reply(await session.readReply(1000))).toMatchObject({ code: 554, enhanced_code: '5.7.1' });
      expect(await session.readReply(100)).toEqual({ kind: 'timeout' });
    } finally {
      await close();
    }
  });

  it('calls an over-long line or a non-reply line a protocol error and stops reading', async () => {
    const long = await sessionAgainst((socket) => socket.write(`220 ${'x'.repeat(9000)}`));
    try {
      expect(await long.session.readReply(1000)).toMatchObject({ kind: 'protocol', reason: 'a reply line longer than 8192 octets' });
      expect(await long.session.readReply(100)).toMatchObject({ kind: 'closed' });
    } finally {
      await long.close();
    }
    const http = await sessionAgainst((socket) => socket.write('HTTP/1.1 400 Bad Request\r\n'));
    try {
      expect(await http.session.readReply(1000)).toMatchObject({ kind: 'protocol', line: 'HTTP/1.1 400 Bad Request' });
    } finally {
      await http.close();
    }
  });

  it('reports a close before a full reply, and a reply of a thousand lines as a protocol error', async () => {
    const cut = await sessionAgainst((socket) => socket.end('250-first half\r\n'));
    try {
      expect(await cut.session.readReply(1000)).toMatchObject({ kind: 'closed' });
    } finally {
      await cut.close();
    }
    const flood = await sessionAgainst((socket) => socket.write('250-x\r\n'.repeat(1000)));
    try {
      expect(await flood.session.readReply(1000)).toMatchObject({ kind: 'protocol', reason: 'a reply of more than 200 lines' });
    } finally {
      await flood.close();
    }
  });

  it('scrubs secrets from what the server echoes, and refuses to send a line break', async () => {
    const { session, close } = await sessionAgainst((socket) => socket.write('535 5.7.8 bad password hunter22\r\n'));
    try {
      expect(reply(await session.readReply(1000)).text).toBe('5.7.8 bad password [redacted]');
      expect(JSON.stringify(session.transcript)).not.toContain('hunter22');
      expect(() => session.send('NOOP\r\nQUIT')).toThrow(NetintelError);
      expect(() => session.send('NOOP\0')).toThrow(/CR, LF or NUL/);
    } finally {
      await close();
    }
  });
});

describe('EHLO parsing', () => {
  it('reads Postfix-style keywords with their parameters', () => {
    const extensions = parseEhloExtensions([
      'mx.example.com',
      'PIPELINING',
      'SIZE 52428800',
      'ETRN',
      'STARTTLS',
      'AUTH PLAIN LOGIN',
      'AUTH=PLAIN LOGIN',
      'ENHANCEDSTATUSCODES',
      '8BITMIME',
      'DSN',
      'SMTPUTF8',
      'CHUNKING',
      'requiretls',
    ]);
    expect(extensions).toEqual({
      keywords: ['PIPELINING', 'SIZE', 'ETRN', 'STARTTLS', 'AUTH', 'ENHANCEDSTATUSCODES', '8BITMIME', 'DSN', 'SMTPUTF8', 'CHUNKING', 'REQUIRETLS'],
      size: true,
      size_limit_bytes: 52_428_800,
      pipelining: true,
      eight_bit_mime: true,
      smtp_utf8: true,
      starttls: true,
      chunking: true,
      dsn: true,
      enhanced_status_codes: true,
      require_tls: true,
      auth: ['PLAIN', 'LOGIN'],
    });
  });

  it('keeps SIZE without a value as null, and skips junk', () => {
    const extensions = parseEhloExtensions(['mx', 'SIZE', '', '  ', '*** weird ***', 'X-EXPS GSSAPI']);
    expect(extensions).toMatchObject({ keywords: ['SIZE', 'X-EXPS'], size: true, size_limit_bytes: null, auth: [] });
  });

  it.each([
    ['mx.example.com ESMTP Postfix', 'mx.example.com'],
    ['MX.Example.COM. ready', 'mx.example.com'],
    ['[192.0.2.1] ready', '[192.0.2.1]'],
    ['[IPv6:2001:db8::1] ready', '[ipv6:2001:db8::1]'],
    ['ESMTP ready', null],
    ['localhost ESMTP', null],
    ['192.0.2.1 ESMTP', null],
    ['', null],
  ])('finds the host name in %j', (text, expected) => {
    expect(leadingHostname(text)).toBe(expected);
  });
});

describe('input normalisation', () => {
  it('normalises hosts, EHLO names, mailboxes and ports', () => {
    expect(normaliseSmtpHost('MX.Example.COM.')).toEqual({ host: 'mx.example.com', isIp: false });
    expect(normaliseSmtpHost('2001:DB8::1')).toEqual({ host: '2001:db8::1', isIp: true });
    expect(normaliseEhloName('[IPv6:2001:DB8:0::1]')).toBe('[IPv6:2001:db8::1]');
    expect(normaliseEhloName('Probe.Example.ORG')).toBe('probe.example.org');
    expect(addressLiteral('::ffff:192.0.2.7')).toBe('[192.0.2.7]');
    expect(addressLiteral('2001:db8::7')).toBe('[IPv6:2001:db8::7]');
    expect(normaliseMailbox('to', '<Someone@Bücher.Example>', false)).toBe('Someone@xn--bcher-kva.example');
    expect(normaliseMailbox('from', '<>', true)).toBe('');
    expect(parsePort(' 587 ')).toBe(587);
  });

  it.each([
    () => normaliseMailbox('to', '"quoted local"@example.com', false),
    () => normaliseMailbox('to', 'no-at-sign', false),
    () => normaliseMailbox('to', '', false),
    () => normaliseMailbox('to', 'a..b@example.com', false),
    () => normaliseEhloName('two words'),
    () => normaliseEhloName('[IPv6:192.0.2.1]'),
    () => normaliseSmtpHost('mx.example.com:25'),
    () => normaliseSmtpHost('.'),
    () => parsePort('-1'),
    () => parsePort('1e3'),
  ])('refuses bad input (%#) as invalid_input', (call) => {
    expect(call).toThrow(NetintelError);
    try {
      call();
    } catch (error) {
      expect((error as NetintelError).code).toBe('invalid_input');
    }
  });
});

function record(overrides: Partial<SmtpResult> = {}): SmtpResult {
  return {
    kind: 'smtp',
    host: 'mx.example.com',
    port: 25,
    address: '192.0.2.25',
    tls_mode: 'opportunistic',
    ehlo_name: '[192.0.2.7]',
    checked_at: '2026-01-01T00:00:00.000Z',
    connected: true,
    failure: null,
    stopped_at: 'tls',
    completed: true,
    banner: { code: 220, text: 'mx.example.com ESMTP', hostname: 'mx.example.com' },
    ehlo: { command: 'EHLO', code: 250, hostname: 'mx.example.com', text: 'mx.example.com' },
    extensions: parseEhloExtensions(['mx.example.com', 'PIPELINING', 'SIZE 10', 'ENHANCEDSTATUSCODES', '8BITMIME', 'SMTPUTF8']),
    tls: { offered: true, method: 'starttls', established: false, protocol: null, cipher: null, error: null, certificate: null },
    auth: { mechanisms_before_tls: [], mechanisms_after_tls: [], tested: null, result: null, reply: null, skipped_reason: null },
    envelope: null,
    reverse_dns: { names: ['mx.example.com'], forward_confirmed: true },
    dane: null,
    timings: { dns_ms: 1, connect_ms: 10, banner_ms: 20, ehlo_ms: 5, tls_ms: null, ehlo_after_tls_ms: null, auth_ms: null, mail_ms: null, rcpt_ms: null, total_ms: 40 },
    findings: [],
    transcript: null,
    ...overrides,
  };
}

const EXPIRED: SmtpCertificate = {
  subject: 'CN=mx.example.com',
  issuer: 'CN=Some CA',
  san: ['DNS:mx.example.com'],
  valid_from: '2024-01-01T00:00:00.000Z',
  valid_to: '2025-06-01T00:00:00.000Z',
  days_left: -214,
  expired: true,
  not_yet_valid: false,
  hostname_match: true,
  checked_name: 'mx.example.com',
  trusted: true,
  self_signed: false,
  verify_error: 'CERT_HAS_EXPIRED',
  fingerprint_sha256: 'AA',
  chain: [],
};

describe('findings judged from a record', () => {
  const judge = (result: SmtpResult) => judgeSmtpResult(result, { reverseError: null });
  const withTls = (port: number, tls_mode: SmtpResult['tls_mode']) =>
    record({ port, tls_mode, tls: { offered: true, method: 'starttls', established: true, protocol: 'TLSv1.2', cipher: 'ECDHE-RSA-AES128-GCM-SHA256', error: null, certificate: EXPIRED } });

  it('makes certificate problems warnings on port 25 (opportunistic TLS) and errors on submission ports or with TLS required', () => {
    expect(judge(withTls(25, 'opportunistic')).find((item) => item.id === 'smtp_certificate_expired')).toMatchObject({
      severity: 'warning',
      message: 'STARTTLS works but the certificate expired on 2025-06-01 (214 days ago)',
    });
    expect(judge(withTls(587, 'opportunistic')).find((item) => item.id === 'smtp_certificate_expired')?.severity).toBe('error');
    expect(judge(withTls(25, 'required')).find((item) => item.id === 'smtp_certificate_expired')?.severity).toBe('error');
  });

  it('flags TLS 1.0 and 1.1 as outdated', () => {
    const old = withTls(25, 'opportunistic');
    old.tls.protocol = 'TLSv1';
    expect(judge(old).map((item) => item.id)).toContain('smtp_tls_protocol_outdated');
  });

  it('passes a PTR that resolves back and matches the greeting and EHLO names', () => {
    expect(judge(record()).map((item) => item.id)).toEqual(['smtp_banner_ok', 'smtp_hostnames_consistent']);
  });

  it('reports each leg of the triad: no PTR, PTR not confirmed, greeting vs PTR, greeting vs EHLO', () => {
    expect(judge(record({ reverse_dns: { names: [], forward_confirmed: null } })).map((item) => item.id)).toContain('smtp_ptr_missing');
    expect(judge(record({ reverse_dns: { names: ['mx.example.com'], forward_confirmed: false } })).map((item) => item.id)).toContain('smtp_ptr_not_confirmed');
    const mismatch = judge(record({ reverse_dns: { names: ['host-192-0-2-25.isp.example'], forward_confirmed: true } }));
    expect(mismatch.find((item) => item.id === 'smtp_banner_ptr_mismatch')).toMatchObject({ severity: 'info', evidence: { banner_hostname: 'mx.example.com', ptr: ['host-192-0-2-25.isp.example'] } });
    const ehlo = judge(record({ ehlo: { command: 'EHLO', code: 250, hostname: 'mail.example.com', text: 'mail.example.com' } }));
    expect(ehlo.map((item) => item.id)).toContain('smtp_ehlo_banner_mismatch');
    expect(ehlo.map((item) => item.id)).not.toContain('smtp_hostnames_consistent');
  });

  it('does not claim a mismatch for a greeting without a host name (a bare "220 ESMTP ready")', () => {
    const ids = judge(record({ banner: { code: 220, text: 'ESMTP ready', hostname: null } })).map((item) => item.id);
    expect(ids).toContain('smtp_banner_no_hostname');
    expect(ids).not.toContain('smtp_banner_ptr_mismatch');
    expect(ids).not.toContain('smtp_hostnames_consistent');
  });

  it('says a failed PTR lookup left the host-name checks unchecked (severity unknown, with the error), without failing the probe', () => {
    const error = { code: 'timeout', message: 'no answer from 192.0.2.53:53 within 5000 ms' };
    const findings = judgeSmtpResult(record({ reverse_dns: null }), { reverseError: error });
    expect(findings.find((item) => item.id === 'smtp_ptr_lookup_failed')).toMatchObject({ severity: 'unknown', evidence: { error } });
  });

  it('keeps FCrDNS unknown when the forward lookup of the PTR name fails: an unknown finding, never "not confirmed" nor "resolves back"', async () => {
    const dns = await startDnsServer({ records: [{ name: '25.2.0.192.in-addr.arpa', type: 'PTR', data: 'mx.broken.example' }], behaviours: { 'mx.broken.example': 'servfail' } });
    try {
      const ctx = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 1000, dnsRetries: 0 });
      const outcome = await resolveReverseDns(ctx, '192.0.2.25');
      expect(outcome.reverse).toEqual({ names: ['mx.broken.example'], forward_confirmed: null });
      expect(outcome.forwardError).toMatchObject({ code: 'upstream' });
      const findings = judgeSmtpResult(record({ reverse_dns: outcome.reverse, banner: { code: 220, text: 'mx.broken.example ESMTP', hostname: 'mx.broken.example' }, ehlo: { command: 'EHLO', code: 250, hostname: 'mx.broken.example', text: 'mx.broken.example' } }), { reverseError: null, forwardError: outcome.forwardError });
      expect(findings.find((item) => item.id === 'smtp_fcrdns_lookup_failed')).toMatchObject({ severity: 'unknown', evidence: { names: ['mx.broken.example'], error: { code: 'upstream' } } });
      const ids = findings.map((item) => item.id);
      expect(ids).not.toContain('smtp_ptr_not_confirmed');
      expect(ids).not.toContain('smtp_hostnames_consistent');
      await ctx.close();
    } finally {
      await dns.close();
    }
  });

  it('gives the same FCrDNS as the mx check: up to ten PTR names asked forward, each name once', async () => {
    // Six PTR names (two written twice, one in capitals), only the sixth of which resolves back.
    const names = ['a.six.example', 'b.six.example', 'c.six.example', 'd.six.example', 'e.six.example', 'F.six.example'];
    const dns = await startDnsServer({
      records: [
        ...[...names, 'a.six.example', 'B.six.example.'].map((data) => ({ name: '26.2.0.192.in-addr.arpa', type: 'PTR' as const, data })),
        ...names.slice(0, 5).map((name) => ({ name, type: 'A' as const, data: '192.0.2.99' })),
        { name: 'f.six.example', type: 'A', data: '192.0.2.26' },
        { name: 'mx.six.example', type: 'A', data: '192.0.2.26' },
        { name: 'six.example', type: 'MX', data: { preference: 10, exchange: 'mx.six.example' } },
      ],
    });
    const ctx = createEngineContext({ resolvers: [parseResolverAddress(dns.address)], timeoutMs: 1000, dnsRetries: 0 });
    try {
      const smtp = await resolveReverseDns(ctx, '192.0.2.26');
      expect(smtp.reverse.forward_confirmed).toBe(true);
      expect([...smtp.reverse.names].sort()).toEqual(names.map((name) => name.toLowerCase()));
      const mx = await resolveMx(ctx, 'six.example');
      expect(mx.records[0]!.addresses[0]).toMatchObject({ address: '192.0.2.26', fcrdns: true });
      expect([...mx.records[0]!.addresses[0]!.ptr!].sort()).toEqual([...smtp.reverse.names].sort());
    } finally {
      await ctx.close();
      await dns.close();
    }
  });

  it('reports a slow stage and a delayed greeting with the thresholds given', () => {
    const slow = record({ timings: { ...record().timings, banner_ms: 6000, ehlo_ms: 3500 } });
    const findings = judge(slow);
    expect(findings.find((item) => item.id === 'smtp_greeting_delay')).toMatchObject({ severity: 'info', evidence: { banner_ms: 6000, threshold_ms: 5000 } });
    expect(findings.find((item) => item.id === 'smtp_slow_stage')).toMatchObject({ severity: 'warning', evidence: { stage: 'ehlo', ms: 3500 } });
    const relaxed = judgeSmtpResult(slow, { reverseError: null, greetingDelayMs: 10_000, slowStageMs: 4000 }).map((item) => item.id);
    expect(relaxed).not.toContain('smtp_greeting_delay');
    expect(relaxed).not.toContain('smtp_slow_stage');
  });

  it('explains why a relay test is inconclusive', () => {
    const envelope = { from: 'a@example.com', to: 'b@example.net', authenticated: false, relay_test: true, relay_verdict: 'inconclusive' as const };
    const greylisted = judge(record({ envelope: { ...envelope, mail: { code: 250, enhanced_code: null, text: 'Ok' }, rcpt: { code: 450, enhanced_code: '4.2.0', text: '4.2.0 Greylisted' } } }));
    expect(greylisted.find((item) => item.id === 'smtp_relay_inconclusive')?.message).toMatch(/RCPT TO got 450 4\.2\.0 Greylisted \(a temporary answer/);
    const refusedSender = judge(record({ envelope: { ...envelope, mail: { code: 553, enhanced_code: null, text: 'sender rejected' }, rcpt: null } }));
    expect(refusedSender.find((item) => item.id === 'smtp_relay_inconclusive')?.message).toMatch(/MAIL FROM was refused \(553 sender rejected\)/);
  });
});

describe('text presentation', () => {
  it('writes the transcript in swaks notation with times', () => {
    expect(
      presentTranscript([
        { at_ms: 1.25, direction: 'info', tls: false, text: 'connected' },
        { at_ms: 12, direction: 'received', tls: false, text: '220 mx ESMTP' },
        { at_ms: 13, direction: 'sent', tls: false, text: 'STARTTLS' },
        { at_ms: 40.5, direction: 'sent', tls: true, text: 'EHLO [192.0.2.7]' },
        { at_ms: 41, direction: 'received', tls: true, text: '250 mx' },
      ]),
    ).toBe(['     1.3 ms === connected', '    12.0 ms <-  220 mx ESMTP', '    13.0 ms  -> STARTTLS', '    40.5 ms  ~> EHLO [192.0.2.7]', '    41.0 ms <~  250 mx'].join('\n'));
  });

  it('writes findings one per line and replies as code and text', () => {
    expect(presentFindings([{ id: 'smtp_tls_ok', severity: 'pass', message: 'STARTTLS works' }])).toBe('pass    smtp_tls_ok: STARTTLS works');
    const present = SMTP_SCHEMA.presentColumn!;
    const value = record({ auth: { ...record().auth, reply: { code: 235, enhanced_code: '2.7.0', text: '2.7.0 Authentication successful' } } });
    expect(present(value, 'auth.reply')).toBe('235 2.7.0 Authentication successful');
    expect(present(value, 'extensions.keywords')).toBe('PIPELINING SIZE ENHANCEDSTATUSCODES 8BITMIME SMTPUTF8');
    expect(present(value, 'reverse_dns.names')).toBe('mx.example.com');
    expect(present(value, 'tls.certificate.subject')).toBeUndefined();
    expect(present(value, 'port')).toBe(25);
  });

  it('lists every leaf of the record as a column', () => {
    const leaves = (value: unknown, prefix = ''): string[] =>
      value !== null && typeof value === 'object' && !Array.isArray(value)
        ? Object.entries(value).flatMap(([key, child]) =>
            ['findings', 'transcript', 'auth.reply', 'envelope.mail', 'envelope.rcpt', 'tls.certificate.chain'].includes(`${prefix}${key}`)
              ? [`${prefix}${key}`]
              : leaves(child, `${prefix}${key}.`),
          )
        : [prefix.slice(0, -1)];
    const full = record({
      failure: { code: 'timeout', stage: 'banner', message: 'x' },
      tls: { ...record().tls, certificate: EXPIRED },
      envelope: { from: '', to: 'a@b.example', authenticated: false, mail: null, rcpt: null, relay_test: true, relay_verdict: null },
      dane: {
        tlsa: {
          host: 'mx.example.com',
          port: 25,
          name: '_25._tcp.mx.example.com',
          tried: ['_25._tcp.mx.example.com'],
          aliases: [],
          status: 'nodata',
          records: [],
          ttl_seconds: null,
          dnssec: { status: 'secure', reason: null },
          error: { code: 'timeout', message: 'x' },
          resolver: '192.0.2.53:53',
        },
        dnssec: { status: 'secure', reason: null },
        matches: [],
        verdict: 'not-applicable',
      },
    });
    expect(leaves(full).filter((column) => column !== 'kind')).toEqual(SMTP_SCHEMA.columns);
  });
});
