import type { Command } from 'commander';
import { splitAsnBulk } from '../engine/asn/lookup-asn.js';
import { ASN_SCHEMA } from '../output/schemas/asn-schema.js';
import { emitOutcomes } from '../cli/emit.js';
import type { CommandRuntime } from '../cli/runtime.js';
import { printAsnResults } from './address-lookups.js';

export function registerAsnCommand(program: Command, runtime: CommandRuntime): void {
  program
    .command('asn')
    .description('an autonomous system by number (organisation, routed prefixes, counts) or the AS announcing an IP (route)')
    .argument('<targets...>', 'AS15169, 15169 or an IP address; a comma-separated list mixes them')
    .addHelpText('after', '\nExamples:\n  netintel asn AS15169\n  netintel asn 8.8.8.8 -f json\n  netintel asn 8.8.8.8,AS13335,1.1.1.1 -f csv')
    .action(async (targets: string[], _flags: unknown, command: Command) => {
      const options = runtime.options(command);
      if (!options.remote) return printAsnResults(runtime, options, targets);
      // Remote mode (--server): the same records, asked of a netintel server in batches of the plan's size.
      const queries = targets.flatMap(splitAsnBulk);
      const remote = (await import('../cli/remote-mode.js')).openRemoteEngine(options, runtime.io, runtime.progress);
      runtime.exitCode = await emitOutcomes(runtime.io, options, ASN_SCHEMA, [await remote.asnOutcomes(queries)], {
        single: queries.length === 1,
        bulk: false,
      });
    });
}
