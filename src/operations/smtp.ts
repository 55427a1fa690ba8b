import type { FailOn } from '../cli/fail-on.js';
import type { FanOutLimits } from '../engine/fan-out.js';
import { leavesPartUnchecked } from '../engine/findings.js';
import type { ProbeSmtpOptions } from '../engine/smtp/probe-smtp.js';
import type { SmtpResult, SmtpStage } from '../engine/smtp/smtp-result.js';
import { SMTP_STAGES } from '../engine/smtp/smtp-result.js';
import type { ErrorCode } from '../errors.js';
import { NetintelError } from '../errors.js';
import { selectColumns } from '../output/record-schema.js';
import { presentTranscript, SMTP_SCHEMA } from '../output/schemas/smtp-schema.js';
import { escapeTerminalText } from '../output/terminal-text.js';
import { defineOperation, type Outcomes, type RemoteCall, type SettingsKit } from './operation.js';
import { failed } from './outcomes.js';
import { credentialsGiven, probeOptions, SMTP_CREDENTIAL_SETTINGS, type SmtpFlags } from './smtp-flags.js';

interface SmtpSettings {
  /** The probe of the host (every option but the host, the run's one target). */
  probe: Omit<ProbeSmtpOptions, 'host'>;
  fanOut: FanOutLimits;
  /** The default stage deadline (`--timeout`), against which a remote probe's input is checked as locally. */
  timeoutMs: number;
  failOn: FailOn | undefined;
}

/** A transcript line's time and direction marker, `  1234.5 ms -> ` (presentTranscript): wrapped text goes under what follows. */
const TRANSCRIPT_MARKER = /^ *[\d.]+ ms .{3} /;

const MECHANISMS = ['PLAIN', 'LOGIN', 'CRAM-MD5'] as const;

