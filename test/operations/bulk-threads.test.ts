import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bulkRows, renderInOrder, THREADS_AFTER_TARGETS, type BatchRenderer, type BulkWorkerSettings } from '../../src/operations/bulk-threads.js';
import { RenderedRows } from '../../src/operations/rendered-rows.js';
import type { SourcedTarget } from '../../src/engine/bulk/bulk-lookup.js';
import { BIN, isolatedEnv, REPO_ROOT, spawnCli, tempDir } from '../support/cli.js';

const scratch = tempDir();
afterAll(() => scratch.remove());

/** A list long enough for worker threads, with comments, blank lines, CRLF, AS numbers and bad lines among the addresses. */
function longList(count: number): string {
  const lines: string[] = ['# a long list'];
  for (let i = 0; i < count; i++) {
    if (i % 997 === 0) lines.push('not-an-ip');
    else if (i % 991 === 0) lines.push('AS15169');
    else if (i % 983 === 0) lines.push('');
    else if (i % 977 === 0) lines.push('2001:4860:4860::8888');
    else lines.push(`${1 + (i % 223)}.${(i * 7) & 255}.${(i >> 3) & 255}.${1 + (i % 250)}`);
  }
  return `${lines.join('\r\n')}\n`;
}

describe('netintel bulk --threads', () => {
  const input = join(scratch.path, 'long.txt');
  writeFileSync(input, longList(THREADS_AFTER_TARGETS * 4));

  it.each(['csv', 'ndjson', 'json', 'xml'])('prints the same bytes, tally and exit code on 2 threads as on 1 (%s)', async (format) => {
    const [one, two] = await Promise.all(
      ['1', '2'].map((threads) => spawnCli(['bulk', input, '-f', format, '-v', '--threads', threads], { timeoutMs: 60_000 })),
    );
    expect(two.code).toBe(7);
    // Threads start at the first input chunk after THREADS_AFTER_TARGETS targets.
    const started = /netintel: bulk: 1 worker thread from target (\d+) on\n/.exec(two.stderr);
    expect(Number(started?.[1])).toBeGreaterThan(THREADS_AFTER_TARGETS);
    expect(one.stderr).not.toContain('worker thread');
    const summary = (stderr: string) => stderr.split('\n').at(-2);
    expect(summary(two.stderr)).toMatch(/^netintel: 32\d{3} rows, \d+ ok, 33 failed \(invalid_input: 33\)$/);
    expect(summary(two.stderr)).toBe(summary(one.stderr));
    // -v names every failed line, in input order, whichever thread looked it up.
    const failedLines = (stderr: string) => stderr.split('\n').filter((line) => line.includes('not a valid'));
    expect(failedLines(two.stderr)).toHaveLength(33);
    expect(failedLines(two.stderr)).toEqual(failedLines(one.stderr));
    expect(two.stdout.length).toBeGreaterThan(1_000_000);
    expect(two.stdout === one.stdout).toBe(true);
    if (format === 'json') expect(JSON.parse(two.stdout)).toHaveLength(Number(/(\d+) rows/.exec(two.stderr)?.[1]));
  });

  it('rejects a thread count that is not a whole number from 1', async () => {
    const result = await spawnCli(['bulk', input, '--threads', '0']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--threads must be an integer from 1 to 64, not "0"');
  });

  it('ends quietly when piped into `head -3` while worker threads run', async () => {
    const errors = join(scratch.path, 'stderr.txt');
    const shell = spawn('bash', ['-c', 'node "$0" bulk -f csv --threads 2 < "$1" 2> "$2" | head -3; echo "status=${PIPESTATUS[0]}"', BIN, input, errors], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH, ...isolatedEnv() },
    });
    let stdout = '';
    shell.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    expect(await new Promise((resolve) => shell.on('close', resolve))).toBe(0);
    // 0 although a row before the reader left failed (line 2): a reader that goes away ends the run quietly (docs/exit-codes.md).
    expect(stdout.split('\n').slice(3)).toEqual(['status=0', '']);
    expect(readFileSync(errors, 'utf8')).not.toMatch(/EPIPE|Error|\n\s+at /);
  });
});

/** Batches of one target each; a batch's rows are its target's text, to see the order. */
function batchesOf(texts: readonly string[]): SourcedTarget[][] {
  return texts.map((text, i) => [{ text, line: i + 1, source: null }]);
}

async function* slowly<T>(items: readonly T[]): AsyncGenerator<T> {
  for (const item of items) {
    await new Promise((resolve) => setTimeout(resolve, 1));
    yield item;
  }
}

async function* quickly<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

const here = (by: string[]) => (batch: readonly SourcedTarget[]) => {
  by.push(batch[0]!.text);
  return new RenderedRows(Buffer.from(`${batch[0]!.text}\n`), 1, [], []);
};

/** A renderer that answers after `delayMs` (a worker), or fails every batch from the `failFrom`-th on (a worker that died). */
function remote(delayMs: number, by: string[], failFrom = Infinity): BatchRenderer {
  let holding = 0;
  let sent = 0;
  return {
    get busy() {
      return holding >= 2;
    },
    render(batch) {
      holding += 1;
      const failing = ++sent >= failFrom;
      return new Promise((resolve, reject) =>
        setTimeout(() => {
          holding -= 1;
          if (failing) return reject(new Error('worker died'));
          by.push(batch[0]!.text);
          resolve(new RenderedRows(Buffer.from(`${batch[0]!.text}\n`), 1, [], []));
        }, delayMs),
      );
    },
  };
}

