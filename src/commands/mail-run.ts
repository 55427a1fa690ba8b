import { flattenBatches, mapOrdered } from '../engine/bulk/map-ordered.js';
import { readTargetBatches, targetsFromArguments, type Target } from '../engine/bulk/read-targets.js';
import type { Finding } from '../engine/findings.js';
import type { Outcome } from '../engine/outcome.js';
import { NetintelError, toNetintelError } from '../errors.js';
import { emitOutcomes } from '../cli/emit.js';
import { stdinBringsList } from '../cli/io.js';
import { exitCodeWithFindings, type FailOn } from '../cli/fail-on.js';
import type { RecordCoverage } from '../cli/exit-codes.js';
import type { GlobalOptions } from '../cli/global-options.js';
import type { CommandRuntime } from '../cli/runtime.js';
import { regularFileSize } from '../cli/progress.js';
import type { RecordSchema } from '../output/record-schema.js';

/** The shared run of the mail commands (mx, spf, email). */
export interface MailRun<T> {
  runtime: CommandRuntime;
  options: GlobalOptions;
  schema: RecordSchema;
  /** Targets given as arguments; empty: read them from stdin. */
  targets: readonly string[];
  /** What to say when there are no targets and stdin is a terminal. */
  usage: string;
  /** One check of one target; throws NetintelError. */
  check: (target: string) => Promise<T>;
  /** The findings of a result, for `--fail-on`. */
  findingsOf: (value: T) => readonly Finding[];
  failOn: FailOn | undefined;
  /** Checks in flight at once (default --concurrency; remote mode asks fewer of a server). */
  concurrency?: number;
  /** A bulk run's outcomes from a bulk form instead of one check per target (remote `email`: POST /api/email-tests/bulk). */
  bulkOutcomes?: (targets: AsyncIterable<Target[]>) => AsyncIterable<Array<Outcome<T>>>;
  /** How far a result's checks could run (`email`); absent: every result is complete. */
  coverageOf?: (value: T) => RecordCoverage;
}

/**
 * Runs a check over the targets (arguments, or stdin lines in bulk), prints
 * the outcomes in input order, and sets the exit code: errors first (4, 5,
 * 7...; a result none of whose checks could run counts as its failure, one
 * checked in part makes the run partial), then findings at or above
 * `--fail-on` (10).
 */
export async function runMailCommand<T>(run: MailRun<T>): Promise<void> {
  const { runtime, options } = run;
  const { io } = runtime;
  const findings: Finding[] = [];
  const lookup = async (query: string): Promise<Array<Outcome<T>>> => {
    try {
      const value = await run.check(query);
      findings.push(...run.findingsOf(value));
      return [{ ok: true, query, value }];
    } catch (error) {
      return [{ ok: false, query, error: toNetintelError(error) }];
    }
  };
  const bulk = run.targets.length === 0;
  if (bulk && !stdinBringsList(io)) throw new NetintelError('usage', run.usage);
  const list = () => readTargetBatches(runtime.progress.input(io.stdin, () => regularFileSize(0)));
  const outcomes =
    bulk && run.bulkOutcomes
      ? withFindings(run.bulkOutcomes(list()), (value) => findings.push(...run.findingsOf(value)))
      : flattenBatches(
          mapOrdered(bulk ? list() : [targetsFromArguments(run.targets)], (target) => lookup(target.text), run.concurrency ?? options.concurrency),
        );
  const code = await emitOutcomes(io, options, run.schema, bulk ? runtime.progress.track(outcomes, true) : outcomes, {
    single: !bulk && run.targets.length === 1,
    bulk,
    ...(run.coverageOf ? { coverage: run.coverageOf as (record: unknown) => RecordCoverage } : {}),
  });
  runtime.exitCode = exitCodeWithFindings(code, run.failOn, findings);
}

/** Passes outcomes through, telling `seen` each value on the way (for --fail-on). */
async function* withFindings<T>(outcomes: AsyncIterable<Array<Outcome<T>>>, seen: (value: T) => void): AsyncGenerator<Array<Outcome<T>>> {
  for await (const batch of outcomes) {
    for (const outcome of batch) if (outcome.ok) seen(outcome.value);
    yield batch;
  }
}
