import type { RecordSchema } from '../record-schema.js';

/**
 * Columns of one address found by `netintel grep` in data formats (json,
 * ndjson, csv, xml, value). The default view is grep's: matching lines, or
 * the addresses alone with -o.
 */
export const GREP_SCHEMA: RecordSchema = {
  kind: 'grep',
  columns: ['address', 'canonical', 'version', 'prefix_length', 'reserved', 'file', 'line', 'column'],
  groups: { position: ['file', 'line', 'column'] },
  identity: ['address'],
  tableColumns: ['address', 'version', 'reserved', 'file', 'line', 'column'],
};
