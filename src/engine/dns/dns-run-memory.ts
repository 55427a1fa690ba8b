import type { NetintelError } from '../../errors.js';
import type { ResolverAddress } from './resolver-address.js';

/**
 * What one run learns about its DNS, shared by every transport made from
 * one engine context (a CLI run, a library client, a server), so that a
 * lookup does not pay again for what an earlier one found out:
 *
 * - A resolver that lets a query time out without answering anything else
 *   since that query was sent is demoted: it is asked after the others, and
 *   with a short probe instead of the full timeout, until it answers again.
 *   A name-specific silence (one slow authoritative server behind a healthy
 *   resolver) does not demote it, because its other replies keep coming.
 * - A DNSKEY or DS question of a DNSSEC validation that got no answer is
 *   remembered: the chain of the next name fails at once with the same
 *   error instead of waiting out the same timeout (every name's chain starts
 *   with the root's DNSKEY RRset).
 *
 * Both are forgotten after {@link DNS_MEMORY_MS}, so that a long run (a
 * server, a bulk run of hours) tries a resolver again once it may be back.
 */
export interface DnsRunMemory {
  /** The resolvers in the order to ask them: those in good standing first, demoted ones after, each group in the given order. */
  order(resolvers: readonly ResolverAddress[]): readonly ResolverAddress[];
  /** True while the resolver is demoted (asked last, with a probe of {@link DnsRunMemory.probeTimeoutMs}). */
  isDemoted(resolver: ResolverAddress): boolean;
  /** The deadline of an attempt to a demoted resolver, for attempts of `timeoutMs` to the others: the probe, or `timeoutMs` when that is shorter. */
  probeTimeoutMs(timeoutMs: number): number;
  /** A reply came from the resolver (any response code): it answers, so it is in good standing again. */
  answered(resolver: ResolverAddress): void;
  /**
   * A query sent to the resolver at `sentAt` (performance.now()) got no
   * reply within `timeoutMs`: the resolver is demoted unless it answered
   * something since `sentAt`.
   */
  timedOut(resolver: ResolverAddress, sentAt: number, timeoutMs: number): void;
  /** The error a DNSSEC chain question (`key`) failed with earlier in the run, if it did and is still remembered. */
  chainFailure(key: string): NetintelError | undefined;
  /** Remembers that a DNSSEC chain question failed. */
  rememberChainFailure(key: string, error: NetintelError): void;
}

/** How long a demotion or a failed chain question is remembered, in milliseconds. */
export const DNS_MEMORY_MS = 60_000;

/** The deadline of a query to a demoted resolver by default, in milliseconds: long enough for a resolver that answers at all. */
export const PROBE_TIMEOUT_MS = 1000;

/** Failed chain questions kept at most (the oldest is forgotten first); a run asks few distinct ones. */
const MAX_CHAIN_FAILURES = 512;

export interface DnsRunMemoryOptions {
  /** The probe of a demoted resolver, in milliseconds (default {@link PROBE_TIMEOUT_MS}). */
  probeMs?: number;
  /**
   * Told when a resolver is demoted for the first time in the run (its
   * label and the deadline it missed), so that a front end can say once
   * what to do about it; a listener that throws is ignored.
   */
  onDemoted?: (resolver: string, timeoutMs: number) => void;
}

export function createDnsRunMemory(options: DnsRunMemoryOptions = {}): DnsRunMemory {
  /** Per resolver label: when it last replied, and when it was demoted (null: in good standing). */
  const standing = new Map<string, { lastReplyAt: number; demotedAt: number | null }>();
  const told = new Set<string>();
  const chainFailures = new Map<string, { error: NetintelError; at: number }>();
  const probeMs = options.probeMs ?? PROBE_TIMEOUT_MS;

  const stateOf = (label: string) => {
    let state = standing.get(label);
    if (!state) {
      state = { lastReplyAt: -Infinity, demotedAt: null };
      standing.set(label, state);
    }
    return state;
  };
  const isDemoted = (resolver: ResolverAddress): boolean => {
    const state = standing.get(resolver.label);
    if (!state || state.demotedAt === null) return false;
    if (performance.now() - state.demotedAt < DNS_MEMORY_MS) return true;
    state.demotedAt = null;
    return false;
  };

  return {
    order(resolvers) {
      if (!resolvers.some(isDemoted)) return resolvers;
      return [...resolvers.filter((resolver) => !isDemoted(resolver)), ...resolvers.filter(isDemoted)];
    },
    isDemoted,
    probeTimeoutMs: (timeoutMs) => Math.min(timeoutMs, probeMs),
    answered(resolver) {
      const state = stateOf(resolver.label);
      state.lastReplyAt = performance.now();
      state.demotedAt = null;
    },
    timedOut(resolver, sentAt, timeoutMs) {
      const state = stateOf(resolver.label);
      if (state.lastReplyAt >= sentAt) return;
      if (state.demotedAt === null) state.demotedAt = performance.now();
      if (told.has(resolver.label)) return;
      told.add(resolver.label);
      try {
        options.onDemoted?.(resolver.label, timeoutMs);
      } catch {
        // Telling is best effort: the lookup goes on.
      }
    },
    chainFailure(key) {
      const entry = chainFailures.get(key);
      if (!entry) return undefined;
      if (performance.now() - entry.at < DNS_MEMORY_MS) return entry.error;
      chainFailures.delete(key);
      return undefined;
    },
    rememberChainFailure(key, error) {
      chainFailures.delete(key);
      chainFailures.set(key, { error, at: performance.now() });
      if (chainFailures.size > MAX_CHAIN_FAILURES) chainFailures.delete(chainFailures.keys().next().value!);
    },
  };
}
