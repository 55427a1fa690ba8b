import type { RecordSchema } from '../record-schema.js';

/** Columns of an account record (`netintel accounts ...`): never the password hash. */
export const ACCOUNT_SCHEMA: RecordSchema = {
  kind: 'account',
  columns: ['id', 'email', 'emailVerifiedAt', 'plan', 'hasPassword', 'createdAt', 'disabledAt'],
  groups: {},
  identity: ['id'],
  tableColumns: ['id', 'email', 'plan', 'emailVerifiedAt', 'disabledAt'],
};
