import type { FailOn } from '../cli/fail-on.js';
import type { TrustAnchor } from '../engine/dns/dnssec/trust-anchor.js';
import type { FanOutLimits } from '../engine/fan-out.js';
import type { EmailReport } from '../engine/mail/check-email.js';
import { EMAIL_TEST_TYPES, type EmailTestType } from '../engine/mail/email-checks.js';
import { NetintelError } from '../errors.js';
import { EMAIL_SCHEMA } from '../output/schemas/email-schema.js';
import { emailTestsRoutes } from './email-tests-routes.js';
import { defineOperation, type SettingsKit } from './operation.js';
import { oneRecordEach } from './outcomes.js';

interface EmailSettings {
  type: EmailTestType;
  skipSmtp: boolean;
  skipDnssec: boolean;
  trustAnchors?: TrustAnchor;
  /** `--type smtp --host HOST`: the one mail server tested (the targets are then that host alone). */
  server?: string;
  /** The flag that named `server`, for messages. */
  serverFlag?: '--server' | '--host';
  port?: number;
  fanOut: FanOutLimits;
  failOn: FailOn | undefined;
}

/** `netintel email`: the whole mail set-up of domains in one report of findings, or one of its tests. */
export const EMAIL = defineOperation<EmailSettings, EmailReport>()({
  name: 'email',
  command: {
    declare(command, kit) {
      command
        .description('The e-mail test of domains: MX, SPF, DMARC, MTA-STS, TLS-RPT, DKIM (common selectors), BIMI, DNSSEC, SMTP connectivity of each MX (port 25, STARTTLS) and DANE in one report of findings; --type runs one test')
        .argument('[domains...]', 'domains; read from stdin (one per line) when piped')
        .addOption(command.createOption('--type <test>', 'one test instead of the general one').choices(EMAIL_TEST_TYPES))
        .addOption(command.createOption('--host <host>', '--type smtp: test this mail server instead of the domain\'s MX hosts (same as --server HOST)'))
        .addOption(command.createOption('--port <n>', 'SMTP port (default 25)').argParser(kit.integerIn('--port', 1, 65535)))
        .addOption(command.createOption('--no-smtp', 'general test without the SMTP connections'))
        .addOption(command.createOption('--no-dnssec', 'general test without DNSSEC validation, and so without DANE, which rests on it'));
      for (const option of kit.fanOutOptions(['max-mx', 'max-addresses', 'max-smtp-connections'])) command.addOption(option);
      command.addHelpText('after', HELP).addOption(kit.failOnOption());
    },
    serverNamesMailServer: true,
    refuseRemote(flags, kit) {
      kit.refuseFanOut(flags, 'email');
    },
    async settings(flags, kit) {
      const f = flags as { type?: EmailTestType; host?: string; port?: number; smtp: boolean; dnssec: boolean; failOn?: FailOn };
      const test = f.type ?? 'general';
      const named = kit.mailServerFlag();
      if (named !== null && test !== 'smtp') {
        throw new NetintelError('usage', `--server ${named} names a mail server (it is not an http:// or https:// URL), which goes with --type smtp; remote mode needs an http(s) URL`);
      }
      if (named !== null && f.host !== undefined) throw new NetintelError('usage', '--server HOST and --host HOST both name the mail server: give one');
      const host = f.host ?? named ?? undefined;
      if (host !== undefined && test !== 'smtp') throw new NetintelError('usage', '--host goes with --type smtp');
      if (!f.dnssec && (test === 'dnssec' || test === 'dane')) throw new NetintelError('usage', `--no-dnssec leaves out what --type ${test} tests: give one or the other`);
      if (!f.dnssec && kit.options.trustAnchor?.onCommandLine === true) throw new NetintelError('usage', '--trust-anchor is where DNSSEC validation starts, which --no-dnssec leaves out: give one or the other');
      return {
        type: test,
        skipSmtp: !f.smtp,
        skipDnssec: !f.dnssec,
        ...(f.dnssec ? await trustAnchorsOf(kit) : {}),
        ...(host === undefined ? {} : { server: host, serverFlag: named !== null ? ('--server' as const) : ('--host' as const) }),
        ...(f.port === undefined ? {} : { port: f.port }),
        fanOut: kit.fanOut(flags),
        failOn: f.failOn,
      };
    },
    run(run) {
      const { server } = run.settings;
      if (server !== undefined && run.args.length > 0) {
        throw new NetintelError('usage', `--type smtp ${run.settings.serverFlag} tests one server: give no domain`);
      }
      return run.lookupTargets({
        targets: server === undefined ? run.args : [server],
        none: { usage: 'email needs a domain: give one or more, or pipe a list in (or --type smtp --server HOST)' },
        failOn: { level: run.settings.failOn, findings: (report) => report.findings },
        coverage: (report) => report,
      });
    },
  },
  async lookup(ctx, settings) {
    const { checkEmail } = await import('../engine/mail/check-email.js');
    const { fanOut, failOn: _failOn, serverFlag: _serverFlag, ...options } = settings;
    const capped = { ...ctx, fanOut };
    return oneRecordEach((text) => checkEmail(capped, settings.server === undefined ? text : null, options));
  },
  record: {
    columns: EMAIL_SCHEMA,
    json: {
      name: 'EmailReport',
      bulkAnswer: 'EmailBulkAnswer',
      load: async () => {
        const { DMARC_RECORD, EMAIL_RECORD, MTA_STS_RECORD, TLS_RPT_RECORD } = await import('./record-json-schemas.js');
        return { schema: EMAIL_RECORD, parts: { DmarcResult: DMARC_RECORD, MtaStsResult: MTA_STS_RECORD, TlsRptResult: TLS_RPT_RECORD } };
      },
    },
    view: async () => (await import('../output/human/mail-views.js')).EMAIL_VIEW,
  },
  api: {
    method: 'GET',
    path: '/api/email-tests',
    feature: null,
    query: (text, settings) => emailTestParams(settings.server === undefined ? text : null, settings),
    // `--type smtp --server HOST` asks about the host, not a domain.
    subject: (settings) => (settings.server === undefined ? 'domain' : null),
    batch: {
      // POST /api/email-tests/bulk runs the general test: a list of domains asks it in batches.
      applies: (settings, list) => list && settings.type === 'general',
      size: (plan) => plan.batch,
      async send(remote, targets, settings) {
        const domains = targets.map((target) => target.text);
        const answer = remote.bulkAnswer('EmailBulkAnswer', 'email bulk answer');
        const body = { domains, ...(settings.port === undefined ? {} : { port: settings.port }), ...(settings.skipSmtp ? { smtp: false } : {}), ...(settings.skipDnssec ? { dnssec: false } : {}) };
        return remote.bulkOutcomes<EmailReport>((await remote.post('/api/email-tests/bulk', body, answer)).body, domains, answer.name, 'domain');
      },
    },
    route: emailTestsRoutes,
  },
});

