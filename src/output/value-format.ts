import type { RecordSchema } from './record-schema.js';

/**
 * `-f value`: bare values for shell use (`city=$(netintel ip 8.8.8.8
 * --fields location.city -f value)`). One line per outcome, in input order;
 * several fields are separated by a tab, in the order `--fields` names them;
 * a failed lookup is an empty line (its error goes to stderr as usual).
 */

/** The columns `-f value` prints for a schema when `--fields` names none. */
export function mainValueColumns(schema: RecordSchema): readonly string[] {
  const main = schema.mainValue ?? schema.identity;
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
 * What `escapeValue` escapes: the backslash, control characters (C0, DEL,
 * C1) and the bidi controls, which could rewrite a terminal's screen or the
 * order of the text shown.
 */
// eslint-disable-next-line no-control-regex
const ESCAPED = /[\\\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;
// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /[\\\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/**
 * Backslash escapes that keep a value on its line and in its field: `\t`,
 * `\n`, `\r`, `\\`, `\xHH` for other control characters and `\uHHHH` for
 * bidi controls; `unescapeValue` gives the text back exactly.
 */
export function escapeValue(text: string): string {
  if (!NEEDS_ESCAPE.test(text)) return text;
  return text.replace(ESCAPED, (char) => {
    const named = ESCAPES[char];
    if (named !== undefined) return named;
    const code = char.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** The inverse of `escapeValue`. */
export function unescapeValue(text: string): string {
  return text.replace(/\\(\\|t|n|r|x[0-9a-f]{2}|u[0-9a-f]{4})/g, (_, escape: string) =>
    escape.length === 1 ? UNESCAPES[escape]! : String.fromCharCode(Number.parseInt(escape.slice(1), 16)),
  );
}

/**
 * The fields `-f value` prints without `--fields`, per record kind, for help
 * text: those of the `declared` records that name them (each kind once, in
 * the order given); lines of at most `width`, indented.
 */
export function mainValueSummary(declared: readonly RecordSchema[] = [], width = 100, indent = '  '): string {
  const lines: string[] = [];
  let line = '';
  const own = declared.flatMap((schema) => (schema.mainValue ? [[schema.kind, schema.mainValue] as const] : []));
  for (const [kind, columns] of new Map(own)) {
    const item = `${kind}: ${columns.join(',')}`;
    if (line !== '' && indent.length + line.length + 2 + item.length > width) {
      lines.push(`${indent}${line};`);
      line = '';
    }
    line = line === '' ? item : `${line}; ${item}`;
  }
  lines.push(`${indent}${line}`);
  return lines.join('\n');
}
