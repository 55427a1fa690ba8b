import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanLine } from '../../../src/engine/grep/address-scanner.js';
import { InputScan } from '../../../src/engine/grep/input-scan.js';
import { eachLine, wholeLineBytes } from '../../../src/engine/grep/text-lines.js';

interface Seen {
  line: number | null;
  start: number;
  text: string;
  column: number;
  address: string;
}

/** What a scan of the input's bytes, cut at `offsets`, visits. */
async function scanned(bytes: Uint8Array, offsets: number[], countLines: boolean): Promise<Seen[]> {
  const points = [...new Set(offsets.map((offset) => offset % (bytes.length + 1)))].sort((a, b) => a - b);
  const chunks: Uint8Array[] = [];
  let from = 0;
  for (const point of [...points, bytes.length]) {
    chunks.push(bytes.subarray(from, point));
    from = point;
  }
  const scan = new InputScan({ cidr: false }, () => true, countLines);
  const seen: Seen[] = [];
  for await (const piece of wholeLineBytes((async function* () { yield* chunks; })())) {
    scan.scanPiece(piece, (match, line) => {
      seen.push({ line: countLines ? line.number : null, start: line.start, text: line.text(), column: line.column(match), address: match.text });
    });
  }
  return seen;
}

/** The same, the plain way: the text decoded whole, cut into lines, each line scanned alone. */
function expected(text: string, countLines: boolean): Array<Omit<Seen, 'start'>> {
  const out: Array<Omit<Seen, 'start'>> = [];
  let number = 0;
  eachLine(text.startsWith('\uFEFF') ? text.slice(1) : text, (line) => {
    number++;
    for (const match of scanLine(line, { cidr: false })) out.push({ line: countLines ? number : null, text: line, column: match.start, address: match.text });
  });
  return out;
}

const unit = fc.constantFrom('1.2.3.4', '::1', '2001:db8::7', ' ', 'x', '.', ':', '\n', '\r\n', 'é', '€', '😀', '\uFFFD', '\t');
const input = fc.tuple(fc.boolean(), fc.array(unit, { maxLength: 60 })).map(([mark, units]) => (mark ? '\uFEFF' : '') + units.join(''));

describe('InputScan', () => {
  it('visits, however the bytes are cut, what scanning each decoded line gives: line, text, UTF-16 column (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(input, fc.array(fc.nat(), { maxLength: 8 }), fc.boolean(), async (text, offsets, countLines) => {
        const seen = await scanned(Buffer.from(text, 'utf8'), offsets, countLines);
        expect(seen.map(({ start: _start, ...rest }) => rest)).toEqual(expected(text, countLines));
      }),
      { numRuns: 1000 },
    );
  });

  it('tells the lines of a piece apart by their start', async () => {
    const seen = await scanned(Buffer.from('1.2.3.4 5.6.7.8\n9.9.9.9\n'), [], false);
    expect(seen.map((visit) => visit.start)).toEqual([0, 0, 16]);
  });

  it('reads invalid UTF-8 as U+FFFD in the text, and counts columns in the decoded text', async () => {
    const seen = await scanned(Uint8Array.of(0xff, 0x20, ...Buffer.from('1.2.3.4\r\n')), [], true);
    expect(seen).toEqual([{ line: 1, start: 0, text: '\uFFFD 1.2.3.4', column: 2, address: '1.2.3.4' }]);
  });
});
