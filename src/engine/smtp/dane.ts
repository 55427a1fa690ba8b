/**
 * DANE for SMTP (RFC 7672): the TLSA records of an MX host, whether DNSSEC
 * vouches for them, and whether the certificate chain the host presents
 * matches them (RFC 6698 §2.1, RFC 7671, RFC 7672 §3).
 */
import { createHash, createPublicKey, X509Certificate, type KeyObject } from 'node:crypto';
import type { DecodedPacket } from 'dns-packet';
import { NetintelError } from '../../errors.js';
import type { EngineContext } from '../context.js';
import { dnssecStatusOf, type DnssecStatus } from '../dns/dnssec/validate.js';
import type { TrustAnchor } from '../dns/dnssec/trust-anchor.js';
import { asciiName } from '../dns/query-records.js';
import { finding, type Finding } from '../findings.js';
import { failureJson, type FailureJson } from '../mail/mail-errors.js';
import { presentTlsa, tlsaFromDecoded, type TlsaRecord } from './tlsa-record.js';
import { selfSigned, signedBy } from '../tls/path-faults.js';
import { namesHost } from '../tls/tls-certificate.js';

/** How DNSSEC judged an RRset (RFC 4035 §4.3), and why. */
export interface RrsetAuthentication {
  status: DnssecStatus;
  /** Why, for people (`the resolver did not set AD`, `RRSIG expired`...), or null. */
  reason: string | null;
  /**
   * netintel's own validation: a question it needed (the RRset, a DS or
   * DNSKEY of its chain) that got no answer, so the status is
   * `indeterminate` for want of it: DNSSEC was not checked. From a
   * resolver's AD bit, its re-query that got no answer (a SERVFAIL may be
   * its verdict of bogus, RFC 4035 §5.5: either way nothing was decided).
   * Null otherwise.
   */
  error: FailureJson | null;
}

/** Judges whether the RRset `type` at `name` is DNSSEC-authenticated. */
export type Authenticate = (name: string, type: string) => Promise<RrsetAuthentication>;

/** AD, bit 5 of the header's flags (RFC 4035 §3.2.3). */
const AUTHENTIC_DATA = 1 << 5;

/**
 * The default authentication: netintel's own validator, from the trust
 * anchor (the IANA root unless one is given) down to the RRset; no resolver
 * is trusted to have validated.
 */
export function validatingAuthenticator(ctx: EngineContext, trustAnchors?: TrustAnchor): Authenticate {
  return (name, type) => dnssecStatusOf(ctx, name, type, trustAnchors ? { trustAnchors } : {});
}

/**
 * Authentication by a resolver the caller trusts: asks it again and reads
 * the AD bit of its answer (RFC 4035 §3.2.3), as an MTA with a validating
 * resolver on its own host does (RFC 7672 §2.1.3; RFC 4035 §4.9.3 on the
 * path to it). A resolver sets AD only when the query signals DNSSEC
 * interest (RFC 6840 §5.7), so without it an answer reads as insecure.
 */
export function adBitAuthenticator(ctx: EngineContext): Authenticate {
  return async (name, type) => {
    const transport = await ctx.dnsTransport();
    try {
      const exchange = await transport.query(asciiName(name), type as Parameters<typeof transport.query>[1]);
      const ad = ((exchange.response.flags ?? 0) & AUTHENTIC_DATA) !== 0 || exchange.response.flag_ad === true;
      return ad
        ? { status: 'secure', reason: `${exchange.resolver} set the AD bit`, error: null }
        : { status: 'insecure', reason: `${exchange.resolver} did not set the AD bit`, error: null };
    } catch (error) {
      const message = error instanceof NetintelError ? error.message : String(error);
      // A validating resolver answers SERVFAIL to bogus data (RFC 4035 §5.5), as it does to other failures: not checked.
      return { status: 'indeterminate', reason: message, error: failureJson(error) };
    }
  };
}

