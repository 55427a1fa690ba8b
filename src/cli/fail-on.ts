import { Option, type Command } from 'commander';
import { hasFindingAtOrAbove, type Finding } from '../engine/findings.js';
import { exitCodeFor } from './exit-codes.js';

export type FailOn = 'warning' | 'error';

/**
 * Adds `--fail-on warning|error` to a command that reports findings. The
 * exit code stays about errors (could the check run?) unless the user opts
 * in: then findings at or above the threshold exit 10 (`findings`), for
 * cron jobs and CI.
 */
export function addFailOnOption(command: Command): Command {
  return command.addOption(failOnOption());
}

/** The `--fail-on warning|error` option itself (see addFailOnOption). */
export function failOnOption(): Option {
  return new Option('--fail-on <severity>', 'exit 10 when a finding is at least this serious (for cron and CI)').choices(['warning', 'error']);
}

/**
 * The run's exit code once findings are counted: the run's own code when it
 * is not 0 (errors come first), else 10 when `failOn` is set and a finding
 * reaches it, else 0.
 */
export function exitCodeWithFindings(runExitCode: number, failOn: FailOn | undefined, findings: readonly Finding[]): number {
  if (runExitCode !== 0 || failOn === undefined) return runExitCode;
  return hasFindingAtOrAbove(findings, failOn) ? exitCodeFor('findings') : 0;
}
