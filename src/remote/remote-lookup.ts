import { flattenBatches, mapOrdered } from '../engine/bulk/map-ordered.js';
import type { Target } from '../engine/bulk/read-targets.js';
import { isHostNameTarget } from '../engine/ip/ip-target-lookup.js';
import type { Outcome } from '../engine/outcome.js';
import { NetintelError, toNetintelError } from '../errors.js';
import type { ManyTargets, TargetSource } from '../operations/engine.js';
import type { ApiBatch, ApiMapping, Lookup, Outcomes, PlanSizes, RemoteCall } from '../operations/operation.js';

/**
 * The lookup of an operation asked of a server, from its API mapping: one
 * request per target (a host name: one per address, resolved by the
 * server), or the mapping's own call; many targets at most the remote
 * engine's concurrency at once, or in the API's bulk form where it applies.
 * Like a local lookup it never rejects: a failure is the target's outcome.
 */
export function remoteLookup<S, R>(remote: RemoteCall, api: ApiMapping<S, R>, settings: S): Lookup<R> {
  const request = async (target: string | null): Promise<R> => {
    if (api.query === undefined || api.method !== 'GET') throw new NetintelError('internal', `${api.method} ${api.path} has no request of one target`);
    const response = await remote.get(api.path, api.query(target, settings), api.expected?.(remote));
    const record = api.record ? api.record(response, remote, target, settings) : (response.body as R);
    const subject = api.subject?.(settings) ?? null;
    if (target !== null && subject !== null) remote.answering(answerName(api, remote), record, target, subject);
    return record;
  };
  const one = async (target: string): Promise<Outcomes<R>> => {
    if (api.call) return api.call(remote, target, settings).catch((error: unknown) => [failure(target, error)]);
    if (api.hostNames && isHostNameTarget(target)) {
      let addresses: string[];
      try {
        addresses = await remote.hostAddresses(target);
      } catch (error) {
        return [failure(target, error)];
      }
      return Promise.all(addresses.map((address) => settle(target, () => request(address))));
    }
    return [await settle(target, () => request(target))];
  };
  const lookup: Lookup<R> = one;
  const { caller, batch } = api;
  if (caller) {
    // The path asked without a target answers for the caller's own address, as the server sees it.
    lookup.ownAddress = async () => {
      const outcome = await settle('me', () => request(null));
      return [outcome.ok ? { ...outcome, query: caller(outcome.value) } : outcome];
    };
  }
  lookup.concurrency = remote.concurrency;
  if (batch) {
    lookup.all = <T extends Target>(targets: TargetSource<T>, many: ManyTargets) =>
      batch.applies(settings, many.list) ? inGroups(remote, batch, settings, targets) : flattenBatches(mapOrdered(targets, (target) => one(target.text), Math.min(many.concurrency, remote.concurrency)));
  }
  return lookup;
}

/**
 * Targets re-cut into groups of the plan's size, each one request of the
 * bulk form, answered in input order. The plan is asked when the first
 * target arrives (before, when the run cannot start without it); when it
 * cannot be had, each target fails as the request did.
 */
async function* inGroups<S, R, T extends Target>(remote: RemoteCall, batch: ApiBatch<S, R>, settings: S, targets: TargetSource<T>): AsyncGenerator<Array<Outcome<R>>> {
  let plan: PlanSizes | undefined = batch.stopsWithoutPlan ? await remote.plan() : undefined;
  let planFailure: NetintelError | undefined;
  const send = async (group: readonly T[]): Promise<Outcomes<R>> => {
    if (plan === undefined) return group.map((target) => failure(target.text, planFailure));
    try {
      return await batch.send(remote, group, settings, plan);
    } catch (error) {
      const failed = toNetintelError(error);
      return group.map((target) => ({ ok: false as const, query: target.text, error: failed }));
    }
  };
  let pending: T[] = [];
  for await (const chunk of targets) {
    pending.push(...chunk);
    if (plan === undefined && planFailure === undefined) {
      try {
        plan = await remote.plan();
      } catch (error) {
        planFailure = toNetintelError(error);
      }
    }
    const size = plan === undefined ? 1 : batch.size(plan);
    while (pending.length >= size) {
      const group = pending.slice(0, size);
      pending = pending.slice(size);
      yield await send(group);
    }
  }
  if (pending.length > 0) yield await send(pending);
}

/** What a record of the mapping's path is called in a message about it. */
function answerName<S, R>(api: ApiMapping<S, R>, remote: RemoteCall): string {
  return api.expected?.(remote).name ?? `${api.method} ${api.path} answer`;
}

async function settle<R>(query: string, work: () => Promise<R>): Promise<Outcome<R>> {
  try {
    return { ok: true, query, value: await work() };
  } catch (error) {
    return failure(query, error);
  }
}

function failure(query: string, error: unknown): Outcome<never> {
  return { ok: false, query, error: toNetintelError(error) };
}
