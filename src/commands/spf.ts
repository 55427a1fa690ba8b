import { Option, type Command } from 'commander';
import type { CommandRuntime } from '../cli/runtime.js';
import { addFailOnOption, type FailOn } from '../cli/fail-on.js';
import { NetintelError } from '../errors.js';
import { SPF_SCHEMA } from '../output/schemas/spf-schema.js';
import type { SpfResult } from '../engine/mail/check-spf.js';
import { runMailCommand } from './mail-run.js';

interface SpfFlags {
  ip?: string;
  sender?: string;
  helo?: string;
  failOn?: FailOn;
}

export function registerSpfCommand(program: Command, runtime: CommandRuntime): void {
  const command = program
    .command('spf')
    .description('SPF record of domains: syntax with positions, DNS-lookup count over includes and redirect (limit 10, void limit 2), include tree, loops, sizes; with --ip the RFC 7208 check_host() result and the mechanism that matched')
    .argument('[domains...]', 'domains; read from stdin (one per line) when piped')
    .addOption(new Option('--ip <address>', 'evaluate check_host() for this client IP'))
    .addOption(new Option('--sender <address>', 'MAIL FROM for the evaluation (default postmaster@<domain>)'))
    .addOption(new Option('--helo <name>', 'HELO/EHLO name for the evaluation (%{h})'))
    .addHelpText(
      'after',
      [
        '',
        'A failed lookup of the domain\'s own TXT record is an error (exit 4/5), never "no record";',
        'a failure deeper in the include tree is a temperror finding.',
        'Examples:',
        '  netintel spf example.com',
        '  netintel spf example.com --ip 192.0.2.10 --sender bounce@example.com --helo mail.example.com',
        '  netintel spf example.com -f json --fields tree,findings',
        '  netintel spf example.com --fail-on error     # exit 10 when an error finding is reported',
        '  netintel spf -f ndjson < domains.txt',
      ].join('\n'),
    );
  addFailOnOption(command).action(async (domains: string[], flags: SpfFlags, self: Command) => {
    if ((flags.sender !== undefined || flags.helo !== undefined) && flags.ip === undefined) {
      throw new NetintelError('usage', '--sender and --helo apply to an evaluation: give --ip too');
    }
    const options = runtime.options(self);
    const ctx = runtime.context(options);
    if (options.remote && flags.ip !== undefined) {
      throw new NetintelError('usage', 'remote mode cannot send --ip, --sender or --helo: the API checks the record only; run the evaluation without --server');
    }
    // Remote mode (--server): GET /api/email-tests?type=spf, whose report holds the same SPF record.
    const remote = options.remote ? (await import('../cli/remote-mode.js')).openRemoteEngine(options, runtime.io, runtime.progress) : null;
    const { checkSpf } = await import('../engine/mail/check-spf.js');
    const evaluation = {
      ...(flags.ip === undefined ? {} : { ip: flags.ip }),
      ...(flags.sender === undefined ? {} : { sender: flags.sender }),
      ...(flags.helo === undefined ? {} : { helo: flags.helo }),
    };
    await runMailCommand<SpfResult>({
      runtime,
      options,
      schema: SPF_SCHEMA,
      targets: domains,
      usage: 'spf needs a domain: give one or more, or pipe a list in',
      check: remote ? (domain) => remote.mailCheck<SpfResult>('spf', domain) : (domain) => checkSpf(ctx, domain, evaluation),
      ...(remote ? { concurrency: remote.concurrency } : {}),
      findingsOf: (result) => result.findings,
      failOn: flags.failOn,
    });
  });
}