/** The TLSA RRset of one MX host. */
export interface TlsaLookup {
  /** The MX host name (ASCII, no trailing dot). */
  host: string;
  port: number;
  /** The TLSA owner name asked for (`_25._tcp.mx.example.com`). */
  name: string;
  /**
   * The names tried, in order: the CNAME-expanded host's TLSA name first
   * when the host is a secure alias (RFC 7672 §2.2.3), then the host's own.
   */
  tried: string[];
  /** The CNAMEs followed from `name` to the TLSA RRset (RFC 7672 §2.2.3), owner names in order. */
  aliases: string[];
  /** `answer`, `nodata`, `nxdomain`, or `failed` (the lookup failed: `error` says why). */
  status: 'answer' | 'nodata' | 'nxdomain' | 'failed';
  records: TlsaRecord[];
  ttl_seconds: number | null;
  /** DNSSEC's verdict on the TLSA RRset (on the denial of it when there is none). */
  dnssec: RrsetAuthentication;
  /** Why the lookup failed (`{ code, message }`, as every record's failed lookup), or null. */
  error: FailureJson | null;
  resolver: string | null;
}

export interface DaneOptions {
  /** DNSSEC authentication of an RRset; default {@link validatingAuthenticator} from `trustAnchors`. */
  authenticate?: Authenticate;
  /** Where the default authentication's validation starts (default: the IANA root KSKs). */
  trustAnchors?: TrustAnchor;
}

/** `_25._tcp.mx.example.com` (RFC 6698 §3, RFC 7672 §2.2.3). */
export function tlsaName(host: string, port = 25): string {
  return `_${port}._tcp.${host}`;
}

/**
 * Looks up the TLSA RRset of an MX host (RFC 7672 §2.2.3). CNAMEs of the
 * TLSA name are followed as the resolver returns them; when the host name
 * itself is an alias and its expansion is DNSSEC-secure, the expanded
 * name's TLSA records are looked for first, then the host's own.
 *
 * @throws NetintelError `invalid_input` for a host that is not a domain name.
 */
export async function lookupTlsa(ctx: EngineContext, mxHost: string, port = 25, options: DaneOptions = {}): Promise<TlsaLookup> {
  const authenticate = options.authenticate ?? validatingAuthenticator(ctx, options.trustAnchors);
  const host = asciiName(mxHost.replace(/\.$/, '')).toLowerCase();
  const candidates = [tlsaName(host, port)];
  const expanded = await secureExpansion(ctx, host, authenticate);
  if (expanded !== null && expanded !== host) candidates.unshift(tlsaName(expanded, port));
  let lookup: TlsaLookup | null = null;
  for (const name of candidates) {
    lookup = await queryTlsa(ctx, host, port, name, authenticate);
    lookup.tried = candidates.slice(0, candidates.indexOf(name) + 1);
    if (lookup.status === 'answer' || lookup.status === 'failed') break;
  }
  return lookup!;
}

/** The host's CNAME-expanded name when its A lookup went through CNAMEs that DNSSEC vouches for, else null. */
async function secureExpansion(ctx: EngineContext, host: string, authenticate: Authenticate): Promise<string | null> {
  try {
    const transport = await ctx.dnsTransport();
    const exchange = await transport.query(host, 'A');
    const { target, aliases } = followCnames(exchange.response, host);
    if (aliases.length === 0) return null;
    const verdict = await authenticate(host, 'A');
    return verdict.status === 'secure' ? target : null;
  } catch {
    // The probe resolves the host itself and reports its failures.
    return null;
  }
}

