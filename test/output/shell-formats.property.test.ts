/**
 * Properties of the shell-facing formats: `-f value` escaping, `--fields`
 * suggestions, and CSV rows that stay one physical line each.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/engine/outcome.js';
import { NetintelError } from '../../src/errors.js';
import { getPath, selectColumns, suggestFields, type RecordSchema } from '../../src/output/record-schema.js';
import { DNS_SCHEMA } from '../../src/output/schemas/dns-schema.js';
import { EMAIL_SCHEMA } from '../../src/output/schemas/email-schema.js';
import { IP_SCHEMA } from '../../src/output/schemas/ip-schema.js';
import { MX_SCHEMA } from '../../src/output/schemas/mx-schema.js';
import { SMTP_SCHEMA } from '../../src/output/schemas/smtp-schema.js';
import { SPF_SCHEMA } from '../../src/output/schemas/spf-schema.js';
import { escapeValue, unescapeValue } from '../../src/output/value-format.js';
import { parseCsv } from './parse-csv.js';
import { render } from './render.js';

describe('-f value escaping', () => {
  it('gives any string back through unescapeValue, with no raw tab, line break, control or bidi character', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (text) => {
        const escaped = escapeValue(text);
        // eslint-disable-next-line no-control-regex
        expect(escaped).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
        expect(unescapeValue(escaped)).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });

  it('escapes a backslash-letter text so that it is not read as an escape', () => {
    expect(escapeValue('a\\nb')).toBe('a\\\\nb');
    expect(unescapeValue(escapeValue('a\\nb'))).toBe('a\\nb');
    expect(escapeValue('a\tb\nc')).toBe('a\\tb\\nc');
    expect(escapeValue('\u001b[31mred\u202e')).toBe('\\x1b[31mred\\u202e');
  });

  it('prints one line per outcome, a failed one empty, several fields tab-separated in the order asked', async () => {
    const outcomes: Array<Outcome<unknown>> = [
      { ok: true, query: 'a', value: { ip: '192.0.2.1', location: { city: 'Multi\nLine', country_code: 'XX' }, network: { asn: 64500 } } },
      { ok: false, query: 'b', error: new NetintelError('invalid_input', 'bad') },
      { ok: true, query: 'c', value: { ip: '192.0.2.2', location: { city: null, country_code: 'YY' }, network: { asn: null } } },
    ];
    const columns = selectColumns(IP_SCHEMA, ['network.asn', 'location.city']);
    expect(await render(IP_SCHEMA, 'value', outcomes, { single: false, columns })).toBe('64500\tMulti\\nLine\n\n\t\n');
    expect(await render(IP_SCHEMA, 'value', outcomes, { single: false })).toBe('XX\n\nYY\n');
  });
});

const SCHEMAS: readonly RecordSchema[] = [IP_SCHEMA, DNS_SCHEMA, MX_SCHEMA, SPF_SCHEMA, EMAIL_SCHEMA, SMTP_SCHEMA];

describe('--fields suggestions', () => {
  it('never suggests a field the schema does not have, nor the unknown field itself', () => {
    fc.assert(
      fc.property(fc.constantFrom(...SCHEMAS), fc.string({ maxLength: 30 }), (schema, field) => {
        const known = new Set([...Object.keys(schema.groups), ...schema.columns]);
        // Suggestions are for a field the schema does not have: a generated "mx" is email's group.
        fc.pre(!known.has(field));
        for (const suggestion of suggestFields(schema, field)) {
          expect(known.has(suggestion)).toBe(true);
          expect(suggestion).not.toBe(field);
        }
      }),
      { numRuns: 1000 },
    );
  });

  it.each([
    ['city', 'location.city'],
    ['cty', 'location.city'],
    ['Location', 'location'],
    ['location.cit', 'location.city'],
    ['asn', 'network.asn'],
  ])('suggests %j -> %j for ip records', (field, expected) => {
    expect(suggestFields(IP_SCHEMA, field)[0]).toBe(expected);
  });

  it('says the unknown field, the suggestion and where the list is, as a usage error', () => {
    expect(() => selectColumns(IP_SCHEMA, ['city'])).toThrowError(
      'unknown field "city" for ip records (did you mean "location.city"?; see --help for the field list)',
    );
    expect(() => selectColumns(IP_SCHEMA, ['zzzzzz'])).toThrowError('unknown field "zzzzzz" for ip records (see --help for the field list)');
  });
});

describe('CSV rows', () => {
  /** Records of a schema whose every column holds an arbitrary string (lists where the presentation joins them). */
  function recordOf(schema: RecordSchema, text: string): unknown {
    const record: Record<string, unknown> = {};
    for (const column of schema.columns) {
      const keys = column.split('.');
      let target = record;
      for (const key of keys.slice(0, -1)) target = (target[key] ??= {}) as Record<string, unknown>;
      target[keys.at(-1)!] = text;
    }
    if (schema.csvFlat === undefined) return record;
    record.findings = [
      { id: text, severity: 'warning', message: text },
      { id: 'b', severity: 'error', message: `${text}\n${text}` },
    ];
    return record;
  }

  // Text as any presentation may give it (multi-line joins included), through both CSV paths:
  // the compiled writer of plain schemas (ip) and the presented cells with flat findings (mx).
  const PRESENTED_AS_GIVEN: RecordSchema = { ...MX_SCHEMA, presentColumn: (record, column) => getPath(record, column) };

  it('are one physical line each, whatever line breaks the values hold', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(IP_SCHEMA, PRESENTED_AS_GIVEN), fc.string({ unit: 'binary', maxLength: 20 }), async (schema, text) => {
        const outcomes: Array<Outcome<unknown>> = [
          { ok: true, query: text, value: recordOf(schema, text) },
          { ok: false, query: text, error: new NetintelError('invalid_input', `${text}\r\n${text}`) },
        ];
        const csv = await render(schema, 'csv', outcomes, { single: false });
        const lines = csv.slice(0, -1).split('\n');
        expect(lines).toHaveLength(3);
        const width = parseCsv(`${lines[0]}\n`)[0]!.length;
        for (const line of lines) {
          const rows = parseCsv(`${line}\n`);
          expect(rows).toHaveLength(1);
          expect(rows[0]).toHaveLength(width);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('give findings as max severity, counts and ids instead of a text cell', async () => {
    const record = { domain: 'example.test', status: 'mx', findings: [
      { id: 'mx_a', severity: 'warning', message: 'w' },
      { id: 'mx_b', severity: 'pass', message: 'p' },
      { id: 'mx_a', severity: 'warning', message: 'w2' },
      { id: 'mx_c', severity: 'info', message: 'i' },
    ] };
    const csv = await render(MX_SCHEMA, 'csv', [{ ok: true, query: 'example.test', value: record }], { single: false });
    const [header, row] = parseCsv(csv);
    const cell = (name: string) => row![header!.indexOf(name)];
    expect(header).not.toContain('findings');
    expect(cell('findings.max_severity')).toBe('warning');
    expect(cell('findings.count.error')).toBe('0');
    expect(cell('findings.count.warning')).toBe('2');
    expect(cell('findings.count.info')).toBe('1');
    expect(cell('findings.ids')).toBe('mx_a mx_b mx_c');
  });
});

describe('machine formats on a terminal', () => {
  // eslint-disable-next-line no-control-regex
  const DRIVES_A_TERMINAL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
  const outcomesOf = (city: string): Array<Outcome<unknown>> => [
    { ok: true, query: 'a', value: { ip: '192.0.2.1', location: { city, country_code: 'XX' }, network: { asn: 64500 } } },
  ];

  it('json and ndjson keep any text exactly, with no raw control, C1 or bidi character on the wire', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 40 }), async (city) => {
        for (const format of ['json', 'ndjson'] as const) {
          const text = await render(IP_SCHEMA, format, outcomesOf(city), { single: format === 'json' });
          expect(text).not.toMatch(DRIVES_A_TERMINAL);
          const parsed = JSON.parse(format === 'json' ? text : text.trim()) as { location: { city: string } };
          expect(parsed.location.city).toBe(city);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('csv writes control and bidi characters as visible escapes, so a CSV on a terminal cannot drive it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 40 }), async (city) => {
        const text = await render(IP_SCHEMA, 'csv', outcomesOf(city), { single: false });
        expect(text).not.toMatch(DRIVES_A_TERMINAL);
      }),
      { numRuns: 300 },
    );
    const text = await render(IP_SCHEMA, 'csv', outcomesOf('Evil\u001b]0;title\u0007\u202ecity'), { single: false });
    expect(text).toContain('Evil\\x1b]0;title\\x07\\u202ecity');
  });
});