/** `netintel smtp`: an SMTP server tested stage by stage, every address of the host, with findings. */
export const SMTP = defineOperation<SmtpSettings, SmtpResult>()({
  name: 'smtp',
  command: {
    declare(command, kit) {
      command
        .description('test an SMTP server stage by stage: connect, greeting, EHLO, STARTTLS and the certificate, AUTH, relay, with findings')
        .argument('<host>', 'the SMTP server: a host name (every A/AAAA address is tested) or an IP address')
        .addOption(command.createOption('-p, --port <port>', 'TCP port; 465 means TLS on connect').default('25'))
        .addOption(command.createOption('--ip <address>', 'test this address only, instead of every address of the host'))
        .addOption(command.createOption('--tls', 'require STARTTLS: a missing or failing STARTTLS ends the test'))
        .addOption(command.createOption('--tls-on-connect', 'TLS from the first byte (implicit TLS, as on port 465)').conflicts('tls'))
        .addOption(command.createOption('--tls-ca <file>', 'PEM file of CA certificates to trust on top of the bundled roots'))
        .addOption(command.createOption('--ehlo <name>', 'name to send in EHLO/HELO (default: the address literal of the local address)'))
        .addOption(command.createOption('--quit-after <stage>', 'stop after this stage, then QUIT').choices(STAGES))
        .addOption(command.createOption('--greeting-timeout <ms>', 'how long to wait for the greeting (default: the larger of --timeout and 30000)'))
        .addOption(command.createOption(`${SMTP_CREDENTIAL_SETTINGS.user.flag} <user>`, `test AUTH with this user (env: ${SMTP_CREDENTIAL_SETTINGS.user.env})`))
        .addOption(command.createOption(`${SMTP_CREDENTIAL_SETTINGS.pass.flag} <password>`, `the password (env: ${SMTP_CREDENTIAL_SETTINGS.pass.env}; prefer it: arguments show in ps)`))
        .addOption(command.createOption('--auth-mechanism <mechanism>', 'the SASL mechanism to test (default: PLAIN, LOGIN, CRAM-MD5, the first offered)').choices(MECHANISMS))
        .addOption(command.createOption('--allow-plaintext-auth', 'send credentials even when TLS is not established'))
        .addOption(command.createOption('--relay-test', 'open-relay test: MAIL FROM and RCPT TO an outside address without authentication; never DATA'))
        .addOption(command.createOption('--from <address>', 'MAIL FROM of the relay test or envelope check (default relay-test@example.com)'))
        .addOption(command.createOption('--to <address>', 'RCPT TO of the relay test (default relay-test@example.net), or a recipient to check'))
        .addOption(command.createOption('--no-ptr', 'skip the reverse DNS (PTR) check of the address'))
        .addOption(command.createOption('--transcript', 'include the conversation (credentials redacted)'))
        .addOption(command.createOption('--dane', 'check DANE (the TLSA records of _25._tcp.<host>) on any port; on by default on port 25'))
        .addOption(command.createOption('--no-dane', 'skip the DANE check'));
      for (const option of kit.fanOutOptions(['max-addresses', 'max-smtp-connections'])) command.addOption(option);
      command.addHelpText('after', HELP).addOption(kit.failOnOption());
    },
    refuseRemote: refuseRemoteProbe,
    settings: async (flags, kit) => ({
      probe: await probeOptions(flags as SmtpFlags, kit),
      fanOut: kit.fanOut(flags),
      timeoutMs: kit.options.timeoutMs,
      failOn: flags.failOn as FailOn | undefined,
    }),
    async run(run) {
      const { settings, options, io } = run;
      const lookup = await run.lookup(settings);
      const outcomes = await lookup(run.args[0]!);
      // No record at all: the input was refused, or the host has no address.
      const first = outcomes[0];
      if (first !== undefined && !first.ok) throw first.error;
      const results = outcomes.flatMap((outcome) => (outcome.ok ? [outcome.value] : []));
      // In the table view the transcript follows the record as plain text, in swaks' notation:
      // a conversation is read top to bottom. The view of the record leaves it out; chosen
      // columns (--fields, --all) leave it out too.
      const transcriptAfterTable = options.format === 'table' && settings.probe.transcript === true;
      const fields = transcriptAfterTable && (options.fields !== null || options.all) ? selectColumns(SMTP_SCHEMA, options.fields).filter((column) => column !== 'transcript') : undefined;
      // No conversation at all (no connection, no greeting) is the failure of its record; an `unknown` finding (DANE's TLSA lookup) leaves it partial.
      const coverage = (record: unknown) => {
        const { failure, findings } = record as SmtpResult;
        return failure?.code ?? (leavesPartUnchecked(findings) ? 'partial' : 'complete');
      };
      const failureMessage = (record: unknown) => (record as SmtpResult).failure?.message ?? null;
      const code = await run.emit([outcomes], { single: results.length === 1, bulk: false, ...(fields ? { fields } : {}), coverage, failureMessage });
      if (transcriptAfterTable) await printTranscripts(results, run.width(), (text) => io.stdout.write(text));
      return run.withFindings(code, settings.failOn, results.flatMap((result) => result.findings));
    },
  },
  async lookup(ctx, settings) {
    // The SMTP engine (node:tls, node:crypto, the DNS client) loads only when this command runs.
    const { probeSmtpAll } = await import('../engine/smtp/probe-smtp.js');
    const capped = { ...ctx, fanOut: settings.fanOut };
    return async (host) => {
      try {
        return recordsOf(await probeSmtpAll(capped, { ...settings.probe, host }));
      } catch (error) {
        return [failed(host, error)];
      }
    };
  },
  record: {
    columns: SMTP_SCHEMA,
    json: { name: 'SmtpResult', load: async () => ({ schema: (await import('./record-json-schemas.js')).SMTP_RECORD }) },
    view: async () => (await import('../output/human/smtp-view.js')).SMTP_VIEW,
  },
  api: {
    method: 'GET',
    path: '/api/smtp-test',
    feature: null,
    async call(remote, host, settings) {
      try {
        return recordsOf(await probeRemotely(remote, host, settings));
      } catch (error) {
        return [failed(host, error)];
      }
    },
    route: () => ({
      group: 'mail',
      network: true,
      operationId: 'getSmtpTest',
      summary: 'SMTP server connectivity, TLS and configuration',
      description:
        'Connects to `host` on `port` (default 25) and reports the banner, EHLO extensions and, with `tls=true`, STARTTLS or ' +
        'implicit TLS. The host is resolved once and the checked address is the one connected to; private, loopback, ' +
        'link-local and metadata addresses and ports other than the mail ports are refused.',
      querystring: {
        type: 'object',
        required: ['host'],
        properties: {
          host: { type: 'string', minLength: 1, maxLength: 255, description: 'SMTP server host name or address.' },
          port: { type: 'integer', minimum: 1, maximum: 65535, default: 25, description: 'SMTP port.' },
          tls: { type: 'boolean', description: 'Test TLS support.' },
          address: { type: 'string', minLength: 1, maxLength: 100, description: 'Connect to this address of the host instead of its first one.' },
          ehlo: { type: 'string', minLength: 1, maxLength: 255, description: 'Name to send in EHLO/HELO.' },
          quit_after: { type: 'string', enum: [...SMTP_STAGES], description: 'Stop after this stage, then QUIT.' },
          ptr: { type: 'boolean', description: 'Check the reverse DNS (PTR, FCrDNS) of the address (default true).' },
          transcript: { type: 'boolean', description: 'Include the conversation.' },
        },
      },
      responseDescription: 'The SMTP probe record of `netintel smtp` (of the first address of the host, or of `address`).',
      examples: [{ query: '?host=mx.example.com&port=25&tls=true' }],
      handler: async (request, _reply, api) => (await import('./smtp-answer.js')).smtpTest(request, api),
    }),
  },
});

