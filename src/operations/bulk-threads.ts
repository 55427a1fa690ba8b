import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { SourcedTarget } from '../engine/bulk/bulk-lookup.js';
import { packageRoot } from '../engine/data/data-files.js';
import { wholeFilesRead, type WholeFile } from '../engine/dataset/whole-files.js';
import type { Outcome } from '../engine/outcome.js';
import { mapEach } from '../engine/bulk/map-each.js';
import { createFormatter, type OutputFormat } from '../output/formatter.js';
import { selectColumns } from '../output/record-schema.js';
import { BULK_SCHEMA } from '../output/schemas/bulk-schema.js';
import { Utf8Chunk } from '../output/utf8-chunk.js';
import { RenderedRows, renderRows } from './rendered-rows.js';

/**
 * Local bulk lookups on several threads. A long list is CPU-bound on one
 * thread, so batches
 * go to worker threads, each with its own in-memory datasets, while the
 * main thread reads the input, renders batches too when every worker is
 * busy, and writes everything in input order.
 */

/**
 * The formats whose rows a worker can render: each row stands alone, or
 * (json) needs only to know it is not the first, which is always the main
 * thread's. A table's rows are laid out together.
 */
const THREADED_FORMATS: ReadonlySet<OutputFormat> = new Set(['csv', 'ndjson', 'json', 'xml']);

/** Targets read before worker threads start: a short list is done before a thread could load its datasets. */
export const THREADS_AFTER_TARGETS = 8192;

/** Batches a worker holds at once: one it renders, one waiting, so it never idles between messages. */
const BATCHES_PER_WORKER = 2;

/**
 * Batches the main thread may render ahead of a worker's: a worker that is
 * slow for a while (its code not yet optimised, its datasets loading) does
 * not stall the main thread, and the rows held back stay a few MB.
 */
const RENDERED_AHEAD = 8;

/** What a worker needs to render rows exactly as the main thread would. */
export interface BulkWorkerSettings {
  dataDir: string | null;
  format: OutputFormat;
  fields: string[] | null;
  verbose: boolean;
  /** `--max-expand`: a range that reaches a worker was not expanded, and its error row names this limit. */
  maxExpand?: number;
}

/**
 * Whether bulk rows show the security evidence: json, ndjson and xml print
 * each record whole; csv and table rows, and any --fields selection (its
 * groups are the flat columns), carry the flags only. Rows that do not show
 * it are looked up without it (createBulkLookup).
 */
export function rowsShowEvidence(format: OutputFormat, fields: readonly string[] | null): boolean {
  return fields === null && format !== 'csv' && format !== 'table';
}

/** What a worker starts with: its settings and the datasets to share. */
export interface BulkWorkerData {
  settings: BulkWorkerSettings;
  files: ReadonlyMap<string, WholeFile>;
}

/** One batch sent to a worker. */
export interface RenderRequest {
  id: number;
  texts: string[];
  lines: Int32Array;
  source: string | null;
}

/** Something that renders a batch elsewhere; `busy` while it holds as many batches as it should. */
export interface BatchRenderer {
  readonly busy: boolean;
  render(batch: readonly SourcedTarget[]): Promise<RenderedRows>;
}

/** Whether a run with these settings can use worker threads at all. */
function threadsApply(format: OutputFormat, threads: number): boolean {
  return threads > 1 && THREADED_FORMATS.has(format);
}

/** Renders whole batches into bytes of their own. */
export interface BatchRendering {
  render(batch: readonly SourcedTarget[]): RenderedRows;
}

/**
 * Renders whole batches, rows only (the writer prints the header and the
 * end): how the workers render, and how the main thread renders a batch
 * ahead of its turn.
 */
export async function createBatchRendering(
  settings: BulkWorkerSettings,
  lookup: (target: SourcedTarget) => Outcome<unknown>,
): Promise<BatchRendering> {
  const formatter = await createFormatter({
    format: settings.format,
    schema: BULK_SCHEMA,
    columns: settings.fields ? selectColumns(BULK_SCHEMA, settings.fields) : null,
    header: false,
    color: false,
    single: false,
    // Rendered batches come after the run's first rows (THREADS_AFTER_TARGETS).
    continuesRows: true,
  });
  const chunk = new Utf8Chunk();
  return {
    render: (batch) => renderRows(formatter, mapEach(batch, lookup), chunk, settings.verbose),
  };
}

/** The built worker script; missing when the sources run unbuilt, and then the run stays on one thread. */
function workerScript(): string | null {
  const path = join(packageRoot(), 'dist', 'bundle', 'bulk-worker.cjs');
  return existsSync(path) ? path : null;
}

/** Worker threads that render batches; `close()` ends them. */
export class BulkWorkerPool {
  private constructor(
    readonly renderers: readonly BatchRenderer[],
    private readonly workers: readonly Worker[],
  ) {}

  /** Starts `count` workers, or gives null when the worker script is not built. */
  static start(count: number, settings: BulkWorkerSettings): BulkWorkerPool | null {
    const script = workerScript();
    if (script === null || count < 1) return null;
    // The datasets this thread has read whole go along as shared memory.
    const workerData: BulkWorkerData = { settings, files: wholeFilesRead() };
    const workers = Array.from({ length: count }, () => new Worker(script, { workerData }));
    return new BulkWorkerPool(workers.map(workerRenderer), workers);
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }
}

