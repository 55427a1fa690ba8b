import { readCaFile } from '../cli/ca-file.js';
import { Option, type Command } from 'commander';
import type { Outcome } from '../engine/outcome.js';
import type { ProbeSmtpOptions } from '../engine/smtp/probe-smtp.js';
import type { SmtpAuthMechanism, SmtpResult, SmtpStage } from '../engine/smtp/smtp-result.js';
import { NetintelError, type ErrorCode } from '../errors.js';
import { selectColumns } from '../output/record-schema.js';
import { presentTranscript, SMTP_SCHEMA } from '../output/schemas/smtp-schema.js';
import { escapeTerminalText } from '../output/terminal-text.js';
import { emitOutcomes } from '../cli/emit.js';
import { exitCodeForRun } from '../cli/exit-codes.js';
import { addFailOnOption, exitCodeWithFindings, type FailOn } from '../cli/fail-on.js';
import type { CommandRuntime } from '../cli/runtime.js';
import { readTrustAnchorFile } from '../cli/trust-anchor-file.js';
import type { RemoteEngine } from '../remote/remote-engine.js';
import type { Finding } from '../engine/findings.js';
import { addFanOutOptions, fanOutOf, type FanOutFlags } from '../cli/fan-out-options.js';

/** A transcript line's time and direction marker, `  1234.5 ms -> ` (presentTranscript): wrapped text goes under what follows. */
const TRANSCRIPT_MARKER = /^ *[\d.]+ ms .{3} /;

const STAGES: readonly SmtpStage[] = ['connect', 'banner', 'ehlo', 'tls', 'auth', 'mail', 'rcpt'];
const MECHANISMS: readonly SmtpAuthMechanism[] = ['PLAIN', 'LOGIN', 'CRAM-MD5'];

interface SmtpFlags extends FanOutFlags {
  port?: string;
  ip?: string;
  tls?: boolean;
  tlsOnConnect?: boolean;
  tlsCa?: string;
  ehlo?: string;
  quitAfter?: SmtpStage;
  greetingTimeout?: string;
  authUser?: string;
  authPass?: string;
  authMechanism?: SmtpAuthMechanism;
  allowPlaintextAuth?: boolean;
  relayTest?: boolean;
  from?: string;
  to?: string;
  ptr?: boolean;
  transcript?: boolean;
  /** Set by --dane (true) or --no-dane (false); undefined: on for port 25. */
  dane?: boolean;
  trustAnchor?: string;
  failOn?: FailOn;
}

