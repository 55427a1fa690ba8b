import type { AsnResult } from '../engine/asn/lookup-asn.js';
import { isAsnText } from '../engine/asn/lookup-asn.js';
import type { Target } from '../engine/bulk/read-targets.js';
import type { DnsResult } from '../engine/dns/dns-result.js';
import type { EmailReport } from '../engine/mail/check-email.js';
import type { IpInfoRecord } from '../engine/ip/ip-record.js';
import { isIpAddress } from '../engine/ip/ip-address.js';
import { isHostNameTarget } from '../engine/ip/ip-target-lookup.js';
import type { Outcome } from '../engine/outcome.js';
import { isErrorCode, NetintelError, toNetintelError, type ErrorCode } from '../errors.js';
import type { QuotaRecord } from '../server/operation-routes.js';
import { createApiClient, itemError, type ApiClient, type ApiClientOptions } from './api-client.js';
import { bulkAnswer, recordAnswer, type ExpectedAnswer } from './answer-check.js';
import { REMOTE_LIMITS } from './remote-limits.js';

/** The answer of the API's bulk forms (src/server/bulk-answer.ts). */
interface BulkAnswerJson {
  results: Array<{ query: string; record?: unknown; error?: { code: ErrorCode; message: string; details?: Record<string, unknown> } }>;
}

/** A free-tier IP answer's extra member, taken off so the record prints as locally. */
const NOTE_KEY = 'note';

/** The answers the engine asks for by name (the others: what the published API says their path answers). */
const IP_ANSWER = recordAnswer('IpInfoRecord', 'ip record');
const QUOTA_ANSWER = recordAnswer('Quota', 'quota record');
const IP_BULK_ANSWER = bulkAnswer('IpBulkAnswer', 'ip bulk answer');
const ASN_BULK_ANSWER = bulkAnswer('AsnBulkAnswer', 'asn bulk answer');
const EMAIL_BULK_ANSWER = bulkAnswer('EmailBulkAnswer', 'email bulk answer');

/** A server answer that passed its schema but does not fit the question asked. */
function unfit(name: string, why: string, server: string): NetintelError {
  return new NetintelError('upstream', `the server's answer is not a valid ${name}: ${why}`, { details: { server } });
}

/**
 * The batch sizes of a quota record within 1 to REMOTE_LIMITS.batchItems:
 * they decide how much input is held and sent at once, so a server cannot
 * make a run loop on empty batches or read all of stdin before the first.
 */
function checkedQuota(plan: QuotaRecord, server: string): QuotaRecord {
  const fits = (size: number) => Number.isInteger(size) && size >= 1 && size <= REMOTE_LIMITS.batchItems;
  if (!fits(plan.batch) || (plan.bulkMax !== null && !fits(plan.bulkMax))) {
    throw unfit('quota record', `batch sizes must be 1 to ${REMOTE_LIMITS.batchItems} (batch ${plan.batch}, bulkMax ${plan.bulkMax})`, server);
  }
  return plan;
}

/**
 * The engine's interface over HTTP: each function gives what the local
 * engine gives for the same input (records, and errors with the same code
 * and message), so a command prints the same output either way. Fields the
 * key's plan does not include are left out by the server (said once on
 * stderr through `onWithheld`).
 */
