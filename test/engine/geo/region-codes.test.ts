/**
 * The region table: ISO 3166-2 codes and single time zones by country and
 * DB-IP region name, searched in the file's bytes.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatRegionTable, loadRegionTable } from '../../../src/engine/geo/region-codes.js';
import { tempDir } from '../../support/cli.js';

const scratch = tempDir('netintel-regions-');
afterAll(() => scratch.remove());

function tableOf(text: string, name: string, mode: 'pread' | 'memory' = 'memory') {
  const path = join(scratch.path, name);
  writeFileSync(path, text);
  return loadRegionTable(path, mode);
}

describe('loadRegionTable', () => {
  const text = formatRegionTable([
    { country: 'AT', region: 'Vienna', code: 'AT-9', timezone: 'Europe/Vienna' },
    { country: 'AT', region: '', code: null, timezone: 'Europe/Vienna' },
    { country: 'FR', region: 'Île-de-France', code: 'FR-IDF', timezone: 'Europe/Paris' },
    { country: 'US', region: 'California', code: 'US-CA', timezone: 'America/Los_Angeles' },
    { country: 'US', region: 'Alaska', code: 'US-AK', timezone: null },
    { country: 'ZZ', region: 'Nowhere', code: 'ZZ-NO', timezone: 'Etc/UTC' },
  ]);

  it('indexes where each country\'s lines are, in bytes', () => {
    const [index, ...lines] = text.split('\n');
    const body = Buffer.from(`${lines.join('\n')}`);
    expect(index).toMatch(/^#index AT:0:\d+ FR:\d+:\d+ US:\d+:\d+ ZZ:\d+:\d+$/);
    for (const entry of index!.split(' ').slice(1)) {
      const [country, start, length] = entry.split(':');
      const slice = body.subarray(Number(start), Number(start) + Number(length)).toString('utf8');
      expect(slice.split('\n').filter(Boolean).every((line) => line.startsWith(`${country}\t`)), entry).toBe(true);
      expect(slice.endsWith('\n')).toBe(true);
    }
    expect(lines[0]).toBe('AT\t\t\tEurope/Vienna');
  });

  for (const mode of ['pread', 'memory'] as const) {
    it(`finds the first line, a middle line, the last line, and non-ASCII names (${mode})`, () => {
      const table = tableOf(text, `regions-${mode}.tsv`, mode);
      // The country-wide line sorts first: "AT\t\t".
      expect(table.timezone('AT', null)).toBe('Europe/Vienna');
      expect(table.code('AT', 'Vienna')).toBe('AT-9');
      expect(table.code('FR', 'Île-de-France')).toBe('FR-IDF');
      expect(table.timezone('FR', 'Île-de-France')).toBe('Europe/Paris');
      expect(table.code('ZZ', 'Nowhere')).toBe('ZZ-NO');
      expect(table.timezone('US', 'Alaska')).toBeNull();
      expect(table.timezone('US', 'California')).toBe('America/Los_Angeles');
      expect(table.code('DE', 'Berlin')).toBeNull();
    });
  }

  it('reads a country\'s lines past the first read of a one-off lookup', () => {
    const country = (i: number) => String.fromCharCode(65 + Math.floor(i / 26), 65 + (i % 26));
    const many = formatRegionTable(Array.from({ length: 400 }, (_, i) => ({ country: country(i), region: `Region number ${i}`, code: null, timezone: `Etc/Zone${i}` })));
    expect(Buffer.byteLength(many)).toBeGreaterThan(16_384);
    const table = tableOf(many, 'many.tsv', 'pread');
    for (const i of [0, 123, 399]) expect(table.timezone(country(i), `Region number ${i}`)).toBe(`Etc/Zone${i}`);
  });

  it('answers null for unknown names, prefixes of names and missing input', () => {
    const table = tableOf(text, 'regions-unknown.tsv');
    expect(table.code('US', 'Calif')).toBeNull();
    expect(table.code('U', 'California')).toBeNull();
    expect(table.code('DE', 'Berlin')).toBeNull();
    expect(table.code(null, 'Vienna')).toBeNull();
    expect(table.code('AT', null)).toBeNull();
    expect(table.timezone(null, null)).toBeNull();
  });

  it('reads a last line without a newline, and a file without the index line', () => {
    for (const mode of ['pread', 'memory'] as const) {
      const table = tableOf(text.trimEnd(), `regions-no-newline-${mode}.tsv`, mode);
      expect(table.timezone('ZZ', 'Nowhere')).toBe('Etc/UTC');
      expect(tableOf('US\tTexas\tUS-TX\tAmerica/Chicago', `one-line-${mode}.tsv`, mode).timezone('US', 'Texas')).toBe('America/Chicago');
      // Longer than a one-off lookup's first read.
      const long = `${'AA\tFiller\t\tEtc/UTC\n'.repeat(1000)}US\tTexas\tUS-TX\tAmerica/Chicago\n`;
      expect(tableOf(long, `long-no-index-${mode}.tsv`, mode).timezone('US', 'Texas')).toBe('America/Chicago');
    }
  });

  it('keeps the most common zone of a region spanning several apart from its single zone', () => {
    const table = tableOf(
      formatRegionTable([
        { country: 'US', region: 'Kentucky', code: 'US-KY', timezone: null, majorityZone: 'America/New_York' },
        { country: 'US', region: 'Ohio', code: 'US-OH', timezone: 'America/New_York', majorityZone: null },
        { country: 'US', region: '', code: null, timezone: null, majorityZone: 'America/Chicago' },
      ]),
      'regions-majority.tsv',
    );
    expect(table.timezone('US', 'Kentucky')).toBeNull();
    expect(table.majorityZone('US', 'Kentucky')).toBe('America/New_York');
    expect(table.majorityZone('US', 'Ohio')).toBeNull();
    // Records without a region: the country line's; never a region's fallback.
    expect(table.majorityZone('US', null)).toBe('America/Chicago');
    expect(table.timezone('US', null)).toBeNull();
    expect(table.majorityZone('US', 'Texas')).toBeNull();
    expect(table.majorityZone(null, 'Kentucky')).toBeNull();
  });

  it('names the file when it cannot be read', () => {
    expect(() => loadRegionTable(join(scratch.path, 'missing.tsv'))).toThrow(/missing\.tsv.*build:data/);
    expect(() => loadRegionTable(join(scratch.path, 'missing.tsv'), 'pread')).toThrow(/missing\.tsv.*build:data/);
  });
});