/** The GET /api/email-tests parameters of one test: form 2 for the general test, form 1 (`type`) for the others. */
function emailTestParams(domain: string | null, settings: EmailSettings): Record<string, string | undefined> {
  if (settings.type === 'general') {
    return { domain: domain ?? undefined, port: settings.port?.toString(), smtp: settings.skipSmtp ? 'false' : undefined, dnssec: settings.skipDnssec ? 'false' : undefined };
  }
  return {
    type: settings.type,
    domain: domain ?? undefined,
    ...(settings.type === 'smtp' ? { server: settings.server, port: settings.port?.toString() } : {}),
  };
}

const HELP = [
  '',
  'A check whose lookups fail is listed under "errors" with its code (timeout, upstream...), its finding',
  'is "unknown" (never "no record"), and the other checks still run. When no check could run, the report',
  'says "could not check" and the run exits with the failure\'s code (4 timeout, 5 unreachable); when some',
  'could not, it exits 7. Otherwise findings exit 0 unless --fail-on (these codes come before 10).',
  'The first --max-mx MX hosts by preference are checked (DNS, DNSSEC, SMTP, DANE), --max-addresses addresses',
  'of each, with at most --max-smtp-connections SMTP connections per domain; a cap that left some out is a',
  'warning finding.',
  'DNSSEC and DANE validate from the IANA root KSKs, or from the records of --trust-anchor FILE (a global',
  'option; env: NETINTEL_TRUST_ANCHOR). A resolver that passes no DNSSEC records on leaves them not checked.',
  '--type smtp --server HOST: a --server value on the command line that is not an http:// or https://',
  'URL names the mail server to test (as --host does); remote mode then takes its URL from NETINTEL_SERVER',
  'or the config file. An http(s) URL keeps its global meaning: the netintel server to ask.',
  'Examples:',
  '  netintel email example.com',
  '  netintel email example.com -f json',
  '  netintel email example.com --type spf',
  '  netintel email --type smtp --server mx.example.com --port 587',
  '  netintel email --no-smtp -f ndjson < domains.txt   # bulk: one report per line, in order',
  '  netintel email example.com --no-smtp --no-dnssec   # DNS records only: no connections, no validation',
  '  netintel email example.com --fail-on warning',
].join('\n');

/** The trust anchor of the options, as checkEmail takes it; none for the IANA root KSKs. */
async function trustAnchorsOf(kit: SettingsKit): Promise<{ trustAnchors?: TrustAnchor }> {
  const trustAnchors = await kit.trustAnchor();
  return trustAnchors === undefined ? {} : { trustAnchors };
}
