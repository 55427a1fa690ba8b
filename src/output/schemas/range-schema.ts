import type { RecordSchema } from '../record-schema.js';
import { getPath } from '../record-schema.js';

const NETWORK_COLUMNS = [
  'network.cidr',
  'network.prefix_length',
  'network.netmask',
  'network.hostmask',
  'network.broadcast',
  'network.hosts',
  'network.first_host',
  'network.last_host',
] as const;

/**
 * Columns of the range record (`netintel range`). In table and CSV views
 * `cidrs` is the blocks space-separated; json, ndjson and xml keep the list.
 */
export const RANGE_SCHEMA: RecordSchema = {
  kind: 'range',
  mainValue: ['cidrs'],
  columns: [
    'input',
    'version',
    'form',
    'first',
    'last',
    'count',
    'cidrs',
    ...NETWORK_COLUMNS,
  ],
  groups: { network: NETWORK_COLUMNS },
  identity: ['input'],
  tableColumns: ['input', 'first', 'last', 'count', 'cidrs'],
  presentColumn: (record, column) => {
    const value = getPath(record, column);
    if (column === 'cidrs' && Array.isArray(value)) return value.join(' ');
    return value === undefined ? null : value;
  },
};
