import type { RecordSchema } from '../record-schema.js';

/** Columns of the quota record (`netintel quota`, GET /api/quota). */
export const QUOTA_SCHEMA: RecordSchema = {
  kind: 'quota',
  view: async () => (await import('../human/service-views.js')).QUOTA_VIEW,
  columns: [
    'plan',
    'title',
    'keyId',
    'client',
    'features',
    'daily.limit',
    'daily.remaining',
    'daily.resetAt',
    'burst.capacity',
    'burst.remaining',
    'burst.perMinute',
    'batch',
    'bulkMax',
  ],
  groups: {
    daily: ['daily.limit', 'daily.remaining', 'daily.resetAt'],
    burst: ['burst.capacity', 'burst.remaining', 'burst.perMinute'],
  },
  identity: ['plan'],
  tableColumns: ['plan', 'keyId', 'daily.limit', 'daily.remaining', 'daily.resetAt', 'burst.capacity', 'burst.remaining'],
};