export interface RemoteEngine {
  readonly client: ApiClient;
  /** Requests in flight at once for one-per-item lookups (bulk runs of the check commands). */
  readonly concurrency: number;
  /** The plan of the key (GET /api/quota), asked once. */
  quota(): Promise<QuotaRecord>;
  /**
   * One record from any GET endpoint as an outcome under `query`: the remote
   * branch of the check commands (`vpn` -> /api/vpn-check?ip=, `blacklist`
   * -> /api/blacklist-check, `email` -> /api/email-tests, `smtp` ->
   * /api/smtp-test).
   */
  recordOutcome<T>(path: string, params: Record<string, string | undefined>, query: string): Promise<Outcome<T>>;
  /** The outcomes of one `ip` target: an address, or each address of a host name (resolved by the server). */
  ipTargetOutcomes(query: string): Promise<Array<Outcome<IpInfoRecord>>>;
  /**
   * The outcomes of one target read as `ip` reads it (an address, or each
   * address of a host name, resolved by the server), each address answered
   * by `lookup` (`vpn`: GET /api/vpn-check).
   */
  hostTargetOutcomes<T>(query: string, lookup: (address: string) => Promise<T>): Promise<Array<Outcome<T>>>;
  /**
   * Every A then AAAA address of a host name, as the server's resolvers give
   * them (the local engine's `resolveHostAddresses`).
   *
   * @throws NetintelError `not_found` when the name has neither.
   */
  hostAddresses(name: string): Promise<string[]>;
  /**
   * `mx` / `spf` of a domain through GET /api/email-tests?type=: the check's
   * own record; its failure is thrown as the error the local check throws
   * (code and message; the server's report does not carry the details).
   */
  mailCheck<T>(check: 'mx' | 'spf' | 'dkim' | 'bimi', domain: string, parameters?: Record<string, string>): Promise<T>;
  /**
   * The general e-mail test of many domains (`netintel email` on stdin) in
   * POST /api/email-tests/bulk requests of the plan's batch size, in input order.
   */
  emailBulkOutcomes<T extends Target>(
    targets: AsyncIterable<readonly T[]>,
    settings: { port?: number; smtp?: boolean; dnssec?: boolean },
  ): AsyncGenerator<Array<Outcome<EmailReport>>>;
  /** The caller's own address as the server sees it, looked up. */
  callerIpOutcome(): Promise<Outcome<IpInfoRecord>>;
  /** `netintel asn` queries, sent in bulk batches of the plan's size, in order. */
  asnOutcomes(queries: readonly string[]): Promise<Array<Outcome<AsnResult>>>;
  /** One outcome per type for a `dns` target (types as the user gave them, null for the default). */
  dnsOutcomes(query: string, types: readonly string[] | null): Promise<Array<Outcome<DnsResult>>>;
  /**
   * `netintel bulk`: IP addresses and AS numbers in input order, in batches
   * of the plan's size (POST /api/bulk when the plan has it, else one
   * request per address; asn-lookup's bulk form for AS numbers).
   */
  bulkOutcomes<T extends Target>(
    targets: AsyncIterable<readonly T[]>,
    failed: (error: NetintelError, target: T) => NetintelError,
  ): AsyncGenerator<Array<Outcome<unknown>>>;
}

export interface RemoteEngineOptions extends Omit<ApiClientOptions, 'server' | 'apiKey'> {
  server: string;
  apiKey: string | null;
  /** Told which groups the plan leaves out, once. */
  onWithheld?: (groups: string) => void;
  /** Requests in flight at once for one-per-item lookups (default 8). */
  concurrency?: number;
}