const STAGES: readonly SmtpStage[] = ['connect', 'banner', 'ehlo', 'tls', 'auth', 'mail', 'rcpt'];

function recordsOf(results: readonly SmtpResult[]): Outcomes<SmtpResult> {
  return results.map((value) => ({ ok: true, query: `${value.host} ${value.address}`, value }));
}

/**
 * Refuses what GET /api/smtp-test cannot carry: credentials and CA files
 * stay on this machine, and the server keeps its own deadlines and its own
 * relay-test policy.
 */
async function refuseRemoteProbe(raw: Record<string, unknown>, kit: Pick<SettingsKit, 'env'>): Promise<void> {
  const flags = raw as SmtpFlags;
  const { parsePort } = await import('../engine/smtp/smtp-input.js');
  const refused: Array<[boolean, string]> = [
    [credentialsGiven(flags, kit.env), '--auth-user/--auth-pass (credentials are not sent to the server)'],
    [flags.tlsCa !== undefined, '--tls-ca'],
    [flags.greetingTimeout !== undefined, '--greeting-timeout'],
    [flags.relayTest === true, '--relay-test'],
    [flags.from !== undefined || flags.to !== undefined, '--from/--to'],
    [flags.dane === true, '--dane'],
  ];
  const port = parsePort(flags.port ?? '25');
  // The API's tls=true means STARTTLS, or TLS on connect on port 465.
  if (flags.tls && port === 465) refused.push([true, '--tls on port 465 (the API tests TLS on connect there)']);
  if (flags.tlsOnConnect && port !== 465) refused.push([true, '--tls-on-connect on a port other than 465']);
  const first = refused.find(([given]) => given);
  if (first) throw new NetintelError('usage', `remote mode cannot send ${first[1]} to the server: run netintel smtp without --server for it`);
}

