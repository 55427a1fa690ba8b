import type { RecordType } from 'dns-packet';
import { NetintelError } from '../../errors.js';

/**
 * The record types `netintel dns` can ask for, in the order used for
 * display. The DNSSEC types (RFC 4034, RFC 5155), TLSA (RFC 6698) and
 * SVCB/HTTPS (RFC 9460) carry their data in RFC 3597 generic form; the
 * output layer presents them as dig does.
 */
export const DNS_RECORD_TYPES = [
  'A', 'AAAA', 'CNAME', 'MX', 'NS', 'SOA', 'TXT', 'CAA', 'PTR', 'SRV', 'DS', 'DNSKEY', 'RRSIG', 'NSEC', 'NSEC3', 'TLSA', 'SVCB', 'HTTPS',
] as const;

/** One record type `netintel dns` can ask for. */
export type DnsRecordType = (typeof DNS_RECORD_TYPES)[number];

/**
 * Mnemonics of the other record types that can appear in an answer section
 * and that dns-packet names; netintel shows their data in generic form.
 */
export const OTHER_DNS_TYPE_NAMES = [
  'AFSDB', 'ANY', 'APL', 'AXFR', 'CDNSKEY', 'CDS', 'CERT', 'DHCID', 'DLV', 'DNAME', 'HINFO',
  'HIP', 'IPSECKEY', 'IXFR', 'KEY', 'KX', 'LOC', 'NAPTR', 'NSEC3PARAM', 'NULL', 'RP',
  'SIG', 'SPF', 'SSHFP', 'TA', 'TKEY', 'TSIG', 'URI',
] as const;

/**
 * The type of a record netintel does not model: a mnemonic from
 * `OTHER_DNS_TYPE_NAMES` or the RFC 3597 `TYPEnnn` form. Disjoint from
 * {@link DnsRecordType}, so a `switch` on an answer's type narrows its data.
 */
export type OtherDnsType = (typeof OTHER_DNS_TYPE_NAMES)[number] | `TYPE${number}`;

/** What a caller may ask for: a record type, or `ALL` (see `DNS_ALL_TYPES`). */
export type DnsQueryType = DnsRecordType | 'ALL';

/**
 * The types `ALL` stands for, queried concurrently as separate questions:
 * QTYPE ANY is not a way to get "all records" (RFC 8482 lets servers answer
 * it with one arbitrary RRset or a synthesised HINFO).
 */
export const DNS_ALL_TYPES: readonly DnsRecordType[] = ['A', 'AAAA', 'CNAME', 'MX', 'NS', 'SOA', 'TXT', 'CAA'];

/**
 * The type as dns-packet encodes it: SVCB (64) and HTTPS (65) are newer
 * than its type table and go by its generic `UNKNOWN_<n>` names.
 */
export function wireRecordType(type: DnsRecordType): RecordType {
  if (type === 'SVCB') return 'UNKNOWN_64' as RecordType;
  if (type === 'HTTPS') return 'UNKNOWN_65' as RecordType;
  return type;
}

/** True when `value` is a record type `netintel dns` supports (exact, upper case). */
export function isDnsRecordType(value: string): value is DnsRecordType {
  return (DNS_RECORD_TYPES as readonly string[]).includes(value);
}

/**
 * Expands `ALL` and removes duplicates, keeping first-seen order.
 * `['MX', 'ALL']` gives MX first, then the rest of `DNS_ALL_TYPES`.
 */
export function expandDnsTypes(types: readonly DnsQueryType[]): DnsRecordType[] {
  const expanded = new Set<DnsRecordType>();
  for (const type of types) {
    if (type === 'ALL') DNS_ALL_TYPES.forEach((t) => expanded.add(t));
    else expanded.add(type);
  }
  return [...expanded];
}

/**
 * Parses a type list as users write it: `mx`, `A,AAAA`, `a, txt`, `all`
 * (case-insensitive, comma-separated). ALL is not expanded here.
 *
 * @throws NetintelError `usage` naming the unknown type and listing the supported ones.
 */
export function parseDnsTypes(text: string): DnsQueryType[] {
  const parts = text.split(',').map((part) => part.trim().toUpperCase());
  const types: DnsQueryType[] = [];
  for (const part of parts) {
    if (part === 'ALL' || isDnsRecordType(part)) {
      types.push(part);
      continue;
    }
    const shown = part === '' ? 'an empty type' : JSON.stringify(part);
    throw new NetintelError(
      'usage',
      `unsupported DNS record type ${shown} in ${JSON.stringify(text)}; use one or more of ${DNS_RECORD_TYPES.join(', ')} or ALL`,
      { details: { type: text } },
    );
  }
  return types;
}
