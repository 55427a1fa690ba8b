import net from 'node:net';
import type { TLSSocket } from 'node:tls';
import { NetintelError } from '../../errors.js';
import { guardedConnect, type ConnectGuard } from '../connect-guard.js';
import type { EngineContext } from '../context.js';
import { resolveHostAddresses } from '../dns/host-addresses.js';
import { finding, SEVERITIES, type Finding } from '../findings.js';
import { capEvidence, capList, capMessage, fanOutLimits } from '../fan-out.js';
import { emptyExtensions, leadingHostname, parseEhloExtensions } from './ehlo-extensions.js';
import { authenticate, authSecrets, chooseMechanism } from './smtp-auth.js';
import { GREETING_DELAY_MS, judgeSmtpResult, SLOW_STAGE_MS } from './smtp-findings.js';
import {
  addressLiteral,
  assertPort,
  assertSingleLine,
  normaliseEhloName,
  normaliseMailbox,
  normaliseSmtpAddress,
  normaliseSmtpHost,
} from './smtp-input.js';
import type { SmtpAuthMechanism, SmtpReply, SmtpResult, SmtpStage, SmtpTlsMode } from './smtp-result.js';
import { SMTP_AUTH_MECHANISMS, SMTP_STAGES } from './smtp-result.js';
import { SmtpSession, type ReplyOutcome } from './smtp-session.js';
import { judgeCertificate, peerChainDer, probeTlsOptions } from './tls-certificate.js';
import { daneFromLookup, lookupTlsa, type Authenticate, type DaneOptions } from './dane.js';
import type { TrustAnchor } from '../dns/dnssec/trust-anchor.js';
import { resolveReverseDns } from './reverse-dns.js';
import { reportStage } from '../stage.js';

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

interface ProbeInput {
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
    tlsMode,
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

/** `host:port`, an IPv6 address in brackets (RFC 3986 §3.2.2). */
function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

function roundMs(ms: number): number {
  return Math.round(ms * 10) / 10;
}

function stageIndex(stage: SmtpStage): number {
  return SMTP_STAGES.indexOf(stage);
}

/**
 * Opens a TCP connection, or says why not. The context's guard judges the
 * address first; its refusal rejects (nothing is sent).
 */
function connectTcp(
  guard: ConnectGuard | null | undefined,
  host: string,
  address: string,
  port: number,
  timeoutMs: number,
): Promise<{ ok: true; socket: net.Socket } | { ok: false; code: 'unreachable' | 'timeout'; reason: string }> {
  return new Promise((resolve, reject) => {
    // A refusal of the guard, thrown here, rejects the promise.
    const guarded = guardedConnect(guard, address, { what: 'SMTP server', name: host, port });
    let socket: net.Socket;
    try {
      socket = net.connect({ host: address, port, ...guarded });
    } catch (error) {
      // Arguments net.connect refuses at once (a bad port) fail the stage
      // like a refused connection instead of rejecting with a RangeError.
      resolve({ ok: false, code: 'unreachable', reason: (error as Error).message });
      return;
    }
    const timer = setTimeout(() => {
      // A late error of the abandoned socket must not be an uncaught exception.
      socket.on('error', () => {});
      socket.destroy();
      resolve({ ok: false, code: 'timeout', reason: `no TCP connection within ${timeoutMs} ms` });
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve({ ok: true, socket });
    });
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.on('error', () => {});
      socket.destroy();
      if (error instanceof NetintelError) {
        reject(error);
        return;
      }
      const reason =
        error.code === 'ECONNREFUSED'
          ? 'connection refused (nothing listens on that port)'
          : error.code === 'EHOSTUNREACH' || error.code === 'ENETUNREACH'
            ? `no route to the host (${error.code})`
            : error.code === 'ECONNRESET'
              ? 'connection reset'
              : `${error.message}`;
      resolve({ ok: false, code: 'unreachable', reason });
    });
  });
}

/** Mutable state of one probe, turned into the record at the end. */
interface ProbeState {
  /** performance.now() when the probe started. */
  startedAt: number;
  result: SmtpResult;
  findings: Finding[];
  session: SmtpSession | null;
  /** The DER of the chain the server presented, leaf first; null without a TLS session. */
  chainDer: Buffer[] | null;
}

