import { describe, expect, it } from 'vitest';
import { Utf8Chunk } from '../../src/output/utf8-chunk.js';

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

describe('Utf8Chunk', () => {
  it('collects rows as their UTF-8 bytes, multi-byte characters included', () => {
    const chunk = new Utf8Chunk();
    const rows = ['8.8.8.8,US\n', 'Zürich,CH\n', '東京,JP\n', '😀,\n', ''];
    for (const row of rows) chunk.append(row);
    const bytes = chunk.take();
    expect(Buffer.from(bytes).equals(Buffer.from(rows.join(''), 'utf8'))).toBe(true);
    expect(chunk.length).toBe(0);
  });

  it('grows past its first buffer without losing or reordering bytes', () => {
    const chunk = new Utf8Chunk();
    const rows = Array.from({ length: 20_000 }, (_, i) => `${i},${'é'.repeat(i % 7)},${'x'.repeat(i % 50)}\n`);
    for (const row of rows) chunk.append(row);
    expect(chunk.length).toBe(Buffer.byteLength(rows.join('')));
    expect(text(chunk.take())).toBe(rows.join(''));
  });

  it('hands out taken bytes for keeps: later rows never change them', () => {
    const chunk = new Utf8Chunk();
    chunk.append('first\n');
    const first = chunk.take();
    chunk.append('second\n');
    const second = chunk.take();
    chunk.append('THIRD!\n');
    expect(text(first)).toBe('first\n');
    expect(text(second)).toBe('second\n');
    expect(text(chunk.take())).toBe('THIRD!\n');
  });
});

describe('Utf8Chunk short text, bytes and single bytes', () => {
  it('appends short ASCII text code by code and anything else as UTF-8, growing as needed', () => {
    const chunk = new Utf8Chunk();
    const pieces = Array.from({ length: 30_000 }, (_, i) => ['8.8.8.8', 'Zürich', '', 'x'.repeat(60), '東京', 'ipv4'][i % 6]!);
    // Encoded pieces of every length around the one where copying changes method.
    const encoded = ['é|', '', ',', ',,\n', 'abcd', 'abcde', 'Zürich,ZH,', 'y'.repeat(70)];
    for (const [i, piece] of pieces.entries()) {
      chunk.appendShort(piece);
      chunk.appendByte(0x2c);
      chunk.appendBytes(Buffer.from(encoded[i % encoded.length]!));
    }
    expect(text(chunk.take())).toBe(pieces.map((piece, i) => `${piece},${encoded[i % encoded.length]}`).join(''));
  });

  it('copies unmarked short ASCII text and refuses, writing nothing, marked, longer or non-ASCII text', () => {
    const marked = new Uint8Array(128);
    marked[0x2c] = 1;
    const chunk = new Utf8Chunk();
    expect(chunk.appendAsciiUnmarked('8.8.8.8', marked)).toBe(true);
    for (const refused of ['a,b', 'Zürich', 'x'.repeat(49)]) expect(chunk.appendAsciiUnmarked(refused, marked)).toBe(false);
    expect(chunk.appendAsciiUnmarked('x'.repeat(48), marked)).toBe(true);
    expect(text(chunk.take())).toBe(`8.8.8.8${'x'.repeat(48)}`);
  });
});
