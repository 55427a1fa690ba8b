import type { Command } from 'commander';
import type { CommandRuntime } from '../cli/runtime.js';
import { addFailOnOption, type FailOn } from '../cli/fail-on.js';
import { MX_SCHEMA } from '../output/schemas/mx-schema.js';
import type { MxResult } from '../engine/mail/resolve-mx.js';
import { runMailCommand } from './mail-run.js';
import { addFanOutOptions, fanOutOf, refuseRemoteFanOut, type FanOutFlags } from '../cli/fan-out-options.js';

export function registerMxCommand(program: Command, runtime: CommandRuntime): void {
  const command = program
    .command('mx')
    .description('MX records of domains by preference, each host resolved with PTR and FCrDNS, and findings (null MX, implicit MX, CNAME, IP literal, no address, reserved address, duplicates)')
    .argument('[domains...]', 'domains; read from stdin (one per line) when piped');
  addFanOutOptions(command, ['max-mx', 'max-addresses'])
    .addHelpText(
      'after',
      [
        '',
        'Findings are data (exit 0); a failed MX lookup is an error (timeout 4, SERVFAIL 5), never "no MX".',
        'The first --max-mx hosts by preference are resolved, --max-addresses addresses of each; a cap that left',
        'some out is a warning finding (mx_hosts_limited, mx_addresses_limited).',
        'Examples:',
        '  netintel mx example.com',
        '  netintel mx example.com -f json',
        '  netintel mx example.com --fail-on warning      # exit 10 on a warning or error finding',
        '  netintel mx -f csv < domains.txt',
      ].join('\n'),
    );
  addFailOnOption(command).action(async (domains: string[], flags: { failOn?: FailOn } & FanOutFlags, self: Command) => {
    const options = runtime.options(self);
    const ctx = runtime.context(options);
    if (options.remote) refuseRemoteFanOut(flags, 'mx');
    ctx.fanOut = fanOutOf(flags);
    // Remote mode (--server): GET /api/email-tests?type=mx, whose report holds the same MX record.
    const remote = options.remote ? (await import('../cli/remote-mode.js')).openRemoteEngine(options, runtime.io, runtime.progress) : null;
    // The mail engine loads only when a mail command runs.
    const { resolveMx } = await import('../engine/mail/resolve-mx.js');
    await runMailCommand<MxResult>({
      runtime,
      options,
      schema: MX_SCHEMA,
      targets: domains,
      usage: 'mx needs a domain: give one or more, or pipe a list in',
      check: remote ? (domain) => remote.mailCheck<MxResult>('mx', domain) : (domain) => resolveMx(ctx, domain),
      ...(remote ? { concurrency: remote.concurrency } : {}),
      findingsOf: (result) => result.findings,
      failOn: flags.failOn,
    });
  });
}
