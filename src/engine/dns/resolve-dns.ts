import { toNetintelError, type NetintelError } from '../../errors.js';
import type { DnsTransport } from './dns-transport.js';
import { parseDnsTarget, type DnsTarget } from './dns-name.js';
import type { DnsResult } from './dns-result.js';
import { expandDnsTypes, wireRecordType, type DnsQueryType, type DnsRecordType } from './dns-type.js';
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
  return new Promise((resolve, reject) => {
    resolveDnsTypeThen(transport, target, type, (error, result) => (error === null ? resolve(result!) : reject(error)));
  });
}

/** A record, or the error that stopped its question. */
export type DnsTypeSettled = DnsResult | NetintelError;

/**
 * Every type of one parsed target, asked concurrently; `done` gets, once
 * all are in, each type's record or error in the order asked. A type that
 * fails does not hide the others. The path of bulk runs: callbacks instead
 * of a promise per question, as {@link DnsTransport.ask}. `done` may be
 * called before this returns (no types, or names that cannot be encoded).
 */
export function resolveDnsTypesSettled(
  transport: DnsTransport,
  target: DnsTarget,
  types: readonly DnsRecordType[],
  done: (settled: DnsTypeSettled[]) => void,
): void {
  const settled = new Array<DnsTypeSettled>(types.length);
  let left = types.length;
  if (left === 0) {
    done(settled);
    return;
  }
  for (let i = 0; i < types.length; i++) {
    resolveDnsTypeThen(transport, target, types[i]!, (error, result) => {
      settled[i] = error ?? result!;
      if (--left === 0) done(settled);
    });
  }
}

/** One question, reported to a callback: an error, or null and the record. */
function resolveDnsTypeThen(
  transport: DnsTransport,
  target: DnsTarget,
  type: DnsRecordType,
  done: (error: NetintelError | null, result: DnsResult | null) => void,
): void {
  let name: string;
  try {
    // target.ascii is normalised already; asciiName only re-checks a name
    // that is not plainly in normal form (it throws where it always did).
    name = asciiName(target.ascii);
  } catch (error) {
    done(toNetintelError(error), null);
    return;
  }
  transport.ask(name, wireRecordType(type), (error, exchange) => {
    if (error !== null) {
      done(error, null);
      return;
    }
    const answers = exchange!.answers;
    let matching = 0;
    for (const answer of answers) if (answer.type === type) matching += 1;
    done(null, {
      kind: 'dns',
      target: target.target,
      domain: target.ascii,
      domain_unicode: target.unicode,
      type,
      status: answerStatus(exchange!.rcode, matching),
      rcode: exchange!.rcode,
      answers,
      ignored_answers: exchange!.ignored_answers,
      resolver: exchange!.resolver,
      transport: exchange!.transport,
      latency_ms: exchange!.latencyMs,
    });
  });
}
