import { isIpAddress, parseIpAddress } from '../engine/address/ip-address.js';
import { normaliseDomain, parseDnsTarget } from '../engine/dns/dns-name.js';

/**
 * What a record names as the target it answers for: its `ip` (an IP
 * record), its `domain` (with `domain_unicode` and `target`, a DNS or
 * mail record), its `asn` or `ip` (an AS record, asked by number or by
 * address), or its `target` (a blocklist record, of an address or a name).
 */
export type AnswerSubject = 'ip' | 'domain' | 'asn' | 'target';

/** An AS number as `asn` takes it: `AS15169`, `as15169` or `15169`. */
const AS_NUMBER = /^(?:AS)?(\d+)$/i;

/** Longest part of a server's value quoted in a message. */
const MAX_QUOTED_CHARS = 100;

/**
 * Why `record` is not the answer to a question about `asked`, or null when
 * it is: a server that passes one target's record off as another's
 * (a swapped bulk item, 8.8.8.8's record for 1.1.1.1) is caught here, before
 * the record is printed under the target asked.
 *
 * `ip`: the record's `ip` is the address asked, both in canonical text
 * (RFC 5952 IPv6, an IPv4-mapped address as its IPv4 address). A target
 * that is not an address (a host name, looked up by its addresses) is not
 * judged here.
 *
 * `domain`: the record's `domain` (and `domain_unicode` and `target` where
 * present) name the domain asked, compared as DNS does: case aside, a
 * trailing dot aside, an IDN's A-label and U-label alike; an address asked
 * is its reverse-mapping name.
 *
 * `asn`: an AS number asked is the record's `asn`; an address asked, its `ip`.
 *
 * `target`: the record's `target` is the address asked (canonical text) or
 * the name asked (compared as for `domain`).
 */
export function subjectProblem(record: unknown, asked: string, subject: AnswerSubject): string | null {
  if (record === null || typeof record !== 'object') return null;
  const fields = record as Record<string, unknown>;
  if (subject === 'asn') {
    const number = AS_NUMBER.exec(asked);
    if (number === null) return subjectProblem(record, asked, 'ip');
    return fields.asn === Number(number[1]) ? null : mismatch(asked, 'asn', typeof fields.asn === 'number' ? `AS${fields.asn}` : fields.asn);
  }
  if (subject === 'target') {
    if (isIpAddress(asked)) return canonicalAddress(fields.target) === parseIpAddress(asked).text ? null : mismatch(asked, 'target', fields.target);
    return domainOf(fields.target) === askedDomain(asked).ascii ? null : mismatch(asked, 'target', fields.target);
  }
  if (subject === 'ip') {
    if (!isIpAddress(asked)) return null;
    const wanted = parseIpAddress(asked).text;
    return canonicalAddress(fields.ip) === wanted ? null : mismatch(asked, 'ip', fields.ip);
  }
  const wanted = askedDomain(asked);
  if (domainOf(fields.domain) !== wanted.ascii) return mismatch(asked, 'domain', fields.domain);
  if (fields.domain_unicode !== undefined && fields.domain_unicode !== null && domainOf(fields.domain_unicode) !== wanted.ascii) return mismatch(asked, 'domain_unicode', fields.domain_unicode);
  if (fields.target !== undefined && fields.target !== null && typeof fields.target !== 'object') {
    const target = wanted.address ? canonicalAddress(fields.target) : domainOf(fields.target);
    if (target !== wanted.target) return mismatch(asked, 'target', fields.target);
  }
  return null;
}

/** The canonical text of an address a server sent, or null when it is not one. */
function canonicalAddress(value: unknown): string | null {
  return typeof value === 'string' && isIpAddress(value) ? parseIpAddress(value).text : null;
}

/** A domain a server sent in its ASCII form (lower case, no trailing dot, IDN labels as A-labels), or null when it is not a name. */
function domainOf(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  try {
    return normaliseDomain(value.length > 1 && value.endsWith('.') ? value.slice(0, -1) : value).ascii;
  } catch {
    return null;
  }
}

/** The name the question was about (an address: its reverse-mapping name), and the target the record should echo. */
function askedDomain(asked: string): { ascii: string; target: string; address: boolean } {
  try {
    const parsed = parseDnsTarget(asked);
    return { ascii: parsed.ascii, target: parsed.target, address: parsed.reverse };
  } catch {
    // A name the local rules refuse but the server took: compared as text, case and a trailing dot aside.
    const plain = asked.toLowerCase().replace(/\.$/, '');
    return { ascii: plain, target: plain, address: false };
  }
}

function mismatch(asked: string, field: string, answered: unknown): string {
  const given = typeof answered === 'string' ? `is for ${quote(answered)}` : `has ${answered === undefined ? 'no' : 'an invalid'} ${field}`;
  return `asked about ${quote(asked)}, the record ${given}${typeof answered === 'string' && field !== 'ip' && field !== 'domain' && field !== 'asn' ? ` (its ${field})` : ''}`;
}

function quote(text: string): string {
  return JSON.stringify(text.length > MAX_QUOTED_CHARS ? `${text.slice(0, MAX_QUOTED_CHARS)}…` : text);
}
