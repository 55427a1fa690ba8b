import type { TLSSocket } from 'node:tls';
import type { EngineContext } from '../context.js';
import { finding, type Finding } from '../findings.js';
import { reportStage } from '../stage.js';
import { emptyExtensions, leadingHostname, parseEhloExtensions } from './ehlo-extensions.js';
import type { ProbeInput } from './probe-smtp.js';
import { authenticate, authSecrets, chooseMechanism } from './smtp-auth.js';
import { addressLiteral } from './smtp-input.js';
import type { SmtpReply, SmtpResult, SmtpStage } from './smtp-result.js';
import { SMTP_AUTH_MECHANISMS, SMTP_STAGES } from './smtp-result.js';
import { SmtpSession, type ReplyOutcome } from './smtp-session.js';
import { connectTcp } from '../tls/tcp-connect.js';
import { judgeCertificate, presentedChainDer, probeTlsOptions } from '../tls/tls-certificate.js';

/** One open conversation: what each stage reads and records. */
interface Conversation {
  readonly ctx: EngineContext;
  readonly input: ProbeInput;
  readonly state: ProbeState;
  readonly result: SmtpResult;
  readonly findings: Finding[];
  readonly session: SmtpSession;
  /** Whether AUTH succeeded, for the relay verdict. */
  authenticated: boolean;
}

/** What a stage leaves: the conversation goes on, or it has ended (the stage closed or quit). */
type StageEnd = 'next' | 'ended';

/** The stages after the greeting's, in order, each followed by QUIT when the probe stops after it. */
const STAGES: readonly (readonly [SmtpStage, (conversation: Conversation) => Promise<StageEnd>])[] = [
  ['banner', readGreeting],
  ['ehlo', sayEhlo],
  ['tls', negotiateStartTls],
  ['auth', tryAuth],
];

/** Runs the conversation; returns when it ended, however it ended. */
export async function converse(ctx: EngineContext, input: ProbeInput, state: ProbeState): Promise<void> {
  const conversation = await openConnection(ctx, input, state);
  if (conversation === null) return;
  if (stopsAfter(input, 'connect')) {
    // Nothing has been said yet, so there is nothing to QUIT: just close.
    await conversation.session.end();
    conversation.session.note('connection closed');
    state.result.completed = true;
    return;
  }
  for (const [stage, run] of STAGES) {
    if ((await run(conversation)) === 'ended') return;
    if (stopsAfter(input, stage)) {
      await quit(conversation.session, input, state, true);
      return;
    }
  }
  await tryEnvelope(conversation);
}

function stopsAfter(input: ProbeInput, stage: SmtpStage): boolean {
  return input.quitAfter !== null && stageIndex(input.quitAfter) <= stageIndex(stage);
}

function reportProbeStage(conversation: Pick<Conversation, 'ctx' | 'input' | 'result'>, detail: string): void {
  reportStage(conversation.ctx, 'smtp', hostPort(conversation.result.host, conversation.input.port), detail);
}

/** TCP connect, then the implicit TLS handshake, which comes before the greeting (RFC 8314 §3.3); null when either failed. */
async function openConnection(ctx: EngineContext, input: ProbeInput, state: ProbeState): Promise<Conversation | null> {
  const { result, findings } = state;
  reportProbeStage({ ctx, input, result }, 'connect');
  const startedAt = performance.now();
  const tcp = await connectTcp(ctx.connectGuard, { what: 'SMTP server', name: result.host, address: result.address, port: input.port }, input.stageTimeoutMs);
  result.timings.connect_ms = roundMs(performance.now() - startedAt);
  if (!tcp.ok) {
    const message = `cannot connect to ${result.address} port ${input.port}: ${tcp.reason}`;
    result.failure = { code: tcp.code, stage: 'connect', message };
    findings.push(
      finding('smtp_connect_failed', 'error', `${message}${input.port === 25 ? '; outbound port 25 is often blocked by ISPs and cloud providers' : ''}`, 'RFC 5321 §3.1', {
        address: result.address,
        port: input.port,
        reason: tcp.reason,
        timeout_ms: tcp.code === 'timeout' ? input.stageTimeoutMs : null,
      }),
    );
    return null;
  }
  result.connected = true;
  const secrets = input.auth ? authSecrets(input.auth.user, input.auth.pass) : [];
  const session = new SmtpSession({ socket: tcp.socket, startedAt: state.startedAt, secrets });
  state.session = session;
  session.note(`connected to ${result.address} port ${input.port} (${result.host}) in ${result.timings.connect_ms} ms`);
  result.ehlo_name ??= addressLiteral(tcp.socket.localAddress ?? '0.0.0.0');
  const conversation: Conversation = { ctx, input, state, result, findings, session, authenticated: false };
  if (input.tlsMode === 'implicit') {
    result.tls.offered = true;
    result.tls.method = 'implicit';
    reportProbeStage(conversation, 'TLS');
    const ok = await handshake(ctx, input, state, 'TLS');
    if (!ok) {
      result.failure = { code: 'tls', stage: 'connect', message: `TLS handshake with ${result.address} port ${input.port} failed: ${result.tls.error}` };
      return null;
    }
  }
  return conversation;
}