async function queryTlsa(ctx: EngineContext, host: string, port: number, name: string, authenticate: Authenticate): Promise<TlsaLookup> {
  const base: TlsaLookup = {
    host,
    port,
    name,
    tried: [name],
    aliases: [],
    status: 'failed',
    records: [],
    ttl_seconds: null,
    dnssec: { status: 'indeterminate', reason: 'not asked', error: null },
    error: null,
    resolver: null,
  };
  let response: DecodedPacket;
  let rcode: string;
  try {
    const transport = await ctx.dnsTransport();
    const exchange = await transport.query(name, 'TLSA');
    response = exchange.response;
    rcode = exchange.rcode;
    base.resolver = exchange.resolver;
  } catch (error) {
    base.error = failureJson(error);
    // Asking again would wait out the same failure.
    base.dnssec = { status: 'indeterminate', reason: 'the TLSA lookup failed', error: null };
    return base;
  }
  const { target, aliases } = followCnames(response, name);
  base.aliases = aliases;
  for (const answer of response.answers ?? []) {
    if (answer.type !== 'TLSA' || lowerName(answer.name) !== target) continue;
    const record = tlsaFromDecoded((answer as { data?: unknown }).data);
    if (!record) continue;
    base.records.push(record);
    const ttl = (answer as { ttl?: number }).ttl ?? 0;
    base.ttl_seconds = base.ttl_seconds === null ? ttl : Math.min(base.ttl_seconds, ttl);
  }
  base.status = base.records.length > 0 ? 'answer' : rcode === 'NXDOMAIN' ? 'nxdomain' : 'nodata';
  base.dnssec = await authenticate(name, 'TLSA');
  return base;
}

/** Follows the CNAME chain of an answer section from `name` (RFC 1034 §3.6.2); the aliases are the owners passed. */
function followCnames(response: DecodedPacket, name: string): { target: string; aliases: string[] } {
  const aliases: string[] = [];
  let current = lowerName(name);
  const answers = response.answers ?? [];
  for (let hop = 0; hop < 16; hop++) {
    const cname = answers.find((answer) => answer.type === 'CNAME' && lowerName(answer.name) === current);
    const target = cname ? (cname as { data?: unknown }).data : undefined;
    if (typeof target !== 'string') break;
    aliases.push(current);
    current = lowerName(target);
  }
  return { target: current, aliases };
}

function lowerName(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') && lower.length > 1 ? lower.slice(0, -1) : lower;
}

// ---------------------------------------------------------------------------
// Matching (RFC 6698 §2.1, RFC 7671 §5, RFC 7672 §3.1)

/** How one TLSA record fared against the presented chain. */
export interface TlsaMatch {
  record: TlsaRecord;
  /** The record matched and, for DANE-TA(2), the chain up to the matched anchor verifies. */
  matched: boolean;
  /** The position in the chain of the certificate matched (0: the leaf), the chain's length for a bare trust-anchor key, or null. */
  depth: number | null;
  /**
   * DANE-TA(2) only: the leaf names the MX host (RFC 7672 §3.2.2, by the
   * rule of `hostname_match`: tls-certificate.ts's namesHost); null for other usages or without a match.
   */
  name_match: boolean | null;
  /** Why the record did not match or cannot be used, or null. */
  reason: string | null;
}

/** One certificate of the chain, with what matching needs from it. */
interface ChainEntry {
  der: Buffer;
  x509: X509Certificate | null;
  spki: Buffer | null;
}

function chainEntry(certificate: X509Certificate | Uint8Array): ChainEntry {
  if (!(certificate instanceof Uint8Array)) {
    return { der: Buffer.from(certificate.raw), x509: certificate, spki: spkiOf(certificate) };
  }
  const der = Buffer.from(certificate);
  let x509: X509Certificate | null = null;
  try {
    x509 = new X509Certificate(der);
  } catch {
    // Not a certificate: only a full-certificate record (selector 0) can match its bytes.
  }
  return { der, x509, spki: x509 ? spkiOf(x509) : null };
}

function spkiOf(certificate: X509Certificate): Buffer | null {
  try {
    return certificate.publicKey.export({ type: 'spki', format: 'der' });
  } catch {
    return null;
  }
}

/** The record's data computed from `selected` (RFC 6698 §2.1.3), hex. */
function associationData(selected: Buffer, matchingType: number): string {
  if (matchingType === 1) return createHash('sha256').update(selected).digest('hex');
  if (matchingType === 2) return createHash('sha512').update(selected).digest('hex');
  return selected.toString('hex');
}

function matchesEntry(record: TlsaRecord, entry: ChainEntry): boolean {
  const selected = record.selector === 0 ? entry.der : entry.spki;
  return selected !== null && associationData(selected, record.matching_type) === record.data;
}

function safe(check: () => boolean): boolean {
  try {
    return check();
  } catch {
    return false;
  }
}

