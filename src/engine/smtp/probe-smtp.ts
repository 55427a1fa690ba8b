import { NetintelError } from '../../errors.js';
import type { EngineContext } from '../context.js';
import { resolveHostAddresses } from '../dns/host-addresses.js';
import { finding, SEVERITIES, type Finding } from '../findings.js';
import { capEvidence, capList, capMessage, fanOutLimits } from '../fan-out.js';
import { GREETING_DELAY_MS, judgeSmtpResult, SLOW_STAGE_MS } from './smtp-findings.js';
import {
  assertPort,
  assertSingleLine,
  normaliseEhloName,
  normaliseMailbox,
  normaliseSmtpAddress,
  normaliseSmtpHost,
} from './smtp-input.js';
import type { SmtpAuthMechanism, SmtpResult, SmtpStage, SmtpTlsMode } from './smtp-result.js';
import { SMTP_AUTH_MECHANISMS, SMTP_STAGES } from './smtp-result.js';
import { daneFromLookup, lookupTlsa, type Authenticate, type DaneOptions } from './dane.js';
import type { TrustAnchor } from '../dns/dnssec/trust-anchor.js';
import { resolveReverseDns } from './reverse-dns.js';
import { failureJson, type FailureJson } from '../mail/mail-errors.js';
import { converse, roundMs, type ProbeState } from './smtp-conversation.js';

export type { SmtpResult } from './smtp-result.js';

export interface ProbeSmtpOptions {
  /** The SMTP server: a host name or an IP address. */
  host: string;
  /** Default 25; 465 means implicit TLS unless `tls` says otherwise. */
  port?: number;
  /** Connect to this IP instead of resolving `host` (the host name still names the server for SNI and the certificate). */
  address?: string;
  /** Default `opportunistic` (STARTTLS when offered); `implicit` on port 465. */
  tls?: SmtpTlsMode;
  /** The name to send in EHLO; default the address literal of the local address (`[192.0.2.7]`). */
  ehloName?: string;
  /** Deadline of each stage (connect, each command, the TLS handshake); default ctx.timeoutMs. */
  stageTimeoutMs?: number;
  /**
   * Deadline of the greeting; default the larger of stageTimeoutMs and 30 s,
   * because servers delay their greeting on purpose (RFC 5321 §4.5.3.2.1
   * has clients wait 5 minutes).
   */
  greetingTimeoutMs?: number;
  /** The last stage to run; QUIT follows. */
  quitAfter?: SmtpStage;
  /** Credentials to test; sent only inside TLS unless `allowPlaintext`. */
  auth?: { user: string; pass: string; allowPlaintext?: boolean; mechanism?: SmtpAuthMechanism };
  /**
   * Open-relay test: MAIL FROM `from`, RCPT TO `to` (an outside address;
   * defaults RELAY_TEST_FROM and RELAY_TEST_TO) without authentication;
   * DATA is never sent.
   */
  relayTest?: { from?: string; to?: string } | null;
  /** MAIL FROM / RCPT TO to check without judging relaying (a recipient of your own domain); DATA is never sent. */
  envelope?: { from?: string; to?: string };
  /** Keep the conversation in the record. */
  transcript?: boolean;
  /** Look up the address's PTR and check it forward (default true). */
  reverseDns?: boolean;
  /** Extra trusted CA certificates (PEM), on top of Node's bundled roots. */
  tlsCa?: readonly string[];
  /**
   * DANE (RFC 7672): look up the TLSA records of `_25._tcp.<host>` (or of
   * `port`) while the conversation runs and match them against the chain
   * presented. `true` validates their DNSSEC from the IANA root; give
   * `trustAnchors` to start elsewhere, or `authenticate` to judge DNSSEC
   * otherwise. Ignored when `host` is an IP address. Default off.
   */
  dane?: boolean | { authenticate?: Authenticate; trustAnchors?: TrustAnchor; port?: number };
  /** When a greeting counts as delayed and a stage as slow (defaults GREETING_DELAY_MS, SLOW_STAGE_MS). */
  thresholds?: { greetingDelayMs?: number; slowStageMs?: number };
}

/** Default MAIL FROM and RCPT TO of the relay test: RFC 2606 names no real server is responsible for. */
export const RELAY_TEST_FROM = 'relay-test@example.com';
export const RELAY_TEST_TO = 'relay-test@example.net';

/** The greeting deadline's floor (see ProbeSmtpOptions.greetingTimeoutMs). */
export const GREETING_TIMEOUT_FLOOR_MS = 30_000;