async function runProbe(ctx: EngineContext, input: ProbeInput, address: string, dnsMs: number | null): Promise<SmtpResult> {
  const startedAt = performance.now();
  const result: SmtpResult = {
    kind: 'smtp',
    host: input.host,
    port: input.port,
    address,
    tlsMode: input.tlsMode,
    ehloName: input.ehloName,
    checkedAt: ctx.now().toISOString(),
    connected: false,
    failure: null,
    stoppedAt: 'connect',
    completed: false,
    banner: null,
    ehlo: null,
    extensions: null,
    tls: { offered: false, method: null, established: false, protocol: null, cipher: null, error: null, certificate: null },
    auth: { mechanismsBeforeTls: null, mechanismsAfterTls: null, tested: null, result: null, reply: null, skippedReason: null },
    envelope: null,
    reverseDns: null,
    dane: null,
    timings: {
      dnsMs,
      connectMs: null,
      bannerMs: null,
      ehloMs: null,
      tlsMs: null,
      ehloAfterTlsMs: null,
      authMs: null,
      mailMs: null,
      rcptMs: null,
      totalMs: 0,
    },
    findings: [],
    transcript: null,
  };
  const state: ProbeState = { startedAt, result, findings: [], session: null, chainDer: null };
  const reverse = input.reverseDns
    ? resolveReverseDns(ctx, address).then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error: error instanceof NetintelError ? error.message : String(error) }),
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
  result.timings.totalMs = roundMs(performance.now() - startedAt);
  ctx.debug(`smtp ${result.host} ${address} port ${input.port}: stopped at ${result.stoppedAt} after ${result.timings.totalMs} ms`);

  let reverseError: string | null = null;
  if (reverse) {
    const outcome = await reverse;
    if (outcome.ok) result.reverseDns = outcome.value;
    else reverseError = outcome.error;
  }
  const daneFindings: Finding[] = [];
  if (tlsa) {
    const outcome = await tlsa;
    // The host was normalised before any traffic: a lookup can only fail the way the probe's own DNS did.
    if (!outcome.ok) throw outcome.error;
    const { findings: found, ...dane } = daneFromLookup(outcome.value, state.chainDer, starttlsOffered(result));
    result.dane = dane;
    daneFindings.push(...found);
  }
  if (input.transcript && state.session) result.transcript = state.session.transcript;
  else if (input.transcript) result.transcript = [];
  // Most serious first; within a severity, in the order the conversation met them.
  result.findings = [...state.findings, ...judgeSmtpResult(result, { reverseError, ...input.thresholds }), ...daneFindings].sort(
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
  if (!result.tls.offered) return false;
  return result.tls.method !== null ? true : null;
}

