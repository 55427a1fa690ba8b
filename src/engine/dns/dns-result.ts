import type { DnsRecordType, OtherDnsType } from './dns-type.js';

/** MX data (RFC 1035 §3.3.9). A null MX (RFC 7505) has exchange `.`. */
export interface DnsMxData {
  preference: number;
  exchange: string;
}

/** SOA data (RFC 1035 §3.3.13); the timers are in seconds. */
export interface DnsSoaData {
  mname: string;
  /** The responsible mailbox in name form (`hostmaster.example.com`). */
  rname: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  /** Negative-caching TTL (RFC 2308 §4). */
  minimum: number;
}

/**
 * TXT data. One record holds one or more character strings of at most 255
 * octets each (RFC 1035 §3.3.14); SPF (RFC 7208 §3.3) and DKIM read them
 * concatenated without separator.
 */
export interface DnsTxtData {
  /** The character strings joined with nothing in between, decoded as UTF-8. */
  text: string;
  /** The character strings as published, each decoded as UTF-8. */
  strings: string[];
}

/** CAA data (RFC 8659 §4.1). Bit 128 of `flags` is the issuer-critical flag. */
export interface DnsCaaData {
  flags: number;
  tag: string;
  value: string;
}

/** SRV data (RFC 2782). */
export interface DnsSrvData {
  priority: number;
  weight: number;
  port: number;
  target: string;
}

/** The typed `data` of each supported record type; names carry no trailing dot. */
export interface DnsDataByType {
  A: string;
  AAAA: string;
  CNAME: string;
  NS: string;
  PTR: string;
  MX: DnsMxData;
  SOA: DnsSoaData;
  TXT: DnsTxtData;
  CAA: DnsCaaData;
  SRV: DnsSrvData;
  /** The DNSSEC types, TLSA and SVCB/HTTPS: RFC 3597 §5 generic form, `\\# <length> <hex>`. */
  DS: string;
  DNSKEY: string;
  RRSIG: string;
  NSEC: string;
  NSEC3: string;
  TLSA: string;
  SVCB: string;
  HTTPS: string;
}

/** One resource record of a supported type, as it appeared in the answer section. */
export type TypedDnsAnswer = {
  [T in DnsRecordType]: {
    /** Owner name, ASCII, no trailing dot. */
    name: string;
    type: T;
    /** Time to live in whole seconds, as received. */
    ttl_seconds: number;
    data: DnsDataByType[T];
  };
}[DnsRecordType];

/**
 * A resource record of a type netintel does not model (DNAME, RRSIG, ...).
 * `type` is the mnemonic or `TYPEnnn`; `data` is the name for name-valued
 * types, otherwise the RFC 3597 §5 generic form `\# <length> <hex>`.
 */
export interface OtherDnsAnswer {
  name: string;
  type: OtherDnsType;
  ttl_seconds: number;
  data: string;
}

/**
 * One resource record of an answer section. The types are disjoint, so
 * `switch (answer.type)` narrows `answer.data` to the matching shape.
 */
export type DnsAnswer = TypedDnsAnswer | OtherDnsAnswer;

/**
 * How the question came out, for readers who do not know rcodes:
 * `answer`: NOERROR with at least one record of the asked type;
 * `nodata`: NOERROR but no record of that type (the name exists, RFC 2308 §2.2);
 * `nxdomain`: the name does not exist (RFC 8020: nor anything below it).
 */
export type DnsStatus = 'answer' | 'nodata' | 'nxdomain';

/** How the answer came: classic DNS over UDP or TCP, DNS over HTTPS (RFC 8484) or TLS (RFC 7858). */
export type DnsTransportKind = 'udp' | 'tcp' | 'https' | 'tls';

/** The answer to one question (one name, one type) from one resolver. */
export interface DnsResult {
  kind: 'dns';
  /** The normalised input: the ASCII domain, or the IP address (RFC 5952 text) of a reverse lookup. */
  target: string;
  /** The name queried: ASCII (IDN labels in punycode), no trailing dot; the reverse name for an IP. */
  domain: string;
  /** `domain` with punycode labels shown in Unicode. */
  domain_unicode: string;
  type: DnsRecordType;
  status: DnsStatus;
  /** The response code as DNS spells it; results carry `NOERROR` or `NXDOMAIN` (others are errors). */
  rcode: string;
  /**
   * The records of the answer section in order, each with its own type: a
   * CNAME chain comes before the records of the asked type. Only records
   * owned by the name asked or a name on its CNAME/DNAME chain are answers
   * (RFC 1034 §4.3.2, RFC 2181 §5.4.1); the others are counted in
   * `ignored_answers`.
   */
  answers: DnsAnswer[];
  /** Records of the answer section for names off the question's chain: not answers, left out of `answers` (0 for a normal answer). */
  ignored_answers: number;
  /** The resolver that answered, `host:port` or `[v6]:port`. */
  resolver: string;
  transport: DnsTransportKind;
  /** Time from the first query sent to the accepted response, failovers and TCP fallback included. */
  latency_ms: number;
}