export function registerSmtpCommand(program: Command, runtime: CommandRuntime): void {
  const command = program
    .command('smtp')
    .description('test an SMTP server stage by stage: connect, greeting, EHLO, STARTTLS and the certificate, AUTH, relay, with findings')
    .argument('<host>', 'the SMTP server: a host name (every A/AAAA address is tested) or an IP address')
    .addOption(new Option('-p, --port <port>', 'TCP port; 465 means TLS on connect').default('25'))
    .addOption(new Option('--ip <address>', 'test this address only, instead of every address of the host'))
    .addOption(new Option('--tls', 'require STARTTLS: a missing or failing STARTTLS ends the test'))
    .addOption(new Option('--tls-on-connect', 'TLS from the first byte (implicit TLS, as on port 465)').conflicts('tls'))
    .addOption(new Option('--tls-ca <file>', 'PEM file of CA certificates to trust on top of the bundled roots'))
    .addOption(new Option('--ehlo <name>', 'name to send in EHLO/HELO (default: the address literal of the local address)'))
    .addOption(new Option('--quit-after <stage>', 'stop after this stage, then QUIT').choices(STAGES))
    .addOption(new Option('--greeting-timeout <ms>', 'how long to wait for the greeting (default: the larger of --timeout and 30000)'))
    .addOption(new Option('--auth-user <user>', 'test AUTH with this user (env: NETINTEL_SMTP_USER)'))
    .addOption(new Option('--auth-pass <password>', 'the password (env: NETINTEL_SMTP_PASS; prefer it: arguments show in ps)'))
    .addOption(new Option('--auth-mechanism <mechanism>', 'the SASL mechanism to test (default: PLAIN, LOGIN, CRAM-MD5, the first offered)').choices(MECHANISMS))
    .addOption(new Option('--allow-plaintext-auth', 'send credentials even when TLS is not established'))
    .addOption(new Option('--relay-test', 'open-relay test: MAIL FROM and RCPT TO an outside address without authentication; never DATA'))
    .addOption(new Option('--from <address>', 'MAIL FROM of the relay test or envelope check (default relay-test@example.com)'))
    .addOption(new Option('--to <address>', 'RCPT TO of the relay test (default relay-test@example.net), or a recipient to check'))
    .addOption(new Option('--no-ptr', 'skip the reverse DNS (PTR) check of the address'))
    .addOption(new Option('--transcript', 'include the conversation (credentials redacted)'))
    .addOption(new Option('--dane', 'check DANE (the TLSA records of _25._tcp.<host>) on any port; on by default on port 25'))
    .addOption(new Option('--no-dane', 'skip the DANE check'))
    .addOption(new Option('--trust-anchor <file>', 'DANE: validate the TLSA records\' DNSSEC from these DS or DNSKEY records (default: the IANA root KSKs)'));
  addFanOutOptions(command, ['max-addresses', 'max-smtp-connections'])
    .addHelpText(
      'after',
      [
        '',
        'The per-stage deadline is --timeout (default 5000 ms); the greeting gets at least 30 s, since servers',
        'delay it on purpose. What the server answers is data (exit 0, see --fail-on); exit 5 when no TCP',
        'connection or greeting could be had (4 on a timeout), 7 when only some addresses failed.',
        'The first --max-addresses addresses of the host are tested (at most --max-smtp-connections); a cap that',
        'left some out is a warning finding on the first record.',
        'On port 25 (or with --dane) the TLSA records of _25._tcp.<host> are matched against the presented',
        'certificate chain (DANE, RFC 7672); their DNSSEC is validated by netintel from the root trust anchor.',
        'Examples:',
        '  netintel smtp mx.example.com',
        '  netintel smtp mx.example.com --tls --transcript',
        '  netintel smtp smtp.example.com -p 587 --tls --auth-user me@example.com   # password from NETINTEL_SMTP_PASS',
        '  netintel smtp smtp.example.com -p 465 -f json',
        '  netintel smtp mx.example.com --relay-test --fail-on error',
        '  netintel smtp mx.example.com --ip 192.0.2.25 --quit-after ehlo',
        '  netintel smtp mx.example.com --no-dane',
      ].join('\n'),
    );
  addFailOnOption(command);
  command.action(async (host: string, flags: SmtpFlags, cmd: Command) => {
    const options = runtime.options(cmd);
    const ctx = runtime.context(options);
    ctx.fanOut = fanOutOf(flags);
    const { io } = runtime;
    // The SMTP engine (node:tls, node:crypto, the DNS client) loads only when this command runs.
    const [{ probeSmtpAll, normaliseProbeOptions, probedAddresses, withFinding }, { parsePort }] = await Promise.all([import('../engine/smtp/probe-smtp.js'), import('../engine/smtp/smtp-input.js')]);
    const probe = probeOptions(host, flags, io.env, parsePort);
    let results: SmtpResult[];
    if (options.remote) {
      // Remote mode: the server probes; input errors are found here first, as the local engine words them.
      const input = normaliseProbeOptions(probe, options.timeoutMs);
      const remote = (await import('../cli/remote-mode.js')).openRemoteEngine(options, io, runtime.progress);
      // The addresses are this run's to choose, one request each: the same caps as locally.
      const capped = (addresses: string[]) => probedAddresses(ctx, input.host, addresses);
      const probed = await probeRemotely(remote, remoteProbeParams(probe, flags), input.host, input.address, capped);
      results = probed.finding ? withFinding(probed.results, probed.finding) : probed.results;
    } else {
      results = await probeSmtpAll(ctx, probe);
    }
    const outcomes: Array<Outcome<SmtpResult>> = results.map((value) => ({ ok: true, query: `${value.host} ${value.address}`, value }));
    // In the table view the transcript follows the record as plain text, in swaks' notation:
    // a conversation is read top to bottom. The view of the record leaves it out; chosen
    // columns (--fields, --all) leave it out too.
    const transcriptAfterTable = options.format === 'table' && flags.transcript === true;
    const tableOptions =
      transcriptAfterTable && (options.fields !== null || options.all)
        ? { ...options, fields: selectColumns(SMTP_SCHEMA, options.fields).filter((column) => column !== 'transcript') }
        : options;
    await emitOutcomes(io, tableOptions, SMTP_SCHEMA, [outcomes], { single: results.length === 1, bulk: false });
    if (transcriptAfterTable) {
      const [{ wrapHanging }, { terminalWidth }] = await Promise.all([import('../output/human/wrap.js'), import('../cli/terminal-width.js')]);
      const width = terminalWidth(io);
      for (const result of results) {
        // The table view's text: what the server sent is shown, never obeyed by the terminal,
        // each line wrapped to the width under the text after its time and direction marker.
        const lines = presentTranscript(result.transcript ?? [])
          .split('\n')
          .flatMap((line) => {
            const marker = TRANSCRIPT_MARKER.exec(line)?.[0] ?? '';
            return wrapHanging(escapeTerminalText(line.slice(marker.length)), width, marker, ' '.repeat(marker.length));
          });
        io.stdout.write(`\ntranscript of ${escapeTerminalText(result.host)} (${result.address} port ${result.port}):\n${lines.join('\n')}\n`);
      }
    }

    // No conversation at all (no connection, no greeting) is an error, reported after the record
    // (on stderr unless the view of the one record, findings and all, has said it).
    const viewSaidFailure = options.format === 'table' && results.length === 1 && options.fields === null;
    const failures = new Map<ErrorCode, number>();
    for (const result of results) {
      if (!result.failure) continue;
      failures.set(result.failure.code, (failures.get(result.failure.code) ?? 0) + 1);
      if (!viewSaidFailure) io.stderr.write(`netintel: ${escapeTerminalText(result.failure.message)}\n`);
    }
    const failed = [...failures.values()].reduce((sum, count) => sum + count, 0);
    const code = exitCodeForRun(results.length - failed, failures);
    runtime.exitCode = exitCodeWithFindings(code, flags.failOn, results.flatMap((result) => result.findings));
  });
}

