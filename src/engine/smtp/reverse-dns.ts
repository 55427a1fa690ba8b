import type { EngineContext } from '../context.js';
import { canonicalIp, reverseName } from '../dns/dns-name.js';
import { queryRecords } from '../dns/query-records.js';
import { failureJson, type FailureJson } from '../mail/mail-errors.js';
import type { SmtpReverseDns } from './smtp-result.js';

/**
 * At most this many PTR names are checked forward, as SPF's ptr mechanism
 * and %{p} macro check (RFC 7208 §4.6.4); a PTR set is normally one name.
 */
const MAX_NAMES_CONFIRMED = 10;

/** Asks one record type at a name and gives its records as text (PTR names, addresses). */
export type AskRecords = (name: string, type: 'PTR' | 'A' | 'AAAA') => Promise<{ records: readonly string[] }>;

/** The PTR names of an address and whether one resolves back to it. */
export interface ForwardConfirmation {
  /** PTR names, lower case, without the root's dot, each once. */
  names: string[];
  /** A name resolves back to the address: true; none does, or there is no name: false; none does and a forward lookup failed: null (unknown). */
  confirmed: boolean | null;
  /** The first failed forward lookup when that left `confirmed` null, else null. */
  forwardError: FailureJson | null;
}

/**
 * Forward-confirmed reverse DNS (FCrDNS, RFC 8601 §3 "iprev"): the PTR names
 * of `address`, each of the first ten asked for the address back. A name
 * whose forward lookup failed neither confirms nor denies. The one check
 * of this for `mx` (each address of a host) and `smtp` (the probed address).
 *
 * @throws what `ask` throws for the PTR lookup: the reverse DNS is then unknown.
 */
export async function confirmReverseDns(ask: AskRecords, address: string): Promise<ForwardConfirmation> {
  const ptr = await ask(reverseName(address), 'PTR');
  const names = [...new Set(ptr.records.map((name) => name.replace(/\.$/, '').toLowerCase()))];
  if (names.length === 0) return { names, confirmed: false, forwardError: null };
  const wanted = canonicalIp(address);
  const type = wanted.includes(':') ? 'AAAA' : 'A';
  const confirmations = await Promise.all(
    names.slice(0, MAX_NAMES_CONFIRMED).map(async (name): Promise<boolean | FailureJson> => {
      try {
        const forward = await ask(name, type);
        return forward.records.some((ip) => sameAddress(ip, wanted));
      } catch (error) {
        return failureJson(error);
      }
    }),
  );
  if (confirmations.includes(true)) return { names, confirmed: true, forwardError: null };
  const failed = confirmations.find((item): item is FailureJson => typeof item === 'object');
  return failed ? { names, confirmed: null, forwardError: failed } : { names, confirmed: false, forwardError: null };
}

function sameAddress(text: string, wanted: string): boolean {
  try {
    return canonicalIp(text) === wanted;
  } catch {
    return false;
  }
}

/** The reverse DNS of an address, and why a forward lookup failed when that left FCrDNS unknown. */
export interface ReverseDnsOutcome {
  reverse: SmtpReverseDns;
  /** The first failed forward lookup, when no name confirmed the address and one could not be asked; else null. */
  forwardError: FailureJson | null;
}

/**
 * {@link confirmReverseDns} asked of the context's resolvers, in the shape of
 * the SMTP result (`forward_confirmed` null when there is no PTR name).
 *
 * @throws NetintelError from the DNS transport (timeout, upstream, unreachable) for the PTR lookup.
 */
export async function resolveReverseDns(ctx: EngineContext, address: string): Promise<ReverseDnsOutcome> {
  const transport = await ctx.dnsTransport();
  const { names, confirmed, forwardError } = await confirmReverseDns((name, type) => queryRecords(transport, name, type), address);
  return { reverse: { names, forward_confirmed: names.length === 0 ? null : confirmed }, forwardError };
}
