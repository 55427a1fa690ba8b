import type { EngineContext } from '../context.js';
import { createReportReader, type DmarcReportOptions } from './report-files.js';
import { DmarcTally, type DmarcReportSummary } from './report-tally.js';

/** A file of reports: its name (for messages and rows) and its bytes. */
export interface DmarcReportFile {
  name: string;
  content: Buffer | Uint8Array;
}

/**
 * The summary of a set of aggregate report files, read one at a time:
 * each file's reports parsed, its records enriched and counted, then
 * dropped. A file that cannot be read is an entry of `errors` naming it.
 */
export async function summarizeDmarcReports(ctx: EngineContext, files: Iterable<DmarcReportFile> | AsyncIterable<DmarcReportFile>, options: DmarcReportOptions = {}): Promise<DmarcReportSummary> {
  const read = createReportReader(ctx, options);
  const tally = new DmarcTally();
  for await (const file of files) {
    tally.read(file.name, await read(file.name, Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content)));
  }
  return tally.summary();
}
