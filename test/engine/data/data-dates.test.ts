/**
 * Dates in `meta` and `data status`: an mmdb's build epoch and the ASN data's
 * version as ISO 8601.
 */
import { describe, expect, it } from 'vitest';
import { asnDataDate, isoSeconds, mmdbDataDate } from '../../../src/engine/data/data-dates.js';
import type { MmdbMetadata } from '../../../src/engine/geo/mmdb-file.js';

const withEpoch = (buildEpoch: unknown) => ({ buildEpoch }) as unknown as MmdbMetadata;

describe('isoSeconds', () => {
  it('is toISOString() to the second, across leap days, month ends and centuries', () => {
    const samples = [Date.UTC(2026, 5, 5, 13, 42, 2), Date.UTC(2024, 1, 29, 23, 59, 59), Date.UTC(2000, 0, 1), Date.UTC(1970, 0, 1), Date.UTC(9999, 11, 31, 23, 59, 59)];
    // A fixed-seed walk over 1000..9999 so that a failure can be reproduced.
    let seed = 42;
    for (let i = 0; i < 2000; i++) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      samples.push(Date.UTC(1000, 0, 1) + Math.floor((seed / 2147483648) * (Date.UTC(9999, 11, 31) - Date.UTC(1000, 0, 1)) / 1000) * 1000);
    }
    for (const time of samples) expect(isoSeconds(new Date(time))).toBe(new Date(time).toISOString().replace('.000Z', 'Z'));
  });

  it('falls back to toISOString() outside four-digit years', () => {
    expect(isoSeconds(new Date(Date.UTC(-5, 0, 1)))).toBe('-000005-01-01T00:00:00Z');
    expect(isoSeconds(new Date(Date.UTC(12000, 0, 1)))).toBe('+012000-01-01T00:00:00Z');
  });
});

describe('mmdbDataDate', () => {
  it('gives the build epoch as ISO 8601 from a Date or from seconds, and null for anything else', () => {
    expect(mmdbDataDate(withEpoch(new Date('2026-06-05T13:42:02Z')))).toBe('2026-06-05T13:42:02Z');
    expect(mmdbDataDate(withEpoch(1780666922))).toBe(new Date(1780666922 * 1000).toISOString().replace('.000Z', 'Z'));
    expect(mmdbDataDate(withEpoch(new Date(Number.NaN)))).toBeNull();
    expect(mmdbDataDate(withEpoch('2026'))).toBeNull();
  });
});

describe('asnDataDate', () => {
  it('reads a date version, a packaged version, else the build date', () => {
    expect(asnDataDate({ sourceVersion: '2026-11-20', builtAt: 'x' })).toBe('2026-11-20');
    expect(asnDataDate({ sourceVersion: '2.3.2026061719', builtAt: 'x' })).toBe('2026-06-17');
    expect(asnDataDate({ sourceVersion: undefined, builtAt: '2026-01-02T00:00:00Z' } as never)).toBe('2026-01-02T00:00:00Z');
  });
});
