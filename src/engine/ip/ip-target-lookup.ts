import type { EngineContext } from '../context.js';
import { toNetintelError } from '../../errors.js';
import type { Outcome } from '../outcome.js';
import { ipDatabasesFor } from './ip-databases.js';
import { isIpAddress } from './ip-address.js';
import type { IpInfoRecord } from './ip-record.js';
import { createIpTextLookup, type IpLookupOptions } from './lookup-ip.js';

/** After this many lookups a run loads the datasets into memory: per-lookup reads would then cost more. */
export const MEMORY_MODE_AFTER = 2048;

/** A lookup that moves from positioned reads to the in-memory datasets as a run grows. */
export interface AdaptiveIpLookup {
  (input: string): IpInfoRecord;
  /**
   * Announces `addresses` more lookups, known ahead (a batch of lines read
   * at once): when they take the run to {@link MEMORY_MODE_AFTER}, the
   * datasets load now, before the first of them. A long list then never
   * starts with positioned reads, whose lookup code and objects V8 would
   * otherwise see first and keep compiled for both kinds of dataset.
   * Returns true once the lookup is in memory (nothing more to announce).
   */
  expect(addresses: number): boolean;
}

/**
 * The lookup a run of many targets uses: positioned reads for the first
 * couple of thousand addresses (a short list answers at once), the
 * in-memory datasets after that, or from the start when the run announces
 * that many (a long list runs at full speed).
 */
export function createAdaptiveIpLookup(ctx: EngineContext, options: AdaptiveLookupOptions = {}): AdaptiveIpLookup {
  const { inMemoryFromStart = false, ...lookupOptions } = options;
  let inMemory = inMemoryFromStart;
  let lookup = createIpTextLookup(ipDatabasesFor(ctx, inMemory ? 'memory' : 'pread'), lookupOptions);
  let count = 0;
  const toMemory = (): void => {
    inMemory = true;
    lookup = createIpTextLookup(ipDatabasesFor(ctx, 'memory'), lookupOptions);
  };
  const adaptive = ((input) => {
    if (!inMemory && ++count === MEMORY_MODE_AFTER) toMemory();
    return lookup(input);
  }) as AdaptiveIpLookup;
  adaptive.expect = (addresses) => {
    if (!inMemory && count + addresses >= MEMORY_MODE_AFTER) toMemory();
    return inMemory;
  };
  return adaptive;
}

export interface AdaptiveLookupOptions extends IpLookupOptions {
  /** In memory from the first lookup (a run known to be long, such as a bulk worker thread's). */
  inMemoryFromStart?: boolean;
}

/** Resolves a host name to its addresses (A and AAAA); provided by the DNS engine. */
export type HostResolver = (name: string) => Promise<string[]>;

/**
 * True when an `ip` target is read as a host name (resolved to each of its
 * addresses) rather than as an address: it has a letter and no colon, slash
 * or space. Anything else gets exactly one outcome.
 */
export function isHostNameTarget(query: string): boolean {
  return !isIpAddress(query) && /[a-z]/i.test(query) && !/[:/\s]/.test(query);
}

/** The outcome of an `ip` target that is not a host name: its record, or the error (an invalid address). */
export function addressOutcome(lookup: (input: string) => IpInfoRecord, query: string): Outcome<IpInfoRecord> {
  try {
    return { ok: true, query, value: lookup(query) };
  } catch (error) {
    return { ok: false, query, error: toNetintelError(error) };
  }
}

/**
 * The outcomes of one `ip` target: one for an address, one per address for a
 * host name (every A and AAAA record), one error outcome when it fails.
 */
export function ipTargetOutcomes(
  lookup: (input: string) => IpInfoRecord,
  resolveHost: HostResolver,
  query: string,
): Array<Outcome<IpInfoRecord>> | Promise<Array<Outcome<IpInfoRecord>>> {
  if (!isHostNameTarget(query)) return [addressOutcome(lookup, query)];
  return resolveHost(query).then(
    (addresses) => addresses.map((address): Outcome<IpInfoRecord> => {
      try {
        return { ok: true, query, value: lookup(address) };
      } catch (error) {
        return { ok: false, query, error: toNetintelError(error) };
      }
    }),
    (error: unknown) => [{ ok: false, query, error: toNetintelError(error) }],
  );
}