/**
 * Matches TLSA records against a presented chain (leaf first), as RFC
 * 6698 §2.1 with the SMTP rules of RFC 7672 §3.1 and RFC 7671's updates,
 * agreeing with OpenSSL's DANE verifier (what Postfix and Exim use;
 * test/interop/dane-openssl.test.ts):
 * - DANE-EE(3): the leaf only; its names and dates are not checked (§3.1.1).
 * - DANE-TA(2): an issuer, a certificate of the chain above the leaf, to
 *   which the chain must lead by issuer names and signatures (§3.1.2); the
 *   certificates below it must be within their validity periods (RFC 6698
 *   §2.1.1: PKIX path validation from the anchor, which is itself not
 *   checked). A full certificate or public key (matching 0) may also be an
 *   anchor the chain does not carry, when the chain's last certificate is
 *   issued by it (RFC 7671 §5.2.2, §5.2.3). The leaf's names are checked
 *   against `hostnames` (§3.2.2).
 * - Digest agility (RFC 7671 §9): of the digests published for one usage
 *   and selector, only the strongest kind (SHA2-512 over SHA2-256) is used.
 * - PKIX-TA(0), PKIX-EE(1) and unknown parameters: unusable (§3.1.3).
 * Never throws, whatever the bytes.
 */
export function matchTlsa(
  records: readonly TlsaRecord[],
  presentedChain: ReadonlyArray<X509Certificate | Uint8Array>,
  hostnames: readonly string[] = [],
  now: Date = new Date(),
): TlsaMatch[] {
  const presented = presentedChain.map(chainEntry);
  const chain = issuerPath(presented);
  const strongest = strongestDigests(records);
  return records.map((record) => matchOne(record, { chain, presented }, hostnames, now, strongest));
}

/**
 * The path from the leaf up through the presented certificates, each the
 * issuer of the one before it by name and signature, in whatever order the
 * server sent them (TLS 1.3 allows any, RFC 8446 §4.4.2); a certificate on
 * no such path is left out, as a verifier building the path leaves it.
 */
function issuerPath(presented: readonly ChainEntry[]): ChainEntry[] {
  if (presented.length === 0) return [];
  const path = [presented[0]!];
  const left = presented.slice(1);
  for (;;) {
    const child = path[path.length - 1]!.x509;
    if (!child || selfSigned(child)) return path;
    const index = left.findIndex((entry) => entry.x509 !== null && child.checkIssued(entry.x509) && signedBy(child, entry.x509));
    if (index < 0) return path;
    path.push(left.splice(index, 1)[0]!);
  }
}

/** The strongest digest (matching type 1 or 2) among the usable records of each usage and selector. */
function strongestDigests(records: readonly TlsaRecord[]): Map<string, number> {
  const strongest = new Map<string, number>();
  for (const record of records) {
    if (record.unusable !== null || record.matching_type === 0) continue;
    const key = `${record.usage} ${record.selector}`;
    strongest.set(key, Math.max(strongest.get(key) ?? 0, record.matching_type));
  }
  return strongest;
}

/** The certificates the server sent, and the path through them from the leaf up (see issuerPath). */
interface PresentedChain {
  chain: readonly ChainEntry[];
  presented: readonly ChainEntry[];
}

