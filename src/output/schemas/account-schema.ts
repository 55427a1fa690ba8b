import type { RecordSchema } from '../record-schema.js';

/** Columns of an account record (`netintel accounts ...`): never the password hash. */
export const ACCOUNT_SCHEMA: RecordSchema = {
  kind: 'account',
  columns: ['id', 'email', 'email_verified_at', 'plan', 'has_password', 'created_at', 'disabled_at'],
  groups: {},
  identity: ['id'],
  tableColumns: ['id', 'email', 'plan', 'email_verified_at', 'disabled_at'],
};
