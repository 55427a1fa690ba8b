/** The region table: ISO 3166-2 codes by country and DB-IP region name. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { formatRegionTable, loadRegionTable, parseRegionTable } from '../../../src/engine/geo/region-codes.js';
import { tempDir } from '../../support/cli.js';

const scratch = tempDir('netintel-regions-');
afterAll(() => scratch.remove());

describe('the region table', () => {
  const entries = [
    { country: 'US', region: 'California', code: 'US-CA' },
    { country: 'AT', region: 'Vienna', code: 'AT-9' },
    { country: 'FR', region: 'Île-de-France', code: 'FR-IDF' },
    { country: 'PL', region: 'Łódź Voivodeship', code: 'PL-10' },
    { country: 'US', region: 'Nowhere Land', code: null },
  ];

  it('is written one sorted line per region and read back from its file, non-ASCII names included', () => {
    const text = formatRegionTable(entries);
    expect(text.split('\n')[0]).toBe('AT\tVienna\tAT-9');
    const path = join(scratch.path, 'regions.tsv');
    writeFileSync(path, text);
    const table = loadRegionTable(path);
    expect(table.code('AT', 'Vienna')).toBe('AT-9');
    expect(table.code('FR', 'Île-de-France')).toBe('FR-IDF');
    expect(table.code('PL', 'Łódź Voivodeship')).toBe('PL-10');
    expect(table.code('US', 'California')).toBe('US-CA');
  });

  it('answers null for regions without a code, unknown names, prefixes of names and missing input', () => {
    const table = parseRegionTable(formatRegionTable(entries));
    expect(table.code('US', 'Nowhere Land')).toBeNull();
    expect(table.code('US', 'Calif')).toBeNull();
    expect(table.code('U', 'California')).toBeNull();
    expect(table.code('DE', 'Berlin')).toBeNull();
    expect(table.code(null, 'Vienna')).toBeNull();
    expect(table.code('AT', null)).toBeNull();
  });

  it('gives back the code of every entry it was written from', () => {
    const name = fc.string({ minLength: 1, maxLength: 20 }).filter((text) => !/[\t\n]/.test(text));
    const entry = fc.record({ country: fc.constantFrom('US', 'DE', 'JP'), region: name, code: fc.option(fc.constantFrom('US-CA', 'DE-BE', 'JP-13'), { nil: null }) });
    fc.assert(
      fc.property(fc.uniqueArray(entry, { selector: (e) => `${e.country}\t${e.region}` }), (written) => {
        const table = parseRegionTable(formatRegionTable(written));
        for (const { country, region, code } of written) expect(table.code(country, region)).toBe(code);
      }),
    );
  });

  it('names the file when it cannot be read', () => {
    expect(() => loadRegionTable(join(scratch.path, 'missing.tsv'))).toThrow(/missing\.tsv.*build:data/);
  });
});