function matchOne(record: TlsaRecord, { chain, presented }: PresentedChain, hostnames: readonly string[], now: Date, strongest: ReadonlyMap<string, number>): TlsaMatch {
  const none = (reason: string): TlsaMatch => ({ record, matched: false, depth: null, name_match: null, reason });
  if (record.unusable) return none(record.unusable);
  if (record.matching_type !== 0 && strongest.get(`${record.usage} ${record.selector}`)! > record.matching_type) {
    return none('a SHA2-512 digest is published for the same usage and selector: senders use only the strongest (RFC 7671 §9)');
  }
  if (chain.length === 0) return none('no certificate was presented');
  if (record.usage === 3) {
    return matchesEntry(record, chain[0]!)
      ? { record, matched: true, depth: 0, name_match: null, reason: null }
      : none('the server certificate does not match');
  }
  // DANE-TA(2): an issuer of the chain, else an anchor the record carries whole.
  const nameMatch = leafNames(chain[0]!, hostnames);
  const anchored = (depth: number): TlsaMatch => {
    const lapsed = lapsedBelow(chain, depth, now);
    if (lapsed !== null) return { record, matched: false, depth, name_match: nameMatch, reason: lapsed };
    return { record, matched: true, depth, name_match: nameMatch, reason: nameMatch === false ? `the server certificate does not name ${hostnames.join(' or ')}` : null };
  };
  const depth = chain.findIndex((entry, index) => index > 0 && matchesEntry(record, entry));
  if (depth > 0) return anchored(depth);
  const anchorKey = record.matching_type === 0 ? anchorKeyOf(record) : null;
  const last = chain[chain.length - 1]!.x509;
  if (anchorKey && last && safe(() => (anchorKey.subject === null || last.issuer === anchorKey.subject) && last.verify(anchorKey.key))) {
    return anchored(chain.length);
  }
  if (matchesEntry(record, chain[0]!)) return none('only the server certificate matches: a DANE-TA record names an issuer of it (RFC 7671 §5.2)');
  const sent = presented.findIndex((entry, index) => index > 0 && !chain.includes(entry) && matchesEntry(record, entry));
  if (sent > 0) return { record, matched: false, depth: sent, name_match: nameMatch, reason: `certificate ${sent} of the chain matches, but the chain does not lead to it` };
  return none('no certificate of the chain matches');
}

/** The key of an anchor a full record carries (RFC 7671 §5.2.2, §5.2.3), with the subject a full certificate gives it. */
function anchorKeyOf(record: TlsaRecord): { key: KeyObject; subject: string | null } | null {
  if (record.selector === 1) {
    const key = publicKeyOf(record.data);
    return key ? { key, subject: null } : null;
  }
  try {
    const certificate = new X509Certificate(Buffer.from(record.data, 'hex'));
    return { key: certificate.publicKey, subject: certificate.subject };
  } catch {
    return null;
  }
}

/** Why a certificate below the anchor at `depth` is not valid at `now`, or null when each is. */
function lapsedBelow(chain: readonly ChainEntry[], depth: number, now: Date): string | null {
  for (let index = 0; index < Math.min(depth, chain.length); index++) {
    const x509 = chain[index]!.x509;
    if (!x509) continue;
    const which = index === 0 ? 'the server certificate' : `certificate ${index} of the chain`;
    if (now.getTime() > Date.parse(x509.validTo)) return `${which} expired on ${new Date(x509.validTo).toISOString()}`;
    if (now.getTime() < Date.parse(x509.validFrom)) return `${which} is not valid before ${new Date(x509.validFrom).toISOString()}`;
  }
  return null;
}

function publicKeyOf(hex: string): KeyObject | null {
  try {
    return createPublicKey({ key: Buffer.from(hex, 'hex'), format: 'der', type: 'spki' });
  } catch {
    return null;
  }
}

function leafNames(leaf: ChainEntry, hostnames: readonly string[]): boolean | null {
  if (hostnames.length === 0 || !leaf.x509) return null;
  const x509 = leaf.x509;
  return hostnames.some((name) => namesHost(x509, name));
}

// ---------------------------------------------------------------------------
// The check

/** The DANE section of an MX host. */
export interface DaneResult {
  tlsa: TlsaLookup;
  /** The TLSA RRset's DNSSEC verdict (as `tlsa.dnssec`). */
  dnssec: RrsetAuthentication;
  /** Per record, against the presented chain; [] when there was no chain or no record. */
  matches: TlsaMatch[];
  /**
   * `matched`: a usable record matches (DANE senders deliver); `mismatch`:
   * none does; `unusable`: no record senders can use; `no-tls`: records but
   * no certificate; `not-applicable`: no TLSA, or DNSSEC-insecure (senders
   * ignore it); `failed`: the lookup failed, the records are DNSSEC-bogus,
   * or their DNSSEC could not be decided (DANE was not checked).
   */
  verdict: 'matched' | 'mismatch' | 'unusable' | 'no-tls' | 'not-applicable' | 'failed';
  findings: Finding[];
}

