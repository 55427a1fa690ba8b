import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readMailDate } from '../../../../src/engine/mail/headers/mail-date.js';
import { readReceived } from '../../../../src/engine/mail/headers/received.js';
import { RECEIVED_FIXTURES } from './received-fixtures.js';

describe('Received fields as each MTA writes them', () => {
  for (const fixture of RECEIVED_FIXTURES) {
    it(`${fixture.mta}: ${fixture.note}`, () => {
      const reading = readReceived(fixture.value);
      expect(reading.parsed).toBe(fixture.parsed);
      expect(reading.fields).toMatchObject(fixture.expected);
    });
  }
});

describe('dates of trace fields (RFC 5322 §3.3, §4.3)', () => {
  it.each([
    ['Tue,  1 Jul 2025 10:00:02 +0000 (UTC)', '2025-07-01T10:00:02Z'],
    ['1 Jul 2025 10:00:06 -0000', '2025-07-01T10:00:06Z'],
    ['Tue, 1 Jul 25 03:00 PDT', '2025-07-01T10:00:00Z'],
    ['Tue, 01 Jul 2025 23:30:00 -0130', '2025-07-02T01:00:00Z'],
    ['Mon, 31 Jun 2025 10:00:00 +0000', null],
    ['Tue, 1 Jul 2025 24:00:00 +0000', null],
    ['yesterday', null],
    ['Tue, 1 July 2025 10:00:00 +0000', '2025-07-01T10:00:00Z'],
    ['Mon, 1 Sept 2025 10:00:00 +0100', '2025-09-01T09:00:00Z'],
    ['Tue, 1 Jul 2025 10:00:00 +0000 UTC', '2025-07-01T10:00:00Z'],
    ['Tue, 1 Jul 2025 10:00:00 +0200 (CEST (summer))', '2025-07-01T08:00:00Z'],
    // Not dates: a zone of two digits, text after the zone, a month that is no month's name.
    ['Tue, 1 Jul 2025 10:00:05 +05', null],
    ['Tue, 1 Jul 2025 10:00:05 +0000garbage', null],
    ['1 Julyish 2025 10:00:00 +0000', null],
  ])('%s', (text, iso) => {
    expect(readMailDate(text)).toBe(iso);
  });

  it('reads comments nested a few deep, and a field of 200,000 nested ones at once, as no date', () => {
    const deep = `Tue, 1 Jul 2025 10:00:00 +0000 ${'('.repeat(200_000)}x${')'.repeat(200_000)}`;
    expect(readMailDate(deep)).toBeNull();
  });
});

describe('the Received reader takes any text', () => {
  const pieces = fc.constantFrom('\f', '\v', '\u00a0', '\u2028', '\x00', 'from', 'by', 'with', 'id', 'for', 'via', ';', '(', ')', '[', ']', '\\', ' ', '\t', '\r\n ', 'helo=', 'a.example', '192.0.2.1', '[IPv6:2001:db8::1]', 'TLSv1.3', 'version=TLS1_2', 'cipher=X', 'Tue, 1 Jul 2025 10:00:00 +0000', '<a@b>');
  it('never throws, and every field it fills is a string or null', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 400 }), fc.string({ unit: 'binary', maxLength: 200 }), fc.array(pieces, { maxLength: 60 }).map((parts) => parts.join(' '))), (text) => {
        const reading = readReceived(text);
        expect(typeof reading.parsed).toBe('boolean');
        for (const value of Object.values(reading.fields)) expect(value === null || typeof value === 'string').toBe(true);
        if (reading.fields.timestamp !== null) expect(Number.isNaN(Date.parse(reading.fields.timestamp))).toBe(false);
      }),
      { numRuns: 2000 },
    );
  });
  it('reads a long field in time linear in its length', () => {
    const long = `from ${'('.repeat(50_000)} by x; Tue, 1 Jul 2025 10:00:00 +0000`;
    const started = process.hrtime.bigint();
    readReceived(long);
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(2000);
  });
});
