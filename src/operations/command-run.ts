import type { CoverageFacts } from '../cli/check-coverage.js';
import type { RecordCoverage } from '../cli/exit-codes.js';
import type { FailOn } from '../cli/fail-on.js';
import type { GlobalOptions } from '../cli/global-options.js';
import type { CliIo } from '../cli/io.js';
import type { RunProgress } from '../cli/progress.js';
import type { SourcedTarget, Target } from '../engine/bulk/read-targets.js';
import type { Finding } from '../engine/findings.js';
import type { Outcome } from '../engine/outcome.js';
import type { NetintelError } from '../errors.js';
import type { PreparedRows, TargetSource } from './engine.js';
import type { Lookup, RecordDeclaration } from './operation.js';

/** How outcomes are printed. */
export interface EmitSpec {
  /** One target was asked for: json prints an object, the table view a block. */
  single: boolean;
  /** A list: errors are rows plus a summary on stderr. */
  bulk: boolean;
  /** How far a record's checks could run (absent: every record is complete). */
  coverage?: (record: unknown) => RecordCoverage;
  /** Why a record none of whose checks could run could not be checked, for stderr (emit.ts). */
  failureMessage?: (record: unknown) => string | null;
  /** Records of another kind than the operation's (`dkim --message`, `blacklist --list-zones`). */
  record?: RecordDeclaration;
  /** Columns chosen instead of `--fields` (`smtp` leaves the transcript to the text after the table). */
  fields?: string[];
}

/** `--fail-on`: the threshold and the findings of a record. */
export interface FailOnSpec<R> {
  level: FailOn | undefined;
  /** The record's findings: those at or above `level` make exit 10, one of severity `unknown` makes the record partial (exit 7). */
  findings: (record: R) => readonly Finding[];
  /**
   * Only whether a finding reaches the threshold matters: the first record's
   * that does are kept, not every finding of a long list.
   */
  firstOnly?: boolean;
}

/** The standard run of a lookup: targets (arguments, or the lines of stdin), looked up in order, printed. */
export interface TargetRun<R> {
  /** The targets given as arguments; none: the lines of stdin when it brings a list. */
  targets: readonly string[];
  /** With no target and nothing piped in: a usage error saying `usage`, or the caller's own address looked up. */
  none: { usage: string } | 'caller';
  /** Turns the targets before they are looked up, in order (ranges into their addresses). */
  expand?: <T extends Target>(targets: TargetSource<T>) => AsyncIterable<readonly T[]>;
  /** A target the lookup is not given: its outcome is this error (a range left whole). */
  refuse?: (target: string) => NetintelError | null;
  /** A run over arguments printing one record as such (json: an object); default: one argument. */
  single?: boolean;
  /** Records of another kind than the operation's. */
  record?: RecordDeclaration;
  failOn?: FailOnSpec<R>;
  /** How much of a record's checks could run, beyond its `unknown` findings (a record none of whose checks could run). */
  coverage?: (record: R) => CoverageFacts;
  /** What to say on stderr about a record of a run over arguments, once it is printed (unless --quiet). */
  note?: (record: R) => string | null;
}

/**
 * What a command's run is given (src/cli makes it): its arguments and
 * settings, the engine (local or remote: the run cannot tell), the global
 * options, the process surface and the ways of printing.
 */
export interface CommandRun<S, R = unknown> {
  /** The command's arguments: the targets as given (a single argument as a list of one). */
  readonly args: readonly string[];
  readonly settings: S;
  /**
   * The lookup of the run's operation through the run's engine (local, or
   * remote for an operation the API can ask: the run cannot tell), from the
   * run's settings or others.
   */
  lookup(settings?: S): Promise<Lookup<R>>;
  readonly options: GlobalOptions;
  readonly io: CliIo;
  readonly progress: RunProgress;
  /** True when stdin brings a list (a pipe or a file, not a terminal). */
  stdinBringsList(): boolean;
  /** The lines of stdin as targets, counted by the progress display. */
  stdinTargets(): AsyncIterable<SourcedTarget[]>;
  /** The lines of each file in order ("-" or none: stdin) as targets naming their file when there are several. */
  fileTargets(files: readonly string[]): AsyncIterable<SourcedTarget[]>;
  /** The width the table view fits (the terminal's). */
  width(): number;
  /** Looks the targets up through the engine and prints them; the exit code. */
  lookupTargets(run: TargetRun<R>): Promise<number>;
  /** Prints outcomes in the run's format; the exit code of the outcomes. */
  emit(outcomes: AsyncIterable<Iterable<Outcome<unknown>> | PreparedRows> | Iterable<Iterable<Outcome<unknown>>>, spec: EmitSpec): Promise<number>;
  /** The exit code once findings count: the run's own when not 0, else 10 when a finding reaches `--fail-on`. */
  withFindings(code: number, failOn: FailOn | undefined, findings: readonly Finding[]): number;
}