async function readGreeting(conversation: Conversation): Promise<StageEnd> {
  const { input, state, result, findings, session } = conversation;
  result.stopped_at = 'banner';
  reportProbeStage(conversation, 'greeting');
  const bannerStart = performance.now();
  const banner = await session.readReply(input.greetingTimeoutMs);
  result.timings.banner_ms = roundMs(performance.now() - bannerStart);
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
          { greeting_timeout_ms: input.greetingTimeoutMs },
        ),
      );
    } else if (banner.kind === 'closed') {
      const message = `${result.address} port ${input.port} closed the connection before greeting${banner.error ? ` (${banner.error})` : ''}`;
      result.failure = { code: 'unreachable', stage: 'banner', message };
      findings.push(finding('smtp_connection_closed', 'error', message, 'RFC 5321 §3.1', { stage: 'banner', error: banner.error }));
    } else {
      protocolFinding(findings, 'banner', banner);
    }
    return 'ended';
  }
  result.banner = { code: banner.reply.code, text: banner.reply.text, hostname: leadingHostname(banner.reply.text) };
  session.note(`greeting after ${result.timings.banner_ms} ms`);
  if (banner.reply.code !== 220) {
    // RFC 5321 §3.1: after a 554 greeting the client waits for the server to close, or sends QUIT.
    await quit(session, input, state, false);
    return 'ended';
  }
  return 'next';
}

/** EHLO, HELO when EHLO is refused. */
async function sayEhlo(conversation: Conversation): Promise<StageEnd> {
  const { input, state, result, findings, session } = conversation;
  result.stopped_at = 'ehlo';
  reportProbeStage(conversation, 'EHLO');
  const ehloStart = performance.now();
  const ehloName = result.ehlo_name!;
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
  result.timings.ehlo_ms = roundMs(performance.now() - ehloStart);
  if (!(await expectReply(state, 'ehlo', greeting, input))) return 'ended';
  const greetingReply = (greeting as Extract<ReplyOutcome, { kind: 'reply' }>).reply;
  result.ehlo = { command, code: greetingReply.code, hostname: leadingHostname(greetingReply.text), text: greetingReply.text.split('\n')[0] ?? '' };
  if (greetingReply.code !== 250) {
    findings.push(
      finding('smtp_helo_refused', 'error', `${command} refused: ${greetingReply.code} ${firstLine(greetingReply.text)}`, 'RFC 5321 §4.1.1.1', {
        command,
        ehlo_name: ehloName,
        reply: replyEvidence(greetingReply),
      }),
    );
    await quit(session, input, state, false);
    return 'ended';
  }
  result.extensions = command === 'EHLO' ? parseEhloExtensions(greetingReply.text.split('\n')) : emptyExtensions();
  result.tls.offered = input.tlsMode === 'implicit' ? true : result.extensions.starttls;
  if (input.tlsMode === 'implicit') result.auth.mechanisms_after_tls = result.extensions.auth;
  else result.auth.mechanisms_before_tls = result.extensions.auth;
  return 'next';
}

/** STARTTLS (RFC 3207) when offered or required; nothing to do under implicit TLS. */
async function negotiateStartTls(conversation: Conversation): Promise<StageEnd> {
  const { input, state, result, findings, session } = conversation;
  if (input.tlsMode === 'implicit') return 'next';
  const extensions = result.extensions!;
  if (!extensions.starttls && input.tlsMode !== 'required') {
    const severityStrict = input.port !== 25 || input.tlsMode !== 'opportunistic';
    findings.push(
      finding(
        'smtp_starttls_missing',
        severityStrict ? 'error' : 'warning',
        `STARTTLS is not offered: mail to and from this server travels unencrypted${input.port === 587 ? ' (a submission server should require TLS)' : ''}`,
        input.port === 25 ? 'RFC 3207 §4' : 'RFC 8314 §3.3',
        { ehlo_keywords: extensions.keywords },
      ),
    );
    return 'next';
  }
  result.stopped_at = 'tls';
  if (!extensions.starttls) {
    findings.push(
      finding('smtp_starttls_missing', 'error', 'STARTTLS is required (--tls) but the server does not offer it', 'RFC 3207 §4', {
        ehlo_keywords: extensions.keywords,
      }),
    );
    await quit(session, input, state, false);
    return 'ended';
  }
  const tlsStart = performance.now();
  reportProbeStage(conversation, 'STARTTLS');
  const answer = await session.command('STARTTLS', input.stageTimeoutMs);
  if (answer.kind === 'reply' && answer.reply.code !== 220) return refusedStartTls(conversation, answer.reply, tlsStart);
  if (!(await expectReply(state, 'tls', answer, input))) return 'ended';
  result.tls.method = 'starttls';
  const ok = await handshake(conversation.ctx, input, state, 'STARTTLS', tlsStart);
  if (!ok) return 'ended';
  return sayEhloAgain(conversation);
}

