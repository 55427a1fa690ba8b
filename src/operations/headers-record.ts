import type { HeadersHop, HeadersMessage, HeadersReport } from '../engine/mail/headers/analyze-headers.js';
import type { HopAddress, HopBlacklist } from '../engine/mail/headers/hop-addresses.js';
import type { DkimVerdict, DkimVerdictSignature, DmarcVerdict, HeadersAuthentication, SpfVerdict } from '../engine/mail/headers/authentication.js';
import type { StatedResult } from '../engine/mail/headers/auth-results.js';
import type { ArcSeal, ArcVerdict } from '../engine/mail/headers/arc-chain.js';
import type { ReceivedFields } from '../engine/mail/headers/received.js';
import { arrayOf, bool, described, eg, int, nullable, oneOfStrings, record, ref, str } from './json-schema.js';

/**
 * The records of `netintel headers` (docs/commands/headers.md), declared
 * by their JSON Schemas: the report, and the hop row that CSV writes one
 * of per hop.
 */

const BLACKLIST = record<HopBlacklist>({
  status: described(oneOfStrings(['listed', 'clean', 'incomplete', 'unknown']), 'As `netintel blacklist` says it: incomplete and unknown when lists did not answer, never clean.'),
  listed_zones: described(arrayOf(str), 'The zones that list the address.'),
  zones: described(int, 'Zones asked.'),
});

const ADDRESS = record<HopAddress>(
  {
    ip: eg(str, '192.0.2.10'),
    scope: described(oneOfStrings(['public', 'special']), 'special: private, loopback, shared, documentation and the other special-purpose blocks, not looked up.'),
    special_purpose: described(nullable(str), 'The special-purpose block, citing its RFC: "private (RFC 1918)".'),
    country_code: nullable(str),
    country: nullable(str),
    asn: nullable(int),
    organization: nullable(str),
    is_hosting: nullable(bool),
    is_vpn: nullable(bool),
    is_tor: nullable(bool),
    lookup_error: described(nullable(str), 'Why a public address could not be described (the datasets are missing).'),
    blacklist: described(nullable(BLACKLIST), 'The DNSBL verdict with --blacklist (blacklist=true), null otherwise.'),
  },
  { description: 'What is known of a hop\'s connecting address.' },
);

const HOP = record<HeadersHop>(
  {
    hop: described(int, '1 for the oldest hop (the bottom Received field).'),
    parsed: described(bool, 'False when the field could not be read: raw is all there is.'),
    from_helo: described(nullable(str), 'The EHLO/HELO name the client gave.'),
    from_rdns: described(nullable(str), 'The client\'s reverse-DNS name as the receiver wrote it.'),
    from_ip: described(nullable(str), 'The client\'s address as the receiver saw it.'),
    by_host: described(nullable(str), 'The receiving host.'),
    protocol: described(nullable(str), 'The `with` protocol: SMTP, ESMTPS, LMTP, "Microsoft SMTP Server"...'),
    tls_version: nullable(str),
    tls_cipher: nullable(str),
    id: described(nullable(str), 'The receiver\'s queue id.'),
    for: described(nullable(str), 'The recipient, when written.'),
    envelope_from: described(nullable(str), 'The envelope sender, when written (Exim, Dovecot).'),
    timestamp: described(nullable(eg(str, '2025-07-01T10:00:02Z')), 'The time after the ";", ISO 8601 UTC.'),
    delay_seconds: described(nullable(int), 'Seconds since the hop before (the first hop: since the Date field); null when a time is missing or the clocks disagree.'),
    clock_skew_seconds: described(nullable(int), 'Seconds this hop is stamped before the hop before it: the two hosts\' clocks disagree.'),
    raw: described(str, 'The field\'s value as written, unfolded.'),
    address: nullable(ADDRESS),
  },
  { description: 'One hop: one Received field (RFC 5321 §4.4), read.' },
);

const MESSAGE = record<HeadersMessage>(
  {
    from: nullable(str),
    to: nullable(str),
    subject: nullable(str),
    date: nullable(str),
    message_id: nullable(str),
    return_path: described(nullable(str), 'The envelope sender the last MTA recorded, without angle brackets.'),
  },
  { description: 'The message\'s own header fields, encoded words decoded.' },
);

const SPF = record<SpfVerdict>(
  {
    result: described(oneOfStrings(['pass', 'fail', 'softfail', 'neutral', 'none', 'temperror', 'permerror', 'not_checked']), 'RFC 7208 §2.6; not_checked when no hop came from a public address.'),
    hop: described(nullable(int), 'The hop whose address was checked: the newest from a public address outside the receiving organisation.'),
    ip: nullable(str),
    helo: nullable(str),
    sender: described(nullable(str), 'The envelope sender (Return-Path).'),
    domain: described(nullable(str), 'The domain whose policy was checked.'),
    reason: str,
  },
  { description: 'SPF recomputed for the hop into the receiving organisation.' },
);

const DKIM_SIGNATURE = record<DkimVerdictSignature>({
  domain: nullable(str),
  selector: nullable(str),
  algorithm: nullable(str),
  result: described(str, 'pass, fail, neutral, policy, temperror, permerror (RFC 8601 §2.7.1); not_checked without the body.'),
  reason: nullable(str),
  aligned: described(nullable(bool), 'd= aligns with the From domain (relaxed); null when there is no From domain or a lookup it needs failed.'),
});

const DKIM = record<DkimVerdict>(
  {
    result: described(oneOfStrings(['pass', 'fail', 'none', 'temperror', 'not_checked']), 'not_checked: only the header block was given, so no body hash can be verified.'),
    signatures: arrayOf(DKIM_SIGNATURE),
    reason: nullable(str),
  },
  { description: 'Every DKIM signature verified (RFC 6376 §6).' },
);

