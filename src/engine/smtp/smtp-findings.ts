import { finding, type Finding } from '../findings.js';
import { pathFaultText } from '../tls/path-faults.js';
import type { SmtpResult } from './smtp-result.js';
import type { FailureJson } from '../mail/mail-errors.js';

/** A greeting slower than this is reported as a (probably deliberate) delay. */
export const GREETING_DELAY_MS = 5000;
/** A stage slower than this (greeting aside) is reported as slow. */
export const SLOW_STAGE_MS = 3000;
/** A certificate expiring within this many days is reported. */
export const CERTIFICATE_EXPIRY_WARNING_DAYS = 14;
/** Extensions nearly every current MTA offers; their absence is worth a note. */
export const COMMON_EXTENSIONS = ['PIPELINING', '8BITMIME', 'SIZE', 'ENHANCEDSTATUSCODES', 'SMTPUTF8'] as const;
/** SASL mechanisms that put the password on the wire as it is. */
const PLAINTEXT_MECHANISMS = new Set(['PLAIN', 'LOGIN']);

export interface JudgeContext {
  /** Why the PTR lookup of the address failed, when it did. */
  reverseError: FailureJson | null;
  /** Why a forward lookup of its PTR names failed, when that left FCrDNS unknown. */
  forwardError?: FailureJson | null;
  /** A greeting at least this slow is reported (default GREETING_DELAY_MS). */
  greetingDelayMs?: number;
  /** A stage at least this slow is reported (default SLOW_STAGE_MS). */
  slowStageMs?: number;
}

/**
 * The findings read off a finished probe record (the conversation's own
 * events, such as timeouts and refused commands, are recorded as they
 * happen): greeting, host names, extensions, TLS and the certificate,
 * AUTH, the relay test, slow stages.
 *
 * Certificate problems are warnings on port 25 with opportunistic TLS
 * (RFC 7435: senders encrypt without verifying unless MTA-STS or DANE tell
 * them to) and errors elsewhere (submission clients verify, RFC 8314).
 */
export function judgeSmtpResult(result: SmtpResult, context: JudgeContext): Finding[] {
  const findings: Finding[] = [];
  const strict = result.port !== 25 || result.tls_mode !== 'opportunistic';
  judgeBanner(result, context.greetingDelayMs ?? GREETING_DELAY_MS, findings);
  judgeHostnames(result, context, findings);
  judgeExtensions(result, findings);
  judgeTls(result, strict, findings);
  judgeAuth(result, findings);
  judgeRelay(result, findings);
  judgeSlowStages(result, context.slowStageMs ?? SLOW_STAGE_MS, findings);
  return findings;
}

function judgeBanner(result: SmtpResult, delayMs: number, findings: Finding[]): void {
  const { banner } = result;
  if (!banner) return;
  if (banner.code >= 500) {
    findings.push(
      finding(
        'smtp_banner_refused',
        'error',
        `the server refuses SMTP service: its greeting is ${banner.code} ${firstLine(banner.text)} (often a blocklisted client address or a host that does not take mail)`,
        'RFC 5321 §3.1',
        { code: banner.code, text: banner.text },
      ),
    );
  } else if (banner.code !== 220) {
    findings.push(
      finding('smtp_banner_unavailable', 'error', `the greeting is ${banner.code} ${firstLine(banner.text)}, not 220: the service is not available now`, 'RFC 5321 §3.1', {
        code: banner.code,
        text: banner.text,
      }),
    );
  } else {
    findings.push(finding('smtp_banner_ok', 'pass', `greeting 220 ${firstLine(banner.text)}`, 'RFC 5321 §4.2', { code: banner.code }));
  }
  const bannerMs = result.timings.banner_ms ?? 0;
  if (bannerMs >= delayMs) {
    findings.push(
      finding(
        'smtp_greeting_delay',
        'info',
        `the greeting came after ${(bannerMs / 1000).toFixed(1)} s: a deliberate delay (greet pause, tarpit) rather than a failure; mail servers wait up to 5 minutes for it, impatient test tools report it as broken`,
        'RFC 5321 §4.5.3.2.1',
        { banner_ms: bannerMs, threshold_ms: delayMs },
      ),
    );
  }
  if (banner.code === 220 && banner.hostname === null) {
    findings.push(
      finding('smtp_banner_no_hostname', 'info', `the greeting does not start with the server's host name: "${firstLine(banner.text)}"`, 'RFC 5321 §4.2', {
        text: banner.text,
      }),
    );
  }
}

