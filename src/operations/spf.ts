import type { FailOn } from '../cli/fail-on.js';
import type { SpfResult } from '../engine/mail/check-spf.js';
import { NetintelError } from '../errors.js';
import { SPF_SCHEMA } from '../output/schemas/spf-schema.js';
import { mailCheckApi } from './email-tests-api.js';
import { defineOperation } from './operation.js';
import { oneRecordEach } from './outcomes.js';

interface SpfSettings {
  /** check_host() of this client (RFC 7208 §4), with its MAIL FROM and HELO; empty: the record alone. */
  evaluation: { ip?: string; sender?: string; helo?: string };
  failOn: FailOn | undefined;
}

/** `netintel spf`: the SPF record of domains, its include tree and problems; with an address, check_host(). */
export const SPF = defineOperation<SpfSettings, SpfResult>()({
  name: 'spf',
  defaults: { evaluation: {}, failOn: undefined },
  command: {
    declare(command, kit) {
      command
        .description('SPF record of domains: syntax with positions, DNS-lookup count over includes and redirect (limit 10, void limit 2), include tree, loops, sizes; with --ip the RFC 7208 check_host() result and the mechanism that matched')
        .argument('[domains...]', 'domains; read from stdin (one per line) when piped')
        .addOption(command.createOption('--ip <address>', 'evaluate check_host() for this client IP'))
        .addOption(command.createOption('--sender <address>', 'MAIL FROM for the evaluation (default postmaster@<domain>)'))
        .addOption(command.createOption('--helo <name>', 'HELO/EHLO name for the evaluation (%{h})'))
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
        )
        .addOption(kit.failOnOption());
    },
    refuseRemote(flags) {
      if (flags.ip !== undefined) {
        throw new NetintelError('usage', 'remote mode cannot send --ip, --sender or --helo: the API checks the record only; run the evaluation without --server');
      }
    },
    settings(flags) {
      const { ip, sender, helo } = flags as { ip?: string; sender?: string; helo?: string };
      if ((sender !== undefined || helo !== undefined) && ip === undefined) throw new NetintelError('usage', '--sender and --helo apply to an evaluation: give --ip too');
      return {
        evaluation: { ...(ip === undefined ? {} : { ip }), ...(sender === undefined ? {} : { sender }), ...(helo === undefined ? {} : { helo }) },
        failOn: flags.failOn as FailOn | undefined,
      };
    },
    run: (run) =>
      run.lookupTargets({
        targets: run.args,
        none: { usage: 'spf needs a domain: give one or more, or pipe a list in' },
        failOn: { level: run.settings.failOn, findings: (result) => result.findings },
      }),
  },
  async lookup(ctx, settings) {
    const { checkSpf } = await import('../engine/mail/check-spf.js');
    return oneRecordEach((domain) => checkSpf(ctx, domain, settings.evaluation));
  },
  record: {
    columns: SPF_SCHEMA,
    json: {
      name: 'SpfResult',
      load: async () => {
        const { SPF_NODE, SPF_RECORD } = await import('./record-json-schemas.js');
        return { schema: SPF_RECORD, parts: { SpfNode: SPF_NODE } };
      },
    },
    view: async () => (await import('../output/human/mail-views.js')).SPF_VIEW,
  },
  api: mailCheckApi('spf'),
});
