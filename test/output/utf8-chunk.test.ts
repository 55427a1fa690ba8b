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

  it('hands out taken bytes for keeps, while lent bytes are reused by the next rows', () => {
    const chunk = new Utf8Chunk();
    chunk.append('first\n');
    const taken = chunk.take();
    chunk.append('second\n');
    expect(text(taken)).toBe('first\n');
    const lent = chunk.lend();
    expect(text(lent)).toBe('second\n');
    chunk.append('THIRD!\n');
    expect(text(chunk.lend())).toBe('THIRD!\n');
    expect(text(lent)).toBe('THIRD!\n');
  });
});
