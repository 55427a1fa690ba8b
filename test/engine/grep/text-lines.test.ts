import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eachLine, wholeLineText } from '../../../src/engine/grep/text-lines.js';

async function pieces(chunks: Array<string | Uint8Array>): Promise<string[]> {
  const out: string[] = [];
  for await (const piece of wholeLineText((async function* () { yield* chunks; })())) out.push(piece);
  return out;
}

/** The text's bytes cut at the given offsets (which may fall inside a UTF-8 sequence). */
function cut(bytes: Uint8Array, offsets: number[]): Uint8Array[] {
  const points = [...new Set(offsets.map((offset) => offset % (bytes.length + 1)))].sort((a, b) => a - b);
  const parts: Uint8Array[] = [];
  let from = 0;
  for (const point of [...points, bytes.length]) {
    parts.push(bytes.subarray(from, point));
    from = point;
  }
  return parts;
}

describe('wholeLineText', () => {
  it('gives the text back whole, in pieces that end at line ends, however the bytes are cut', async () => {
    const text = fc.string({ unit: fc.constantFrom('a', '1', '.', ':', '\n', '\r', 'é', '€', '😀'), maxLength: 120 });
    await fc.assert(
      fc.asyncProperty(text, fc.array(fc.nat(), { maxLength: 10 }), async (input, offsets) => {
        const out = await pieces(cut(new TextEncoder().encode(input), offsets));
        expect(out.join('')).toBe(input);
        for (const piece of out.slice(0, -1)) expect(piece.endsWith('\n')).toBe(true);
        expect(out.every((piece) => piece.length > 0)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('reads invalid UTF-8 as U+FFFD', async () => {
    expect(await pieces([Uint8Array.of(0x31, 0xff, 0x0a)])).toEqual(['1\uFFFD\n']);
  });
});

describe('eachLine', () => {
  it('gives every line of a piece in order, without LF or CRLF, and nothing else (fast-check)', () => {
    const line = fc.string({ unit: fc.constantFrom('a', ' ', '\r', '1', '.', 'é') }).filter((text) => !text.endsWith('\r'));
    fc.assert(
      fc.property(fc.array(fc.tuple(line, fc.constantFrom('\n', '\r\n')), { minLength: 1 }), fc.boolean(), (lines, lastEnded) => {
        const piece = lines.map(([text, end], i) => (i === lines.length - 1 && !lastEnded ? text : text + end)).join('');
        const seen: string[] = [];
        eachLine(piece, (text) => seen.push(text));
        const expected = lines.map(([text]) => text);
        // An unended empty last line is no line at all.
        if (!lastEnded && expected.at(-1) === '') expected.pop();
        expect(seen).toEqual(expected);
      }),
    );
  });
});
