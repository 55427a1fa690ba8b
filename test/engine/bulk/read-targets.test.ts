import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readTargetBatches, targetsFromArguments, type Target } from '../../../src/engine/bulk/read-targets.js';

async function* chunksOf(...chunks: Array<string | Uint8Array>): AsyncGenerator<string | Uint8Array> {
  for (const chunk of chunks) yield chunk;
}

async function readAll(...chunks: Array<string | Uint8Array>): Promise<Target[]> {
  const targets: Target[] = [];
  for await (const batch of readTargetBatches(chunksOf(...chunks))) targets.push(...batch.map(({ text, line }) => ({ text, line })));
  return targets;
}

async function batchesOf(...chunks: Array<string | Uint8Array>): Promise<Target[][]> {
  const batches: Target[][] = [];
  for await (const batch of readTargetBatches(chunksOf(...chunks))) batches.push(batch.map(({ text, line }) => ({ text, line })));
  return batches;
}

describe('readTargetBatches', () => {
  it('skips blank lines and # comments while counting them in line numbers', async () => {
    const input = '# header comment\n8.8.8.8\n\n   \n  # indented comment\n1.1.1.1\n\t\nAS15169\n';
    expect(await readAll(input)).toEqual([
      { text: '8.8.8.8', line: 2 },
      { text: '1.1.1.1', line: 6 },
      { text: 'AS15169', line: 8 },
    ]);
  });

  it('accepts CRLF line endings and strips surrounding spaces', async () => {
    expect(await readAll('8.8.8.8\r\n  1.1.1.1  \r\n\r\n# c\r\n::1\r\n')).toEqual([
      { text: '8.8.8.8', line: 1 },
      { text: '1.1.1.1', line: 2 },
      { text: '::1', line: 5 },
    ]);
  });

  it('reads the last line when the input has no final newline', async () => {
    expect(await readAll('8.8.8.8\n1.1.1.1')).toEqual([
      { text: '8.8.8.8', line: 1 },
      { text: '1.1.1.1', line: 2 },
    ]);
    expect(await readAll('only')).toEqual([{ text: 'only', line: 1 }]);
  });

  it('joins a line split across chunks, however small the chunks', async () => {
    const text = '8.8.8.8\n# skip\n2001:4860:4860::8888\n1.1.1.1';
    const oneByteChunks = [...Buffer.from(text)].map((byte) => Uint8Array.of(byte));
    expect(await readAll(...oneByteChunks)).toEqual([
      { text: '8.8.8.8', line: 1 },
      { text: '2001:4860:4860::8888', line: 3 },
      { text: '1.1.1.1', line: 4 },
    ]);
  });

  it('decodes a multi-byte UTF-8 character split across chunks', async () => {
    const bytes = Buffer.from('bücher.example\n😀.example\n');
    // 'ü' is 2 bytes (at 1-2), '😀' 4 bytes (at 16-19): cut inside each.
    const chunks = [bytes.subarray(0, 2), bytes.subarray(2, 17), bytes.subarray(17, 18), bytes.subarray(18)];
    expect(await readAll(...chunks)).toEqual([
      { text: 'bücher.example', line: 1 },
      { text: '😀.example', line: 2 },
    ]);
  });

  it('replaces invalid UTF-8 with U+FFFD instead of failing', async () => {
    expect(await readAll(Uint8Array.of(0x31, 0xff, 0x32, 0x0a))).toEqual([{ text: '1\ufffd2', line: 1 }]);
  });

  it('drops a UTF-8 byte order mark at the start of the input', async () => {
    expect(await readAll(Buffer.from('\ufeff8.8.8.8\n'))).toEqual([{ text: '8.8.8.8', line: 1 }]);
  });

  it('takes string chunks as they are', async () => {
    expect(await readAll('8.8.', '8.8\n1.1', '.1.1\n')).toEqual([
      { text: '8.8.8.8', line: 1 },
      { text: '1.1.1.1', line: 2 },
    ]);
  });

  it('yields one batch per chunk that completes lines, and none for chunks without a target', async () => {
    const batches = await batchesOf('a\nb\nc', '\n# only a comment\n\n', 'd\n', 'e');
    expect(batches.map((batch) => batch.map((target) => `${target.line}:${target.text}`))).toEqual([
      ['1:a', '2:b'],
      ['3:c'],
      ['6:d'],
      ['7:e'],
    ]);
  });

  it('yields nothing for empty input, only blank lines, or only comments', async () => {
    expect(await batchesOf()).toEqual([]);
    expect(await batchesOf('')).toEqual([]);
    expect(await batchesOf('\n\n\r\n')).toEqual([]);
    expect(await batchesOf('# a\n#b')).toEqual([]);
  });

  it('keeps a line that is not a target (a 10,000-character line, a NUL) for the lookup to reject', async () => {
    const long = 'x'.repeat(10_000);
    expect(await readAll(`${long}\n1.2.3.4\u0000\n`)).toEqual([
      { text: long, line: 1 },
      { text: '1.2.3.4\u0000', line: 2 },
    ]);
  });

  it('names the input on every target: null by default, else the source given', async () => {
    const sources = async (source?: string | null) => {
      const seen: Array<string | null> = [];
      for await (const batch of readTargetBatches(chunksOf('8.8.8.8\n', '# c\n1.1.1.1\nAS1'), source)) seen.push(...batch.map((target) => target.source));
      return seen;
    };
    expect(await sources()).toEqual([null, null, null]);
    expect(await sources('list.txt')).toEqual(['list.txt', 'list.txt', 'list.txt']);
  });

  it('counts lines correctly over many chunks', async () => {
    const lines = Array.from({ length: 5000 }, (_, i) => (i % 10 === 0 ? '# comment' : `10.0.${i >> 8}.${i & 255}`));
    const text = `${lines.join('\n')}\n`;
    const chunks: string[] = [];
    for (let i = 0; i < text.length; i += 997) chunks.push(text.slice(i, i + 997));
    const targets = await readAll(...chunks);
    expect(targets).toHaveLength(4500);
    for (const target of targets) expect(target.text).toBe(lines[target.line - 1]);
  });
});

describe('targetsFromArguments', () => {
  it('numbers arguments from 1 and trims them', () => {
    expect(targetsFromArguments([' 8.8.8.8', '1.1.1.1\r'])).toEqual([
      { text: '8.8.8.8', line: 1 },
      { text: '1.1.1.1', line: 2 },
    ]);
  });

  it('reads any text cut into any chunks, as strings or as UTF-8 bytes, as the lines of the whole text', async () => {
    const texts = fc.string({ unit: fc.constantFrom('a', 'b', ' ', '#', '\n', '\r', '\t', 'é', '😀', '8', '.'), maxLength: 200 });
    await fc.assert(
      fc.asyncProperty(texts, fc.array(fc.nat(), { maxLength: 12 }), fc.boolean(), async (text, cuts, asBytes) => {
        const whole = asBytes ? new TextEncoder().encode(text) : text;
        const points = [...new Set(cuts.map((cut) => cut % (whole.length + 1)))].sort((a, b) => a - b);
        const chunks = [0, ...points].map((from, index, all) => whole.slice(from, all[index + 1] ?? whole.length));
        const expected = text.split('\n').flatMap((lineText, index) => {
          const trimmed = lineText.trim();
          return trimmed.length > 0 && !trimmed.startsWith('#') ? [{ text: trimmed, line: index + 1 }] : [];
        });
        expect(await readAll(...chunks)).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });
});
