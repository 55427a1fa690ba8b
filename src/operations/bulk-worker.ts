import { parentPort, workerData } from 'node:worker_threads';
import { createBulkLookup, type SourcedTarget } from '../engine/bulk/bulk-lookup.js';
import { createEngineContext } from '../engine/context.js';
import { adoptWholeFiles } from '../engine/dataset/whole-files.js';
import { createBatchRendering, rowsShowEvidence, type BulkWorkerData, type RenderRequest } from './bulk-threads.js';

/**
 * A bulk worker thread (dist/bundle/bulk-worker.cjs, started by
 * bulk-threads.ts): looks up and renders the batches the main thread sends,
 * with the same lookup and renderer as the main thread, and sends back the
 * bytes (moved, not copied) with the batch's tally.
 */
async function serve(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('bulk-worker runs as a worker thread');
  const { settings, files } = workerData as BulkWorkerData;
  adoptWholeFiles(files);
  const lookup = createBulkLookup(createEngineContext({ dataDir: settings.dataDir }), {
    inMemoryFromStart: true,
    evidence: rowsShowEvidence(settings.format, settings.fields),
    ...(settings.maxExpand === undefined ? {} : { maxExpand: settings.maxExpand }),
  });
  const rendering = await createBatchRendering(settings, lookup);
  port.on('message', (message: RenderRequest) => {
    const { id, texts, lines, source } = message;
    const batch = new Array<SourcedTarget>(texts.length);
    for (let i = 0; i < texts.length; i++) batch[i] = { text: texts[i]!, line: lines[i]!, source };
    const rows = rendering.render(batch);
    port.postMessage({ id, rows }, [rows.bytes.buffer as ArrayBuffer]);
  });
}

serve().catch((error: unknown) => {
  // Thrown outside the promise, so the thread ends with an 'error' event:
  // the main thread then renders this thread's batches itself.
  setImmediate(() => {
    throw error;
  });
});