export interface CheckDaneOptions extends DaneOptions {
  /** Port of the TLSA name (default 25: `_25._tcp`, RFC 7672 §2.2.3). */
  port?: number;
  /** Whether the server offered STARTTLS; false gives `dane_starttls_missing` when TLSA records exist. */
  starttlsOffered?: boolean | null;
}

/**
 * Looks up the MX host's TLSA records and matches them against the chain
 * it presented (DER, leaf first; null when no TLS session was had).
 *
 * @throws NetintelError `invalid_input` for a host that is not a domain name.
 */
export async function checkDane(
  ctx: EngineContext,
  mxHost: string,
  presentedChainDer: ReadonlyArray<Uint8Array | X509Certificate> | null,
  options: CheckDaneOptions = {},
): Promise<DaneResult> {
  const tlsa = await lookupTlsa(ctx, mxHost, options.port ?? 25, options);
  return daneFromLookup(tlsa, presentedChainDer, options.starttlsOffered ?? null, ctx.now());
}

/**
 * Why no record matched, once per reason: "does not match" is not all a
 * record can fail on (an expired certificate below the anchor, a stronger
 * digest beside it, a DANE-TA anchor whose server certificate does not name
 * the host).
 */
export function mismatchReasons(matches: readonly TlsaMatch[]): string[] {
  return [...new Set(matches.map((match) => match.reason).filter((reason) => reason !== null))];
}

/** {@link checkDane} from a lookup already made (the SMTP probe looks up while it talks). */
export function daneFromLookup(
  tlsa: TlsaLookup,
  presentedChainDer: ReadonlyArray<Uint8Array | X509Certificate> | null,
  starttlsOffered: boolean | null,
  now: Date,
): DaneResult {
  const hostnames = [...new Set([tlsa.host, baseDomain(tlsa)])];
  const matches = tlsa.records.length > 0 && presentedChainDer && presentedChainDer.length > 0 ? matchTlsa(tlsa.records, presentedChainDer, hostnames, now) : [];
  const { verdict, findings } = judgeDane(tlsa, matches, presentedChainDer, starttlsOffered);
  return { tlsa, dnssec: tlsa.dnssec, matches, verdict, findings };
}

/** The TLSA base domain: the name the TLSA records were found at, without `_port._tcp.` (RFC 7672 §2.2.3). */
function baseDomain(tlsa: TlsaLookup): string {
  return tlsa.name.replace(/^_\d+\._tcp\./, '');
}

type DaneVerdict = { verdict: DaneResult['verdict']; findings: Finding[] };

/** Where the TLSA records were looked up, as findings name it. */
type TlsaWhere = { name: string; aliases?: string[] };

function judgeDane(
  tlsa: TlsaLookup,
  matches: readonly TlsaMatch[],
  chain: ReadonlyArray<unknown> | null,
  starttlsOffered: boolean | null,
): DaneVerdict {
  const where: TlsaWhere = { name: tlsa.name, ...(tlsa.aliases.length > 0 ? { aliases: tlsa.aliases } : {}) };
  const unanswered = judgeLookup(tlsa, where);
  if (unanswered) return unanswered;
  const records = tlsa.records.map(presentTlsa);
  const findings = judgeRecords(tlsa, where, records);
  // Records whose DNSSEC is undecided may be the ones DANE senders enforce, or ones they ignore: not checked, nothing more to judge.
  if (tlsa.dnssec.status === 'indeterminate') return { verdict: 'failed', findings };
  const withoutTls = judgeTlsSession(where, records, chain, starttlsOffered, tlsa.dnssec.status === 'secure');
  if (withoutTls) return { verdict: withoutTls.verdict, findings: [...findings, ...withoutTls.findings] };
  if (tlsa.records.every((record) => record.unusable !== null)) return { verdict: 'unusable', findings };
  const judged = judgeMatches(tlsa, matches, where, records);
  return { verdict: judged.verdict, findings: [...findings, ...judged.findings] };
}

