/**
 * Golden files: each kind x format, for one record and for several with an
 * error among them, compared byte for byte with test/output/golden/*.
 * After a deliberate change of an output layout, regenerate with
 * `UPDATE_GOLDEN=1 npx vitest run test/output/golden.test.ts` and review the diff.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../src/engine/outcome.js';
import { OUTPUT_FORMATS, type OutputFormat } from '../../src/output/formatter.js';
import type { RecordSchema } from '../../src/output/record-schema.js';
import { ASN_SCHEMA } from '../../src/output/schemas/asn-schema.js';
import { BULK_SCHEMA } from '../../src/output/schemas/bulk-schema.js';
import { IP_SCHEMA } from '../../src/output/schemas/ip-schema.js';
import { ASN_MANY, ASN_SINGLE, BULK_MANY, IP_MANY, IP_SINGLE } from './fixtures.js';
import { render } from './render.js';

const GOLDEN_DIR = fileURLToPath(new URL('./golden/', import.meta.url));
const UPDATE = process.env.UPDATE_GOLDEN === '1';

const EXTENSIONS: Record<OutputFormat, string> = { table: 'txt', json: 'json', ndjson: 'ndjson', csv: 'csv', xml: 'xml', value: 'value' };

function golden(name: string, actual: string): void {
  const path = join(GOLDEN_DIR, name);
  if (UPDATE || !existsSync(path)) {
    if (!UPDATE) throw new Error(`missing golden file ${name}; run with UPDATE_GOLDEN=1 to create it`);
    mkdirSync(GOLDEN_DIR, { recursive: true });
    writeFileSync(path, actual);
    return;
  }
  expect(actual).toBe(readFileSync(path, 'utf8'));
}

const CASES: Array<{ kind: string; schema: RecordSchema; variant: 'single' | 'many'; outcomes: ReadonlyArray<Outcome<unknown>> }> = [
  { kind: 'ip', schema: IP_SCHEMA, variant: 'single', outcomes: IP_SINGLE },
  { kind: 'ip', schema: IP_SCHEMA, variant: 'many', outcomes: IP_MANY },
  { kind: 'asn', schema: ASN_SCHEMA, variant: 'single', outcomes: ASN_SINGLE },
  { kind: 'asn', schema: ASN_SCHEMA, variant: 'many', outcomes: ASN_MANY },
  { kind: 'bulk', schema: BULK_SCHEMA, variant: 'many', outcomes: BULK_MANY },
];

describe('golden output', () => {
  for (const { kind, schema, variant, outcomes } of CASES) {
    for (const format of OUTPUT_FORMATS) {
      const name = `${kind}-${variant}.${EXTENSIONS[format]}`;
      it(`prints ${kind} records (${variant}) as ${format} exactly as ${name}`, async () => {
        golden(name, await render(schema, format, outcomes, { single: variant === 'single' }));
      });
    }
  }

  it('prints ip records as csv without the header row exactly as ip-many.csv minus its first line', async () => {
    const withHeader = readFileSync(join(GOLDEN_DIR, 'ip-many.csv'), 'utf8');
    const without = await render(IP_SCHEMA, 'csv', IP_MANY, { single: false, header: false });
    expect(without).toBe(withHeader.slice(withHeader.indexOf('\n') + 1));
  });
});

describe('format invariants', () => {
  it('prints a json array whose elements are the ndjson lines, errors as {query, error}', async () => {
    const json = JSON.parse(await render(IP_SCHEMA, 'json', IP_MANY, { single: false })) as unknown[];
    const ndjson = (await render(IP_SCHEMA, 'ndjson', IP_MANY, { single: false }))
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown);
    expect(json).toEqual(ndjson);
    expect(json[1]).toEqual({
      query: 'not-an-ip',
      error: { code: 'invalid_input', message: '"not-an-ip" is not a valid IPv4 or IPv6 address', details: { input: 'not-an-ip' } },
    });
  });

  it('prints an empty json array for a run with no outcomes', async () => {
    expect(await render(IP_SCHEMA, 'json', [], { single: false })).toBe('[]\n');
    expect(await render(IP_SCHEMA, 'ndjson', [], { single: false })).toBe('');
  });

  it('prints a single failed lookup in the table view as nothing at all (the message goes to stderr)', async () => {
    const [, error] = IP_MANY;
    expect(await render(IP_SCHEMA, 'table', [error!], { single: true })).toBe('');
  });

  it('colours the table only when asked', async () => {
    const plain = await render(IP_SCHEMA, 'table', IP_MANY, { single: false, color: false });
    const coloured = await render(IP_SCHEMA, 'table', IP_MANY, { single: false, color: true });
    // eslint-disable-next-line no-control-regex
    expect(plain).not.toMatch(/\u001b\[/);
    expect(coloured).toMatch(/\u001b\[31m[^\u001b]*invalid_input/);
    // eslint-disable-next-line no-control-regex
    expect(coloured.replace(/\u001b\[\d+m/g, '')).toBe(plain);
  });

  it('keeps every xml document well formed with control characters in a message', async () => {
    const { XMLValidator } = await import('fast-xml-parser');
    const { NetintelError } = await import('../../src/errors.js');
    const error = new NetintelError('invalid_input', '"a\u0000b\u001b" is bad & <worse>');
    const xml = await render(IP_SCHEMA, 'xml', [...IP_MANY, { ok: false, query: 'a\u0000b\u001b', error }], { single: false });
    expect(XMLValidator.validate(xml)).toBe(true);
    expect(xml).toContain('<error query="a\ufffdb\ufffd" code="invalid_input">&quot;a\ufffdb\ufffd&quot; is bad &amp; &lt;worse&gt;</error>');
  });
});