const DMARC = record<DmarcVerdict>(
  {
    result: described(oneOfStrings(['pass', 'fail', 'none', 'temperror', 'not_checked']), 'none: the From domain publishes no policy.'),
    from_domain: nullable(str),
    policy: nullable(oneOfStrings(['none', 'quarantine', 'reject'])),
    policy_domain: nullable(str),
    spf_aligned: nullable(bool),
    dkim_aligned: nullable(bool),
    reason: str,
  },
  { description: 'DMARC of the From domain (RFC 7489 §6.6): alignment and the policy that applies.' },
);

const ARC = record<ArcVerdict>(
  {
    result: described(oneOfStrings(['none', 'pass', 'fail', 'temperror', 'not_checked']), 'none: no ARC fields; temperror: a sealer\'s key could not be fetched; not_checked: only the header block was given.'),
    instances: described(int, 'ARC sets in the message.'),
    seals: described(
      arrayOf(record<ArcSeal>({ instance: int, domain: nullable(str), selector: nullable(str), cv: described(nullable(str), 'none, pass or fail, as the sealer wrote it.') })),
      'Each sealer, oldest first, from its ARC-Seal as written.',
    ),
    reason: nullable(str),
  },
  { description: 'The ARC chain validated (RFC 8617 §5.2): instance order, cv=, every seal and the newest message signature.' },
);

const STATED = record<StatedResult>(
  {
    field: described(int, 'Which Authentication-Results field: 1 is the topmost, written by the last receiver.'),
    authserv_id: str,
    method: eg(str, 'spf'),
    result: eg(str, 'pass'),
    reason: nullable(str),
    properties: { type: 'object', additionalProperties: { type: 'string' }, description: 'ptype.property to value: smtp.mailfrom, header.d, header.from...' },
  },
  { description: 'One result an Authentication-Results field states (RFC 8601 §2.2).' },
);

const AUTHENTICATION = record<HeadersAuthentication>(
  {
    spf: SPF,
    dkim: DKIM,
    dmarc: DMARC,
    arc: ARC,
    stated: described(arrayOf(STATED), 'The message\'s own Authentication-Results, topmost first: claims, shown beside the recomputed verdicts.'),
  },
  { description: 'The message\'s authentication recomputed, and what it states.' },
);

/** The report of `netintel headers` (POST /api/headers). */
export const HEADERS_RECORD = record<HeadersReport>(
  {
    kind: { const: 'headers' },
    source: described(str, 'The file name given, "stdin", or "request" (the API).'),
    message: MESSAGE,
    authentication: AUTHENTICATION,
    hops: described(arrayOf(HOP), 'The hops oldest first.'),
    total_transit_seconds: described(nullable(int), 'Seconds from the Date field (or the first hop) to the last hop.'),
    findings: arrayOf(ref('Finding')),
  },
  { description: 'A message\'s journey read from its header block: hops, delays, addresses, findings.' },
);

/** One CSV row: a hop with the message it belongs to, its Received fields and address facts flat. */
export interface HeadersHopRow extends Omit<ReceivedFields, 'envelope_from'> {
  kind: 'headers-hop';
  source: string;
  message_id: string | null;
  hop: number;
  parsed: boolean;
  delay_seconds: number | null;
  clock_skew_seconds: number | null;
  scope: string | null;
  country_code: string | null;
  asn: number | null;
  organization: string | null;
  is_hosting: boolean | null;
  is_vpn: boolean | null;
  is_tor: boolean | null;
  blacklist: string | null;
  raw: string;
}

export const HEADERS_HOP_ROW = record<HeadersHopRow>(
  {
    kind: { const: 'headers-hop' },
    source: str,
    message_id: nullable(str),
    hop: int,
    parsed: bool,
    from_helo: nullable(str),
    from_rdns: nullable(str),
    from_ip: nullable(str),
    by_host: nullable(str),
    protocol: nullable(str),
    tls_version: nullable(str),
    tls_cipher: nullable(str),
    id: nullable(str),
    for: nullable(str),
    timestamp: nullable(str),
    delay_seconds: nullable(int),
    clock_skew_seconds: nullable(int),
    scope: nullable(str),
    country_code: nullable(str),
    asn: nullable(int),
    organization: nullable(str),
    is_hosting: nullable(bool),
    is_vpn: nullable(bool),
    is_tor: nullable(bool),
    blacklist: nullable(str),
    raw: str,
  },
  { description: 'One hop of a message as a CSV row.' },
);

/** The hops of a report as CSV rows, oldest first. */
export function hopRows(report: HeadersReport): HeadersHopRow[] {
  return report.hops.map((hop) => ({
    kind: 'headers-hop',
    source: report.source,
    message_id: report.message.message_id,
    hop: hop.hop,
    parsed: hop.parsed,
    from_helo: hop.from_helo,
    from_rdns: hop.from_rdns,
    from_ip: hop.from_ip,
    by_host: hop.by_host,
    protocol: hop.protocol,
    tls_version: hop.tls_version,
    tls_cipher: hop.tls_cipher,
    id: hop.id,
    for: hop.for,
    timestamp: hop.timestamp,
    delay_seconds: hop.delay_seconds,
    clock_skew_seconds: hop.clock_skew_seconds,
    scope: hop.address?.scope ?? null,
    country_code: hop.address?.country_code ?? null,
    asn: hop.address?.asn ?? null,
    organization: hop.address?.organization ?? null,
    is_hosting: hop.address?.is_hosting ?? null,
    is_vpn: hop.address?.is_vpn ?? null,
    is_tor: hop.address?.is_tor ?? null,
    blacklist: hop.address?.blacklist ? hop.address.blacklist.status : null,
    raw: hop.raw,
  }));
}
