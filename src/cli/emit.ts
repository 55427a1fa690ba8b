import type { ErrorCode } from '../errors.js';
import type { Outcome } from '../engine/outcome.js';
import { createFormatter } from '../output/formatter.js';
import type { RecordSchema } from '../output/record-schema.js';
import { selectColumns } from '../output/record-schema.js';
import { Utf8Chunk } from '../output/utf8-chunk.js';
import { exitCodeForRun } from './exit-codes.js';
import type { GlobalOptions } from './global-options.js';
import { createSink, OutputClosed, type CliIo } from './io.js';

export interface EmitOptions {
  /** One target was asked for (json prints an object, table a field/value view). */
  single: boolean;
  /** A bulk run: errors are rows plus a summary on stderr, not one stderr line each. */
  bulk: boolean;
}

/**
 * Prints outcomes as they arrive in the chosen format on stdout, errors as
 * messages on stderr, and returns the run's exit code. Data goes to stdout,
 * diagnostics to stderr, always; a closed stdout ends the run quietly.
 */
export async function emitOutcomes(
  io: CliIo,
  options: GlobalOptions,
  schema: RecordSchema,
  outcomes: AsyncIterable<Iterable<Outcome<unknown>>> | Iterable<Iterable<Outcome<unknown>>>,
  emit: EmitOptions,
): Promise<number> {
  const columns = options.fields ? selectColumns(schema, options.fields) : null;
  const formatter = await createFormatter({
    format: options.format,
    schema,
    columns,
    header: options.header,
    color: options.color,
    single: emit.single,
  });
  const stdout = createSink(io.stdout);
  let succeeded = 0;
  const failures = new Map<ErrorCode, number>();
  try {
    await stdout.write(formatter.start());
    // Bulk runs print their rows as UTF-8 bytes collected per batch (see Utf8Chunk).
    const chunk = emit.bulk ? new Utf8Chunk() : null;
    for await (const batch of outcomes) {
      let text = '';
      for (const outcome of batch) {
        if (outcome.ok) succeeded += 1;
        else {
          failures.set(outcome.error.code, (failures.get(outcome.error.code) ?? 0) + 1);
          if (!emit.bulk || options.verbose) io.stderr.write(`netintel: ${outcome.error.message}\n`);
        }
        if (chunk) chunk.append(formatter.write(outcome));
        else text += formatter.write(outcome);
      }
      await stdout.write(chunk ? (io.stdout.writesSynchronously === true ? chunk.lend() : chunk.take()) : text);
    }
    await stdout.write(formatter.end());
  } catch (error) {
    if (!(error instanceof OutputClosed)) throw error;
  }
  if (emit.bulk && !options.quiet) io.stderr.write(summaryLine(succeeded, failures));
  return exitCodeForRun(succeeded, failures);
}

function summaryLine(succeeded: number, failures: ReadonlyMap<ErrorCode, number>): string {
  const failed = [...failures.values()].reduce((sum, count) => sum + count, 0);
  const detail = [...failures.entries()].map(([code, count]) => `${code}: ${count}`).join(', ');
  const rows = succeeded + failed;
  return `netintel: ${rows} ${rows === 1 ? 'row' : 'rows'}, ${succeeded} ok, ${failed} failed${detail ? ` (${detail})` : ''}\n`;
}