export interface ProbeInput {
  host: string;
  hostIsIp: boolean;
  port: number;
  tlsMode: SmtpTlsMode;
  ehloName: string | null;
  stageTimeoutMs: number;
  greetingTimeoutMs: number;
  quitAfter: SmtpStage | null;
  auth: { user: string; pass: string; allowPlaintext: boolean; mechanism: SmtpAuthMechanism | undefined } | null;
  envelope: { from: string; to: string; relayTest: boolean } | null;
  transcript: boolean;
  reverseDns: boolean;
  tlsCa: readonly string[];
  dane: { options: DaneOptions; port: number } | null;
  thresholds: { greetingDelayMs: number; slowStageMs: number };
}

/**
 * Checks and normalises every option before anything touches the network.
 *
 * @throws NetintelError `invalid_input`: a bad host, address, port, EHLO
 *   name or mailbox, or any value holding CR, LF or NUL.
 */
export function normaliseProbeOptions(options: ProbeSmtpOptions, defaultTimeoutMs: number): ProbeInput & { address: string | null } {
  const { host, isIp } = normaliseSmtpHost(options.host);
  const port = assertPort(options.port ?? 25);
  const address = options.address !== undefined ? normaliseSmtpAddress(options.address) : isIp ? host : null;
  const tlsMode = options.tls ?? (port === 465 ? 'implicit' : 'opportunistic');
  if (!['opportunistic', 'required', 'implicit'].includes(tlsMode)) {
    throw new NetintelError('invalid_input', `unknown TLS mode ${JSON.stringify(tlsMode)}`, { details: { input: tlsMode } });
  }
  if (options.quitAfter !== undefined && !SMTP_STAGES.includes(options.quitAfter)) {
    throw new NetintelError('invalid_input', `unknown stage ${JSON.stringify(options.quitAfter)}; one of ${SMTP_STAGES.join(', ')}`, {
      details: { input: options.quitAfter },
    });
  }
  const stageTimeoutMs = positiveMs('stage timeout', options.stageTimeoutMs ?? defaultTimeoutMs);
  const greetingTimeoutMs = positiveMs('greeting timeout', options.greetingTimeoutMs ?? Math.max(stageTimeoutMs, GREETING_TIMEOUT_FLOOR_MS));
  let auth: ProbeInput['auth'] = null;
  if (options.auth) {
    const { user, pass } = options.auth;
    if (typeof user !== 'string' || user === '') throw new NetintelError('invalid_input', 'the AUTH user name is empty');
    if (typeof pass !== 'string' || pass === '') throw new NetintelError('invalid_input', 'the AUTH password is empty');
    assertSingleLine('the AUTH user name', user, true);
    assertSingleLine('the AUTH password', pass, true);
    const mechanism = options.auth.mechanism;
    if (mechanism !== undefined && !SMTP_AUTH_MECHANISMS.includes(mechanism)) {
      throw new NetintelError('invalid_input', `unknown AUTH mechanism ${JSON.stringify(mechanism)}; one of ${SMTP_AUTH_MECHANISMS.join(', ')}`);
    }
    auth = { user, pass, allowPlaintext: options.auth.allowPlaintext === true, mechanism };
  }
  const quitAfter = options.quitAfter ?? null;
  const relay = options.relayTest ?? null;
  const wantsEnvelope = relay !== null || options.envelope !== undefined || quitAfter === 'mail' || quitAfter === 'rcpt';
  const envelope = wantsEnvelope
    ? {
        from: normaliseMailbox('the MAIL FROM address', relay?.from ?? options.envelope?.from ?? RELAY_TEST_FROM, true),
        to: normaliseMailbox('the RCPT TO address', relay?.to ?? options.envelope?.to ?? RELAY_TEST_TO, false),
        relayTest: relay !== null,
      }
    : null;
  const tlsCa = options.tlsCa ?? [];
  for (const pem of tlsCa) {
    if (!/-----BEGIN CERTIFICATE-----/.test(pem)) throw new NetintelError('invalid_input', 'a trusted CA is not a PEM certificate');
  }
  return {
    host,
    hostIsIp: isIp,
    port,
    address,
    tlsMode: tlsMode,
    ehloName: options.ehloName !== undefined ? normaliseEhloName(options.ehloName) : null,
    stageTimeoutMs,
    greetingTimeoutMs,
    quitAfter,
    auth,
    envelope,
    transcript: options.transcript === true,
    reverseDns: options.reverseDns !== false,
    tlsCa,
    dane: daneOption(options.dane, isIp),
    thresholds: {
      greetingDelayMs: positiveMs('greeting delay threshold', options.thresholds?.greetingDelayMs ?? GREETING_DELAY_MS),
      slowStageMs: positiveMs('slow stage threshold', options.thresholds?.slowStageMs ?? SLOW_STAGE_MS),
    },
  };
}