/** Runs the conversation; returns when it ended, however it ended. */
async function converse(ctx: EngineContext, input: ProbeInput, state: ProbeState): Promise<void> {
  const { result, findings } = state;
  const stops = (stage: SmtpStage) => input.quitAfter !== null && stageIndex(input.quitAfter) <= stageIndex(stage);
  const severityStrict = input.port !== 25 || input.tlsMode !== 'opportunistic';
  const note = (text: string) => state.session?.note(text);
  const stage = (detail: string) => reportStage(ctx, 'smtp', hostPort(result.host, input.port), detail);

  // --- connect
  stage('connect');
  const startedAt = performance.now();
  const tcp = await connectTcp(ctx.connectGuard, result.host, result.address, input.port, input.stageTimeoutMs);
  result.timings.connectMs = roundMs(performance.now() - startedAt);
  if (!tcp.ok) {
    const message = `cannot connect to ${result.address} port ${input.port}: ${tcp.reason}`;
    result.failure = { code: tcp.code, stage: 'connect', message };
    findings.push(
      finding('smtp_connect_failed', 'error', `${message}${input.port === 25 ? '; outbound port 25 is often blocked by ISPs and cloud providers' : ''}`, 'RFC 5321 §3.1', {
        address: result.address,
        port: input.port,
        reason: tcp.reason,
        timeoutMs: tcp.code === 'timeout' ? input.stageTimeoutMs : null,
      }),
    );
    return;
  }
  result.connected = true;
  const secrets = input.auth ? authSecrets(input.auth.user, input.auth.pass) : [];
  const session = new SmtpSession({ socket: tcp.socket, startedAt: state.startedAt, secrets });
  state.session = session;
  note(`connected to ${result.address} port ${input.port} (${result.host}) in ${result.timings.connectMs} ms`);
  result.ehloName ??= addressLiteral(tcp.socket.localAddress ?? '0.0.0.0');

  // --- implicit TLS: the handshake comes before the greeting (RFC 8314 §3.3)
  if (input.tlsMode === 'implicit') {
    result.tls.offered = true;
    result.tls.method = 'implicit';
    stage('TLS');
    const ok = await handshake(ctx, input, state, 'TLS');
    if (!ok) {
      result.failure = { code: 'tls', stage: 'connect', message: `TLS handshake with ${result.address} port ${input.port} failed: ${result.tls.error}` };
      return;
    }
  }
  if (stops('connect')) {
    // Nothing has been said yet, so there is nothing to QUIT: just close.
    await session.end();
    session.note('connection closed');
    result.completed = true;
    return;
  }

  // --- banner
  result.stoppedAt = 'banner';
  stage('greeting');
  const bannerStart = performance.now();
  const banner = await session.readReply(input.greetingTimeoutMs);
  result.timings.bannerMs = roundMs(performance.now() - bannerStart);
  if (banner.kind !== 'reply') {
    if (banner.kind === 'timeout') {
      const message = `connected to ${result.address} port ${input.port}, but no greeting within ${input.greetingTimeoutMs} ms`;
      result.failure = { code: 'timeout', stage: 'banner', message };
      findings.push(
        finding(
          'smtp_banner_timeout',
          'error',
          `${message}; a server may delay its greeting on purpose (senders wait up to 5 minutes): raise the greeting timeout to tell a slow server from a dead one`,
          'RFC 5321 §4.5.3.2.1',
          { greetingTimeoutMs: input.greetingTimeoutMs },
        ),
      );
    } else if (banner.kind === 'closed') {
      const message = `${result.address} port ${input.port} closed the connection before greeting${banner.error ? ` (${banner.error})` : ''}`;
      result.failure = { code: 'unreachable', stage: 'banner', message };
      findings.push(finding('smtp_connection_closed', 'error', message, 'RFC 5321 §3.1', { stage: 'banner', error: banner.error }));
    } else {
      protocolFinding(findings, 'banner', banner);
    }
    return;
  }
  const bannerHost = leadingHostname(banner.reply.text);
  result.banner = { code: banner.reply.code, text: banner.reply.text, hostname: bannerHost };
  note(`greeting after ${result.timings.bannerMs} ms`);
  if (banner.reply.code !== 220) {
    // RFC 5321 §3.1: after a 554 greeting the client waits for the server to close, or sends QUIT.
    await quit(session, input, state, false);
    return;
  }
  if (stops('banner')) {
    await quit(session, input, state, true);
    return;
  }

  // --- EHLO, HELO when EHLO is refused
  result.stoppedAt = 'ehlo';
  stage('EHLO');
  const ehloStart = performance.now();
  const ehloName = result.ehloName!;
  let greeting = await session.command(`EHLO ${ehloName}`, input.stageTimeoutMs);
  let command: 'EHLO' | 'HELO' = 'EHLO';
  if (greeting.kind === 'reply' && greeting.reply.code >= 500 && greeting.reply.code <= 504) {
    findings.push(
      finding('smtp_ehlo_refused', 'warning', `EHLO refused (${greeting.reply.code}); trying HELO: without EHLO there are no extensions (no STARTTLS, AUTH, 8BITMIME)`, 'RFC 5321 §4.1.1.1', {
        reply: replyEvidence(greeting.reply),
      }),
    );
    command = 'HELO';
    greeting = await session.command(`HELO ${ehloName}`, input.stageTimeoutMs);
  }
  result.timings.ehloMs = roundMs(performance.now() - ehloStart);
  if (!(await expectReply(state, 'ehlo', greeting, input))) return;
  const greetingReply = (greeting as Extract<ReplyOutcome, { kind: 'reply' }>).reply;
  result.ehlo = { command, code: greetingReply.code, hostname: leadingHostname(greetingReply.text), text: greetingReply.text.split('\n')[0] ?? '' };
  if (greetingReply.code !== 250) {
    findings.push(
      finding('smtp_helo_refused', 'error', `${command} refused: ${greetingReply.code} ${firstLine(greetingReply.text)}`, 'RFC 5321 §4.1.1.1', {
        command,
        ehloName,
        reply: replyEvidence(greetingReply),
      }),
    );
    await quit(session, input, state, false);
    return;
  }
  result.extensions = command === 'EHLO' ? parseEhloExtensions(greetingReply.text.split('\n')) : emptyExtensions();
  result.tls.offered = input.tlsMode === 'implicit' ? true : result.extensions.starttls;
  if (input.tlsMode === 'implicit') result.auth.mechanismsAfterTls = result.extensions.auth;
  else result.auth.mechanismsBeforeTls = result.extensions.auth;
  if (stops('ehlo')) {
    await quit(session, input, state, true);
    return;
  }

  // --- STARTTLS (RFC 3207)
  if (input.tlsMode !== 'implicit') {
    if (!result.extensions.starttls && input.tlsMode !== 'required') {
      findings.push(
        finding(
          'smtp_starttls_missing',
          severityStrict ? 'error' : 'warning',
          `STARTTLS is not offered: mail to and from this server travels unencrypted${input.port === 587 ? ' (a submission server should require TLS)' : ''}`,
          input.port === 25 ? 'RFC 3207 §4' : 'RFC 8314 §3.3',
          { ehloKeywords: result.extensions.keywords },
        ),
      );
    } else {
      result.stoppedAt = 'tls';
      if (!result.extensions.starttls) {
        findings.push(
          finding('smtp_starttls_missing', 'error', 'STARTTLS is required (--tls) but the server does not offer it', 'RFC 3207 §4', {
            ehloKeywords: result.extensions.keywords,
          }),
        );
        await quit(session, input, state, false);
        return;
      }
      const tlsStart = performance.now();
      stage('STARTTLS');
      const answer = await session.command('STARTTLS', input.stageTimeoutMs);
      if (answer.kind === 'reply' && answer.reply.code !== 220) {
        result.timings.tlsMs = roundMs(performance.now() - tlsStart);
        result.tls.method = 'starttls';
        result.tls.error = `${answer.reply.code} ${firstLine(answer.reply.text)}`;
        findings.push(
          finding(
            'smtp_starttls_failed',
            'error',
            `STARTTLS is advertised but the server refused it: ${result.tls.error}; the session stays unencrypted`,
            'RFC 3207 §4',
            { reply: replyEvidence(answer.reply) },
          ),
        );
        if (input.tlsMode === 'required') {
          await quit(session, input, state, false);
          return;
        }
        // RFC 3207 §4: after a refused STARTTLS the client may go on without TLS.
      } else {
        if (!(await expectReply(state, 'tls', answer, input))) return;
        result.tls.method = 'starttls';
        const ok = await handshake(ctx, input, state, 'STARTTLS', tlsStart);
        if (!ok) return;
        const ehloTlsStart = performance.now();
        const again = await session.command(`EHLO ${ehloName}`, input.stageTimeoutMs);
        result.timings.ehloAfterTlsMs = roundMs(performance.now() - ehloTlsStart);
        if (!(await expectReply(state, 'tls', again, input))) return;
        const againReply = (again as Extract<ReplyOutcome, { kind: 'reply' }>).reply;
        if (againReply.code !== 250) {
          findings.push(
            finding('smtp_ehlo_after_tls_refused', 'error', `EHLO after STARTTLS refused: ${againReply.code} ${firstLine(againReply.text)}`, 'RFC 3207 §4.2', {
              reply: replyEvidence(againReply),
            }),
          );
          await quit(session, input, state, false);
          return;
        }
        result.extensions = parseEhloExtensions(againReply.text.split('\n'));
        result.auth.mechanismsAfterTls = result.extensions.auth;
      }
    }
  }
  if (stops('tls')) {
    await quit(session, input, state, true);
    return;
  }

  // --- AUTH (RFC 4954)
  let authenticated = false;
  if (input.auth) {
    result.stoppedAt = 'auth';
    const offered = result.extensions.auth;
    const mechanism = chooseMechanism(offered, input.auth.mechanism);
    if (!result.tls.established && !input.auth.allowPlaintext) {
      result.auth.result = 'skipped';
      result.auth.skippedReason = 'the connection is not encrypted; credentials are sent only inside TLS unless plaintext AUTH is allowed';
    } else if (offered.length === 0) {
      result.auth.result = 'skipped';
      result.auth.skippedReason = 'the server does not offer AUTH';
    } else if (mechanism === null) {
      result.auth.result = 'skipped';
      result.auth.skippedReason = `none of the mechanisms netintel tests (${input.auth.mechanism ?? SMTP_AUTH_MECHANISMS.join(', ')}) is offered; the server offers ${offered.join(' ')}`;
    } else {
      result.auth.tested = mechanism;
      const authStart = performance.now();
      stage('AUTH');
      const outcome = await authenticate(session, mechanism, input.auth.user, input.auth.pass, input.stageTimeoutMs);
      result.timings.authMs = roundMs(performance.now() - authStart);
      if (!(await expectReply(state, 'auth', outcome, input))) {
        result.auth.result = 'failure';
        return;
      }
      const reply = (outcome as Extract<ReplyOutcome, { kind: 'reply' }>).reply;
      result.auth.reply = reply;
      authenticated = reply.code === 235;
      result.auth.result = authenticated ? 'success' : 'failure';
    }
  }
  if (stops('auth')) {
    await quit(session, input, state, true);
    return;
  }

  // --- MAIL FROM / RCPT TO; DATA is never sent
  if (input.envelope) {
    const { from, to, relayTest } = input.envelope;
    const envelope = { from, to, authenticated, mail: null as SmtpReply | null, rcpt: null as SmtpReply | null, relayTest, relayVerdict: null as 'denied' | 'accepted' | 'inconclusive' | null };
    result.envelope = envelope;
    result.stoppedAt = 'mail';
    stage('MAIL FROM');
    const mailStart = performance.now();
    const mail = await session.command(`MAIL FROM:<${from}>`, input.stageTimeoutMs);
    result.timings.mailMs = roundMs(performance.now() - mailStart);
    if (!(await expectReply(state, 'mail', mail, input))) {
      if (relayTest) envelope.relayVerdict = 'inconclusive';
      return;
    }
    envelope.mail = (mail as Extract<ReplyOutcome, { kind: 'reply' }>).reply;
    if (envelope.mail.code >= 300) {
      if (relayTest) envelope.relayVerdict = 'inconclusive';
      await quit(session, input, state, true);
      return;
    }
    if (stops('mail')) {
      await quit(session, input, state, true);
      return;
    }
    result.stoppedAt = 'rcpt';
    stage('RCPT TO');
    const rcptStart = performance.now();
    const rcpt = await session.command(`RCPT TO:<${to}>`, input.stageTimeoutMs);
    result.timings.rcptMs = roundMs(performance.now() - rcptStart);
    if (!(await expectReply(state, 'rcpt', rcpt, input))) {
      if (relayTest) envelope.relayVerdict = 'inconclusive';
      return;
    }
    envelope.rcpt = (rcpt as Extract<ReplyOutcome, { kind: 'reply' }>).reply;
    if (relayTest) {
      const code = envelope.rcpt.code;
      envelope.relayVerdict = code >= 500 ? 'denied' : code >= 200 && code < 300 && !authenticated ? 'accepted' : 'inconclusive';
    }
    // Leave no transaction open behind us (RFC 5321 §4.1.1.5).
    const reset = await session.command('RSET', input.stageTimeoutMs);
    if (reset.kind !== 'reply') {
      session.destroy();
      return;
    }
  }
  await quit(session, input, state, true);
}

