import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanLine, type AddressMatch } from '../../../src/engine/grep/address-scanner.js';

/**
 * The runs a scan reads, found the plain way: the text cut into words (a
 * letter past f or `_`, then letters, digits and `_`) and runs (hex digits,
 * dots and colons) from its start, one token after another. A run is read
 * when no word follows it, it has three dots, a `::` or seven colons, and
 * it is not a dot or `::` glued to a word before it.
 */
function referenceRuns(text: string): Array<{ start: number; end: number }> {
  const runs: Array<{ start: number; end: number }> = [];
  const token = /([G-Zg-z_][0-9A-Za-z_]*)|([0-9A-Fa-f.:]+)|[^0-9A-Za-z_.:]+/y;
  for (let match = token.exec(text); match !== null; match = token.exec(text)) {
    const run = match[2];
    if (run === undefined) continue;
    const start = match.index;
    const end = start + run.length;
    if (/[G-Zg-z_]/.test(text[end] ?? '')) continue;
    const dots = run.split('.').length - 1;
    const colons = run.split(':').length - 1;
    if (dots < 3 && colons < 7 && !run.includes('::')) continue;
    const glued = run.startsWith('.') || run.startsWith('::');
    if (glued && /[0-9A-Za-z_]/.test(text[start - 1] ?? '')) continue;
    runs.push({ start, end });
  }
  return runs;
}

/**
 * The matches of a text by the reference: each run the reference reads is
 * validated alone (everything before it blanked out, so that the run is a
 * token of its own; what follows stays, for a zone index or a prefix length).
 */
function referenceScan(text: string, cidr: boolean): AddressMatch[] {
  return referenceRuns(text).flatMap(({ start, end }) =>
    scanLine(' '.repeat(start) + text.slice(start), { cidr }).filter((match) => match.start >= start && match.start < end),
  );
}

const ALPHABET = '0123456789abcdefABCDEFxzG_.:%/[]- ,;"\t\r\né€'.split('');
const address = fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4().map((v4) => `::ffff:${v4}`), fc.ipV4().map((v4) => `${v4}:${v4}`));
const glue = fc.string({ unit: fc.constantFrom(...ALPHABET), maxLength: 4 });
/** Random text, and text made of addresses glued together with random characters. */
const text = fc.oneof(
  fc.string({ unit: fc.constantFrom(...ALPHABET), maxLength: 200 }),
  fc.array(fc.tuple(glue, address), { maxLength: 8 }).map((parts) => parts.flat().join('')),
  fc.string({ maxLength: 120 }),
);

describe('scanLine against a reference tokenizer (fast-check)', () => {
  it('reads the runs the reference reads, and finds what the reference finds', () => {
    fc.assert(
      fc.property(text, fc.boolean(), (line, cidr) => {
        expect(scanLine(line, { cidr })).toEqual(referenceScan(line, cidr));
      }),
      { numRuns: 5000 },
    );
  });

  it('finds in several lines at once what it finds in each line, at the lines’ offsets', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(text, fc.constantFrom('\n', '\r\n')), { maxLength: 6 }), fc.boolean(), (lines, cidr) => {
        const expected: AddressMatch[] = [];
        let offset = 0;
        for (const [line, end] of lines) {
          for (const match of scanLine(line, { cidr })) expected.push({ ...match, start: match.start + offset });
          offset += line.length + end.length;
        }
        expect(scanLine(lines.map(([line, end]) => line + end).join(''), { cidr })).toEqual(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('finds in the Latin-1 reading of UTF-8 bytes what it finds in the text, at byte offsets', () => {
    fc.assert(
      fc.property(text, fc.boolean(), (line, cidr) => {
        const bytes = Buffer.from(line, 'utf8');
        const decoded = bytes.toString('utf8');
        const expected = scanLine(decoded, { cidr }).map((match) => ({ ...match, start: Buffer.byteLength(decoded.slice(0, match.start)) }));
        expect(scanLine(bytes.toString('latin1'), { cidr })).toEqual(expected);
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps every match of the versions asked for', () => {
    fc.assert(
      fc.property(text, fc.boolean(), fc.constantFrom<4 | 6>(4, 6), (line, cidr, version) => {
        const all = scanLine(line, { cidr }).filter((match) => match.version === version);
        expect(scanLine(line, { cidr, versions: new Set([version]) }).filter((match) => match.version === version)).toEqual(all);
      }),
      { numRuns: 2000 },
    );
  });
});