export function createRemoteEngine(options: RemoteEngineOptions): RemoteEngine {
  const client = createApiClient(options);
  const dnsAnswer: ExpectedAnswer = { ...options.answers.ofRoute('GET', '/api/dns-lookup'), name: 'dns answer' };
  const concurrency = Math.max(1, Math.min(options.concurrency ?? 8, 32));
  let quota: Promise<QuotaRecord> | undefined;
  let withheldSaid = false;

  const ipRecord = async (ip: string | undefined): Promise<IpInfoRecord> => {
    const response = await client.get('/api/ipinfo', { ip }, IP_ANSWER);
    const withheld = response.headers.get('x-netintel-withheld');
    if (withheld && !withheldSaid) {
      withheldSaid = true;
      options.onWithheld?.(withheld);
    }
    const record = response.body as Record<string, unknown>;
    // The schema lets POST /api/bulk's `fields` leave location out; GET /api/ipinfo always has it, and the views read it.
    if (record.location === undefined) throw unfit(IP_ANSWER.name, 'it has no location group', client.server);
    delete record[NOTE_KEY];
    return record as unknown as IpInfoRecord;
  };

  const settle = async <T>(query: string, work: () => Promise<T>): Promise<Outcome<T>> => {
    try {
      return { ok: true, query, value: await work() };
    } catch (error) {
      return { ok: false, query, error: toNetintelError(error) };
    }
  };

  // The same addresses `resolveHostAddresses` gives locally: A then AAAA, not_found when neither.
  const resolveHost = async (name: string): Promise<string[]> => {
    const response = await client.get('/api/dns-lookup', { domain: name, type: 'A,AAAA' }, dnsAnswer);
    if (!Array.isArray(response.body) || response.body.length !== 2) throw unfit('dns answer', 'asked for A and AAAA, it did not give one item for each', client.server);
    const [a, aaaa] = response.body as Array<DnsResult | { query: string; error: { code: ErrorCode; message: string; details?: Record<string, unknown> } }>;
    for (const item of [a, aaaa]) if (item && 'error' in item) throw itemError(item.error);
    const records = [a as DnsResult, aaaa as DnsResult];
    const addresses = records.flatMap((result, i) =>
      result.answers.filter((answer) => answer.type === (i === 0 ? 'A' : 'AAAA')).flatMap((answer) => (typeof answer.data === 'string' ? [answer.data] : [])),
    );
    if (addresses.length === 0) {
      const first = records[0]!;
      const why = first.status === 'nxdomain' ? 'does not exist (NXDOMAIN)' : 'has no A or AAAA records';
      throw new NetintelError('not_found', `${first.domain} ${why} at ${first.resolver}`, { details: { input: name, rcode: first.rcode } });
    }
    return addresses;
  };

  const inBatches = async <R>(queries: readonly string[], size: number, send: (batch: string[]) => Promise<R[]>): Promise<R[]> => {
    const out: R[] = [];
    for (let start = 0; start < queries.length; start += size) out.push(...(await send(queries.slice(start, start + size))));
    return out;
  };

  const fromBulk = <T>(answer: BulkAnswerJson, batch: readonly string[], name: string): Array<Outcome<T>> => {
    checkBulkItems(answer, batch, name, client.server);
    return answer.results.map((item) =>
      item.error ? { ok: false, query: item.query, error: itemError(item.error) } : { ok: true, query: item.query, value: item.record as T },
    );
  };

  const asnBatch = async (batch: readonly string[]): Promise<Array<Outcome<AsnResult>>> => {
    try {
      const response = await client.get('/api/asn-lookup', { bulk: batch.join(',') }, ASN_BULK_ANSWER);
      return fromBulk<AsnResult>(response.body as BulkAnswerJson, batch, ASN_BULK_ANSWER.name);
    } catch (error) {
      const failure = toNetintelError(error);
      return batch.map((query) => ({ ok: false as const, query, error: failure }));
    }
  };

  const ipBatch = async (batch: readonly string[]): Promise<Array<Outcome<IpInfoRecord>>> => {
    const plan = await engine.quota();
    if (plan.bulkMax !== null) {
      try {
        const response = await client.post('/api/bulk', { ips: batch }, IP_BULK_ANSWER);
        return fromBulk<IpInfoRecord>(response.body as BulkAnswerJson, batch, IP_BULK_ANSWER.name);
      } catch (error) {
        const failure = toNetintelError(error);
        return batch.map((query) => ({ ok: false as const, query, error: failure }));
      }
    }
    const out: Array<Outcome<IpInfoRecord>> = new Array(batch.length);
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, batch.length) }, async () => {
        while (next < batch.length) {
          const i = next++;
          out[i] = await settle(batch[i]!, () => ipRecord(batch[i]!));
        }
      }),
    );
    return out;
  };

  const engine: RemoteEngine = {
    client,
    quota: () =>
      (quota ??= client.get('/api/quota', {}, QUOTA_ANSWER).then((response) => checkedQuota(response.body as QuotaRecord, client.server)).catch((error: unknown) => {
        quota = undefined;
        throw error;
      })),

    concurrency,

    recordOutcome: <T>(path: string, params: Record<string, string | undefined>, query: string) =>
      settle(query, async () => (await client.get(path, params)).body as T),

    ipTargetOutcomes: (query) => engine.hostTargetOutcomes(query, ipRecord),

    async hostTargetOutcomes<T>(query: string, lookup: (address: string) => Promise<T>) {
      if (!isHostNameTarget(query)) return [await settle(query, () => lookup(query))];
      let addresses: string[];
      try {
        addresses = await resolveHost(query);
      } catch (error) {
        return [{ ok: false as const, query, error: toNetintelError(error) }];
      }
      return Promise.all(addresses.map((address) => settle(query, () => lookup(address))));
    },

    hostAddresses: resolveHost,

    async mailCheck<T>(check: 'mx' | 'spf' | 'dkim' | 'bimi', domain: string, parameters: Record<string, string> = {}) {
      const report = (await client.get('/api/email-tests', { ...parameters, type: check, domain })).body as EmailReport;
      const record = report[check];
      if (record !== null) return record as T;
      // The report lists a failed check instead of failing; locally the check itself throws.
      const failure = report.errors.find((item) => item.check === check);
      throw new NetintelError(failure && isErrorCode(failure.code) ? failure.code : 'internal', failure?.message ?? `the server's ${check} report holds no ${check} record`);
    },

    emailBulkOutcomes: (targets, settings) => remoteEmailBulk(engine, targets, settings, inBatches),

    async callerIpOutcome() {
      const outcome = await settle('me', () => ipRecord(undefined));
      return outcome.ok ? { ...outcome, query: outcome.value.ip } : outcome;
    },

    async asnOutcomes(queries) {
      if (queries.length === 0) return [];
      let size: number;
      try {
        size = (await engine.quota()).batch;
      } catch (error) {
        const failure = toNetintelError(error);
        return queries.map((query) => ({ ok: false as const, query, error: failure }));
      }
      return inBatches(queries, size, asnBatch);
    },

    async dnsOutcomes(query, types) {
      const asked = types === null || types.length === 0 ? null : types;
      try {
        const response = await client.get('/api/dns-lookup', { domain: query, type: asked?.join(',') }, dnsAnswer);
        if (!Array.isArray(response.body)) return [{ ok: true, query, value: response.body as DnsResult }];
        return (response.body as Array<DnsResult | { query: string; error: { code: ErrorCode; message: string; details?: Record<string, unknown> } }>).map(
          (item): Outcome<DnsResult> => ('error' in item ? { ok: false, query: item.query, error: itemError(item.error) } : { ok: true, query, value: item }),
        );
      } catch (error) {
        const failure = toNetintelError(error);
        // Locally a bad name fails once under its own text, a failed lookup under "name TYPE".
        if (['usage', 'invalid_input'].includes(failure.code) || (asked !== null && asked.length > 1)) return [{ ok: false, query, error: failure }];
        return [{ ok: false, query: `${query} ${asked?.[0] ?? (isIpAddress(query) ? 'PTR' : 'A')}`, error: failure }];
      }
    },

    bulkOutcomes: (targets, failed) => remoteBulk(engine, targets, failed, asnBatch, ipBatch, inBatches),
  };
  return engine;
}

