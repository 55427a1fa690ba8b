import type { FailOn } from '../cli/fail-on.js';
import type { FanOutLimits } from '../engine/fan-out.js';
import type { MxResult } from '../engine/mail/resolve-mx.js';
import { MX_SCHEMA } from '../output/schemas/mx-schema.js';
import { mailCheckApi } from './email-tests-api.js';
import { defineOperation } from './operation.js';
import { oneRecordEach } from './outcomes.js';

interface MxSettings {
  fanOut: FanOutLimits;
  failOn: FailOn | undefined;
}

/** `netintel mx`: the MX hosts of domains, resolved, with their reverse DNS and findings. */
export const MX = defineOperation<MxSettings, MxResult>()({
  name: 'mx',
  command: {
    declare(command, kit) {
      command
        .description('MX records of domains by preference, each host resolved with PTR and FCrDNS, and findings (null MX, implicit MX, CNAME, IP literal, no address, reserved address, duplicates)')
        .argument('[domains...]', 'domains; read from stdin (one per line) when piped');
      for (const option of kit.fanOutOptions(['max-mx', 'max-addresses'])) command.addOption(option);
      command
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
        )
        .addOption(kit.failOnOption());
    },
    refuseRemote: (flags, kit) => kit.refuseFanOut(flags, 'mx'),
    settings: (flags, kit) => ({ fanOut: kit.fanOut(flags), failOn: flags.failOn as FailOn | undefined }),
    run: (run) =>
      run.lookupTargets({
        targets: run.args,
        none: { usage: 'mx needs a domain: give one or more, or pipe a list in' },
        failOn: { level: run.settings.failOn, findings: (result) => result.findings },
      }),
  },
  async lookup(ctx, settings) {
    // The mail engine loads only when a mail command runs.
    const { resolveMx } = await import('../engine/mail/resolve-mx.js');
    const capped = { ...ctx, fanOut: settings.fanOut };
    return oneRecordEach((domain) => resolveMx(capped, domain));
  },
  record: {
    columns: MX_SCHEMA,
    json: { name: 'MxResult', load: async () => ({ schema: (await import('./record-json-schemas.js')).MX_RECORD }) },
    view: async () => (await import('../output/human/mail-views.js')).MX_VIEW,
  },
  api: mailCheckApi('mx'),
});
