import { toNetintelError } from '../errors.js';
import { jsonText } from '../output/json-text.js';
import { escapeTerminalText } from '../output/terminal-text.js';
import { exitCodeFor } from './exit-codes.js';
import { reportedMessage } from './next-step.js';
import type { CliIo } from './io.js';

/** What an `internal` error (a bug) adds to its one line: what to do about it. */
export const BUG_HINT = 'this is a bug in netintel: please report it with the command that caused it; NETINTEL_DEBUG=1 (or --debug) shows the details';

/** Errors the output already carries as a record (emit.ts ended a document with them). */
const writtenToStdout = new WeakSet<object>();

/** Notes that stdout already holds `error` as a record, so reportFailure does not write it again. */
export function markWrittenToStdout(error: object): void {
  writtenToStdout.add(error);
}

/**
 * Reports an error that ended a run and returns its exit code: one
 * `netintel: ...` line on stderr, control characters written visibly (the
 * message may echo input or what a peer said), and the error as a record on
 * stdout when the run prints records (json, ndjson), so a reader of stdout
 * sees why it got nothing. A failure says what to try next (next-step.ts).
 * A bug (`internal`) says so and where to go; with `debug` its stack
 * follows (mapped to the sources: bin/netintel.js turns source maps on in
 * debug runs).
 */
export function reportFailure(io: CliIo, error: unknown, format: string | undefined, options: { debug?: boolean } = {}): number {
  const failure = toNetintelError(error);
  if ((format === 'json' || format === 'ndjson') && failure.code !== 'output_failed' && !writtenToStdout.has(failure)) {
    io.stdout.write(`${jsonText({ error: failure.toJSON() })}\n`);
  }
  const message = escapeTerminalText(failure.code === 'internal' ? failure.message : reportedMessage(failure));
  if (failure.code !== 'internal') io.stderr.write(`netintel: ${message}\n`);
  else io.stderr.write(`netintel: internal error: ${message} (${BUG_HINT})\n`);
  if (options.debug === true) {
    const stack = error instanceof Error ? error.stack : undefined;
    if (stack !== undefined) io.stderr.write(`${stack}\n`);
  }
  return exitCodeFor(failure.code);
}
