import type { DnsTransport } from './dns-transport.js';
import { parseDnsTarget, type DnsTarget } from './dns-name.js';
import type { DnsResult } from './dns-result.js';
import { expandDnsTypes, type DnsQueryType, type DnsRecordType } from './dns-type.js';
import { answerStatus, asciiName } from './query-records.js';

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
export function resolveDnsType(transport: DnsTransport, target: DnsTarget, type: DnsRecordType): Promise<DnsResult> {
  let name: string;
  try {
    // target.ascii is normalised already; asciiName only re-checks a name
    // that is not plainly in normal form (it throws where it always did).
    name = asciiName(target.ascii);
  } catch (error) {
    return Promise.reject(error);
  }
  // A plain then() rather than an async function: one promise less per
  // question, which a bulk run asks tens of thousands of times.
  return transport.query(name, type).then((exchange) => {
    const answers = exchange.answers;
    let matching = 0;
    for (const answer of answers) if (answer.type === type) matching += 1;
    const result: DnsResult = {
      kind: 'dns',
      target: target.target,
      domain: target.ascii,
      domainUnicode: target.unicode,
      type,
      status: answerStatus(exchange.rcode, matching),
      rcode: exchange.rcode,
      answers,
      resolver: exchange.resolver,
      transport: exchange.transport,
      latencyMs: exchange.latencyMs,
    };
    return result;
  });
}