/** MXToolbox's triad: the PTR of the address, the greeting's host name, the EHLO reply's host name. */
function judgeHostnames(result: SmtpResult, context: JudgeContext, findings: Finding[]): void {
  if (!result.connected) return;
  if (context.reverseError !== null) {
    // The reverse DNS could not be learnt, so the host-name checks beside it could not run (docs/exit-codes.md).
    findings.push(
      finding('smtp_ptr_lookup_failed', 'unknown', `the PTR lookup of ${result.address} failed: ${context.reverseError.message}; its reverse DNS is unknown, not absent`, null, {
        address: result.address,
        error: context.reverseError,
      }),
    );
  }
  const reverse = result.reverse_dns;
  const bannerHost = result.banner?.code === 220 ? result.banner.hostname : null;
  const ehloHost = result.ehlo?.hostname ?? null;
  let consistent = reverse !== null && bannerHost !== null;
  if (reverse) {
    if (reverse.names.length === 0) {
      consistent = false;
      findings.push(
        finding('smtp_ptr_missing', 'warning', `${result.address} has no PTR record (reverse DNS); receivers distrust mail from such addresses`, 'RFC 1912 §2.1', {
          address: result.address,
        }),
      );
    } else {
      if (reverse.forward_confirmed !== true) consistent = false;
      if (reverse.forward_confirmed === null && context.forwardError) {
        findings.push(
          finding(
            'smtp_fcrdns_lookup_failed',
            'unknown',
            `the forward lookup of the PTR of ${result.address} (${reverse.names.join(', ')}) failed: ${context.forwardError.message}; whether it resolves back is unknown`,
            'RFC 8601 §3',
            { address: result.address, names: reverse.names, error: context.forwardError },
          ),
        );
      }
      if (reverse.forward_confirmed === false) {
        consistent = false;
        findings.push(
          finding(
            'smtp_ptr_not_confirmed',
            'warning',
            `the PTR of ${result.address} (${reverse.names.join(', ')}) does not resolve back to it (no forward-confirmed reverse DNS)`,
            'RFC 8601 §3',
            { address: result.address, names: reverse.names },
          ),
        );
      }
      const bannerText = (result.banner?.text ?? '').toLowerCase();
      if (bannerHost !== null && !reverse.names.some((name) => name === bannerHost || bannerText.includes(name))) {
        consistent = false;
        findings.push(
          finding(
            'smtp_banner_ptr_mismatch',
            'info',
            `the greeting names ${bannerHost}, the PTR of ${result.address} is ${reverse.names.join(', ')}; harmless for receiving, but a host that also sends mail should use one name`,
            'RFC 5321 §4.2',
            { banner_hostname: bannerHost, ptr: reverse.names },
          ),
        );
      }
    }
  }
  if (bannerHost !== null && ehloHost !== null && bannerHost !== ehloHost) {
    consistent = false;
    findings.push(
      finding('smtp_ehlo_banner_mismatch', 'info', `the greeting names ${bannerHost} but the EHLO reply names ${ehloHost}`, 'RFC 5321 §4.1.1.1', {
        banner_hostname: bannerHost,
        ehlo_hostname: ehloHost,
      }),
    );
  }
  if (consistent && reverse) {
    findings.push(
      finding('smtp_hostnames_consistent', 'pass', `${result.address} resolves to ${reverse.names.join(', ')} and back, and the greeting names ${bannerHost}`, null, {
        ptr: reverse.names,
        banner_hostname: bannerHost,
        ehlo_hostname: ehloHost,
      }),
    );
  }
}

function judgeExtensions(result: SmtpResult, findings: Finding[]): void {
  if (!result.extensions || result.ehlo?.command !== 'EHLO' || result.ehlo.code !== 250) return;
  const keywords = result.extensions.keywords;
  const missing = COMMON_EXTENSIONS.filter((keyword) => !keywords.includes(keyword));
  if (missing.length > 0) {
    findings.push(
      finding('smtp_extensions_missing', 'info', `common extensions not offered: ${missing.join(', ')}`, 'RFC 5321 §2.2', {
        missing,
        offered: keywords,
      }),
    );
  }
}

