import type { RecordSchema } from '../record-schema.js';

/** Columns of the quota record (`netintel quota`, GET /api/quota). */
export const QUOTA_SCHEMA: RecordSchema = {
  kind: 'quota',
  mainValue: ['daily.remaining'],
  view: async () => (await import('../human/service-views.js')).QUOTA_VIEW,
  columns: [
    'plan',
    'title',
    'key_id',
    'client',
    'features',
    'daily.limit',
    'daily.remaining',
    'daily.reset_at',
    'burst.capacity',
    'burst.remaining',
    'burst.per_minute',
    'batch',
    'bulk_max',
  ],
  groups: {
    daily: ['daily.limit', 'daily.remaining', 'daily.reset_at'],
    burst: ['burst.capacity', 'burst.remaining', 'burst.per_minute'],
  },
  identity: ['plan'],
  tableColumns: ['plan', 'key_id', 'daily.limit', 'daily.remaining', 'daily.reset_at', 'burst.capacity', 'burst.remaining'],
};
