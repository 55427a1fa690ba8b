import { described, int, nullable, num, oneOfStrings, record, str, strings, type JsonSchema } from '../operations/json-schema.js';
import type { QuotaRecord } from './operation-routes.js';

/** GET /api/quota's record; the plan names come from the server's plans file. */
export function quotaSchema(planNames: readonly string[]): JsonSchema {
  return record<QuotaRecord>({
    kind: { const: 'quota' },
    plan: oneOfStrings(planNames),
    title: str,
    key_id: described(nullable(str), 'The key\'s id, or null without a key.'),
    client: described(str, 'The caller\'s address as the server sees it.'),
    features: strings,
    daily: record<QuotaRecord['daily']>({ limit: int, remaining: int, reset_at: { type: 'string', format: 'date-time' } }),
    burst: record<QuotaRecord['burst']>({ capacity: int, remaining: int, per_minute: num }),
    batch: described(int, 'Items per request of the bulk forms.'),
    bulk_max: described(nullable(int), 'Addresses per POST /api/bulk request, or null without bulk processing.'),
  });
}
