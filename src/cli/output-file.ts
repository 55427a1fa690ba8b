import { NetintelError } from '../errors.js';
import { writeFileAtomically } from '../write-file-atomically.js';

/**
 * Writes a file a command makes besides its standard output (`summarize
 * --svg FILE`) atomically; a failure is output_failed (exit 11), naming the
 * file and the file system's reason.
 */
export async function writeOutputFile(path: string, content: string | Uint8Array, what: string): Promise<void> {
  try {
    await writeFileAtomically(path, content);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
    throw new NetintelError('output_failed', `cannot write ${what} to ${path}: ${reason} (check that the directory exists and is writable, and the disk has room)`, {
      details: { path },
    });
  }
}
