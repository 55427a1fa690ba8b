import { DATA_STATUS_KEYS } from '../../engine/data/data-status-keys.js';
import type { RecordSchema } from '../record-schema.js';

/** Columns of `netintel data status`: one row per dataset. */
export const DATA_STATUS_SCHEMA: RecordSchema = {
  kind: 'data-source',
  mainValue: ['version'],
  view: async () => (await import('../human/service-views.js')).DATA_STATUS_VIEW,
  columns: DATA_STATUS_KEYS.filter((key) => key !== 'kind'),
  groups: {},
  identity: ['name'],
  tableColumns: ['origin', 'updated', 'age_days', 'entries', 'stale', 'licence'],
};

/** Columns of `netintel data update`: one row per source updated. */
export const DATA_UPDATE_SCHEMA: RecordSchema = {
  kind: 'data-update',
  mainValue: ['status'],
  columns: ['source', 'type', 'status', 'url', 'path', 'version', 'updated', 'entries', 'previous_entries', 'bytes', 'duration_ms'],
  groups: {},
  identity: ['source'],
  tableColumns: ['status', 'updated', 'entries', 'previous_entries', 'bytes'],
};
