import type { CheckFailure } from '../check-failure.js';
import type { Finding } from '../findings.js';
import type { FailureJson } from '../mail/mail-errors.js';
import type { DnsblKind } from './dnsbl-registry.js';
import type { DnsblReturnCode } from './dnsbl-answer.js';

/**
 * What one zone said about one subject:
 * - `listed`: a real listing (a listing code, the zone passed its test points);
 * - `clean`: not listed (NXDOMAIN or no A record), the zone passed its test points;
 * - `refused`: the list refused the query (a refusal code, for the query or a test point);
 * - `timeout`: no answer (for the query or a test point) before the deadline;
 * - `error`: the resolver failed (SERVFAIL, unreachable), the answer was
 *   not a DNSBL answer, or the zone failed its RFC 5782 test points.
 */
export type DnsblStatus = 'listed' | 'clean' | 'refused' | 'timeout' | 'error';

/**
 * The RFC 5782 §5 self-test of a zone in this run: `passed` (the listed test
 * point is listed, the other is not), `failed` (either is wrong: a dead,
 * misnamed or world-listing zone, or a filtering resolver), `refused`,
 * `timeout`, `error` (no usable answer to a test point).
 */
export type CanaryStatus = 'passed' | 'failed' | 'refused' | 'timeout' | 'error';

/** One row: one subject (the IP, an MX address, or the domain) asked of one zone. */
export interface BlacklistZoneResult {
  zone: string;
  /** The list's common name from the registry, or null for a zone outside it. */
  name: string | null;
  list_kind: DnsblKind;
  /** What was looked up: an IP address (canonical text) or the domain. */
  subject: string;
  /** The MX hosts whose address this is (empty for the target itself). */
  mx_hosts: string[];
  /** The DNS name asked (`4.3.2.1.zen.spamhaus.org`). */
  query: string;
  status: DnsblStatus;
  /** Every A record the zone answered, with its meaning from the registry (null: not recorded). */
  return_codes: DnsblReturnCode[];
  /** The zone's TXT record for a listing (the list's own reason or URL), null when none. */
  reason: string | null;
  /** Why the row is refused, timeout or error (or what a listing's test points said), null for plain answers. */
  detail: string | null;
  canary: CanaryStatus;
  /** From sending the query to its answer (or to the deadline), in milliseconds. */
  latency_ms: number;
  /** The resolver that answered, null when none did. */
  resolver: string | null;
  delist_url: string | null;
}

/** A zone of the run that was not asked for a subject, and why. */
export interface BlacklistSkippedZone {
  zone: string;
  /** The subject it was not asked about, null when it was not asked at all (a dead zone). */
  subject: string | null;
  /**
   * `dead`: the registry says the list is dead (never queried); `ipv6_unsupported`:
   * an IPv6 address and a list without IPv6 data; `not_applicable`: an IP
   * address and a domain list.
   */
  reason: 'dead' | 'ipv6_unsupported' | 'not_applicable';
  detail: string;
}

/** One MX host of a domain target and the addresses checked for it. */
export interface BlacklistMxHost {
  exchange: string;
  /** Null for the implicit MX (RFC 5321 §5.1: the domain itself when it has no MX records). */
  preference: number | null;
  /**
   * `resolved`: it has addresses; `nxdomain`: the host does not exist;
   * `no_address`: it has no A or AAAA records; `error`: its addresses could
   * not be (fully) read, so some may be unchecked.
   */
  status: 'resolved' | 'nxdomain' | 'no_address' | 'error';
  addresses: string[];
  /** Why the lookup of its addresses failed (status `error`): the first failure's code, every failure's message; null otherwise. */
  error: FailureJson | null;
}

/** How the mail hosts of a domain target were found. */
export interface BlacklistMx {
  /**
   * `answer`: MX records; `implicit`: none, so the domain's own addresses
   * (RFC 5321 §5.1); `null_mx`: the domain accepts no mail (RFC 7505);
   * `nxdomain`: the domain does not exist; `error`: the MX lookup failed.
   */
  status: 'answer' | 'implicit' | 'null_mx' | 'nxdomain' | 'error';
  hosts: BlacklistMxHost[];
  /** Why the lookup failed (`{ code, message }`), null otherwise. */
  error: FailureJson | null;
}

/**
 * The overall verdict. Only real listings count as listed; zones that
 * refused, timed out or failed are counted apart, never as clean.
 * - `listed`: at least one real listing;
 * - `clean`: no listing and every zone answered for every subject;
 * - `incomplete`: no listing, but some zones (or the mail hosts) could not be checked;
 * - `unknown`: nothing could be checked.
 */
export interface BlacklistVerdict {
  status: 'listed' | 'clean' | 'incomplete' | 'unknown';
  /** Zones that list at least one subject. */
  listed_zones: number;
  /** Rows with a real listing (zone x subject). */
  listings: number;
  /** Zones that answered (listed or clean) for every subject they were asked about. */
  checked_zones: number;
  /** Zones that refused, timed out or failed for at least one subject. */
  unchecked_zones: number;
  /** Zones asked. */
  zones: number;
  /** The verdict in one sentence. */
  message: string;
  /**
   * Why zones (or the mail hosts) could not be checked: the most frequent
   * error code among them (`timeout`; `upstream` for a list that refused),
   * null when everything was checked. With `unknown` and zones asked,
   * nothing could be checked; otherwise the check is incomplete.
   */
  failure: CheckFailure | null;
}

/** The record of `netintel blacklist` (GET /api/blacklist-check). */
export interface BlacklistResult {
  kind: 'blacklist';
  /** The target as normalised: canonical IP text, or the ASCII domain. */
  target: string;
  target_type: 'ip' | 'domain';
  verdict: BlacklistVerdict;
  /** One row per zone and subject, in zone order then subject order. */
  zones: BlacklistZoneResult[];
  skipped: BlacklistSkippedZone[];
  /** The mail hosts of a domain target, null for an IP target. */
  mx: BlacklistMx | null;
  findings: Finding[];
  /** The resolvers asked, in order. */
  resolvers: string[];
  registry_version: string;
  /** ISO 8601 time the check started. */
  checked_at: string;
  /** Wall time of the whole check, in milliseconds. */
  latency_ms: number;
}