/**
 * Performs the TLS handshake (implicit, or after `220` to STARTTLS) and
 * records the handshake facts and the certificate's. False when the
 * handshake failed (the connection is gone then).
 */
async function handshake(ctx: EngineContext, input: ProbeInput, state: ProbeState, label: 'TLS' | 'STARTTLS', startedAt = performance.now()): Promise<boolean> {
  const { result, findings } = state;
  const session = state.session!;
  const servername = input.hostIsIp ? null : input.host;
  const outcome = await session.startTls(probeTlsOptions(servername, input.tlsCa), input.stageTimeoutMs);
  result.timings.tlsMs = roundMs(performance.now() - startedAt);
  if (outcome.discardedBytes > 0) {
    session.note(`${outcome.discardedBytes} bytes sent by the server before the TLS handshake were discarded`);
    findings.push(
      finding(
        'smtp_starttls_injection',
        'warning',
        `the server sent ${outcome.discardedBytes} bytes after its reply to STARTTLS and before the handshake; they were discarded (a sign of a broken or tampering middlebox)`,
        'RFC 3207 §5',
        { discardedBytes: outcome.discardedBytes },
      ),
    );
  }
  if (!outcome.ok) {
    result.tls.error = outcome.error;
    session.note(`TLS handshake failed: ${outcome.error}`);
    findings.push(
      label === 'STARTTLS'
        ? finding('smtp_starttls_failed', 'error', `STARTTLS is advertised and accepted, but the TLS handshake fails: ${outcome.error}`, 'RFC 3207 §4', {
            error: outcome.error,
          })
        : finding('smtp_tls_handshake_failed', 'error', `the TLS handshake on connect fails: ${outcome.error}`, 'RFC 8314 §3.3', { error: outcome.error }),
    );
    return false;
  }
  const socket: TLSSocket = outcome.socket;
  result.tls.established = true;
  result.tls.protocol = socket.getProtocol() ?? null;
  result.tls.cipher = socket.getCipher()?.name ?? null;
  result.tls.certificate = judgeCertificate(socket, input.host, ctx.now(), input.tlsCa);
  state.chainDer = peerChainDer(socket);
  session.note(`TLS started: ${result.tls.protocol ?? '?'} ${result.tls.cipher ?? '?'} in ${result.timings.tlsMs} ms`);
  const certificate = result.tls.certificate;
  if (certificate) {
    session.note(`TLS peer subject=[${certificate.subject}] SAN=[${certificate.san.join(', ')}] notAfter=[${certificate.validTo}]`);
    session.note(
      `TLS certificate ${certificate.trusted ? 'passed' : 'failed'} CA verification${certificate.verifyError ? ` (${certificate.verifyError})` : ''}, ${certificate.hostnameMatch ? 'passed' : 'failed'} host verification (${certificate.checkedName})`,
    );
  }
  return true;
}

