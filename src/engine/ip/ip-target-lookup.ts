import type { EngineContext } from '../context.js';
import { toNetintelError } from '../../errors.js';
import type { Outcome } from '../outcome.js';
import { ipDatabasesFor } from './ip-databases.js';
import { isIpAddress } from '../address/ip-address.js';
import type { IpInfoRecord } from './ip-record.js';
import { createIpTextLookup, type IpLookupOptions } from './lookup-ip.js';

/** After this many lookups a run loads the datasets into memory: per-lookup reads would then cost more. */
const MEMORY_MODE_AFTER = 2048;

/**
 * The lookup a run of many targets uses: positioned reads for the first
 * couple of thousand addresses (a short list answers at once), the
 * in-memory datasets after that (a long list runs at full speed).
 */
export function createAdaptiveIpLookup(ctx: EngineContext, options: AdaptiveLookupOptions = {}): (input: string) => IpInfoRecord {
  const { inMemoryFromStart = false, ...lookupOptions } = options;
  let lookup = createIpTextLookup(ipDatabasesFor(ctx, inMemoryFromStart ? 'memory' : 'pread'), lookupOptions);
  let count = inMemoryFromStart ? MEMORY_MODE_AFTER : 0;
  return (input) => {
    if (++count === MEMORY_MODE_AFTER) lookup = createIpTextLookup(ipDatabasesFor(ctx, 'memory'), lookupOptions);
    return lookup(input);
  };
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
  let pending: Promise<string[]>;
  try {
    pending = resolveHost(query);
  } catch (error) {
    // A resolver that throws instead of rejecting still gives one outcome.
    return [{ ok: false, query, error: toNetintelError(error) }];
  }
  return pending.then(
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