/**
 * Probes through GET /api/smtp-test: the given address, or every A and AAAA
 * address of the host (resolved by the server), one request each, as
 * `probeSmtpAll` does locally, within the same caps (addresses per host,
 * SMTP connections per check). The name's resolution time becomes each
 * record's dns_ms, as locally. Input errors are found here first, as the
 * local engine words them.
 */
async function probeRemotely(remote: RemoteCall, host: string, settings: SmtpSettings): Promise<SmtpResult[]> {
  const { normaliseProbeOptions, probedAddresses, withFinding } = await import('../engine/smtp/probe-smtp.js');
  const { probe } = settings;
  const input = normaliseProbeOptions({ ...probe, host }, settings.timeoutMs);
  const params = {
    port: String(probe.port ?? 25),
    tls: probe.tls === 'required' || probe.tls === 'implicit' ? 'true' : undefined,
    ehlo: probe.ehloName,
    quit_after: probe.quitAfter,
    ptr: probe.reverseDns === false ? 'false' : undefined,
    transcript: probe.transcript ? 'true' : undefined,
  };
  let addresses = input.address === null ? null : [input.address];
  let dnsMs: number | null = null;
  let limited: ReturnType<typeof probedAddresses>['finding'] = null;
  if (addresses === null) {
    const started = performance.now();
    ({ addresses, finding: limited } = probedAddresses({ fanOut: settings.fanOut }, input.host, await remote.hostAddresses(input.host)));
    dnsMs = Math.round((performance.now() - started) * 10) / 10;
  }
  const results = await Promise.all(
    addresses.map(async (each) => {
      const result = (await remote.get('/api/smtp-test', { host: input.host, ...params, address: each })).body as SmtpResult;
      if (dnsMs !== null && result.timings.dns_ms === null) result.timings.dns_ms = dnsMs;
      return result;
    }),
  );
  return limited ? withFinding(results, limited) : results;
}

/** The transcripts after the table view: what the server sent is shown, never obeyed by the terminal, each line wrapped under the text after its marker. */
async function printTranscripts(results: readonly SmtpResult[], width: number, write: (text: string) => void): Promise<void> {
  const { wrapHanging } = await import('../output/human/wrap.js');
  for (const result of results) {
    const lines = presentTranscript(result.transcript ?? [])
      .split('\n')
      .flatMap((line) => {
        const marker = TRANSCRIPT_MARKER.exec(line)?.[0] ?? '';
        return wrapHanging(escapeTerminalText(line.slice(marker.length)), width, marker, ' '.repeat(marker.length));
      });
    write(`\ntranscript of ${escapeTerminalText(result.host)} (${result.address} port ${result.port}):\n${lines.join('\n')}\n`);
  }
}

const HELP = [
  '',
  'The per-stage deadline is --timeout (default 5000 ms); the greeting gets at least 30 s, since servers',
  'delay it on purpose. What the server answers is data (exit 0, see --fail-on); exit 5 when no TCP',
  'connection or greeting could be had (4 on a timeout), 7 when only some addresses failed.',
  'The first --max-addresses addresses of the host are tested (at most --max-smtp-connections); a cap that',
  'left some out is a warning finding on the first record.',
  'On port 25 (or with --dane) the TLSA records of _25._tcp.<host> are matched against the presented',
  'certificate chain (DANE, RFC 7672); their DNSSEC is validated by netintel from the root trust anchor (or --trust-anchor FILE, a global option).',
  'Examples:',
  '  netintel smtp mx.example.com',
  '  netintel smtp mx.example.com --tls --transcript',
  '  netintel smtp smtp.example.com -p 587 --tls --auth-user me@example.com   # password from NETINTEL_SMTP_PASS',
  '  netintel smtp smtp.example.com -p 465 -f json',
  '  netintel smtp mx.example.com --relay-test --fail-on error',
  '  netintel smtp mx.example.com --ip 192.0.2.25 --quit-after ehlo',
  '  netintel smtp mx.example.com --no-dane',
].join('\n');
