import type { DnsTransport } from './dns-transport.js';
import { isPlainAsciiName, normaliseDomain } from './dns-name.js';
import type { DnsAnswer, DnsDataByType, DnsStatus, DnsTransportKind } from './dns-result.js';
import { wireRecordType, type DnsRecordType } from './dns-type.js';

/** The records of one type at one name, for engine code that needs the data rather than a display record. */
export interface DnsRecordSet<T extends DnsRecordType> {
  /** The name queried, ASCII, no trailing dot. */
  name: string;
  type: T;
  status: DnsStatus;
  /** `NOERROR` or `NXDOMAIN`. */
  rcode: string;
  /** The data of the answer records of type `type`, in answer order (CNAMEs leading to them left out). */
  records: DnsDataByType[T][];
  /** The lowest TTL among `records` in seconds, null when there are none. */
  ttl_seconds: number | null;
  /** Every record of the answer section, the CNAME chain included. */
  answers: DnsAnswer[];
  resolver: string;
  transport: DnsTransportKind;
  latency_ms: number;
}

/**
 * Asks one question and returns the typed data of the asked type: the
 * building block for MX checks, SPF (`queryRecords(t, name, 'TXT')` and
 * read `.text`), DNSBL lookups (`A` of `2.0.0.127.zen.example`, where
 * `status: 'nxdomain'` means "not listed") and the like.
 *
 * `name` may be a Unicode name; it is normalised first.
 *
 * @throws NetintelError `invalid_input` for a bad name; `upstream`,
 *   `timeout`, `unreachable` from the transport (see DnsTransport.query).
 */
export async function queryRecords<T extends DnsRecordType>(
  transport: DnsTransport,
  name: string,
  type: T,
): Promise<DnsRecordSet<T>> {
  const ascii = asciiName(name);
  const exchange = await transport.query(ascii, wireRecordType(type));
  const answers = exchange.answers;
  const records: Array<DnsDataByType[T]> = [];
  let ttlSeconds: number | null = null;
  for (const answer of answers) {
    if (answer.type !== type) continue;
    records.push(answer.data as DnsDataByType[T]);
    if (ttlSeconds === null || answer.ttl_seconds < ttlSeconds) ttlSeconds = answer.ttl_seconds;
  }
  return {
    name: ascii,
    type,
    status: answerStatus(exchange.rcode, records.length),
    rcode: exchange.rcode,
    records,
    ttl_seconds: ttlSeconds,
    answers,
    resolver: exchange.resolver,
    transport: exchange.transport,
    latency_ms: exchange.latencyMs,
  };
}

/** How a question came out: NXDOMAIN, else whether any record of the asked type came back. */
export function answerStatus(rcode: string, matching: number): DnsStatus {
  return rcode === 'NXDOMAIN' ? 'nxdomain' : matching > 0 ? 'answer' : 'nodata';
}

/**
 * The ASCII form of a name as normaliseDomain gives it. A name already in
 * that form (lower-case letters, digits, `-` and `_`, no punycode label)
 * is its own normal form and skips the work.
 *
 * @throws NetintelError `invalid_input` as normaliseDomain.
 */
export function asciiName(name: string): string {
  return isPlainAsciiName(name) ? name : normaliseDomain(name).ascii;
}
