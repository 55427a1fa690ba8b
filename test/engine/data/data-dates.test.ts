/**
 * Dates in `meta` and `data status`: an mmdb's build epoch and the ASN data's
 * version as ISO 8601.
 */
import { describe, expect, it } from 'vitest';
import { asnDataDate, isoSeconds, mmdbDataDate } from '../../../src/engine/data/data-dates.js';
import type { MmdbMetadata } from '../../../src/engine/dataset/mmdb-file.js';

const withEpoch = (buildEpoch: unknown) => ({ buildEpoch }) as unknown as MmdbMetadata;

describe('isoSeconds', () => {
  it('drops the milliseconds of an ISO 8601 time, in and outside four-digit years', () => {
    expect(isoSeconds(new Date(Date.UTC(2024, 1, 29, 23, 59, 59, 999)))).toBe('2024-02-29T23:59:59Z');
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
