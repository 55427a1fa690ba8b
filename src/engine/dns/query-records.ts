import type { DnsTransport } from './dns-transport.js';
import { normaliseDomain } from './dns-name.js';
import { toDnsAnswer } from './dns-records.js';
import type { DnsAnswer, DnsDataByType, DnsStatus, DnsTransportKind } from './dns-result.js';
import type { DnsRecordType } from './dns-type.js';

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
  ttlSeconds: number | null;
  /** Every record of the answer section, the CNAME chain included. */
  answers: DnsAnswer[];
  resolver: string;
  transport: DnsTransportKind;
  latencyMs: number;
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
  const ascii = normaliseDomain(name).ascii;
  const exchange = await transport.query(ascii, type);
  const answers: DnsAnswer[] = [];
  for (const rr of exchange.response.answers ?? []) {
    const answer = toDnsAnswer(rr);
    if (answer) answers.push(answer);
  }
  const matching = answers.filter((answer) => answer.type === type);
  const status: DnsStatus = exchange.rcode === 'NXDOMAIN' ? 'nxdomain' : matching.length > 0 ? 'answer' : 'nodata';
  return {
    name: ascii,
    type,
    status,
    rcode: exchange.rcode,
    records: matching.map((answer) => answer.data as DnsDataByType[T]),
    ttlSeconds: matching.length > 0 ? Math.min(...matching.map((answer) => answer.ttlSeconds)) : null,
    answers,
    resolver: exchange.resolver,
    transport: exchange.transport,
    latencyMs: exchange.latencyMs,
  };
}
