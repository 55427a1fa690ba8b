import type { DnsTransport } from './dns-transport.js';
import { parseDnsTarget, type DnsTarget } from './dns-name.js';
import type { DnsResult } from './dns-result.js';
import { expandDnsTypes, type DnsQueryType, type DnsRecordType } from './dns-type.js';
import { queryRecords } from './query-records.js';

/** A `dns` lookup as the CLI and `GET /api/dns-lookup` ask for it. */
export interface ResolveDnsRequest {
  /** A domain name (IDN and trailing dot accepted) or an IP address (reverse lookup). */
  domain: string;
  /** Types to ask; `ALL` expands to A AAAA CNAME MX NS SOA TXT CAA. Default: `PTR` for an IP, else `A`. */
  types?: readonly DnsQueryType[];
}

/**
 * Looks up `domain` for each requested type, the types concurrently, and
 * gives one result per type in the order asked. NXDOMAIN and NODATA are
 * results (`status`), not errors.
 *
 * The target is validated before any query is sent. If any type fails, the
 * call waits for the others to finish and throws the first failure in type
 * order; use {@link resolveDnsType} to keep per-type failures apart.
 *
 * @throws NetintelError `invalid_input` for a bad name; `upstream`
 *   (SERVFAIL, REFUSED; details carry rcode and resolver), `timeout` or
 *   `unreachable` when no resolver answered.
 */
export async function resolveDns(transport: DnsTransport, request: ResolveDnsRequest): Promise<DnsResult[]> {
  const target = parseDnsTarget(request.domain);
  const types = expandDnsTypes(request.types ?? [target.reverse ? 'PTR' : 'A']);
  const settled = await Promise.allSettled(types.map((type) => resolveDnsType(transport, target, type)));
  const results: DnsResult[] = [];
  for (const outcome of settled) {
    if (outcome.status === 'rejected') throw outcome.reason;
    results.push(outcome.value);
  }
  return results;
}

/**
 * One question of a lookup: `type` at the name of an already parsed target
 * (see parseDnsTarget).
 *
 * @throws NetintelError as {@link resolveDns}.
 */
export async function resolveDnsType(
  transport: DnsTransport,
  target: DnsTarget,
  type: DnsRecordType,
): Promise<DnsResult> {
  const set = await queryRecords(transport, target.ascii, type);
  return {
    kind: 'dns',
    target: target.target,
    domain: target.ascii,
    domainUnicode: target.unicode,
    type,
    status: set.status,
    rcode: set.rcode,
    answers: set.answers,
    resolver: set.resolver,
    transport: set.transport,
    latencyMs: set.latencyMs,
  };
}
