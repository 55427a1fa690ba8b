/** The BIMI Assertion Record parser (draft §4.3) and the selector rule (§4.4). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { httpsUrlProblem, isBimiRecord, parseBimiRecord } from '../../../src/engine/mail/bimi-record.js';
import { normaliseSelector } from '../../../src/engine/mail/check-bimi.js';
import { NetintelError } from '../../../src/errors.js';

const ids = (text: string) => parseBimiRecord(text).problems.map((problem) => problem.id);

describe('parseBimiRecord', () => {
  it('reads l= and a= as HTTPS URLs, lps and avp, with white space around tags', () => {
    const record = parseBimiRecord('v=BIMI1;  l = https://brand.example/logo.svg ; a=https://brand.example/vmc.pem; avp=personal; lps=true;');
    expect(record).toMatchObject({
      tags: { v: 'BIMI1', l: 'https://brand.example/logo.svg', a: 'https://brand.example/vmc.pem', lps: 'true', avp: 'personal' },
      location: 'https://brand.example/logo.svg',
      authority: 'https://brand.example/vmc.pem',
      declined: false,
      problems: [],
    });
  });

  it('reads l= and a= both empty (or a= absent with l= empty) as a declination', () => {
    expect(parseBimiRecord('v=BIMI1; l=; a=;')).toMatchObject({ declined: true, location: null, problems: [] });
    expect(parseBimiRecord('v=BIMI1; l=')).toMatchObject({ declined: true, problems: [] });
    expect(parseBimiRecord('v=BIMI1; l=; a=https://brand.example/vmc.pem')).toMatchObject({ declined: false, authority: 'https://brand.example/vmc.pem' });
    expect(ids('v=BIMI1; l=; a=https://brand.example/vmc.pem')).toEqual(['bimi_location_empty']);
  });

  it('refuses http, addresses, lists and other image types in l=, and http in a=', () => {
    expect(ids('v=BIMI1; l=http://brand.example/logo.svg')).toEqual(['bimi_location_invalid']);
    expect(parseBimiRecord('v=BIMI1; l=http://brand.example/logo.svg').problems[0]!.message).toContain('only HTTPS');
    expect(ids('v=BIMI1; l=https://192.0.2.1/logo.svg')).toEqual(['bimi_location_invalid']);
    expect(ids('v=BIMI1; l=https://a.example/1.svg,https://b.example/2.svg')).toEqual(['bimi_location_invalid']);
    expect(ids('v=BIMI1; l=https://brand.example/logo.png')).toEqual(['bimi_location_not_svg']);
    expect(ids('v=BIMI1; l=https://brand.example/logo.svg; a=http://brand.example/vmc.pem')).toEqual(['bimi_authority_invalid']);
    expect(ids('v=BIMI1; l=not a url')).toEqual(['bimi_location_invalid']);
  });

  it('lists a missing l=, a wrong version, duplicates, bad pairs, unknown tags and bad lps/avp values', () => {
    expect(ids('v=BIMI1;')).toEqual(['bimi_location_missing']);
    expect(ids('v=bimi1; l=')).toContain('bimi_version_invalid');
    expect(ids('l=; v=BIMI1')).toContain('bimi_version_not_first');
    expect(ids('v=BIMI1; l=; l=')).toContain('bimi_duplicate_tag');
    expect(ids('v=BIMI1; l=; junk')).toContain('bimi_syntax_error');
    expect(ids('v=BIMI1; l=; xnew=1')).toContain('bimi_unknown_tag');
    expect(ids('v=BIMI1; l=; L=https://brand.example/logo.svg')).toEqual(['bimi_unknown_tag']);
    expect(ids('v=BIMI1; l=; lps=yes; avp=none')).toEqual(['bimi_lps_invalid', 'bimi_avp_invalid']);
  });

  it('never throws, and every problem carries an id, a severity and a section of the draft', () => {
    const tagText = fc.oneof(fc.constantFrom('v', 'l', 'a', 'lps', 'avp', 'L', 'x', ''), fc.string({ maxLength: 6 }));
    const value = fc.oneof(
      fc.constantFrom('BIMI1', '', 'https://brand.example/logo.svg', 'http://x.example/a.svg', 'https://[::1]/a', 'true', 'brand', 'https://a.example/x.png'),
      fc.string({ maxLength: 30 }),
    );
    const record = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.array(fc.tuple(tagText, value), { maxLength: 8 }).map((pairs) => pairs.map(([tag, text]) => `${tag}=${text}`).join(';')),
    );
    fc.assert(
      fc.property(record, (text) => {
        const parsed = parseBimiRecord(text);
        for (const problem of parsed.problems) {
          expect(problem.id).toMatch(/^bimi_[a-z_]+$/);
          expect(['error', 'warning', 'info']).toContain(problem.severity);
          expect(problem.section).toMatch(/^§\d/);
        }
        if (parsed.location !== null) expect(httpsUrlProblem(parsed.location)).toBeNull();
        if (parsed.declined) expect(parsed.location).toBeNull();
      }),
      { numRuns: 500 },
    );
  });
});

describe('isBimiRecord', () => {
  it('takes only records starting with v=BIMI1, exactly', () => {
    expect(isBimiRecord('v=BIMI1; l=')).toBe(true);
    expect(isBimiRecord('v = BIMI1')).toBe(true);
    expect(isBimiRecord('v=BIMI10; l=')).toBe(false);
    expect(isBimiRecord('v=bimi1; l=')).toBe(false);
    expect(isBimiRecord('l=; v=BIMI1')).toBe(false);
    expect(isBimiRecord(' v=BIMI1')).toBe(false);
  });
});

describe('normaliseSelector', () => {
  it('takes DNS labels, lower-cased, and refuses anything else with invalid_input', () => {
    expect(normaliseSelector('Default')).toBe('default');
    expect(normaliseSelector('brand2.region')).toBe('brand2.region');
    for (const bad of ['', '-x', 'a..b', 'a b', 'x_y', 'a'.repeat(64), '../etc']) {
      expect(() => normaliseSelector(bad)).toThrow(NetintelError);
    }
  });
});
