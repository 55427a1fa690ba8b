import { SILENT, type RunProgress } from '../cli/progress.js';
import type { CliIo } from '../cli/io.js';
import type { GlobalOptions } from '../cli/global-options.js';
import type { PlanTable } from '../keys/plans.js';
import { escapeTerminalText } from '../output/terminal-text.js';
import { createAnswerCheck, type AnswerCheck, type PublishedApi } from '../remote/answer-check.js';
import { loadOperations } from '../operations/operations.js';
import { createRemoteEngine, type RemoteEngine } from '../remote/remote-engine.js';
import { buildOpenApiDocument } from '../server/openapi.js';
import { apiRoutes } from '../server/routes/route-table.js';

/**
 * Deadline of one API call when no --timeout (NETINTEL_TIMEOUT, config
 * "timeout") is given: the server's own lookups run under its 30 s request
 * deadline, and the answer needs a moment more to arrive. A given one wins,
 * shorter or longer.
 */
export const REMOTE_DEFAULT_TIMEOUT_MS = 35_000;

/**
 * The remote engine of a command run with `--server` (and `--api-key`):
 * the command calls it where it would call the local engine. Waits after a
 * 429 and left-out premium fields are said on stderr (not with --quiet).
 */
export async function openRemoteEngine(options: GlobalOptions, io: CliIo, progress: RunProgress = SILENT): Promise<RemoteEngine> {
  const remote = options.remote!;
  // The calls follow at once: the spinner (after its delay) says whom the run waits for.
  progress.waiting(`waiting for ${remote.server}...`);
  const say = (message: string) => {
    if (!options.quiet) io.stderr.write(`netintel: ${escapeTerminalText(message)}\n`);
  };
  return createRemoteEngine({
    server: remote.server,
    apiKey: remote.apiKey,
    timeoutMs: remote.timeoutGiven === true ? options.timeoutMs : REMOTE_DEFAULT_TIMEOUT_MS,
    answers: await publishedAnswerCheck(),
    concurrency: Math.min(options.concurrency, 8),
    onRetry: (waitMs, attempt) => say(`rate limited by ${remote.server}; retry ${attempt} in ${(waitMs / 1000).toFixed(1)} s`),
    onWithheld: (groups, said) => {
      const why = !said ? 'it did not say why (no X-Netintel-Withheld header), so the record is not whole' : remote.apiKey === null ? 'they need an API key (--api-key)' : "the key's plan does not include them";
      say(`${remote.server} left out ${groups.slice(0, 100)}: ${why}`);
    },
  });
}

/**
 * Answer checks against the OpenAPI document a `netintel serve` of this
 * version publishes (built from the same route table and record schemas),
 * so that the client holds the server to exactly what the server promises.
 * The client does not know the server's plans file: the document is built
 * with none, and a quota record's plan may be any name. It needs every
 * operation's descriptor, as the server's document does.
 */
export async function publishedAnswerCheck(): Promise<AnswerCheck> {
  const plans: PlanTable = { anonymous: 'free', newAccounts: 'free', bulkMax: 100, plans: {}, source: 'the server\'s plans file' };
  const operations = await loadOperations();
  const document = (await buildOpenApiDocument({ routes: apiRoutes(plans, operations), operations, plans, version: 'client' })) as unknown as PublishedApi;
  const quota = document.components.schemas.Quota as { properties: Record<string, unknown> };
  quota.properties.plan = { type: 'string' };
  return createAnswerCheck(document);
}
