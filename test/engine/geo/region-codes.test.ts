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

function tableOf(text: string, name: string) {
  const path = join(scratch.path, name);
  writeFileSync(path, text);
  return loadRegionTable(path);
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

  it('finds the first line, a middle line, the last line, and non-ASCII names', () => {
    expect(text.startsWith('AT\t\t\tEurope/Vienna\n')).toBe(true);
    const table = tableOf(text, 'regions.tsv');
    // The country-wide line sorts first: "AT\t\t".
    expect(table.timezone('AT', null)).toBe('Europe/Vienna');
    expect(table.code('AT', 'Vienna')).toBe('AT-9');
    expect(table.code('FR', 'Île-de-France')).toBe('FR-IDF');
    expect(table.timezone('FR', 'Île-de-France')).toBe('Europe/Paris');
    expect(table.code('ZZ', 'Nowhere')).toBe('ZZ-NO');
    // A region without a single zone falls back to its country's, here none.
    expect(table.timezone('US', 'Alaska')).toBeNull();
    expect(table.timezone('US', 'California')).toBe('America/Los_Angeles');
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

  it('reads a last line without a newline', () => {
    const table = tableOf(text.trimEnd(), 'regions-no-newline.tsv');
    expect(table.timezone('ZZ', 'Nowhere')).toBe('Etc/UTC');
    expect(tableOf('US\tTexas\tUS-TX\tAmerica/Chicago', 'one-line.tsv').timezone('US', 'Texas')).toBe('America/Chicago');
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
  });
});
