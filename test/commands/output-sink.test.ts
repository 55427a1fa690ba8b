import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createSink, OutputClosed } from '../../src/cli/io.js';

/** A stream that takes a millisecond per chunk and buffers at most one byte: every write waits for 'drain'. */
function slowStream(chunks: string[] = []): Writable {
  return new Writable({
    highWaterMark: 1,
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString());
      setTimeout(callback, 1);
    },
  });
}

describe('the stdout sink', () => {
  it('waits for drain on a full stream and keeps every chunk in order', async () => {
    const chunks: string[] = [];
    const stream = slowStream(chunks);
    const sink = createSink(stream);
    for (let i = 0; i < 20; i++) await sink.write(`row ${i}\n`);
    expect(chunks).toEqual(Array.from({ length: 20 }, (_, i) => `row ${i}\n`));
  });

  it('leaves no listener behind per write, however many writes wait for drain', async () => {
    const stream = slowStream();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    const baseline = { close: stream.listenerCount('close'), drain: stream.listenerCount('drain') };
    const sink = createSink(stream);
    for (let i = 0; i < 50; i++) await sink.write('x');
    await sleep(5);
    process.off('warning', onWarning);
    expect(stream.listenerCount('close')).toBe(baseline.close);
    expect(stream.listenerCount('drain')).toBe(baseline.drain);
    expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('turns a closed pipe (EPIPE) into OutputClosed, quietly', async () => {
    const stream = slowStream();
    const sink = createSink(stream);
    await sink.write('first\n');
    stream.emit('error', Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    expect(sink.closed()).toBe(true);
    expect(() => sink.write('second\n')).toThrow(OutputClosed);
  });

  it('rejects a pending write with OutputClosed when the stream closes while it waits', async () => {
    const stream = new Writable({ highWaterMark: 1, write: () => {} }); // never drains
    const sink = createSink(stream);
    const pending = sink.write('stuck');
    stream.destroy();
    await expect(pending).rejects.toBeInstanceOf(OutputClosed);
  });

  it('rethrows any other stream error', async () => {
    const stream = slowStream();
    const sink = createSink(stream);
    const failure = Object.assign(new Error('disk full'), { code: 'ENOSPC' });
    stream.emit('error', failure);
    expect(() => sink.write('x')).toThrow('disk full');
  });
});