/** A lookup that failed, did not validate or found no records: the verdict without looking further. */
function judgeLookup(tlsa: TlsaLookup, where: TlsaWhere): DaneVerdict | null {
  const dnssec = tlsa.dnssec;
  if (tlsa.status === 'failed') {
    const found = finding('dane_tlsa_lookup_failed', 'unknown', `the TLSA lookup of ${tlsa.name} failed (${tlsa.error?.message ?? 'no answer'}): DANE senders defer mail to this host until it answers`, 'RFC 7672 §2.1.1', {
      ...where,
      error: tlsa.error,
      dnssec,
    });
    return { verdict: 'failed', findings: [found] };
  }
  if (dnssec.status === 'bogus') {
    const found = finding('dane_tlsa_bogus', 'error', `DNSSEC validation of the TLSA answer for ${tlsa.name} fails (${dnssec.reason ?? 'bogus'}): DANE senders do not deliver to this host`, 'RFC 7672 §2.1.1', {
      ...where,
      dnssec,
    });
    return { verdict: 'failed', findings: [found] };
  }
  if (tlsa.records.length === 0) {
    const found = finding('dane_tlsa_missing', 'info', `no TLSA records at ${tlsa.name}: DANE is not in use for this host (senders fall back to opportunistic TLS)`, 'RFC 7672 §2.2', {
      ...where,
      status: tlsa.status,
    });
    return { verdict: 'not-applicable', findings: [found] };
  }
  return null;
}

/** What the records themselves say: not DNSSEC-authenticated, unusable for SMTP, no rollover record. */
function judgeRecords(tlsa: TlsaLookup, where: TlsaWhere, records: ReturnType<typeof presentTlsa>[]): Finding[] {
  const findings: Finding[] = [];
  const dnssec = tlsa.dnssec;
  if (dnssec.status === 'indeterminate' && dnssec.error) {
    // A question of the validation got no answer: DANE's DNSSEC was not checked, which says nothing of the host.
    findings.push(
      finding('dane_dnssec_unchecked', 'unknown', `whether the TLSA records at ${tlsa.name} are DNSSEC-signed could not be checked: ${dnssec.error.message}`, 'RFC 7672 §2.2', {
        ...where,
        records,
        dnssec,
        error: dnssec.error,
      }),
    );
  } else if (dnssec.status !== 'secure') {
    const evidence = { ...where, records, dnssec };
    findings.push(
      dnssec.status === 'indeterminate'
        ? // No trust anchor covers the name, or its chain cannot be followed: DANE was not checked (RFC 4033 §5).
          finding('dane_dnssec_indeterminate', 'unknown', `whether the TLSA records at ${tlsa.name} are DNSSEC-signed could not be decided (${dnssec.reason ?? 'unknown'}): DANE was not checked`, 'RFC 7672 §2.2', evidence)
        : finding('dane_tlsa_insecure', 'warning', `the TLSA records at ${tlsa.name} are not DNSSEC-authenticated${dnssec.reason ? ` (${dnssec.reason})` : ''}: senders ignore them; sign the zone`, 'RFC 7672 §2.2', evidence),
    );
  }

  const usable = tlsa.records.filter((record) => record.unusable === null);
  const unusable = tlsa.records.filter((record) => record.unusable !== null);
  if (usable.length === 0) {
    findings.push(
      finding(
        'dane_unusable_only',
        'error',
        `every TLSA record at ${tlsa.name} is unusable for SMTP (${unusable.map((record) => record.unusable).join('; ')}): senders still require TLS but authenticate nothing; publish DANE-EE(3) or DANE-TA(2) records`,
        'RFC 7672 §3.1.3',
        { ...where, records },
      ),
    );
  } else if (unusable.length > 0) {
    findings.push(
      finding('dane_unusable_record', 'info', `${unusable.length} of the ${tlsa.records.length} TLSA records are unusable for SMTP and are ignored: ${unusable.map((record) => record.unusable).join('; ')}`, 'RFC 7672 §3.1.3', {
        ...where,
        records: unusable.map(presentTlsa),
      }),
    );
  }
  if (tlsa.records.length === 1 && tlsa.records[0]!.usage === 3 && tlsa.records[0]!.unusable === null) {
    findings.push(
      finding(
        'dane_no_rollover_record',
        'warning',
        'a single DANE-EE(3) TLSA record: the next certificate or key change breaks delivery from DANE senders; publish a second record for the next key before the change (the "current + next" rollover)',
        'RFC 7671 §8.1, RFC 7672 §8.1',
        { ...where, records },
      ),
    );
  }
  return findings;
}

