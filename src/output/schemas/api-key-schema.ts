import type { RecordSchema } from '../record-schema.js';

/** Columns of an API key record (`netintel keys create|list|revoke`); `key` is filled only by `create`. */
export const API_KEY_SCHEMA: RecordSchema = {
  kind: 'api-key',
  mainValue: ['key'],
  view: async () => (await import('../human/service-views.js')).API_KEY_VIEW,
  columns: [
    'id',
    'key',
    'plan',
    'label',
    'limits.daily',
    'limits.per_minute',
    'limits.burst',
    'limits.batch',
    'created_at',
    'revoked_at',
    'last_used_at',
  ],
  groups: { limits: ['limits.daily', 'limits.per_minute', 'limits.burst', 'limits.batch'] },
  identity: ['id'],
  tableColumns: ['id', 'plan', 'label', 'created_at', 'revoked_at', 'last_used_at'],
};
