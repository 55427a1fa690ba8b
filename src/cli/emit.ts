import type { HumanView } from '../output/human/view.js';
import { toNetintelError, type ErrorCode } from '../errors.js';
import type { Outcome } from '../engine/outcome.js';
import { createFormatter, type Formatter } from '../output/formatter.js';
import type { RecordSchema } from '../output/record-schema.js';
import { selectColumns } from '../output/record-schema.js';
import { Utf8Chunk } from '../output/utf8-chunk.js';
import { exitCodeForRun, type RecordCoverage } from './exit-codes.js';
import type { GlobalOptions } from './global-options.js';
import { createSink, OutputClosed, type CliIo, type OutputSink } from './io.js';
import { markWrittenToStdout } from './report-failure.js';
import { reportedMessage } from './next-step.js';
import { RenderedRows, renderRows } from '../operations/rendered-rows.js';
import { escapeTerminalText } from '../output/terminal-text.js';
import { printCredit } from './attribution.js';

export interface EmitOptions {
  /** One target was asked for (json prints an object, table a field/value view). */
  single: boolean;
  /** A bulk run: errors are rows plus a summary on stderr, not one stderr line each. */
  bulk: boolean;
  /**
   * How far a record's checks could run (records of checks that can be
   * left unchecked: the e-mail test, the blacklist check); absent: every
   * record is complete. A record with nothing checked counts as a failure
   * with its code, one checked in part makes the run partial (exit 7).
   */
  coverage?: (record: unknown) => RecordCoverage;
  /**
   * Why a record none of whose checks could run (its coverage an error
   * code) could not be checked: said on stderr as a failed lookup's message
   * is, outside bulk runs (their summary counts it) and the record's own
   * view of one record (whose block shows it in full; a table of several
   * has room for its code alone).
   */
  failureMessage?: (record: unknown) => string | null;
  /** The records' human view, loaded when a table is drawn; default: the schema's, else its columns. */
  view?: () => Promise<HumanView>;
  /** False: the caller says what failed on stderr itself (one line for many failures of one cause); the records still carry each error. */
  failuresOnStderr?: boolean;
}

/**
 * Prints outcomes as they arrive in the chosen format on stdout, errors as
 * messages on stderr, and returns the run's exit code. Data goes to stdout,
 * diagnostics to stderr, always; a closed stdout ends the run quietly
 * (no summary, exit 0).
 */
export async function emitOutcomes(
  io: CliIo,
  options: GlobalOptions,
  schema: RecordSchema,
  outcomes: AsyncIterable<Iterable<Outcome<unknown>> | RenderedRows> | Iterable<Iterable<Outcome<unknown>>>,
  emit: EmitOptions,
): Promise<number> {
  const columns = options.fields ? selectColumns(schema, options.fields) : null;
  const loadView = emit.view ?? schema.view;
  const view = options.format === 'table' && loadView ? await loadView() : undefined;
  const formatter = await createFormatter({
    format: options.format,
    schema,
    columns,
    header: options.header,
    color: options.color,
    single: emit.single,
    width: (await import('./terminal-width.js')).terminalWidth(io),
    all: options.all,
    // Outside bulk runs, each failed lookup's message goes to stderr (below).
    errorsOnStderr: !emit.bulk,
    ...(view ? { view } : {}),
  });
  const stdout = createSink(io.stdout);
  const failureOnStderr = !emit.bulk && !(emit.single && view && !options.fields && !options.all);
  let succeeded = 0;
  let partial = 0;
  const failures = new Map<ErrorCode, number>();
  // The document starts with the first rows (or at the end): a run that fails before any,
  // such as a list file that cannot be read, leaves stdout to its error record alone.
  let started = false;
  const start = () => {
    if (started) return;
    started = true;
    return stdout.write(formatter.start());
  };
  // Bulk rows are rendered batch by batch into UTF-8 bytes (see Utf8Chunk).
  const chunk = emit.bulk ? new Utf8Chunk() : null;
  try {
    for await (const batch of outcomes) {
      await start();
      // A batch rendered elsewhere (a bulk worker thread) leaves only its tally and bytes to handle.
      const rows = batch instanceof RenderedRows ? batch : chunk ? renderRows(formatter, batch, chunk, options.verbose, emit.coverage) : null;
      if (rows) {
        succeeded += rows.succeeded;
        partial += rows.partial;
        for (const [code, count] of rows.failures) failures.set(code, (failures.get(code) ?? 0) + count);
        // After the rows before them (awaited), before their own: stdout and stderr may be one file.
        for (const message of rows.messages) io.stderr.write(`netintel: ${escapeTerminalText(message)}\n`);
        await stdout.write(rows.bytes);
        continue;
      }
      let text = '';
      for (const outcome of batch as Iterable<Outcome<unknown>>) {
        if (outcome.ok) {
          const coverage = emit.coverage?.(outcome.value) ?? 'complete';
          if (coverage === 'complete') succeeded += 1;
          else if (coverage === 'partial') partial += 1;
          else {
            // The record is printed and says why; the count makes the exit code the failure's.
            failures.set(coverage, (failures.get(coverage) ?? 0) + 1);
            const message = failureOnStderr ? (emit.failureMessage?.(outcome.value) ?? null) : null;
            if (message !== null) io.stderr.write(`netintel: ${escapeTerminalText(message)}\n`);
          }
        } else {
          failures.set(outcome.error.code, (failures.get(outcome.error.code) ?? 0) + 1);
          if (emit.failuresOnStderr !== false) io.stderr.write(`netintel: ${escapeTerminalText(reportedMessage(outcome.error))}\n`);
        }
        text += formatter.write(outcome);
      }
      await stdout.write(text);
    }
    await start();
    await stdout.write(formatter.end());
  } catch (error) {
    // The reader went away (`| head`): the run ends quietly, with the rows it wrote: no summary,
    // no credit, and exit 0, as docs/exit-codes.md says (the rows it did not read were not asked for).
    if (error instanceof OutputClosed) return 0;
    if (started && formatter.abort && !stdout.closed()) await endAfterFailure(stdout, formatter.abort, error);
    throw error;
  }
  if (emit.bulk && !options.quiet) io.stderr.write(summaryLine(succeeded, failures, partial));
  await printCredit(io, options, schema, succeeded); // the data licence's credit: stderr, on a terminal only (src/cli/attribution.ts)
  return exitCodeForRun(succeeded, failures, partial);
}

/**
 * Ends the document a failure interrupted, with the error in it where the
 * format has a place for one (then the run's report leaves stdout alone).
 */
async function endAfterFailure(stdout: OutputSink, abort: NonNullable<Formatter['abort']>, error: unknown): Promise<void> {
  const failure = toNetintelError(error);
  const { text, carriesError } = abort(failure.toJSON());
  try {
    await stdout.write(text);
    if (carriesError) {
      markWrittenToStdout(failure);
      if (typeof error === 'object' && error !== null) markWrittenToStdout(error);
    }
  } catch {
    // stdout failed too: the run's report says what stopped it.
  }
}

function summaryLine(succeeded: number, failures: ReadonlyMap<ErrorCode, number>, partial: number): string {
  const failed = [...failures.values()].reduce((sum, count) => sum + count, 0);
  const detail = [...failures.entries()].map(([code, count]) => `${code}: ${count}`).join(', ');
  const rows = succeeded + partial + failed;
  return `netintel: ${rows} ${rows === 1 ? 'row' : 'rows'}, ${succeeded} ok, ${partial > 0 ? `${partial} checked in part, ` : ''}${failed} failed${detail ? ` (${detail})` : ''}\n`;
}
