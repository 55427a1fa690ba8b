import type { RangeRecord } from '../engine/ip/ip-range-record.js';
import { RANGE_SCHEMA } from '../output/schemas/range-schema.js';
import { defineOperation } from './operation.js';
import { failed } from './outcomes.js';

/**
 * `netintel range`: the arithmetic of CIDR blocks and a-b ranges. It asks
 * no dataset and no server: it has no API mapping, runs on this machine
 * whatever `--server` says.
 */
export const RANGE = defineOperation<Record<string, never>, RangeRecord>()({
  name: 'range',
  defaults: {},
  command: {
    declare(command) {
      command
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
        );
    },
    settings: () => ({}),
    run: (run) => run.lookupTargets({ targets: run.args, none: { usage: 'range needs a CIDR or an a-b range: give one (netintel range 10.0.0.0/8), or pipe a list in' } }),
  },
  async lookup() {
    const { describeRange } = await import('../engine/ip/ip-range-record.js');
    return (text) => {
      try {
        return [{ ok: true, query: text, value: describeRange(text) }];
      } catch (error) {
        return [failed(text, error)];
      }
    };
  },
  record: {
    columns: RANGE_SCHEMA,
    view: async () => (await import('../output/human/range-view.js')).RANGE_VIEW,
  },
});
