import type { FastifyRequest } from 'fastify';
import type { BulkWorkerSettings } from './bulk-threads.js';
import type { SourcedTarget } from '../engine/bulk/read-targets.js';
import type { IpInfoRecord } from '../engine/ip/ip-record.js';
import type { Outcome } from '../engine/outcome.js';
import { NetintelError, toNetintelError } from '../errors.js';
import { BULK_SCHEMA } from '../output/schemas/bulk-schema.js';
import { ASN } from './asn.js';
import { lookupMany, type PreparedRows } from './engine.js';
import { IP } from './ip.js';
import { defineOperation, type Lookup, type Outcomes, type PlanSizes, type RemoteCall } from './operation.js';
import { settle } from './outcomes.js';

/** The data groups POST /api/bulk's `fields` may name (docs/api.md, Endpoints). */
export const BULK_FIELDS = ['location', 'security', 'network'] as const;

/** The most threads --threads accepts: each worker holds its own copy of the datasets. */
const MAX_THREADS = 64;

export interface BulkSettings {
  /** `--max-expand`; absent: ranges are not expanded (they reach no bulk run but `netintel bulk`'s). */
  maxExpand?: number;
  /** Lookup threads of a long local list (1: none). */
  threads: number;
  /** What the worker threads render rows with. */
  rows: BulkWorkerSettings;
  /** Rows show the security evidence (`createBulkLookup`'s option). */
  evidence: boolean;
  /** Told each local lookup, so that the run can note what the rows it does not see lacked (the progress display). */
  watch?: (lookup: (target: SourcedTarget) => Outcome<unknown>) => (target: SourcedTarget) => Outcome<unknown>;
}

interface BulkBody {
  ips: string[];
  fields?: Array<(typeof BULK_FIELDS)[number]>;
}

