import { EachMapped } from '../engine/bulk/map-each.js';
import type { Outcome } from '../engine/outcome.js';
import type { ErrorCode } from '../errors.js';
import type { Formatter } from '../output/formatter.js';
import type { Utf8Chunk } from '../output/utf8-chunk.js';
import type { RecordCoverage } from '../cli/exit-codes.js';

/**
 * Bulk rows already turned into output bytes, with the tally of their
 * outcomes: what a bulk worker thread sends back for a batch, and what the
 * main thread makes of a batch it renders ahead of its turn. emitOutcomes
 * writes them as they are.
 */
export class RenderedRows {
  constructor(
    readonly bytes: Uint8Array,
    readonly succeeded: number,
    readonly failures: ReadonlyArray<readonly [ErrorCode, number]>,
    /** The messages of the failed rows, for a verbose run's stderr. */
    readonly messages: readonly string[],
    /** Records whose checks could run only in part (see emitOutcomes' `coverage`). */
    readonly partial = 0,
  ) {}

  /** Rebuilds rows that crossed a thread boundary (structured clone keeps the fields, not the class). */
  static from(plain: { bytes: Uint8Array; succeeded: number; failures: Array<[ErrorCode, number]>; messages: string[]; partial?: number }): RenderedRows {
    return new RenderedRows(plain.bytes, plain.succeeded, plain.failures, plain.messages, plain.partial ?? 0);
  }
}

/**
 * Renders outcomes into `chunk` with `formatter` (rows only: no start or
 * end). emitOutcomes and the bulk worker threads both render with it, so a
 * row is the same bytes whichever thread made it. `coverage` tallies a
 * record none of whose checks could run as a failure, one checked in part
 * as partial (emitOutcomes' option of that name).
 */
export function renderRows(
  formatter: Formatter,
  outcomes: Iterable<Outcome<unknown>>,
  chunk: Utf8Chunk,
  keepMessages: boolean,
  coverage?: (record: unknown) => RecordCoverage,
): RenderedRows {
  let succeeded = 0;
  let partial = 0;
  const failures = new Map<ErrorCode, number>();
  const messages: string[] = [];
  const writeTo = formatter.writeTo;
  const render = (outcome: Outcome<unknown>): void => {
    if (outcome.ok) {
      const covered = coverage?.(outcome.value) ?? 'complete';
      if (covered === 'complete') succeeded += 1;
      else if (covered === 'partial') partial += 1;
      else failures.set(covered, (failures.get(covered) ?? 0) + 1);
    } else {
      failures.set(outcome.error.code, (failures.get(outcome.error.code) ?? 0) + 1);
      if (keepMessages) messages.push(outcome.error.message);
    }
    if (writeTo) writeTo(outcome, chunk);
    else chunk.append(formatter.write(outcome));
  };
  if (outcomes instanceof EachMapped) outcomes.forEach(render);
  else for (const outcome of outcomes) render(outcome);
  return new RenderedRows(chunk.take(), succeeded, [...failures], messages, partial);
}