function daneOption(option: ProbeSmtpOptions['dane'], hostIsIp: boolean): ProbeInput['dane'] {
  if (!option || hostIsIp) return null;
  const { port, ...options } = option === true ? {} : option;
  return { options, port: port === undefined ? 25 : assertPort(port) };
}

function positiveMs(label: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0 || value > 3_600_000) {
    throw new NetintelError('invalid_input', `the ${label} must be from 1 to 3600000 ms, not ${String(value)}`);
  }
  return Math.round(value);
}

/**
 * Tests one SMTP server address stage by stage: TCP connect, greeting,
 * EHLO (HELO when EHLO is refused), STARTTLS and EHLO again (or implicit
 * TLS), AUTH when credentials are given, MAIL FROM / RCPT TO for the relay
 * test, QUIT; DATA is never sent. TLS is judged twice: the handshake
 * without verification, then the certificate on its own.
 *
 * What the server does once a connection is open (a 554 greeting, a reply
 * refused, a dropped connection, a failed STARTTLS, a bad certificate) is
 * data: a record with findings. When no SMTP conversation could take place
 * at all (no TCP connection, no greeting, a failed implicit-TLS handshake)
 * the record still comes back, with `connected`, `failure` ({code, stage,
 * message}) and an error finding, so that callers probing several servers
 * read every outcome the same way; `netintel smtp` exits with
 * `failure.code` then.
 *
 * When `address` is not given and `host` is a name, the first of its
 * addresses (A before AAAA) is probed; see `probeSmtpAll` for every one.
 *
 * @throws NetintelError `invalid_input` for bad options (before any network
 *   traffic); the DNS errors of resolving `host` (`not_found`, `timeout`,
 *   `upstream`, `unreachable`); `forbidden` when the context's connect
 *   guard refuses the address (no connection is made).
 */
export async function probeSmtp(ctx: EngineContext, options: ProbeSmtpOptions): Promise<SmtpResult> {
  const input = normaliseProbeOptions(options, ctx.timeoutMs);
  if (input.address !== null) return runProbe(ctx, input, input.address, null);
  const started = performance.now();
  const addresses = await resolveHostAddresses(ctx, input.host);
  return runProbe(ctx, input, addresses[0]!, roundMs(performance.now() - started));
}

/**
 * Probes every address of the host (its A and AAAA records, resolved once)
 * concurrently, or the one address given; results in address order. A host
 * with more addresses than the context's caps allow (addresses per host,
 * SMTP connections per check: fan-out.ts) has its first ones probed, and
 * the first result carries a finding saying so.
 *
 * @throws as probeSmtp.
 */
export async function probeSmtpAll(ctx: EngineContext, options: ProbeSmtpOptions): Promise<SmtpResult[]> {
  const input = normaliseProbeOptions(options, ctx.timeoutMs);
  if (input.address !== null) return [await runProbe(ctx, input, input.address, null)];
  const started = performance.now();
  const { addresses, finding: capped } = probedAddresses(ctx, input.host, await resolveHostAddresses(ctx, input.host));
  const dnsMs = roundMs(performance.now() - started);
  const results = await Promise.all(addresses.map((address) => runProbe(ctx, input, address, dnsMs)));
  return capped ? withFinding(results, capped) : results;
}

/**
 * The addresses of `host` that one check probes: the first ones, up to the
 * addresses per host and the SMTP connections per check of the context
 * (whichever is lower), and the finding that says so when some were left
 * out (`smtp_addresses_limited` or `smtp_connections_limited`). Remote
 * mode, probing one address per request, keeps to the same caps.
 */