async function collect(rows: AsyncIterable<RenderedRows>): Promise<string> {
  let text = '';
  for await (const batch of rows) text += Buffer.from(batch.bytes).toString();
  return text;
}

describe('renderInOrder', () => {
  const texts = Array.from({ length: 40 }, (_, i) => `t${i}`);

  it('yields every batch once, in input order, however the renderers split and time them', async () => {
    const mainThread: string[] = [];
    const fast: string[] = [];
    const slow: string[] = [];
    const out = await collect(renderInOrder(quickly(batchesOf(texts)), here(mainThread), [remote(1, fast), remote(15, slow)]));
    expect(out).toBe(texts.map((text) => `${text}\n`).join(''));
    expect(fast.length).toBeGreaterThan(0);
    expect(slow.length).toBeGreaterThan(0);
    expect(mainThread.length + fast.length + slow.length).toBe(texts.length);
  });

  it('renders here the batches of a renderer that fails, so none is lost', async () => {
    const mainThread: string[] = [];
    const dying: string[] = [];
    const out = await collect(renderInOrder(slowly(batchesOf(texts)), here(mainThread), [remote(2, dying, 3)]));
    expect(out).toBe(texts.map((text) => `${text}\n`).join(''));
    expect(dying).toEqual(['t0', 't1']);
    expect(mainThread).toHaveLength(texts.length - 2);
  });

  it('keeps at most a bounded number of batches rendered ahead of a slow renderer', async () => {
    let renderedHere = 0;
    let yieldedHere = 0;
    let mostAhead = 0;
    const counting = () => {
      renderedHere += 1;
      mostAhead = Math.max(mostAhead, renderedHere - yieldedHere);
      return new RenderedRows(Buffer.from('here'), 1, [], []);
    };
    let yielded = 0;
    for await (const rows of renderInOrder(batchesOf(texts), counting, [remote(30, [])])) {
      yielded += 1;
      if (Buffer.from(rows.bytes).toString() === 'here') yieldedHere += 1;
    }
    expect(yielded).toBe(texts.length);
    expect(mostAhead).toBeGreaterThan(2);
    expect(mostAhead).toBeLessThanOrEqual(10);
  });
});

describe('bulkRows on one thread', () => {
  const settings: BulkWorkerSettings = { dataDir: null, format: 'csv', fields: null, verbose: false };
  const targets = (texts: string[][]): SourcedTarget[][] => texts.map((batch) => batch.map((text, i) => ({ text, line: i + 1, source: null })));
  async function* batchesOf(batches: SourcedTarget[][], read: string[][]): AsyncGenerator<SourcedTarget[]> {
    for (const batch of batches) {
      read.push(batch.map((target) => target.text));
      yield batch;
    }
  }
  const rowsOf = async (rows: AsyncIterable<unknown>): Promise<unknown[][]> => {
    const out: unknown[][] = [];
    for await (const batch of rows) out.push([...(batch as Iterable<{ value: unknown }>)].map((outcome) => outcome.value));
    return out;
  };
  const times10 = (target: SourcedTarget) => ({ ok: true as const, query: target.text, value: Number(target.text) * 10 });

  it('maps every item in input order, one result batch per input batch', async () => {
    const rows = bulkRows(batchesOf(targets([['1', '2'], [], ['3', '4', '5']]), []), times10, 1, settings);
    expect(await rowsOf(rows)).toEqual([[10, 20], [], [30, 40, 50]]);
  });

  it('computes each result only when the consumer reaches it, and reads no batch ahead', async () => {
    const read: string[][] = [];
    const mapped: string[] = [];
    const seen: string[] = [];
    const upper = (target: SourcedTarget) => {
      mapped.push(target.text);
      return { ok: true as const, query: target.text, value: target.text.toUpperCase() };
    };
    for await (const batch of bulkRows(batchesOf(targets([['a', 'b'], ['c']]), read), upper, 1, settings)) {
      expect(read).toHaveLength(seen.length === 0 ? 1 : 2);
      for (const outcome of batch as Iterable<{ value: string }>) {
        seen.push(outcome.value);
        expect(mapped).toEqual(seen.map((item) => item.toLowerCase()));
      }
    }
    expect(seen).toEqual(['A', 'B', 'C']);
  });

  it('stops reading when the consumer stops', async () => {
    const read: string[][] = [];
    let finished = false;
    async function* tracked(): AsyncGenerator<SourcedTarget[]> {
      try {
        yield* batchesOf(targets([['1'], ['2'], ['3']]), read);
      } finally {
        finished = true;
      }
    }
    for await (const batch of bulkRows(tracked(), times10, 1, settings)) {
      if ([...(batch as Iterable<{ value: number }>)][0]!.value === 10) break;
    }
    expect(read).toEqual([['1']]);
    // The input is closed too, not left waiting for its next read.
    expect(finished).toBe(true);
  });
});