/**
 * The flags of a remote probe as GET /api/smtp-test parameters. What the API
 * cannot carry is refused: credentials and CA files stay on this machine, and
 * the server keeps its own deadlines and its own relay-test policy.
 */
function remoteProbeParams(probe: ProbeSmtpOptions, flags: SmtpFlags): Record<string, string | undefined> {
  const refused: Array<[boolean, string]> = [
    [probe.auth !== undefined, '--auth-user/--auth-pass (credentials are not sent to the server)'],
    [flags.tlsCa !== undefined, '--tls-ca'],
    [flags.greetingTimeout !== undefined, '--greeting-timeout'],
    [flags.relayTest === true, '--relay-test'],
    [flags.from !== undefined || flags.to !== undefined, '--from/--to'],
    [flags.dane === true, '--dane'],
    [flags.trustAnchor !== undefined, '--trust-anchor'],
  ];
  const port = probe.port ?? 25;
  // The API's tls=true means STARTTLS, or TLS on connect on port 465.
  if (flags.tls && port === 465) refused.push([true, '--tls on port 465 (the API tests TLS on connect there)']);
  if (flags.tlsOnConnect && port !== 465) refused.push([true, '--tls-on-connect on a port other than 465']);
  const first = refused.find(([given]) => given);
  if (first) throw new NetintelError('usage', `remote mode cannot send ${first[1]} to the server: run netintel smtp without --server for it`);
  return {
    host: probe.host,
    port: String(port),
    tls: flags.tls || flags.tlsOnConnect ? 'true' : undefined,
    ehlo: flags.ehlo,
    quit_after: flags.quitAfter,
    ptr: flags.ptr === false ? 'false' : undefined,
    transcript: flags.transcript ? 'true' : undefined,
  };
}

/**
 * Probes through GET /api/smtp-test: the given address, or every A and AAAA
 * address of the host (resolved by the server), one request each, as
 * `probeSmtpAll` does locally, within the same caps (`capped`: addresses
 * per host, SMTP connections per check). The name's resolution time
 * becomes each record's dnsMs, as locally.
 */
