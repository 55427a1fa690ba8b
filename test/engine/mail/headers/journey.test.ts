import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readHeaderBlock } from '../../../../src/engine/mail/headers/header-block.js';
import { journeyOf } from '../../../../src/engine/mail/headers/hops.js';
import { NetintelError } from '../../../../src/errors.js';

const received = (by: string, time: string) => `from a.example (a.example [192.0.2.1]) by ${by} with ESMTP id X; ${time}`;

describe('the journey of a message', () => {
  it('reads hops oldest first with their delays from the Date field on', () => {
    const journey = journeyOf([received('c.example', 'Tue, 1 Jul 2025 10:10:00 +0000'), received('b.example', 'Tue, 1 Jul 2025 10:00:05 +0000')], 'Tue, 1 Jul 2025 10:00:00 +0000');
    expect(journey.hops.map((hop) => [hop.hop, hop.by_host, hop.delay_seconds, hop.clock_skew_seconds])).toEqual([
      [1, 'b.example', 5, null],
      [2, 'c.example', 595, null],
    ]);
    expect(journey.total_transit_seconds).toBe(600);
    expect(journey.findings.map((item) => [item.id, item.evidence?.hop])).toEqual([['headers_delay_large', 2]]);
  });

  it('shows a hop stamped before the one before it as clock skew, never as a negative delay', () => {
    const journey = journeyOf([received('c.example', 'Tue, 1 Jul 2025 10:00:00 +0000'), received('b.example', 'Tue, 1 Jul 2025 10:00:30 +0000')], null);
    expect(journey.hops[1]).toMatchObject({ delay_seconds: null, clock_skew_seconds: 30 });
    expect(journey.findings.map((item) => item.id)).toEqual(['headers_clock_skew']);
    expect(journey.total_transit_seconds).toBeNull();
  });

  it('keeps a field it cannot read, as written, with a finding', () => {
    const journey = journeyOf(['not a trace field'], null);
    expect(journey.hops).toHaveLength(1);
    expect(journey.hops[0]).toMatchObject({ parsed: false, raw: 'not a trace field' });
    expect(journey.findings.map((item) => item.id)).toEqual(['headers_unparsed_received']);
  });

  it('says when there is no Received field', () => {
    expect(journeyOf([], null).findings.map((item) => item.id)).toEqual(['headers_no_received']);
  });
});

describe('the header block', () => {
  it('reads a pasted header block with LF line ends, folded fields, 8-bit text and an mbox line', () => {
    const block = readHeaderBlock(Buffer.from('From alice@example.com Tue Jul  1 10:00:00 2025\nSubject: =?UTF-8?Q?caf=C3=A9?=\n  again\nTo: Zoë <z@example.org>\nReceived: from a\n\tby b; Tue, 1 Jul 2025 10:00:00 +0000\n'), 'pasted');
    expect(block.fields.map((field) => [field.key, field.value])).toEqual([
      ['subject', '=?UTF-8?Q?caf=C3=A9?=  again'],
      ['to', 'Zoë <z@example.org>'],
      ['received', 'from a\tby b; Tue, 1 Jul 2025 10:00:00 +0000'],
    ]);
  });

  it('refuses what is not a message', () => {
    expect(() => readHeaderBlock(Buffer.from('hello world\n'), 'x')).toThrow(NetintelError);
  });

  it('reads any header-like text without throwing anything but an input error', () => {
    const line = fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: 'binary', maxLength: 80 }), fc.constantFrom('Received: from a\fb by c; Tue, 1 Jul 2025 10:00:00 +0000', 'Received: \u00a0from x'), fc.constantFrom('Received: from a by b; Tue, 1 Jul 2025 10:00:00 +0000', ' folded', '\tfolded', 'Subject: =?x?B?@@?=', 'Date: 1 Jul 2025', '', 'From x y'));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), fc.boolean(), (lines, crlf) => {
        const text = lines.join(crlf ? '\r\n' : '\n');
        try {
          const block = readHeaderBlock(Buffer.from(text, 'utf8'), 'fuzz');
          journeyOf(block.fields.filter((field) => field.key === 'received').map((field) => field.value), null);
        } catch (error) {
          expect(error).toBeInstanceOf(NetintelError);
          expect((error as NetintelError).code).toBe('invalid_input');
        }
      }),
      { numRuns: 1000 },
    );
  });
});

describe('hostile lengths', () => {
  it('reads a field of a long run of blanks, and a name of one, in linear time', () => {
    const blanks = ' '.repeat(300_000);
    const started = process.hrtime.bigint();
    const block = readHeaderBlock(Buffer.from(`Subject: a${blanks}b\r\nX${blanks}Y: z\r\nReceived: from a${blanks}(b by c; Tue, 1 Jul 2025 10:00:00 +0000\r\n`), 'blanks');
    journeyOf(block.fields.filter((field) => field.key === 'received').map((field) => field.value), null);
    expect(block.fields[0]!.value).toBe(`a${blanks}b`);
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(3000);
  });
});
