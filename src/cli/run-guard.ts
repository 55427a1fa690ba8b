import { environmentSwitch, environmentText } from '../setting-sources.js';
import { escapeTerminalText } from '../output/terminal-text.js';
import { diagnosticWidth, fitDiagnostics } from './diagnostic-text.js';
import { exitCodeFor } from './exit-codes.js';
import { GuardedOutput } from './guarded-output.js';
import { outputFailed, type CliIo } from './io.js';
import { reportFailure } from './report-failure.js';

/**
 * Whether the run shows the details of a bug (the stack, mapped to the
 * sources): `NETINTEL_DEBUG` set to anything but `0`/`false`, or a
 * `--debug` flag before `--`.
 */
export function debugRequested(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): boolean {
  const variable = environmentText(env, 'NETINTEL_DEBUG');
  if (variable !== undefined && environmentSwitch(variable)) return true;
  for (const arg of argv) {
    if (arg === '--') break;
    if (arg === '--debug') return true;
  }
  return false;
}

/**
 * Control characters of stderr text written visibly (terminal-text.ts),
 * line ends kept: an error message echoes input and what the network said.
 * Then the diagnostics in one case and fitted to the width of stderr
 * (diagnostic-text.ts).
 */
function diagnosticsFor(io: CliIo): (text: string) => string {
  let width: number | null | undefined;
  return (text) => fitDiagnostics(escapeTerminalText(text, { keepNewlines: true }), (width ??= diagnosticWidth(io)));
}

export interface GuardedRun {
  /** The run's process surface: stdout and stderr guarded (guarded-output.ts), stderr escaped. */
  io: CliIo;
  /**
   * Ends the run: reports a failure `run` threw (reportFailure), then a
   * write error of stdout that nothing reported yet, and returns the exit
   * code. A failed stdout wins over any other outcome: the output is lost.
   */
  finish(outcome: { code: number } | { error: unknown }, format: string | undefined): Promise<number>;
}

/**
 * Wraps a run's process surface so that every failure ends as one
 * `netintel: ...` line on stderr and a code of the error table, whatever
 * the command.
 */
export function guardRun(io: CliIo, debug: boolean): GuardedRun {
  const stdout = new GuardedOutput(() => io.stdout);
  const stderr = new GuardedOutput(() => io.stderr, diagnosticsFor(io));
  const guarded: CliIo = {
    get stdin() {
      return io.stdin;
    },
    get stdinPiped() {
      return io.stdinPiped;
    },
    stdout,
    stderr,
    env: io.env,
  };
  return {
    io: guarded,
    finish: async (outcome, format) => {
      let code = 'code' in outcome ? outcome.code : reportFailure(guarded, outcome.error, format, { debug });
      // A failed write is reported by its stream on the next tick.
      if (stdout.failure === null) await new Promise<void>((resolve) => setImmediate(resolve));
      const outputCode = exitCodeFor('output_failed');
      if (stdout.failure !== null && code !== outputCode) {
        code = reportFailure(guarded, outputFailed(stdout.failure), undefined, { debug });
      }
      return code;
    },
  };
}