/**
 * Records published but no STARTTLS, or no certificate to match them
 * against: the verdict `no-tls`. Records that are not DNSSEC-secure are
 * ignored by senders (RFC 7672 §2.2), who then deliver as without DANE: a
 * warning and `not-applicable`, as for a chain that does not match them.
 */
function judgeTlsSession(where: TlsaWhere, records: ReturnType<typeof presentTlsa>[], chain: ReadonlyArray<unknown> | null, starttlsOffered: boolean | null, secure: boolean): DaneVerdict | null {
  const verdict = secure ? 'no-tls' : 'not-applicable';
  const consequence = secure ? 'DANE senders do not deliver to it' : 'senders ignore records without DNSSEC, so DANE does not apply';
  if (starttlsOffered === false) {
    const found = finding('dane_starttls_missing', secure ? 'error' : 'warning', `the host publishes TLSA records but does not offer STARTTLS: ${consequence}`, 'RFC 7672 §2.2', { ...where, records });
    return { verdict, findings: [found] };
  }
  if (!chain || chain.length === 0) {
    const findings =
      starttlsOffered !== null
        ? [
            finding('dane_no_certificate', secure ? 'error' : 'warning', `the host publishes TLSA records but no TLS session (and no certificate) could be had: ${consequence}`, 'RFC 7672 §2.2', {
              ...where,
              records,
            }),
          ]
        : [];
    return { verdict, findings };
  }
  return null;
}

/** The presented chain against the usable records: matched, a DANE-TA(2) match without the name, or no match. */
function judgeMatches(tlsa: TlsaLookup, matches: readonly TlsaMatch[], where: TlsaWhere, records: ReturnType<typeof presentTlsa>[]): DaneVerdict {
  const matched = matches.filter((match) => match.matched);
  const named = matched.filter((match) => match.record.usage === 3 || match.name_match !== false);
  const secure = tlsa.dnssec.status === 'secure';
  if (named.length > 0) {
    const found = finding(
      'dane_match',
      secure ? 'pass' : 'info',
      `the presented certificate chain matches ${named.map((match) => match.record.label).join(', ')}${secure ? '' : ' (but senders ignore records without DNSSEC)'}`,
      'RFC 7672 §3.1',
      { ...where, matched: named.map((match) => ({ record: presentTlsa(match.record), depth: match.depth })) },
    );
    return { verdict: secure ? 'matched' : 'not-applicable', findings: [found] };
  }
  if (matched.length > 0) {
    const found = finding(
      'dane_ta_name_mismatch',
      secure ? 'error' : 'warning',
      `the chain leads to a DANE-TA(2) trust anchor, but the server certificate does not name ${tlsa.host}${baseDomain(tlsa) !== tlsa.host ? ` or ${baseDomain(tlsa)}` : ''}`,
      'RFC 7672 §3.2.2',
      { ...where, matched: matched.map((match) => presentTlsa(match.record)) },
    );
    return { verdict: secure ? 'mismatch' : 'not-applicable', findings: [found] };
  }
  const why = mismatchReasons(matches).join('; ');
  const found = finding(
    'dane_no_match',
    secure ? 'error' : 'warning',
    `no TLSA record at ${tlsa.name} matches the presented certificate chain${secure ? ': DANE senders do not deliver to this host' : ''}${why === '' ? '' : ` (${why})`}`,
    'RFC 7672 §3.1',
    { ...where, records, reasons: matches.map((match) => ({ record: presentTlsa(match.record), reason: match.reason })) },
  );
  return { verdict: secure ? 'mismatch' : 'not-applicable', findings: [found] };
}
