/**
 * The country-name table (data/build/country-names.json), searched one key
 * at a time: the same names as parsing it whole.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dataFilePath } from '../../../src/engine/data/data-files.js';
import { countryName, loadCountryNames } from '../../../src/engine/geo/country-names.js';
import { tempDir } from '../../support/cli.js';

const scratch = tempDir('netintel-country-names-');
afterAll(() => scratch.remove());

function tableOf(json: string, name: string) {
  const path = join(scratch.path, name);
  writeFileSync(path, json);
  return loadCountryNames(path);
}

describe('loadCountryNames', () => {
  it('gives every name of the installed table as JSON.parse reads it, and null for codes it lacks', () => {
    const path = dataFilePath('countryNames', null);
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>;
    const table = loadCountryNames(path);
    expect(Object.keys(parsed).length).toBeGreaterThan(240);
    for (const [code, name] of Object.entries(parsed)) expect(countryName(table, code)).toBe(name);
    expect(countryName(table, 'US')).toBe('United States');
    for (const code of ['XX', 'us', 'U', 'USA', '', '":']) expect(countryName(table, code)).toBeNull();
    expect(countryName(table, null)).toBeNull();
  });

  it('reads escapes, and never takes text inside a name for a key', () => {
    const names = { AA: 'Quote "BB": inside', BB: 'Back\\slash and \u00e9', CC: '', DD: 'Tab\tand \u2028' };
    const table = tableOf(JSON.stringify(names), 'escaped.json');
    for (const [code, name] of Object.entries(names)) expect(table.get(code)).toBe(name);
    expect(table.get('EE')).toBeUndefined();
  });

  it('names the file when it cannot be read or a name is cut off', () => {
    expect(() => loadCountryNames(join(scratch.path, 'missing.json'))).toThrow(/missing\.json.*build:data/);
    const cut = tableOf('{"AA":"Fine","BB":"Cut o', 'cut.json');
    expect(cut.get('AA')).toBe('Fine');
    expect(() => cut.get('BB')).toThrow(/cut\.json.*malformed at BB/);
  });
});