function judgeTls(result: SmtpResult, strict: boolean, findings: Finding[]): void {
  const { tls } = result;
  if (!tls.established) return;
  const how = tls.method === 'implicit' ? 'TLS on connect works' : 'STARTTLS works';
  findings.push(finding('smtp_tls_ok', 'pass', `${how}: ${tls.protocol ?? '?'} with ${tls.cipher ?? '?'}`, tls.method === 'implicit' ? 'RFC 8314 §3.3' : 'RFC 3207', {
    protocol: tls.protocol,
    cipher: tls.cipher,
  }));
  if (tls.protocol !== null && /^(SSLv|TLSv1$|TLSv1\.1$)/.test(tls.protocol)) {
    findings.push(
      finding('smtp_tls_protocol_outdated', 'warning', `${how} but only with ${tls.protocol}, which is deprecated`, 'RFC 8996', { protocol: tls.protocol }),
    );
  }
  const certificate = tls.certificate;
  if (!certificate) return;
  const severity = strict ? 'error' : 'warning';
  const subject = certificate.subject || certificate.san.join(', ');
  let clean = true;
  if (certificate.expired) {
    clean = false;
    findings.push(
      finding(
        'smtp_certificate_expired',
        severity,
        `${how} but the certificate expired on ${certificate.valid_to.slice(0, 10)} (${-certificate.days_left} days ago)`,
        'RFC 5280 §4.1.2.5',
        { valid_to: certificate.valid_to, days_left: certificate.days_left, subject },
      ),
    );
  } else if (certificate.not_yet_valid) {
    clean = false;
    findings.push(
      finding('smtp_certificate_not_yet_valid', severity, `${how} but the certificate is not valid before ${certificate.valid_from}`, 'RFC 5280 §4.1.2.5', {
        valid_from: certificate.valid_from,
        subject,
      }),
    );
  } else if (certificate.days_left <= CERTIFICATE_EXPIRY_WARNING_DAYS) {
    findings.push(
      finding('smtp_certificate_expiring', 'warning', `the certificate expires in ${certificate.days_left} days (${certificate.valid_to.slice(0, 10)})`, 'RFC 5280 §4.1.2.5', {
        valid_to: certificate.valid_to,
        days_left: certificate.days_left,
      }),
    );
  }
  if (!certificate.trusted) {
    clean = false;
    const fault = pathFaultText(certificate.verify_error);
    const why = certificate.self_signed
      ? 'self-signed'
      : fault !== null
        ? `not trusted: ${fault} (${certificate.verify_error})`
        : `not issued by a trusted authority${certificate.verify_error ? ` (${certificate.verify_error})` : ''}`;
    findings.push(
      finding('smtp_certificate_untrusted', severity, `${how} but the certificate is ${why}`, 'RFC 5280 §6', {
        subject,
        issuer: certificate.issuer,
        self_signed: certificate.self_signed,
        verify_error: certificate.verify_error,
      }),
    );
  }
  if (!certificate.hostname_match) {
    clean = false;
    findings.push(
      finding(
        'smtp_certificate_name_mismatch',
        severity,
        `${how} but the certificate does not name ${certificate.checked_name} (it names ${certificate.san.join(', ') || subject})`,
        'RFC 6125 §6',
        { checked_name: certificate.checked_name, san: certificate.san, subject },
      ),
    );
  }
  if (clean) {
    findings.push(
      finding('smtp_certificate_ok', 'pass', `the certificate is trusted, names ${certificate.checked_name} and is valid for ${certificate.days_left} more days`, null, {
        subject,
        valid_to: certificate.valid_to,
      }),
    );
  }
}