async function probeRemotely(
  remote: RemoteEngine,
  params: Record<string, string | undefined>,
  host: string,
  address: string | null,
  capped: (addresses: string[]) => { addresses: string[]; finding: Finding | null },
): Promise<{ results: SmtpResult[]; finding: Finding | null }> {
  let addresses = address === null ? null : [address];
  let dnsMs: number | null = null;
  let limited: Finding | null = null;
  if (addresses === null) {
    const started = performance.now();
    ({ addresses, finding: limited } = capped(await remote.hostAddresses(host)));
    dnsMs = Math.round((performance.now() - started) * 10) / 10;
  }
  const results = await Promise.all(
    addresses.map(async (each) => {
      const result = (await remote.client.get('/api/smtp-test', { ...params, host, address: each })).body as SmtpResult;
      if (dnsMs !== null && result.timings.dnsMs === null) result.timings.dnsMs = dnsMs;
      return result;
    }),
  );
  return { results, finding: limited };
}

/** The engine options of the flags; credentials from the flags or NETINTEL_SMTP_USER/PASS. */
function probeOptions(
  host: string,
  flags: SmtpFlags,
  env: Readonly<Record<string, string | undefined>>,
  parsePort: (text: string) => number,
): ProbeSmtpOptions {
  const port = parsePort(flags.port ?? '25');
  const user = flags.authUser ?? nonEmpty(env.NETINTEL_SMTP_USER);
  const pass = flags.authPass ?? nonEmpty(env.NETINTEL_SMTP_PASS);
  if ((user === undefined) !== (pass === undefined)) {
    throw new NetintelError('usage', user === undefined ? 'a password was given without --auth-user' : '--auth-user needs a password: --auth-pass or NETINTEL_SMTP_PASS');
  }
  if (flags.allowPlaintextAuth && user === undefined) throw new NetintelError('usage', '--allow-plaintext-auth needs --auth-user');
  if (flags.authMechanism && user === undefined) throw new NetintelError('usage', '--auth-mechanism needs --auth-user');
  let greetingTimeoutMs: number | undefined;
  if (flags.greetingTimeout !== undefined) {
    if (!/^\d{1,7}$/.test(flags.greetingTimeout) || Number(flags.greetingTimeout) < 1 || Number(flags.greetingTimeout) > 3_600_000) {
      throw new NetintelError('invalid_input', `--greeting-timeout must be an integer from 1 to 3600000 ms, not ${JSON.stringify(flags.greetingTimeout)}`);
    }
    greetingTimeoutMs = Number(flags.greetingTimeout);
  }
  const tlsCa = flags.tlsCa === undefined ? undefined : readCaFile(flags.tlsCa, '--tls-ca');
  const envelope = flags.from !== undefined || flags.to !== undefined ? { ...(flags.from !== undefined ? { from: flags.from } : {}), ...(flags.to !== undefined ? { to: flags.to } : {}) } : undefined;
  return {
    host,
    port,
    ...(flags.ip !== undefined ? { address: flags.ip } : {}),
    ...(flags.tls ? { tls: 'required' as const } : flags.tlsOnConnect ? { tls: 'implicit' as const } : {}),
    ...(flags.ehlo !== undefined ? { ehloName: flags.ehlo } : {}),
    ...(flags.quitAfter !== undefined ? { quitAfter: flags.quitAfter } : {}),
    ...(greetingTimeoutMs !== undefined ? { greetingTimeoutMs } : {}),
    ...(user !== undefined && pass !== undefined
      ? { auth: { user, pass, allowPlaintext: flags.allowPlaintextAuth === true, ...(flags.authMechanism ? { mechanism: flags.authMechanism } : {}) } }
      : {}),
    relayTest: flags.relayTest ? (envelope ?? {}) : null,
    ...(!flags.relayTest && envelope ? { envelope } : {}),
    reverseDns: flags.ptr !== false,
    transcript: flags.transcript === true,
    // RFC 7672 concerns MX hosts, reached on port 25; elsewhere DANE is checked when asked for.
    dane: (flags.dane ?? port === 25) ? (flags.trustAnchor === undefined ? true : { trustAnchors: readTrustAnchorFile(flags.trustAnchor) }) : false,
    ...(tlsCa ? { tlsCa } : {}),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
