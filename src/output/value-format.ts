import type { RecordSchema } from './record-schema.js';

/**
 * `-f value`: bare values for shell use (`city=$(netintel ip 8.8.8.8
 * --fields location.city -f value)`). One line per outcome, in input order;
 * several fields are separated by a tab, in the order `--fields` names them;
 * a failed lookup is an empty line (its error goes to stderr as usual).
 */

/**
 * The field printed without `--fields`: the one fact a script most often
 * wants from each kind of record. A kind not listed prints its identity.
 */
const MAIN_VALUE: Readonly<Record<string, readonly string[]>> = {
  ip: ['location.country_code'],
  bulk: ['location.country_code'],
  vpn: ['threat_level'],
  asn: ['organization'],
  dns: ['answers'],
  mx: ['status'],
  spf: ['status'],
  email: ['summary.error'],
  smtp: ['connected'],
  blacklist: ['verdict.status'],
  'dnsbl-zone': ['status'],
  'data-source': ['version'],
  'data-update': ['status'],
  'api-key': ['key'],
  quota: ['daily.remaining'],
};

/** The columns `-f value` prints for a schema when `--fields` names none. */
export function mainValueColumns(schema: RecordSchema): readonly string[] {
  const main = Object.hasOwn(MAIN_VALUE, schema.kind) ? MAIN_VALUE[schema.kind]! : schema.identity;
  return main.filter((column) => schema.columns.includes(column));
}

/**
 * One value as text: null and absent are empty, lists of plain values are
 * space-separated, other objects are JSON. Escaped (`escapeValue`) so that
 * one record stays one line.
 */
export function valueText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return escapeValue(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (Array.isArray(value) && value.every((item) => item === null || ['string', 'number', 'boolean'].includes(typeof item))) {
    return escapeValue(value.map((item) => (item === null ? '' : String(item))).join(' '));
  }
  return escapeValue(JSON.stringify(value) ?? '');
}

const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };
const UNESCAPES: Readonly<Record<string, string>> = { '\\': '\\', t: '\t', n: '\n', r: '\r' };

/**
 * Backslash escapes for the characters that would split a line or a field
 * (tab, line feed, carriage return) and for the backslash itself, so that
 * `unescapeValue` gives the text back exactly.
 */
export function escapeValue(text: string): string {
  return /[\\\t\n\r]/.test(text) ? text.replace(/[\\\t\n\r]/g, (char) => ESCAPES[char]!) : text;
}

/** The inverse of `escapeValue`. */
export function unescapeValue(text: string): string {
  return text.replace(/\\([\\tnr])/g, (_, char: string) => UNESCAPES[char]!);
}
