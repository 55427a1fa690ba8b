import type { DataSourceStatus } from './data-status.js';

// Its own module so that the output schema can share the order without
// loading the status code (and its dataset readers) at start-up.
/** The keys of a status record in their documented order (the output columns follow it too). */
export const DATA_STATUS_KEYS: ReadonlyArray<keyof DataSourceStatus> = [
  'kind',
  'name',
  'type',
  'signal',
  'enabled',
  'origin',
  'path',
  'url',
  'version',
  'updated',
  'last_checked_at',
  'age_days',
  'entries',
  'licence',
  'attribution',
  'stale_after_days',
  'stale',
  'warning',
];
