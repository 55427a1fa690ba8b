/** The country-name table (data/build/country-names.json). */
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

  it('names the file when it cannot be read or is not JSON', () => {
    expect(() => loadCountryNames(join(scratch.path, 'missing.json'))).toThrow(/missing\.json.*build:data/);
    expect(() => tableOf('{"AA":"Fine","BB":"Cut o', 'cut.json')).toThrow(/cut\.json.*build:data/);
  });
});
