import type { RecordSchema } from '../output/record-schema.js';
import { ACCOUNT_SCHEMA } from '../output/schemas/account-schema.js';
import { API_KEY_SCHEMA } from '../output/schemas/api-key-schema.js';
import { ASN_SCHEMA } from '../output/schemas/asn-schema.js';
import { BIMI_SCHEMA } from '../output/schemas/bimi-schema.js';
import { BLACKLIST_SCHEMA } from '../output/schemas/blacklist-schema.js';
import { BULK_SCHEMA } from '../output/schemas/bulk-schema.js';
import { DATA_STATUS_SCHEMA, DATA_UPDATE_SCHEMA } from '../output/schemas/data-schema.js';
import { DKIM_SCHEMA } from '../output/schemas/dkim-schema.js';
import { DNS_SCHEMA } from '../output/schemas/dns-schema.js';
import { GREP_SCHEMA } from '../output/schemas/grep-schema.js';
import { EMAIL_SCHEMA } from '../output/schemas/email-schema.js';
import { IP_SCHEMA } from '../output/schemas/ip-schema.js';
import { MX_SCHEMA } from '../output/schemas/mx-schema.js';
import { QUOTA_SCHEMA } from '../output/schemas/quota-schema.js';
import { RANGE_SCHEMA } from '../output/schemas/range-schema.js';
import { SMTP_SCHEMA } from '../output/schemas/smtp-schema.js';
import { SPF_SCHEMA } from '../output/schemas/spf-schema.js';
import { VPN_SCHEMA } from '../output/schemas/vpn-schema.js';

/** The records each command prints, by command path (`data status`): its `--fields` names. */
const COMMAND_SCHEMAS: Readonly<Record<string, RecordSchema>> = {
  ip: IP_SCHEMA,
  asn: ASN_SCHEMA,
  bulk: BULK_SCHEMA,
  range: RANGE_SCHEMA,
  dns: DNS_SCHEMA,
  smtp: SMTP_SCHEMA,
  mx: MX_SCHEMA,
  spf: SPF_SCHEMA,
  dkim: DKIM_SCHEMA,
  bimi: BIMI_SCHEMA,
  email: EMAIL_SCHEMA,
  vpn: VPN_SCHEMA,
  grep: GREP_SCHEMA,
  blacklist: BLACKLIST_SCHEMA,
  quota: QUOTA_SCHEMA,
  'data status': DATA_STATUS_SCHEMA,
  'data update': DATA_UPDATE_SCHEMA,
  'keys create': API_KEY_SCHEMA,
  'keys list': API_KEY_SCHEMA,
  'keys revoke': API_KEY_SCHEMA,
  'accounts list': ACCOUNT_SCHEMA,
  'accounts show': ACCOUNT_SCHEMA,
  'accounts create': ACCOUNT_SCHEMA,
  'accounts set-plan': ACCOUNT_SCHEMA,
  'accounts disable': ACCOUNT_SCHEMA,
  'accounts delete': ACCOUNT_SCHEMA,
};

/** The names `--fields` takes for a command (groups, then every column), or none for a command without records. */
export function fieldNames(commandPath: string): readonly string[] {
  const schema = Object.hasOwn(COMMAND_SCHEMAS, commandPath) ? COMMAND_SCHEMAS[commandPath]! : null;
  return schema === null ? [] : [...Object.keys(schema.groups), ...schema.columns];
}

/** The help section listing a command's fields, wrapped to `width`; empty for a command without records. */
export function fieldsHelp(commandPath: string, width = 80): string {
  const names = fieldNames(commandPath);
  if (names.length === 0) return '';
  const lines: string[] = [];
  let line = '';
  names.forEach((name, i) => {
    const item = i < names.length - 1 ? `${name},` : name;
    if (line !== '' && 2 + line.length + 1 + item.length > width) {
      lines.push(`  ${line}`);
      line = '';
    }
    line = line === '' ? item : `${line} ${item}`;
  });
  lines.push(`  ${line}`);
  return `\nFields (--fields, comma-separated; a group stands for its fields):\n${lines.join('\n')}\n`;
}
