import type { Command } from 'commander';
import { readTargetBatches, targetsFromArguments, type Target } from '../engine/bulk/read-targets.js';
import { describeRange, type RangeRecord } from '../engine/ip/ip-range-record.js';
import type { Outcome } from '../engine/outcome.js';
import { NetintelError, toNetintelError } from '../errors.js';
import { RANGE_SCHEMA } from '../output/schemas/range-schema.js';
import { emitOutcomes } from '../cli/emit.js';
import { stdinBringsList } from '../cli/io.js';
import type { CommandRuntime } from '../cli/runtime.js';

export function registerRangeCommand(program: Command, runtime: CommandRuntime): void {
  program
    .command('range')
    .description('first, last and count of a CIDR block or a-b range, the minimal CIDR list of a range, a block\'s netmask and broadcast')
    .argument('[ranges...]', 'CIDR blocks (10.0.0.0/8, 2001:db8::/32) or a-b ranges (192.0.2.1-192.0.2.9); read from stdin (one per line) when piped')
    .addHelpText(
      'after',
      [
        '',
        'Counts are exact for IPv6 too (a decimal string in json). Local arithmetic: no dataset and no server is asked.',
        'Examples:',
        '  netintel range 10.0.0.0/8',
        '  netintel range 192.0.2.5-192.0.2.77 -f json',
        '  netintel range 2001:db8::/48 --fields count -f value',
        '  netintel range 192.0.2.5-192.0.2.77 --fields cidrs -f value     # range2cidr',
      ].join('\n'),
    )
    .action(async (ranges: string[], _flags: unknown, command: Command) => {
      const options = runtime.options(command);
      const { io } = runtime;
      const describe = (target: Target): Outcome<RangeRecord> => {
        try {
          return { ok: true, query: target.text, value: describeRange(target.text) };
        } catch (error) {
          return { ok: false, query: target.text, error: toNetintelError(error) };
        }
      };
      if (ranges.length > 0) {
        const outcomes = targetsFromArguments(ranges).map(describe);
        runtime.exitCode = await emitOutcomes(io, options, RANGE_SCHEMA, [outcomes], { single: ranges.length === 1, bulk: false });
        return;
      }
      if (!stdinBringsList(io)) {
        throw new NetintelError('usage', 'range needs a CIDR or an a-b range: give one (netintel range 10.0.0.0/8), or pipe a list in');
      }
      const outcomes = (async function* () {
        for await (const batch of readTargetBatches(io.stdin)) yield batch.map(describe);
      })();
      runtime.exitCode = await emitOutcomes(io, options, RANGE_SCHEMA, outcomes, { single: false, bulk: true });
    });
}