/**
 * Checks that a command got a reply; records a finding and ends the
 * session when it did not (timeout, closed, not SMTP). A 421 reply means
 * the server is closing the channel (RFC 5321 §3.8).
 */
async function expectReply(state: ProbeState, stage: SmtpStage, outcome: ReplyOutcome, input: ProbeInput): Promise<boolean> {
  const { findings } = state;
  if (outcome.kind === 'timeout') {
    findings.push(
      finding('smtp_stage_timeout', 'error', `no reply at the ${stage} stage within ${input.stageTimeoutMs} ms`, 'RFC 5321 §4.5.3.2', {
        stage,
        timeoutMs: input.stageTimeoutMs,
      }),
    );
    state.session?.destroy();
    return false;
  }
  if (outcome.kind === 'closed') {
    findings.push(
      finding('smtp_connection_closed', 'error', `the server closed the connection at the ${stage} stage${outcome.error ? ` (${outcome.error})` : ''}`, 'RFC 5321 §3.8', {
        stage,
        error: outcome.error,
      }),
    );
    return false;
  }
  if (outcome.kind === 'protocol') {
    protocolFinding(findings, stage, outcome);
    return false;
  }
  if (outcome.reply.code === 421) {
    findings.push(
      finding('smtp_service_closing', 'error', `the server is closing the session at the ${stage} stage: 421 ${firstLine(outcome.reply.text)}`, 'RFC 5321 §3.8', {
        stage,
        reply: replyEvidence(outcome.reply),
      }),
    );
    state.session?.destroy();
    return false;
  }
  return true;
}

function protocolFinding(findings: Finding[], stage: SmtpStage, outcome: Extract<ReplyOutcome, { kind: 'protocol' }>): void {
  findings.push(
    finding('smtp_protocol_error', 'error', `not an SMTP reply at the ${stage} stage: ${outcome.reason}: ${outcome.line.slice(0, 120)}`, 'RFC 5321 §4.2', {
      stage,
      line: outcome.line.slice(0, 512),
      reason: outcome.reason,
    }),
  );
}

/** Sends QUIT and closes; `completed` says whether the conversation ran as planned. */
async function quit(session: SmtpSession, input: ProbeInput, state: ProbeState, planned: boolean): Promise<void> {
  const reply = await session.command('QUIT', Math.min(input.stageTimeoutMs, 5000));
  state.result.completed = planned && reply.kind === 'reply' && reply.reply.code === 221;
  await session.end();
  session.note('connection closed');
}

function firstLine(text: string): string {
  return text.split('\n')[0] ?? '';
}

function replyEvidence(reply: SmtpReply): Record<string, unknown> {
  return { code: reply.code, enhancedCode: reply.enhancedCode, text: reply.text };
}
