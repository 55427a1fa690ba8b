import type { EngineContext } from '../engine/context.js';
import { createReportReader, type DmarcReportOptions } from '../engine/dmarc/report-files.js';
import { DmarcTally } from '../engine/dmarc/report-tally.js';

/**
 * The answer of POST /api/dmarc-reports: each file read in order, every row
 * kept (a duplicate report's too: the rows are the files' content, and a
 * remote run's own tally counts them as a local run does), then the summary,
 * which counts each report once.
 */
export async function dmarcAnswer(ctx: EngineContext, files: ReadonlyArray<{ name: string; content_base64: string }>, options: DmarcReportOptions): Promise<unknown> {
  const read = createReportReader(ctx, options);
  const tally = new DmarcTally();
  const results: unknown[] = [];
  for (const file of files) {
    const outcomes = await read(file.name, Buffer.from(file.content_base64, 'base64'));
    tally.read(file.name, outcomes);
    for (const outcome of outcomes) results.push(outcome.ok ? { query: outcome.query, record: outcome.value } : { query: outcome.query, error: outcome.error.toJSON() });
  }
  return { summary: tally.summary(), results };
}
