import { toNetintelError } from '../errors.js';
import { exitCodeFor } from './exit-codes.js';
import type { CliIo } from './io.js';

/**
 * Reports an error that ended a run and returns its exit code: the message
 * on stderr (with the stack for an internal error), and the error as a
 * record on stdout when the run prints records (json, ndjson), so a reader
 * of stdout sees why it got nothing.
 */
export function reportFailure(io: CliIo, error: unknown, format: string | undefined): number {
  const failure = toNetintelError(error);
  if (format === 'json' || format === 'ndjson') io.stdout.write(`${JSON.stringify({ error: failure.toJSON() })}\n`);
  io.stderr.write(`netintel: ${failure.message}\n`);
  if (failure.code === 'internal' && error instanceof Error && error.stack) io.stderr.write(`${error.stack}\n`);
  return exitCodeFor(failure.code);
}
