import { targetsFromArguments } from '../engine/bulk/read-targets.js';
import { hasFindingAtOrAbove, type Finding } from '../engine/findings.js';
import type { Outcome } from '../engine/outcome.js';
import { NetintelError } from '../errors.js';
import type { CommandRun, TargetRun } from '../operations/command-run.js';
import { lookupMany, type PreparedRows, type TargetSource } from '../operations/engine.js';
import type { Operation, RemoteOperation } from '../operations/operation.js';
import { escapeTerminalText } from '../output/terminal-text.js';

/**
 * The standard run of a lookup operation: the targets (arguments, or the
 * lines of stdin in bulk), looked up through the run's engine with at most
 * `--concurrency` in flight, printed in input order as they come; then the
 * exit code: errors first (4, 5, 7...; a record none of whose checks could
 * run counts as its failure, one checked in part makes the run partial),
 * then findings at or above `--fail-on` (10).
 */
export async function lookupTargets<S, R>(run: CommandRun<S>, operation: Operation<S, R>, spec: TargetRun<R>): Promise<number> {
  const { options, progress } = run;
  const list = spec.targets.length === 0;
  if (list && !run.stdinBringsList()) {
    // Without this, a bare command at a terminal would sit waiting for typed input.
    if (spec.none !== 'caller') throw new NetintelError('usage', spec.none.usage);
    return lookupCaller(run, operation);
  }
  const lookup = await run.engine.lookup(operation as RemoteOperation<S, R>, run.settings);
  const targets: TargetSource = list ? run.stdinTargets() : [targetsFromArguments(spec.targets)];
  const findings: Finding[] = [];
  const notes: string[] = [];
  const outcomes = observed(lookupMany(lookup, spec.expand ? spec.expand(targets) : targets, { concurrency: options.concurrency, list }), (record: R) => {
    if (spec.failOn) keepFindings(findings, spec.failOn.findings(record), spec.failOn);
    const note = list ? null : (spec.note?.(record) ?? null);
    if (note !== null) notes.push(note);
  });
  const code = await run.emit(progress.track(outcomes, list), {
    single: !list && (spec.single ?? spec.targets.length === 1),
    bulk: list,
    ...(spec.coverage ? { coverage: spec.coverage as (record: unknown) => ReturnType<NonNullable<typeof spec.coverage>> } : {}),
  });
  // The records say it in every format; on stderr a person reads it beside any view.
  if (!options.quiet) for (const note of notes) run.io.stderr.write(`netintel: ${escapeTerminalText(note)}\n`);
  return run.withFindings(code, spec.failOn?.level, findings);
}

/** No target and nothing piped in: the caller's own address, as the engine sees it, looked up. */
async function lookupCaller<S, R>(run: CommandRun<S>, operation: Operation<S, R>): Promise<number> {
  const lookup = await run.engine.lookup(operation as RemoteOperation<S, R>, run.settings);
  const outcomes = await lookup.caller!();
  run.progress.noteCoverage(outcomes);
  return run.emit([outcomes], { single: true, bulk: false });
}

/** Keeps the findings `--fail-on` counts: all of them, or with `firstOnly` the first record's that reach the threshold. */
function keepFindings(kept: Finding[], findings: readonly Finding[], failOn: NonNullable<TargetRun<unknown>['failOn']>): void {
  if (!failOn.firstOnly) {
    kept.push(...findings);
    return;
  }
  const level = failOn.level;
  if (level === undefined || kept.length > 0 || !hasFindingAtOrAbove(findings, level)) return;
  kept.push(...findings.filter((item) => hasFindingAtOrAbove([item], level)));
}

/** Passes batches through, telling `seen` each record on the way. */
async function* observed<R>(batches: AsyncIterable<Array<Outcome<R>> | PreparedRows>, seen: (record: R) => void): AsyncGenerator<Array<Outcome<R>> | PreparedRows> {
  for await (const batch of batches) {
    if (Array.isArray(batch)) for (const outcome of batch) if (outcome.ok) seen(outcome.value);
    yield batch;
  }
}
