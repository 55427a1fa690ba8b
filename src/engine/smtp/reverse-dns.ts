import type { EngineContext } from '../context.js';
import { canonicalIp, reverseName } from '../dns/dns-name.js';
import { queryRecords } from '../dns/query-records.js';
import { failureJson, type FailureJson } from '../mail/mail-errors.js';
import type { SmtpReverseDns } from './smtp-result.js';

/** At most this many PTR names are checked forward (a PTR set is normally one name). */
const MAX_NAMES_CONFIRMED = 4;

/** The reverse DNS of an address, and why a forward lookup failed when that left FCrDNS unknown. */
export interface ReverseDnsOutcome {
  reverse: SmtpReverseDns;
  /** The first failed forward lookup, when no name confirmed the address and one could not be asked; else null. */
  forwardError: FailureJson | null;
}

/**
 * The PTR names of an address and whether one of them resolves back to it
 * (forward-confirmed reverse DNS, RFC 8601 §3 "iprev"), asked of the
 * context's resolvers. A name whose forward lookup failed neither confirms
 * nor denies: with no other name confirming, FCrDNS is unknown (null).
 *
 * @throws NetintelError from the DNS transport (timeout, upstream, unreachable) for the PTR lookup.
 */
export async function resolveReverseDns(ctx: EngineContext, address: string): Promise<ReverseDnsOutcome> {
  const transport = await ctx.dnsTransport();
  const ptr = await queryRecords(transport, reverseName(address), 'PTR');
  const names = [...new Set(ptr.records.map((name) => name.replace(/\.$/, '').toLowerCase()))];
  if (names.length === 0) return { reverse: { names, forward_confirmed: null }, forwardError: null };
  const wanted = canonicalIp(address);
  const type = wanted.includes(':') ? 'AAAA' : 'A';
  const confirmations = await Promise.all(
    names.slice(0, MAX_NAMES_CONFIRMED).map(async (name): Promise<boolean | FailureJson> => {
      try {
        const forward = await queryRecords(transport, name, type);
        return forward.records.some((ip) => canonicalIp(ip) === wanted);
      } catch (error) {
        return failureJson(error);
      }
    }),
  );
  if (confirmations.includes(true)) return { reverse: { names, forward_confirmed: true }, forwardError: null };
  const failed = confirmations.find((item): item is FailureJson => typeof item === 'object');
  return failed ? { reverse: { names, forward_confirmed: null }, forwardError: failed } : { reverse: { names, forward_confirmed: false }, forwardError: null };
}