function workerRenderer(worker: Worker): BatchRenderer {
  const waiting = new Map<number, { resolve: (rows: RenderedRows) => void; reject: (error: Error) => void }>();
  let nextId = 0;
  let broken: Error | null = null;
  const fail = (error: Error): void => {
    broken ??= error;
    for (const { reject } of waiting.values()) reject(error);
    waiting.clear();
  };
  worker.on('message', ({ id, rows }: { id: number; rows: Parameters<typeof RenderedRows.from>[0] }) => {
    const entry = waiting.get(id);
    waiting.delete(id);
    if (!entry) return;
    entry.resolve(RenderedRows.from(rows));
  });
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`bulk worker thread exited with code ${code}`)));
  return {
    get busy() {
      return broken !== null || waiting.size >= BATCHES_PER_WORKER;
    },
    render(batch) {
      if (broken) return Promise.reject(broken);
      const id = nextId++;
      const texts = new Array<string>(batch.length);
      const lines = new Int32Array(batch.length);
      for (let i = 0; i < batch.length; i++) {
        texts[i] = batch[i]!.text;
        lines[i] = batch[i]!.line;
      }
      const request: RenderRequest = { id, texts, lines, source: batch[0]?.source ?? null };
      return new Promise<RenderedRows>((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker.postMessage(request, [lines.buffer]);
      });
    },
  };
}

/** A batch in the output queue: rendered here, or on its way back from a renderer. */
interface Queued {
  batch: readonly SourcedTarget[];
  rows: RenderedRows | null;
  /** Set when the renderer failed: the batch is rendered here instead. */
  failed: boolean;
  settled: Promise<void>;
}

/**
 * Renders batches of targets on `renderers` when one is free and here
 * (`renderHere`) otherwise, and yields the rows in input order. Rendering
 * here goes on while renderers work, so a batch may be rendered before
 * its turn; the queue of batches ahead is bounded, so memory stays flat.
 * A batch whose renderer fails (a worker thread died) is rendered here:
 * every batch yields its rows exactly once.
 */
export async function* renderInOrder(
  batches: AsyncIterable<readonly SourcedTarget[]>,
  renderHere: (batch: readonly SourcedTarget[]) => RenderedRows,
  renderers: readonly BatchRenderer[],
): AsyncGenerator<RenderedRows> {
  const queue: Queued[] = [];
  const maxQueued = renderers.length * BATCHES_PER_WORKER + RENDERED_AHEAD;
  const take = (entry: Queued): RenderedRows => entry.rows ?? renderHere(entry.batch);
  for await (const batch of batches) {
    const renderer = renderers.find((candidate) => !candidate.busy);
    if (renderer) {
      const entry: Queued = { batch, rows: null, failed: false, settled: Promise.resolve() };
      entry.settled = renderer.render(batch).then(
        (rows) => {
          entry.rows = rows;
        },
        () => {
          entry.failed = true;
        },
      );
      queue.push(entry);
    } else {
      queue.push({ batch, rows: renderHere(batch), failed: false, settled: Promise.resolve() });
    }
    while (queue.length > 0 && (queue[0]!.rows !== null || queue[0]!.failed)) yield take(queue.shift()!);
    while (queue.length >= maxQueued) {
      const head = queue.shift()!;
      await head.settled;
      yield take(head);
    }
  }
  for (const entry of queue.splice(0)) {
    await entry.settled;
    yield take(entry);
  }
}

/**
 * The rows of a local bulk run: the first {@link THREADS_AFTER_TARGETS}
 * targets as outcomes rendered by the writer (a short list never starts a
 * thread), then, if the input goes on, rendered batches from `threads - 1`
 * worker threads and this one. Ends the workers when the run ends or its
 * reader stops early.
 */
export async function* bulkRows(
  batches: AsyncIterable<readonly SourcedTarget[]>,
  lookup: (target: SourcedTarget) => Outcome<unknown>,
  threads: number,
  settings: BulkWorkerSettings,
  debug: (message: string) => void = () => {},
): AsyncGenerator<Iterable<Outcome<unknown>> | RenderedRows> {
  const iterator = batches[Symbol.asyncIterator]();
  let pool: BulkWorkerPool | null = null;
  try {
    let seen = 0;
    while (seen < THREADS_AFTER_TARGETS || !threadsApply(settings.format, threads)) {
      const next = await iterator.next();
      if (next.done) return;
      seen += next.value.length;
      yield mapEach(next.value, lookup);
    }
    pool = BulkWorkerPool.start(threads - 1, settings);
    const rest: AsyncIterable<readonly SourcedTarget[]> = { [Symbol.asyncIterator]: () => iterator };
    if (pool === null) {
      for await (const batch of rest) yield mapEach(batch, lookup);
      return;
    }
    debug(`bulk: ${threads - 1} worker ${threads === 2 ? 'thread' : 'threads'} from target ${seen + 1} on`);
    const here = await createBatchRendering(settings, lookup);
    yield* renderInOrder(rest, (batch) => here.render(batch), pool.renderers);
  } finally {
    // The reader may have stopped early (`| head`): end the workers and the input.
    await pool?.close();
    await iterator.return?.();
  }
}
