import { Option, type Command } from 'commander';
import { integerIn } from '../cli/integer-option.js';
import type { CommandRuntime } from '../cli/runtime.js';
import { addFailOnOption, type FailOn } from '../cli/fail-on.js';
import { NetintelError } from '../errors.js';
import { EMAIL_SCHEMA } from '../output/schemas/email-schema.js';
import { mailServerFlag } from '../cli/global-options.js';
import type { Target } from '../engine/bulk/read-targets.js';
import type { EmailReport } from '../engine/mail/check-email.js';
import { runMailCommand } from './mail-run.js';
import { coverageOf } from '../cli/check-coverage.js';
import { addFanOutOptions, fanOutOf, refuseRemoteFanOut, type FanOutFlags } from '../cli/fan-out-options.js';

interface EmailFlags extends FanOutFlags {
  type?: 'general' | 'mx' | 'spf' | 'smtp' | 'dkim' | 'bimi' | 'dnssec' | 'dane';
  trustAnchor?: string;
  host?: string;
  port?: number;
  smtp: boolean;
  dnssec: boolean;
  failOn?: FailOn;
}

export function registerEmailCommand(program: Command, runtime: CommandRuntime): void {
  const command = program
    .command('email')
    .description('The e-mail test of domains: MX, SPF, DMARC, MTA-STS, TLS-RPT, DKIM (common selectors), BIMI, DNSSEC, SMTP connectivity of each MX (port 25, STARTTLS) and DANE in one report of findings; --type runs one test')
    .argument('[domains...]', 'domains; read from stdin (one per line) when piped')
    .addOption(new Option('--type <test>', 'one test instead of the general one').choices(['general', 'mx', 'spf', 'smtp', 'dkim', 'bimi', 'dnssec', 'dane']))
    .addOption(new Option('--host <host>', '--type smtp: test this mail server instead of the domain\'s MX hosts (same as --server HOST)'))
    .addOption(new Option('--port <n>', 'SMTP port (default 25)').argParser(integerIn('--port', 1, 65535)))
    .addOption(new Option('--no-smtp', 'general test without the SMTP connections'))
    .addOption(new Option('--no-dnssec', 'general test without DNSSEC validation, and so without DANE, which rests on it'))
    .addOption(new Option('--trust-anchor <file>', 'DNSSEC and DANE: validate from these DS or DNSKEY records (default: the IANA root KSKs)'));
  addFanOutOptions(command, ['max-mx', 'max-addresses', 'max-smtp-connections'])
    .addHelpText(
      'after',
      [
        '',
        'A check whose lookups fail is listed under "errors" with its code (timeout, upstream...), its finding',
        'is "unknown" (never "no record"), and the other checks still run. When no check could run, the report',
        'says "could not check" and the run exits with the failure\'s code (4 timeout, 5 unreachable); when some',
        'could not, it exits 7. Otherwise findings exit 0 unless --fail-on (these codes come before 10).',
        'The first --max-mx MX hosts by preference are checked (DNS, DNSSEC, SMTP, DANE), --max-addresses addresses',
        'of each, with at most --max-smtp-connections SMTP connections per domain; a cap that left some out is a',
        'warning finding.',
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
      ].join('\n'),
    );
  addFailOnOption(command).action(async (domains: string[], flags: EmailFlags, self: Command) => {
    const test = flags.type ?? 'general';
    const named = mailServerFlag(self);
    if (named !== null && test !== 'smtp') {
      throw new NetintelError('usage', `--server ${named} names a mail server (it is not an http:// or https:// URL), which goes with --type smtp; remote mode needs an http(s) URL`);
    }
    if (named !== null && flags.host !== undefined) throw new NetintelError('usage', '--server HOST and --host HOST both name the mail server: give one');
    const host = flags.host ?? named ?? undefined;
    if (host !== undefined && test !== 'smtp') throw new NetintelError('usage', '--host goes with --type smtp');
    if (host !== undefined && domains.length > 0) throw new NetintelError('usage', `--type smtp ${named !== null ? '--server' : '--host'} tests one server: give no domain`);
    if (!flags.dnssec && (test === 'dnssec' || test === 'dane')) throw new NetintelError('usage', `--no-dnssec leaves out what --type ${test} tests: give one or the other`);
    if (!flags.dnssec && flags.trustAnchor !== undefined) throw new NetintelError('usage', '--trust-anchor is where DNSSEC validation starts, which --no-dnssec leaves out: give one or the other');
    const options = runtime.options(self, { mayNameMailServer: true });
    const ctx = runtime.context(options);
    if (options.remote) refuseRemoteFanOut(flags, 'email');
    ctx.fanOut = fanOutOf(flags);
    if (options.remote && flags.trustAnchor !== undefined) throw new NetintelError('usage', 'remote mode cannot send --trust-anchor: the server validates from the root; run without --server');
    const settings = {
      type: test,
      skipSmtp: !flags.smtp,
      skipDnssec: !flags.dnssec,
      ...(flags.trustAnchor === undefined ? {} : { trustAnchors: (await import('../cli/trust-anchor-file.js')).readTrustAnchorFile(flags.trustAnchor) }),
      ...(host === undefined ? {} : { server: host }),
      ...(flags.port === undefined ? {} : { port: flags.port }),
    };
    // Remote mode (--server URL, NETINTEL_SERVER): GET /api/email-tests, and POST /api/email-tests/bulk for the general test of stdin.
    const remote = options.remote ? (await import('../cli/remote-mode.js')).openRemoteEngine(options, runtime.io, runtime.progress) : null;
    const { checkEmail } = remote ? { checkEmail: null } : await import('../engine/mail/check-email.js');
    const target = (text: string) => (host === undefined ? text : null);
    await runMailCommand<EmailReport>({
      runtime,
      options,
      schema: EMAIL_SCHEMA,
      targets: host === undefined ? domains : [host],
      usage: 'email needs a domain: give one or more, or pipe a list in (or --type smtp --server HOST)',
      check: remote
        ? async (text) => (await remote.client.get('/api/email-tests', emailTestParams(target(text), settings))).body as EmailReport
        : (text) => checkEmail!(ctx, target(text), settings),
      findingsOf: (report) => report.findings,
      coverageOf: (report) => coverageOf(report),
      failOn: flags.failOn,
      ...(remote ? { concurrency: remote.concurrency } : {}),
      ...(remote && test === 'general'
        ? {
            bulkOutcomes: (targets: AsyncIterable<Target[]>) =>
              remote.emailBulkOutcomes(targets, { ...(flags.port === undefined ? {} : { port: flags.port }), ...(flags.smtp ? {} : { smtp: false }), ...(flags.dnssec ? {} : { dnssec: false }) }),
          }
        : {}),
    });
  });
}

/** The GET /api/email-tests parameters of one test: form 2 for the general test, form 1 (`type`) for the others. */
function emailTestParams(domain: string | null, settings: { type: string; skipSmtp: boolean; skipDnssec: boolean; server?: string; port?: number }): Record<string, string | undefined> {
  if (settings.type === 'general') {
    return { domain: domain ?? undefined, port: settings.port?.toString(), smtp: settings.skipSmtp ? 'false' : undefined, dnssec: settings.skipDnssec ? 'false' : undefined };
  }
  return {
    type: settings.type,
    domain: domain ?? undefined,
    ...(settings.type === 'smtp' ? { server: settings.server, port: settings.port?.toString() } : {}),
  };
}
