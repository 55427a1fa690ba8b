import type { EngineContext } from '../context.js';
import { parseIpAddress } from '../address/ip-address.js';
import { parseDnsTarget } from './dns-name.js';
import type { DnsStatus } from './dns-result.js';
import { resolveDnsType } from './resolve-dns.js';

/** One name a PTR record of the address points to. */
export interface PtrName {
  /** The host name, ASCII, no trailing dot. */
  name: string;
  /** The record's time to live in whole seconds, as received. */
  ttl_seconds: number;
}

/** The reverse DNS of one address: the names its PTR records give (RFC 1035 §3.5, RFC 3596 §2.5). */
export interface PtrResult {
  kind: 'ptr';
  /** The address asked, in canonical text (RFC 5952 for IPv6). */
  ip: string;
  /** The name queried: the address's in-addr.arpa or ip6.arpa name. */
  reverse_name: string;
  /** answer: at least one PTR record; nodata: the name exists without one; nxdomain: no such name. */
  status: DnsStatus;
  /** The PTR names in the order the answer gave them. */
  names: PtrName[];
  /** The resolver that answered, `host:port` or `[v6]:port`. */
  resolver: string;
}

/**
 * The PTR names of an IP address, with their TTLs, from the context's
 * resolvers. NXDOMAIN and NODATA are results (`status`), not errors.
 *
 * @throws NetintelError `invalid_input` for text that is not an IP address;
 *   `upstream`, `timeout` or `unreachable` when no resolver answered.
 */
export async function lookupPtr(ctx: EngineContext, address: string): Promise<PtrResult> {
  const ip = parseIpAddress(address.trim()).text;
  const target = parseDnsTarget(ip);
  const result = await resolveDnsType(await ctx.dnsTransport(), target, 'PTR');
  const names = result.answers.flatMap((answer) => (answer.type === 'PTR' ? [{ name: answer.data.replace(/\.$/, ''), ttl_seconds: answer.ttl_seconds }] : []));
  return { kind: 'ptr', ip, reverse_name: result.domain, status: result.status, names, resolver: result.resolver };
}
