import type { EngineContext } from '../engine/context.js';
import { createReportReader, type DmarcReportOptions } from '../engine/dmarc/report-files.js';
import { DmarcTally } from '../engine/dmarc/report-tally.js';

/** The answer of POST /api/dmarc-reports: each file read in order, its rows kept, then the summary. */
export async function dmarcAnswer(ctx: EngineContext, files: ReadonlyArray<{ name: string; content_base64: string }>, options: DmarcReportOptions): Promise<unknown> {
  const read = createReportReader(ctx, options);
  const tally = new DmarcTally();
  const results: unknown[] = [];
  for (const file of files) {
    const outcomes = await read(file.name, Buffer.from(file.content_base64, 'base64'));
    const failed = outcomes.find((outcome) => !outcome.ok);
    tally.file(failed && !failed.ok ? failed.error : undefined, file.name);
    for (const outcome of outcomes) {
      if (!outcome.ok) results.push({ query: outcome.query, error: outcome.error.toJSON() });
      else if (tally.add(outcome.value)) results.push({ query: outcome.query, record: outcome.value });
    }
  }
  return { summary: tally.summary(), results };
}
