import type { DnsResult } from '../engine/dns/dns-result.js';
import { NetintelError, type ErrorCode } from '../errors.js';
import type { Engine } from '../operations/engine.js';
import type { Lookup, Outcomes, PlanSizes, RemoteCall, RemoteOperation } from '../operations/operation.js';
import { createApiClient, itemError, type ApiClient, type ApiClientOptions } from './api-client.js';
import { bulkAnswer, recordAnswer } from './answer-check.js';
import { subjectProblem, type AnswerSubject } from './answer-subject.js';
import { REMOTE_LIMITS } from './remote-limits.js';
import { remoteLookup } from './remote-lookup.js';

/** The answer of GET /api/quota (docs/api.md, Plans and limits), as far as the client reads it. */
export interface QuotaAnswer {
  plan: string;
  batch: number;
  bulk_max: number | null;
  [member: string]: unknown;
}

/** The bulk forms' answer (src/operations/bulk-answer.ts). */
interface BulkAnswerJson {
  results: Array<{ query: string; record?: unknown; error?: { code: ErrorCode; message: string; details?: Record<string, unknown> } }>;
}

type DnsItem = DnsResult | { query: string; error: { code: ErrorCode; message: string; details?: Record<string, unknown> } };

/**
 * The engine over HTTP: the same interface as the local engine, each
 * operation asked through its API mapping (src/remote/remote-lookup.ts), so
 * that a command prints the same output either way. Fields the key's plan
 * does not include are left out by the server (said once through
 * `onWithheld`).
 */
export interface RemoteEngine extends Engine {
  /** The plan of the key (GET /api/quota), asked once. */
  quota(): Promise<QuotaAnswer>;
}

export interface RemoteEngineOptions extends Omit<ApiClientOptions, 'server' | 'apiKey'> {
  server: string;
  apiKey: string | null;
  /** Told which groups the server left out, once; `said` when its X-Netintel-Withheld header named them (the plan). */
  onWithheld?: (groups: string, said: boolean) => void;
  /** Requests in flight at once for one-per-item lookups (default 8). */
  concurrency?: number;
}

export function createRemoteEngine(options: RemoteEngineOptions): RemoteEngine {
  const client = createApiClient(options);
  const call = remoteCall(client, options);
  return {
    lookup: async <S, R>(operation: RemoteOperation<S, R>, settings: S): Promise<Lookup<R>> => remoteLookup(call, operation.api, settings),
    hostAddresses: (name) => call.hostAddresses(name),
    quota: () => call.quota(),
    close: async () => {},
  };
}

/** What the operations' API mappings may ask of the server (RemoteCall), over one client. */
function remoteCall(client: ApiClient, options: RemoteEngineOptions): RemoteCall & { quota(): Promise<QuotaAnswer> } {
  let quota: Promise<QuotaAnswer> | undefined;
  let withheldSaid = false;
  const unfit = (name: string, why: string) => new NetintelError('upstream', `the server's answer is not a valid ${name}: ${why}`, { details: { server: client.server } });
  const call = {
    server: client.server,
    concurrency: Math.max(1, Math.min(options.concurrency ?? 8, 32)),
    get: (path: string, params: Record<string, string | undefined>, expected?: ReturnType<typeof recordAnswer>) => client.get(path, params, expected),
    post: (path: string, body: unknown, expected?: ReturnType<typeof recordAnswer>) => client.post(path, body, expected),
    recordAnswer,
    bulkAnswer,
    answerOf: (method: 'GET' | 'POST', path: string, name: string) => ({ ...options.answers.ofRoute(method, path), name }),
    quota: () =>
      (quota ??= client
        .get('/api/quota', {}, recordAnswer('Quota', 'quota record'))
        .then((response) => checkedQuota(response.body as QuotaAnswer, unfit))
        .catch((error: unknown) => {
          quota = undefined;
          throw error;
        })),
    plan: async (): Promise<PlanSizes> => {
      const { batch, bulk_max: bulkMax } = await call.quota();
      return { batch, bulkMax };
    },
    // The same addresses the local engine gives: A then AAAA, not_found when neither.
    async hostAddresses(name: string): Promise<string[]> {
      const response = await client.get('/api/dns-lookup', { domain: name, type: 'A,AAAA' }, call.answerOf('GET', '/api/dns-lookup', 'dns answer'));
      if (!Array.isArray(response.body) || response.body.length !== 2) throw unfit('dns answer', 'asked for A and AAAA, it did not give one item for each');
      const items = response.body as DnsItem[];
      for (const item of items) if ('error' in item) throw itemError(item.error);
      for (const item of items) call.answering('dns answer', item, name, 'domain');
      const [a, aaaa] = items as DnsResult[];
      const addresses = [a!, aaaa!].flatMap((result, i) =>
        result.answers.filter((answer) => answer.type === (i === 0 ? 'A' : 'AAAA')).flatMap((answer) => (typeof answer.data === 'string' ? [answer.data] : [])),
      );
      if (addresses.length > 0) return addresses;
      const why = a!.status === 'nxdomain' ? 'does not exist (NXDOMAIN)' : 'has no A or AAAA records';
      throw new NetintelError('not_found', `${a!.domain} ${why} at ${a!.resolver}`, { details: { input: name, rcode: a!.rcode } });
    },
    answering(name: string, record: unknown, asked: string, subject: AnswerSubject): void {
      const problem = subjectProblem(record, asked, subject);
      if (problem !== null) throw unfit(name, problem);
    },
    bulkOutcomes<R>(answer: unknown, batch: readonly string[], name: string, subject?: AnswerSubject): Outcomes<R> {
      const { results } = answer as BulkAnswerJson;
      // One item per query sent, in the same order, each echoing its query: anything else would pin one target's record on another.
      if (results.length !== batch.length) throw unfit(name, `${results.length} items for the ${batch.length} queries sent`);
      const stray = results.findIndex((item, i) => item.query !== batch[i] && item.query !== batch[i]!.trim());
      if (stray !== -1) throw unfit(name, `item ${stray + 1} is for ${JSON.stringify(results[stray]!.query.slice(0, 100))}, not ${JSON.stringify(batch[stray])}`);
      // The label alone proves nothing: each record must name its query too (a swapped record keeps the label it was put under).
      if (subject !== undefined) {
        results.forEach((item, i) => {
          const problem = item.error ? null : subjectProblem(item.record, batch[i]!.trim(), subject);
          if (problem !== null) throw unfit(name, `item ${i + 1}: ${problem}`);
        });
      }
      return results.map((item) => (item.error ? { ok: false, query: item.query, error: itemError(item.error) } : { ok: true, query: item.query, value: item.record as R }));
    },
    itemError,
    unfit,
    withheld(groups: string, said = true) {
      if (withheldSaid) return;
      withheldSaid = true;
      options.onWithheld?.(groups, said);
    },
  };
  return call;
}

/**
 * The batch sizes of a quota record within 1 to REMOTE_LIMITS.batchItems:
 * they decide how much input is held and sent at once, so a server cannot
 * make a run loop on empty batches or read all of stdin before the first.
 */
function checkedQuota(plan: QuotaAnswer, unfit: (name: string, why: string) => NetintelError): QuotaAnswer {
  const fits = (size: number) => Number.isInteger(size) && size >= 1 && size <= REMOTE_LIMITS.batchItems;
  if (!fits(plan.batch) || (plan.bulk_max !== null && !fits(plan.bulk_max))) {
    throw unfit('quota record', `batch sizes must be 1 to ${REMOTE_LIMITS.batchItems} (batch ${plan.batch}, bulk_max ${plan.bulk_max})`);
  }
  return plan;
}
