import { InvalidArgumentError, Option, type Command } from 'commander';
import type { CommandRuntime } from '../cli/runtime.js';
import { addFailOnOption, type FailOn } from '../cli/fail-on.js';
import { NetintelError } from '../errors.js';
import { EMAIL_SCHEMA } from '../output/schemas/email-schema.js';
import { runMailCommand } from './mail-run.js';

interface EmailFlags {
  type?: 'general' | 'mx' | 'spf' | 'smtp';
  host?: string;
  port?: number;
  smtp: boolean;
  failOn?: FailOn;
}

function port(value: string): number {
  const number = Number(value);
  if (!/^\d+$/.test(value.trim()) || number < 1 || number > 65535) throw new InvalidArgumentError(`--port must be an integer from 1 to 65535, not ${JSON.stringify(value)}`);
  return number;
}

export function registerEmailCommand(program: Command, runtime: CommandRuntime): void {
  const command = program
    .command('email')
    .description('The e-mail test of domains: MX, SPF, DMARC, MTA-STS, TLS-RPT and SMTP connectivity of each MX (port 25, STARTTLS) in one report of findings; --type mx|spf|smtp runs one test')
    .argument('[domains...]', 'domains; read from stdin (one per line) when piped')
    .addOption(new Option('--type <test>', 'one test instead of the general one').choices(['general', 'mx', 'spf', 'smtp']))
    .addOption(new Option('--host <host>', '--type smtp: test this mail server instead of the domain\'s MX hosts'))
    .addOption(new Option('--port <n>', 'SMTP port (default 25)').argParser(port))
    .addOption(new Option('--no-smtp', 'general test without the SMTP connections'))
    .addHelpText(
      'after',
      [
        '',
        'A check whose lookups fail is listed under "errors" with its code (timeout, upstream...), and the',
        'other checks still run: a timeout is never reported as "no record". Findings exit 0 unless --fail-on.',
        'Examples:',
        '  netintel email example.com',
        '  netintel email example.com -f json',
        '  netintel email example.com --type spf',
        '  netintel email --type smtp --host mx.example.com --port 587',
        '  netintel email --no-smtp -f ndjson < domains.txt   # bulk: one report per line, in order',
        '  netintel email example.com --fail-on warning',
      ].join('\n'),
    );
  addFailOnOption(command).action(async (domains: string[], flags: EmailFlags, self: Command) => {
    const test = flags.type ?? 'general';
    if (flags.host !== undefined && test !== 'smtp') throw new NetintelError('usage', '--host goes with --type smtp');
    if (flags.host !== undefined && domains.length > 0) throw new NetintelError('usage', '--type smtp --host tests one server: give no domain');
    const options = runtime.options(self);
    const ctx = runtime.context(options);
    const { checkEmail } = await import('../engine/mail/check-email.js');
    const settings = {
      type: test,
      skipSmtp: !flags.smtp,
      ...(flags.host === undefined ? {} : { server: flags.host }),
      ...(flags.port === undefined ? {} : { port: flags.port }),
    };
    await runMailCommand({
      runtime,
      options,
      schema: EMAIL_SCHEMA,
      targets: flags.host === undefined ? domains : [flags.host],
      usage: 'email needs a domain: give one or more, or pipe a list in (or --type smtp --host HOST)',
      check: (target) => checkEmail(ctx, flags.host === undefined ? target : null, settings),
      findingsOf: (report) => report.findings,
      failOn: flags.failOn,
    });
  });
}