/** STARTTLS answered with something else than 220: the session goes on unencrypted unless TLS is required. */
async function refusedStartTls(conversation: Conversation, reply: SmtpReply, tlsStart: number): Promise<StageEnd> {
  const { input, state, result, findings, session } = conversation;
  result.timings.tls_ms = roundMs(performance.now() - tlsStart);
  result.tls.method = 'starttls';
  result.tls.error = `${reply.code} ${firstLine(reply.text)}`;
  findings.push(
    finding('smtp_starttls_failed', 'error', `STARTTLS is advertised but the server refused it: ${result.tls.error}; the session stays unencrypted`, 'RFC 3207 §4', {
      reply: replyEvidence(reply),
    }),
  );
  if (input.tlsMode === 'required') {
    await quit(session, input, state, false);
    return 'ended';
  }
  // RFC 3207 §4: after a refused STARTTLS the client may go on without TLS.
  return 'next';
}

/** EHLO again inside TLS: the extensions offered before it no longer count (RFC 3207 §4.2). */
async function sayEhloAgain(conversation: Conversation): Promise<StageEnd> {
  const { input, state, result, findings, session } = conversation;
  const ehloTlsStart = performance.now();
  const again = await session.command(`EHLO ${result.ehlo_name!}`, input.stageTimeoutMs);
  result.timings.ehlo_after_tls_ms = roundMs(performance.now() - ehloTlsStart);
  if (!(await expectReply(state, 'tls', again, input))) return 'ended';
  const againReply = (again as Extract<ReplyOutcome, { kind: 'reply' }>).reply;
  if (againReply.code !== 250) {
    findings.push(
      finding('smtp_ehlo_after_tls_refused', 'error', `EHLO after STARTTLS refused: ${againReply.code} ${firstLine(againReply.text)}`, 'RFC 3207 §4.2', {
        reply: replyEvidence(againReply),
      }),
    );
    await quit(session, input, state, false);
    return 'ended';
  }
  result.extensions = parseEhloExtensions(againReply.text.split('\n'));
  result.auth.mechanisms_after_tls = result.extensions.auth;
  return 'next';
}

/** AUTH (RFC 4954) when credentials are given, or the reason it was skipped. */
async function tryAuth(conversation: Conversation): Promise<StageEnd> {
  const { input, state, result, session } = conversation;
  if (!input.auth) return 'next';
  result.stopped_at = 'auth';
  const offered = result.extensions!.auth;
  const mechanism = chooseMechanism(offered, input.auth.mechanism);
  if (!result.tls.established && !input.auth.allowPlaintext) {
    result.auth.result = 'skipped';
    result.auth.skipped_reason = 'the connection is not encrypted; credentials are sent only inside TLS unless plaintext AUTH is allowed';
  } else if (offered.length === 0) {
    result.auth.result = 'skipped';
    result.auth.skipped_reason = 'the server does not offer AUTH';
  } else if (mechanism === null) {
    result.auth.result = 'skipped';
    result.auth.skipped_reason = `none of the mechanisms netintel tests (${input.auth.mechanism ?? SMTP_AUTH_MECHANISMS.join(', ')}) is offered; the server offers ${offered.join(' ')}`;
  } else {
    result.auth.tested = mechanism;
    const authStart = performance.now();
    reportProbeStage(conversation, 'AUTH');
    const outcome = await authenticate(session, mechanism, input.auth.user, input.auth.pass, input.stageTimeoutMs);
    result.timings.auth_ms = roundMs(performance.now() - authStart);
    if (!(await expectReply(state, 'auth', outcome, input))) {
      result.auth.result = 'failure';
      return 'ended';
    }
    const reply = (outcome as Extract<ReplyOutcome, { kind: 'reply' }>).reply;
    result.auth.reply = reply;
    conversation.authenticated = reply.code === 235;
    result.auth.result = conversation.authenticated ? 'success' : 'failure';
  }
  return 'next';
}