function judgeAuth(result: SmtpResult, findings: Finding[]): void {
  const { auth } = result;
  const plaintextBeforeTls = (auth.mechanisms_before_tls ?? []).filter((mechanism) => PLAINTEXT_MECHANISMS.has(mechanism));
  if (plaintextBeforeTls.length > 0) {
    findings.push(
      finding(
        'smtp_auth_before_tls',
        'warning',
        `AUTH ${plaintextBeforeTls.join(' ')} is offered before TLS: a client could send its password unencrypted`,
        'RFC 4954 §4',
        { mechanisms_before_tls: auth.mechanisms_before_tls, starttls_offered: result.tls.offered },
      ),
    );
  }
  if (auth.result === 'success') {
    findings.push(finding('smtp_auth_succeeded', 'pass', `AUTH ${auth.tested} succeeded: ${auth.reply?.code} ${firstLine(auth.reply?.text ?? '')}`, 'RFC 4954 §6', { mechanism: auth.tested }));
  } else if (auth.result === 'failure') {
    const reply = auth.reply;
    findings.push(
      finding('smtp_auth_failed', 'error', `AUTH ${auth.tested} failed${reply ? `: ${reply.code} ${firstLine(reply.text)}` : ''}`, 'RFC 4954 §6', {
        mechanism: auth.tested,
        code: reply?.code ?? null,
        enhanced_code: reply?.enhanced_code ?? null,
      }),
    );
  } else if (auth.result === 'skipped') {
    const notOffered = (result.extensions?.auth.length ?? 0) === 0;
    findings.push(
      notOffered
        ? finding('smtp_auth_not_offered', 'warning', `credentials were given but ${auth.skipped_reason}`, 'RFC 4954 §3', null)
        : finding('smtp_auth_skipped', 'info', `credentials were not sent: ${auth.skipped_reason}`, 'RFC 4954 §4', null),
    );
  }
}

function judgeRelay(result: SmtpResult, findings: Finding[]): void {
  const envelope = result.envelope;
  if (!envelope || !envelope.relay_test) return;
  const rcpt = envelope.rcpt;
  const evidence = { from: envelope.from, to: envelope.to, mail: envelope.mail?.code ?? null, rcpt: rcpt?.code ?? null };
  switch (envelope.relay_verdict) {
    case 'accepted':
      findings.push(
        finding(
          'smtp_open_relay',
          'error',
          `may be an open relay: RCPT TO:<${envelope.to}> (an outside domain) was accepted without authentication (${rcpt?.code} ${firstLine(rcpt?.text ?? '')}). A 250 at RCPT can also be a deferred rejection (some servers accept every recipient and refuse after DATA or bounce later); netintel never sends DATA, so check the relay settings`,
          'RFC 5321 §3.6.1',
          evidence,
        ),
      );
      break;
    case 'denied':
      findings.push(finding('smtp_relay_denied', 'pass', `not an open relay: RCPT TO:<${envelope.to}> refused (${rcpt?.code} ${firstLine(rcpt?.text ?? '')})`, 'RFC 5321 §3.6.1', evidence));
      break;
    case 'inconclusive': {
      const why = envelope.authenticated
        ? 'the session was authenticated, and relaying for authenticated users is expected'
        : envelope.mail && envelope.mail.code >= 300
          ? `MAIL FROM was refused (${envelope.mail.code} ${firstLine(envelope.mail.text)})`
          : rcpt
            ? `RCPT TO got ${rcpt.code} ${firstLine(rcpt.text)} (a temporary answer, e.g. greylisting)`
            : 'the conversation ended before RCPT TO';
      findings.push(finding('smtp_relay_inconclusive', 'info', `the relay test is inconclusive: ${why}`, 'RFC 5321 §3.6.1', evidence));
      break;
    }
    default:
      break;
  }
}

function judgeSlowStages(result: SmtpResult, slowMs: number, findings: Finding[]): void {
  const { timings } = result;
  const stages: Array<[string, number | null]> = [
    ['connect', timings.connect_ms],
    ['ehlo', timings.ehlo_ms],
    ['tls', timings.tls_ms],
    ['ehlo after tls', timings.ehlo_after_tls_ms],
    ['auth', timings.auth_ms],
    ['mail', timings.mail_ms],
    ['rcpt', timings.rcpt_ms],
  ];
  for (const [stage, ms] of stages) {
    if (ms !== null && ms >= slowMs && !(stage === 'connect' && !result.connected)) {
      findings.push(finding('smtp_slow_stage', 'warning', `the ${stage} stage took ${(ms / 1000).toFixed(1)} s`, null, { stage, ms, threshold_ms: slowMs }));
    }
  }
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? '';
}