export function probedAddresses(ctx: Pick<EngineContext, 'fanOut'>, host: string, addresses: readonly string[]): { addresses: string[]; finding: Finding | null } {
  const limits = fanOutLimits(ctx);
  // The lower cap is the one that applies, and the one the finding names.
  const { kept, finding: capped } =
    limits.maxSmtpConnections < limits.maxAddresses
      ? capList(addresses, limits.maxSmtpConnections, (total) =>
          finding('smtp_connections_limited', 'warning', capMessage(total, limits.maxSmtpConnections, `addresses of ${host}`, 'SMTP connections per check'), null, capEvidence(total, limits.maxSmtpConnections, { host })),
        )
      : capList(addresses, limits.maxAddresses, (total) =>
          finding('smtp_addresses_limited', 'warning', capMessage(total, limits.maxAddresses, `addresses of ${host}`, 'addresses per host'), null, capEvidence(total, limits.maxAddresses, { host })),
        );
  return { addresses: kept, finding: capped };
}

/** The results with `item` added to the first one's findings, in severity order. */
export function withFinding(results: SmtpResult[], item: Finding): SmtpResult[] {
  const [first, ...rest] = results;
  if (!first) return results;
  const findings = [...first.findings, item].sort((a, b) => SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity));
  return [{ ...first, findings }, ...rest];
}



async function runProbe(ctx: EngineContext, input: ProbeInput, address: string, dnsMs: number | null): Promise<SmtpResult> {
  const startedAt = performance.now();
  const result: SmtpResult = {
    kind: 'smtp',
    host: input.host,
    port: input.port,
    address,
    tls_mode: input.tlsMode,
    ehlo_name: input.ehloName,
    checked_at: ctx.now().toISOString(),
    connected: false,
    failure: null,
    stopped_at: 'connect',
    completed: false,
    banner: null,
    ehlo: null,
    extensions: null,
    tls: { offered: null, method: null, established: false, protocol: null, cipher: null, error: null, certificate: null },
    auth: { mechanisms_before_tls: null, mechanisms_after_tls: null, tested: null, result: null, reply: null, skipped_reason: null },
    envelope: null,
    reverse_dns: null,
    dane: null,
    timings: {
      dns_ms: dnsMs,
      connect_ms: null,
      banner_ms: null,
      ehlo_ms: null,
      tls_ms: null,
      ehlo_after_tls_ms: null,
      auth_ms: null,
      mail_ms: null,
      rcpt_ms: null,
      total_ms: 0,
    },
    findings: [],
    transcript: null,
  };
  const state: ProbeState = { startedAt, result, findings: [], session: null, chainDer: null };
  const reverse = input.reverseDns
    ? resolveReverseDns(ctx, address).then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error: failureJson(error) }),
      )
    : null;

  const tlsa = input.dane
    ? lookupTlsa(ctx, input.host, input.dane.port, input.dane.options).then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      )
    : null;

  try {
    await converse(ctx, input, state);
  } finally {
    state.session?.destroy();
  }
  // The conversation's time; the PTR lookup runs beside it and is not counted.
  result.timings.total_ms = roundMs(performance.now() - startedAt);
  ctx.debug(`smtp ${result.host} ${address} port ${input.port}: stopped at ${result.stopped_at} after ${result.timings.total_ms} ms`);

  let reverseError: FailureJson | null = null;
  let forwardError: FailureJson | null = null;
  if (reverse) {
    const outcome = await reverse;
    if (outcome.ok) {
      result.reverse_dns = outcome.value.reverse;
      forwardError = outcome.value.forwardError;
    } else reverseError = outcome.error;
  }
  const daneFindings: Finding[] = [];
  if (tlsa) {
    const outcome = await tlsa;
    // The host was normalised before any traffic: a lookup can only fail the way the probe's own DNS did.
    if (!outcome.ok) throw outcome.error;
    const { findings: found, ...dane } = daneFromLookup(outcome.value, state.chainDer, starttlsOffered(result), ctx.now());
    result.dane = dane;
    daneFindings.push(...found);
  }
  if (input.transcript && state.session) result.transcript = state.session.transcript;
  else if (input.transcript) result.transcript = [];
  // Most serious first; within a severity, in the order the conversation met them.
  result.findings = [...state.findings, ...judgeSmtpResult(result, { reverseError, forwardError, ...input.thresholds }), ...daneFindings].sort(
    (a, b) => SEVERITIES.indexOf(a.severity) - SEVERITIES.indexOf(b.severity),
  );
  return result;
}

/**
 * Whether STARTTLS was offered, for DANE: null when the conversation
 * ended before it could tell, or before TLS was tried though offered.
 */
function starttlsOffered(result: SmtpResult): boolean | null {
  if (result.extensions === null) return null;
  if (result.tls.offered !== true) return false;
  return result.tls.method !== null ? true : null;
}