/** `bulkOutcomes`: the input re-cut into groups of the plan's size; each group answered in order. */
async function* remoteBulk<T extends Target>(
  engine: RemoteEngine,
  targets: AsyncIterable<readonly T[]>,
  failed: (error: NetintelError, target: T) => NetintelError,
  asnBatch: (batch: readonly string[]) => Promise<Array<Outcome<AsnResult>>>,
  ipBatch: (batch: readonly string[]) => Promise<Array<Outcome<IpInfoRecord>>>,
  inBatches: <R>(queries: readonly string[], size: number, send: (batch: string[]) => Promise<R[]>) => Promise<R[]>,
): AsyncGenerator<Array<Outcome<unknown>>> {
  const plan = await engine.quota();
  const size = plan.bulkMax ?? plan.batch;
  const run = async (group: readonly T[]): Promise<Array<Outcome<unknown>>> => {
    const asn = group.filter((target) => isAsnText(target.text)).map((target) => target.text);
    const ips = group.filter((target) => !isAsnText(target.text)).map((target) => target.text);
    const [asnResults, ipResults] = await Promise.all([inBatches(asn, plan.batch, asnBatch), inBatches(ips, size, ipBatch)]);
    let a = 0;
    let p = 0;
    return group.map((target) => {
      const outcome: Outcome<unknown> = isAsnText(target.text) ? asnResults[a++]! : ipResults[p++]!;
      return outcome.ok ? outcome : { ok: false, query: target.text, error: failed(outcome.error, target) };
    });
  };
  let pending: T[] = [];
  for await (const batch of targets) {
    pending.push(...batch);
    while (pending.length >= size) {
      const group = pending.slice(0, size);
      pending = pending.slice(size);
      yield await run(group);
    }
  }
  if (pending.length > 0) yield await run(pending);
}