/** `netintel bulk`: many IP addresses and AS numbers, one row per line, in input order. */
export const BULK = defineOperation<BulkSettings, unknown>()({
  name: 'bulk',
  command: {
    declare(command, kit) {
      command
        .description('many IPs and AS numbers, one per line: one output row per line, in input order, failures included')
        .argument('[files...]', 'files with one target per line ("-" or none: stdin); blank lines and # comments are skipped; a range line (192.0.2.0/28, 192.0.2.1-192.0.2.9) gives one row per address in its place')
        .addOption(kit.maxExpandOption())
        .option('--threads <n>', `lookup threads for long lists, except in table output (default: one per CPU but one, at most ${kit.defaultMaxBulkThreads}; 1: no worker threads)`, kit.integerIn('--threads', 1, MAX_THREADS))
        .addHelpText(
          'after',
          '\nExit status: 0 all rows ok, 7 some failed, the failure\'s own code when all failed.\nExamples:\n  netintel bulk ips.txt -f csv > out.csv\n  zcat ips.gz | netintel bulk --fields location,security -f ndjson',
        );
    },
    async settings(flags, kit) {
      const [{ DEFAULT_MAX_EXPAND }, { rowsShowEvidence }, { defaultBulkThreads }] = await Promise.all([
        import('../engine/ip/ip-range-expand.js'),
        import('./bulk-threads.js'),
        import('./bulk-thread-count.js'),
      ]);
      const maxExpand = (flags.maxExpand as number | undefined) ?? DEFAULT_MAX_EXPAND;
      const { dataDir, format, fields, verbose } = kit.options;
      return { maxExpand, threads: (flags.threads as number | undefined) ?? defaultBulkThreads(), rows: { dataDir, format, fields, verbose, maxExpand }, evidence: rowsShowEvidence(format, fields) };
    },
    async run(run) {
      if (run.args.length === 0 && !run.stdinBringsList()) throw new NetintelError('usage', 'bulk reads targets from files or stdin: give a file, or pipe the list in');
      const { expandRangeTargets } = await import('../engine/ip/ip-range-expand.js');
      const { progress } = run;
      const lookup = await run.lookup({ ...run.settings, watch: (each) => progress.watchLookup(each) });
      // Rows are counted as their targets are taken: local rows are made as the output takes them.
      // A range line within --max-expand becomes its addresses here, each a row with the range's line number.
      const targets = progress.track(expandRangeTargets(withoutZoneIndexes(run.fileTargets(run.args)), run.settings.maxExpand!), true);
      return run.emit(progress.track(lookupMany(lookup, targets, { concurrency: run.options.concurrency, list: true }), false), { single: false, bulk: true });
    },
  },
  async lookup(ctx, settings) {
    // Local lookups never wait, so they need no concurrency window; a long list spreads over threads.
    const [{ createBulkLookup }, { bulkRows }] = await Promise.all([import('../engine/bulk/bulk-lookup.js'), import('./bulk-threads.js')]);
    const made = createBulkLookup(ctx, { evidence: settings.evidence, ...(settings.maxExpand === undefined ? {} : { maxExpand: settings.maxExpand }) });
    const one = settings.watch ? settings.watch(made) : made;
    const each: Lookup<unknown> = (text) => [one({ text, line: 1, source: null })];
    each.all = (targets) => bulkRows(targets as AsyncIterable<readonly SourcedTarget[]>, one, settings.threads, settings.rows, ctx.debug) as AsyncIterable<Outcomes<unknown> | PreparedRows>;
    return each;
  },
  record: {
    columns: BULK_SCHEMA,
    view: async () => (await import('../output/human/bulk-view.js')).BULK_VIEW,
  },
  api: {
    method: 'POST',
    path: '/api/bulk',
    feature: 'bulk',
    // The same rows, asked of a netintel server in groups of the plan's size: without the plan, nothing can be sent.
    batch: {
      applies: () => true,
      stopsWithoutPlan: true,
      size: (plan) => plan.bulkMax ?? plan.batch,
      send: (remote, group, settings, plan) => remoteRows(remote, group as readonly SourcedTarget[], settings, plan),
    },
    route: (plans) => ({
      operationId: 'postBulk',
      summary: 'IP information records of many addresses in one request',
      description:
        `Looks up at most ${plans.bulkMax} addresses; needs a plan with bulk processing (Pro, Enterprise). ` +
        '`fields` picks the data groups (location, security, network; default all). Every address counts against the limits. ' +
        'The answer keeps the order of `ips`, echoes each address as `query`, and gives an error item for an address that fails.',
      body: {
        type: 'object',
        required: ['ips'],
        additionalProperties: false,
        properties: {
          ips: { type: 'array', minItems: 1, maxItems: plans.bulkMax, items: { type: 'string', maxLength: 100 } },
          fields: { type: 'array', uniqueItems: true, items: { type: 'string', enum: [...BULK_FIELDS] } },
        },
      },
      responseSchema: { $ref: '#/components/schemas/IpBulkAnswer' },
      responseDescription: 'One item per address in order (`record` or `error`), and a summary.',
      examples: [{ body: { ips: ['8.8.8.8', '1.1.1.1', 'not-an-ip'], fields: ['location', 'network'] } }],
      items: (request: FastifyRequest) => (request.body as BulkBody).ips.length,
      handler: async (request, _reply, api) => {
        const body = request.body as BulkBody;
        const { bulkAnswer } = await import('./bulk-answer.js');
        return bulkAnswer(body.ips, (ip) => withFields(api.lookupIp(ip), body.fields));
      },
    }),
  },
});

/** An address with a zone index is taken without it, before the local, threaded and remote lookups alike. */
async function* withoutZoneIndexes(batches: AsyncIterable<SourcedTarget[]>): AsyncGenerator<SourcedTarget[]> {
  const { withoutZoneIndex } = await import('../engine/bulk/zone-index.js');
  for await (const batch of batches) {
    for (const target of batch) if (target.text.includes('%')) target.text = withoutZoneIndex(target.text);
    yield batch;
  }
}

