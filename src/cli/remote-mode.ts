import { SILENT, type RunProgress } from './progress.js';
import type { CliIo } from './io.js';
import type { GlobalOptions } from './global-options.js';
import { createRemoteEngine, type RemoteEngine } from '../remote/remote-engine.js';

/** Time an API request may take: the server's own lookups run under its 30 s request deadline. */
const MIN_HTTP_TIMEOUT_MS = 35_000;

/**
 * The remote engine of a command run with `--server` (and `--api-key`):
 * the command calls it where it would call the local engine. Waits after a
 * 429 and left-out premium fields are said on stderr (not with --quiet).
 */
export function openRemoteEngine(options: GlobalOptions, io: CliIo, progress: RunProgress = SILENT): RemoteEngine {
  const remote = options.remote!;
  // The calls follow at once: the spinner (after its delay) says whom the run waits for.
  progress.waiting(`waiting for ${remote.server}...`);
  const say = (message: string) => {
    if (!options.quiet) io.stderr.write(`netintel: ${message}\n`);
  };
  return createRemoteEngine({
    server: remote.server,
    apiKey: remote.apiKey,
    timeoutMs: Math.max(options.timeoutMs, MIN_HTTP_TIMEOUT_MS),
    concurrency: Math.min(options.concurrency, 8),
    onRetry: (waitMs, attempt) => say(`rate limited by ${remote.server}; retry ${attempt} in ${(waitMs / 1000).toFixed(1)} s`),
    onWithheld: (groups) =>
      say(`${remote.server} left out ${groups}: ${remote.apiKey === null ? 'they need an API key (--api-key)' : 'the key\'s plan does not include them'}`),
  });
}
