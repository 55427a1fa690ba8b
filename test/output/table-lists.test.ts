import { describe, expect, it } from 'vitest';
import type { AsnResult } from '../../src/engine/asn/lookup-asn.js';
import { ASN_SCHEMA } from '../../src/output/schemas/asn-schema.js';
import { TABLE_LIST_ITEMS } from '../../src/output/table.js';
import { ASN_BY_NUMBER, ok } from './fixtures.js';
import { render } from './render.js';

const prefixes = Array.from({ length: 5968 }, (_, i) => `10.${i >> 8}.${i & 255}.0/24`);
const LARGE_AS: AsnResult = {
  ...ASN_BY_NUMBER,
  prefixes: { ipv4: prefixes, ipv6: ['2001:db8::/32'] },
  counts: { ...ASN_BY_NUMBER.counts!, ipv4Prefixes: prefixes.length },
};

describe('lists in table cells', () => {
  it('shows the first items of a long list and how many there are, on one line of bounded width', async () => {
    const text = await render(ASN_SCHEMA, 'table', [ok('AS64500', LARGE_AS)], { single: true });
    const line = text.split('\n').find((row) => row.includes('prefixes.ipv4'))!;
    expect(line).toContain(`"10.0.0.0/24","10.0.1.0/24"`);
    expect(line).toContain(`"10.0.${TABLE_LIST_ITEMS - 1}.0/24",…] (${TABLE_LIST_ITEMS} of 5968 shown; -f json or -f csv for all)`);
    expect(line).not.toContain(`10.0.${TABLE_LIST_ITEMS}.0/24`);
    expect(line.length).toBeLessThan(300);
    // A short list is shown whole, as before.
    expect(text).toMatch(/prefixes\.ipv6 +│ \["2001:db8::\/32"\]/);
  });

  it('keeps every item in json and csv', async () => {
    const json = JSON.parse(await render(ASN_SCHEMA, 'json', [ok('AS64500', LARGE_AS)], { single: true }));
    expect(json.prefixes.ipv4).toHaveLength(5968);
    const csv = await render(ASN_SCHEMA, 'csv', [ok('AS64500', LARGE_AS)], { single: true });
    expect(csv).toContain('10.23.79.0/24');
  });
});
