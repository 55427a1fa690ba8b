import type { EngineContext } from '../context.js';
import { canonicalIp, reverseName } from '../dns/dns-name.js';
import { queryRecords } from '../dns/query-records.js';
import type { SmtpReverseDns } from './smtp-result.js';

/** At most this many PTR names are checked forward (a PTR set is normally one name). */
const MAX_NAMES_CONFIRMED = 4;

/**
 * The PTR names of an address and whether one of them resolves back to it
 * (forward-confirmed reverse DNS, RFC 8601 §3 "iprev"), asked of the
 * context's resolvers.
 *
 * @throws NetintelError from the DNS transport (timeout, upstream, unreachable).
 */
export async function resolveReverseDns(ctx: EngineContext, address: string): Promise<SmtpReverseDns> {
  const transport = await ctx.dnsTransport();
  const ptr = await queryRecords(transport, reverseName(address), 'PTR');
  const names = [...new Set(ptr.records.map((name) => name.replace(/\.$/, '').toLowerCase()))];
  if (names.length === 0) return { names, forward_confirmed: null };
  const wanted = canonicalIp(address);
  const type = wanted.includes(':') ? 'AAAA' : 'A';
  const confirmations = await Promise.all(
    names.slice(0, MAX_NAMES_CONFIRMED).map(async (name) => {
      try {
        const forward = await queryRecords(transport, name, type);
        return forward.records.some((ip) => canonicalIp(ip) === wanted);
      } catch {
        return false;
      }
    }),
  );
  return { names, forward_confirmed: confirmations.some(Boolean) };
}