/** `emailBulkOutcomes`: the input re-cut into groups of the plan's batch size, each one POST, answered in order. */
async function* remoteEmailBulk<T extends Target>(
  engine: RemoteEngine,
  targets: AsyncIterable<readonly T[]>,
  settings: { port?: number; smtp?: boolean; dnssec?: boolean },
  inBatches: <R>(queries: readonly string[], size: number, send: (batch: string[]) => Promise<R[]>) => Promise<R[]>,
): AsyncGenerator<Array<Outcome<EmailReport>>> {
  const send = async (batch: readonly string[]): Promise<Array<Outcome<EmailReport>>> => {
    try {
      const response = await engine.client.post('/api/email-tests/bulk', { domains: batch, ...settings }, EMAIL_BULK_ANSWER);
      checkBulkItems(response.body as BulkAnswerJson, batch, EMAIL_BULK_ANSWER.name, engine.client.server);
      return (response.body as BulkAnswerJson).results.map((item) =>
        item.error ? { ok: false, query: item.query, error: itemError(item.error) } : { ok: true, query: item.query, value: item.record as EmailReport },
      );
    } catch (error) {
      const failure = toNetintelError(error);
      return batch.map((query) => ({ ok: false as const, query, error: failure }));
    }
  };
  // The plan's batch size is asked once the first target arrives; without it each item fails as the quota request did.
  let size: Promise<number> | undefined;
  const run = async (group: readonly string[]): Promise<Array<Outcome<EmailReport>>> => {
    try {
      return await inBatches(group, await size!, send);
    } catch (error) {
      const failure = toNetintelError(error);
      return group.map((query) => ({ ok: false as const, query, error: failure }));
    }
  };
  let pending: string[] = [];
  for await (const batch of targets) {
    pending.push(...batch.map((target) => target.text));
    size ??= engine.quota().then((plan) => plan.batch);
    const groupSize = await size.catch(() => 1);
    while (pending.length >= groupSize) {
      const group = pending.slice(0, groupSize);
      pending = pending.slice(groupSize);
      yield await run(group);
    }
  }
  if (pending.length > 0) yield await run(pending);
}

/**
 * A bulk answer has one item per query sent, in the same order, each
 * echoing its query (src/server/bulk-answer.ts): anything else would pin
 * one target's record on another.
 */
function checkBulkItems(answer: BulkAnswerJson, batch: readonly string[], name: string, server: string): void {
  if (answer.results.length !== batch.length) throw unfit(name, `${answer.results.length} items for the ${batch.length} queries sent`, server);
  // The asn-lookup form trims each query of its comma-separated list (splitAsnBulk); the POST forms echo them as sent.
  const stray = answer.results.findIndex((item, i) => item.query !== batch[i] && item.query !== batch[i]!.trim());
  if (stray !== -1) throw unfit(name, `item ${stray + 1} is for ${JSON.stringify(answer.results[stray]!.query.slice(0, 100))}, not ${JSON.stringify(batch[stray])}`, server);
}
