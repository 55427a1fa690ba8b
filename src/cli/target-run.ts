import { coverageOf } from './check-coverage.js';
import type { RecordCoverage } from './exit-codes.js';
import type { FailOn } from './fail-on.js';
import { targetsFromArguments } from '../engine/bulk/read-targets.js';
import { hasFindingAtOrAbove, leavesPartUnchecked, type Finding } from '../engine/findings.js';
import type { Outcome } from '../engine/outcome.js';
import { NetintelError } from '../errors.js';
import type { CommandRun, TargetRun } from '../operations/command-run.js';
import { lookupMany, type PreparedRows, type TargetSource } from '../operations/engine.js';
import type { Lookup } from '../operations/operation.js';
import { escapeTerminalText } from '../output/terminal-text.js';

/**
 * The standard run of a lookup operation: the targets (arguments, or the
 * lines of stdin in bulk), looked up through the run's engine with at most
 * `--concurrency` in flight, printed in input order as they come; then the
 * exit code: errors first (4, 5, 7...; a record none of whose checks could
 * run counts as its failure, one checked in part makes the run partial),
 * then findings at or above `--fail-on` (10).
 */
export async function lookupTargets<S, R>(run: CommandRun<S, R>, spec: TargetRun<R>): Promise<number> {
  const { options, progress } = run;
  const list = spec.targets.length === 0;
  if (list && !run.stdinBringsList()) {
    // Without this, a bare command at a terminal would sit waiting for typed input.
    if (spec.none !== 'caller') throw new NetintelError('usage', spec.none.usage);
    return lookupCaller(run);
  }
  const lookup = refusing(await run.lookup(), spec.refuse);
  const targets: TargetSource = list ? run.stdinTargets() : [targetsFromArguments(spec.targets)];
  const findings: Finding[] = [];
  const notes: string[] = [];
  const outcomes = observed(lookupMany(lookup, spec.expand ? spec.expand(targets) : targets, { concurrency: options.concurrency, list }), (record: R) => {
    if (spec.failOn) keepFindings(findings, spec.failOn.findings(record), spec.failOn.level, spec.failOn.firstOnly === true);
    const note = list ? null : (spec.note?.(record) ?? null);
    if (note !== null) notes.push(note);
  });
  const coverage = recordCoverage(spec);
  const facts = spec.coverage;
  const code = await run.emit(progress.track(outcomes, list), {
    single: !list && (spec.single ?? spec.targets.length === 1),
    bulk: list,
    ...(spec.record ? { record: spec.record } : {}),
    ...(coverage ? { coverage } : {}),
    ...(facts ? { failureMessage: (record: unknown) => facts(record as R).failure?.message ?? null } : {}),
  });
  // The records say it in every format; on stderr a person reads it beside any view.
  if (!options.quiet) for (const note of notes) run.io.stderr.write(`netintel: ${escapeTerminalText(note)}\n`);
  return run.withFindings(code, spec.failOn?.level, findings);
}

/**
 * A record's coverage: what the operation says of it, and never complete
 * while one of its findings is of severity `unknown`: that finding is a part
 * of the check that could not run (a lookup that got no answer), so the run
 * is partial (exit 7) however the rest came out (docs/exit-codes.md).
 */
function recordCoverage<R>(spec: TargetRun<R>): ((record: unknown) => RecordCoverage) | undefined {
  const { coverage: facts, failOn } = spec;
  if (!facts && !failOn) return undefined;
  return (record) => {
    const own = facts ? coverageOf(facts(record as R)) : 'complete';
    return own === 'complete' && failOn && leavesPartUnchecked(failOn.findings(record as R)) ? 'partial' : own;
  };
}

/** No target and nothing piped in: the caller's own address, as the engine sees it, looked up. */
async function lookupCaller<S, R>(run: CommandRun<S, R>): Promise<number> {
  const lookup = await run.lookup();
  const outcomes = await lookup.ownAddress!();
  run.progress.noteCoverage(outcomes);
  return run.emit([outcomes], { single: true, bulk: false });
}

/** Keeps the findings `--fail-on` counts: all of them, or with `firstOnly` the first record's that reach the threshold. */
function keepFindings(kept: Finding[], findings: readonly Finding[], level: FailOn | undefined, firstOnly: boolean): void {
  if (!firstOnly) {
    kept.push(...findings);
    return;
  }
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

/** The lookup with the targets `refuse` names failing with its error instead of being looked up. */
function refusing<R>(lookup: Lookup<R>, refuse: TargetRun<R>['refuse']): Lookup<R> {
  if (!refuse) return lookup;
  const each: Lookup<R> = (target) => {
    const error = refuse(target);
    return error ? [{ ok: false, query: target, error }] : lookup(target);
  };
  if (lookup.concurrency !== undefined) each.concurrency = lookup.concurrency;
  return each;
}