/** MAIL FROM / RCPT TO when an envelope is asked for (DATA is never sent), then QUIT. */
async function tryEnvelope(conversation: Conversation): Promise<void> {
  const { input, state, result, session, authenticated } = conversation;
  if (input.envelope) {
    const { from, to, relayTest } = input.envelope;
    const envelope = { from, to, authenticated, mail: null as SmtpReply | null, rcpt: null as SmtpReply | null, relay_test: relayTest, relay_verdict: null as 'denied' | 'accepted' | 'inconclusive' | null };
    result.envelope = envelope;
    result.stopped_at = 'mail';
    reportProbeStage(conversation, 'MAIL FROM');
    const mailStart = performance.now();
    const mail = await session.command(`MAIL FROM:<${from}>`, input.stageTimeoutMs);
    result.timings.mail_ms = roundMs(performance.now() - mailStart);
    if (!(await expectReply(state, 'mail', mail, input))) {
      if (relayTest) envelope.relay_verdict = 'inconclusive';
      return;
    }
    envelope.mail = (mail as Extract<ReplyOutcome, { kind: 'reply' }>).reply;
    if (envelope.mail.code >= 300) {
      if (relayTest) envelope.relay_verdict = 'inconclusive';
      await quit(session, input, state, true);
      return;
    }
    if (stopsAfter(input, 'mail')) {
      await quit(session, input, state, true);
      return;
    }
    result.stopped_at = 'rcpt';
    reportProbeStage(conversation, 'RCPT TO');
    const rcptStart = performance.now();
    const rcpt = await session.command(`RCPT TO:<${to}>`, input.stageTimeoutMs);
    result.timings.rcpt_ms = roundMs(performance.now() - rcptStart);
    if (!(await expectReply(state, 'rcpt', rcpt, input))) {
      if (relayTest) envelope.relay_verdict = 'inconclusive';
      return;
    }
    envelope.rcpt = (rcpt as Extract<ReplyOutcome, { kind: 'reply' }>).reply;
    if (relayTest) {
      const code = envelope.rcpt.code;
      envelope.relay_verdict = code >= 500 ? 'denied' : code >= 200 && code < 300 && !authenticated ? 'accepted' : 'inconclusive';
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

/** `host:port`, an IPv6 address in brackets (RFC 3986 §3.2.2). */
function hostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

export function roundMs(ms: number): number {
  return Math.round(ms * 10) / 10;
}

function stageIndex(stage: SmtpStage): number {
  return SMTP_STAGES.indexOf(stage);
}

/** Mutable state of one probe, turned into the record at the end. */
export interface ProbeState {
  /** performance.now() when the probe started. */
  startedAt: number;
  result: SmtpResult;
  findings: Finding[];
  session: SmtpSession | null;
  /** The DER of the chain the server presented, leaf first; null without a TLS session. */
  chainDer: Buffer[] | null;
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
  result.timings.tls_ms = roundMs(performance.now() - startedAt);
  if (outcome.discardedBytes > 0) {
    session.note(`${outcome.discardedBytes} bytes sent by the server before the TLS handshake were discarded`);
    findings.push(
      finding(
        'smtp_starttls_injection',
        'warning',
        `the server sent ${outcome.discardedBytes} bytes after its reply to STARTTLS and before the handshake; they were discarded (a sign of a broken or tampering middlebox)`,
        'RFC 3207 §5',
        { discarded_bytes: outcome.discardedBytes },
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
  result.tls.certificate = judgeCertificate(socket, input.host, ctx, input.tlsCa);
  state.chainDer = presentedChainDer(socket);
  session.note(`TLS started: ${result.tls.protocol ?? '?'} ${result.tls.cipher ?? '?'} in ${result.timings.tls_ms} ms`);
  const certificate = result.tls.certificate;
  if (certificate) {
    session.note(`TLS peer subject=[${certificate.subject}] SAN=[${certificate.san.join(', ')}] notAfter=[${certificate.valid_to}]`);
    session.note(
      `TLS certificate ${certificate.trusted ? 'passed' : 'failed'} CA verification${certificate.verify_error ? ` (${certificate.verify_error})` : ''}, ${certificate.hostname_match ? 'passed' : 'failed'} host verification (${certificate.checked_name})`,
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
        timeout_ms: input.stageTimeoutMs,
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
  return { code: reply.code, enhanced_code: reply.enhanced_code, text: reply.text };
}