/** The record with only the groups asked for; the address, its type and the other top-level facts stay. */
function withFields(record: IpInfoRecord, fields: readonly string[] | undefined): unknown {
  if (fields === undefined) return record;
  const shaped: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (!(BULK_FIELDS as readonly string[]).includes(key) || fields.includes(key)) shaped[key] = value;
  }
  return shaped;
}

/**
 * One group of bulk rows asked of a server: the AS numbers through
 * asn-lookup's bulk form in batches of the plan's size, the addresses
 * through POST /api/bulk when the plan has it, else one GET /api/ipinfo each;
 * in input order, a failed row naming its line.
 */
async function remoteRows(remote: RemoteCall, group: readonly SourcedTarget[], settings: BulkSettings, plan: PlanSizes): Promise<Outcomes<unknown>> {
  const [{ isAsnText }, { withLine }, { isRangeTarget, rangeFailure }] = await Promise.all([
    import('../engine/asn/lookup-asn.js'),
    import('../engine/bulk/bulk-lookup.js'),
    import('../engine/ip/ip-range-expand.js'),
  ]);
  const failure = (error: NetintelError, target: SourcedTarget) =>
    withLine(settings.maxExpand !== undefined && isRangeTarget(target.text) ? rangeFailure(target.text, settings.maxExpand) : error, target);
  const asn = group.filter((target) => isAsnText(target.text)).map((target) => target.text);
  const ips = group.filter((target) => !isAsnText(target.text)).map((target) => target.text);
  const [asnResults, ipResults] = await Promise.all([
    inBatches(asn, plan.batch, (batch) => failingAll(batch, () => ASN.api.batch!.send(remote, batch.map((text) => ({ text, line: 0 })), {}, plan))),
    inBatches(ips, plan.bulkMax ?? plan.batch, (batch) => ipRows(remote, batch, plan)),
  ]);
  let a = 0;
  let p = 0;
  return group.map((target) => {
    const outcome: Outcome<unknown> = isAsnText(target.text) ? asnResults[a++]! : ipResults[p++]!;
    return outcome.ok ? outcome : { ok: false, query: target.text, error: failure(outcome.error, target) };
  });
}

/** Addresses asked in one POST /api/bulk when the plan has it, else one GET /api/ipinfo each, a few at a time. */
async function ipRows(remote: RemoteCall, batch: readonly string[], plan: { bulkMax: number | null }): Promise<Outcomes<unknown>> {
  if (plan.bulkMax !== null) {
    const answer = remote.bulkAnswer('IpBulkAnswer', 'ip bulk answer');
    return failingAll(batch, async () => remote.bulkOutcomes<IpInfoRecord>((await remote.post('/api/bulk', { ips: batch }, answer)).body, batch, answer.name, 'ip'));
  }
  const ipApi = IP.api;
  const settings = { maxExpand: 0 };
  const record = async (ip: string) => {
    const found = ipApi.record!(await remote.get(ipApi.path, ipApi.query!(ip, settings), ipApi.expected!(remote)), remote, ip, settings);
    // The record of the address asked, as `ip` checks it (its mapping's subject).
    remote.answering('ip record', found, ip, ipApi.subject!(settings)!);
    return found;
  };
  const out: Outcomes<unknown> = new Array(batch.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(remote.concurrency, batch.length) }, async () => {
      while (next < batch.length) {
        const i = next++;
        out[i] = await settle(batch[i]!, () => record(batch[i]!));
      }
    }),
  );
  return out;
}

/** A batch's outcomes, or its failure as every target's. */
async function failingAll<R>(batch: readonly string[], send: () => Promise<Outcomes<R>>): Promise<Outcomes<R>> {
  try {
    return await send();
  } catch (error) {
    const failure = toNetintelError(error);
    return batch.map((query) => ({ ok: false as const, query, error: failure }));
  }
}

async function inBatches<R>(queries: readonly string[], size: number, send: (batch: string[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  for (let start = 0; start < queries.length; start += size) out.push(...(await send(queries.slice(start, start + size))));
  return out;
}
