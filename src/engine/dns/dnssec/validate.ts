import type { RecordType } from 'dns-packet';
import type { EngineContext } from '../../context.js';
import { NetintelError, toNetintelError, type ErrorCode } from '../../../errors.js';
import type { DnsAnswer, DnsTransportKind } from '../dns-result.js';
import { createDnsTransport, type DnsTransport } from '../dns-transport.js';
import { normaliseDomain } from '../dns-name.js';
import { readSystemResolvers } from '../resolver-address.js';
import { proveDenial, proveExpansion, type DenialProof } from './denial.js';
import { dsMatchesKey, isSupportedDigest, readDnskey, readDs, TYPE, typeName, typeNumber, type Dnskey, type Ds } from './dnssec-records.js';
import { checkRrsetSignatures, findRrset, ownerLabelCount, rrsetsOf, type SignedRrset } from './rrset.js';
import { rootTrustAnchor, type TrustAnchor } from './trust-anchor.js';
import { isSupportedAlgorithm } from './verify-signature.js';
import { isAtOrBelow, parseName, presentName, readMessage, readName, sameName, WireFormatError, type WireMessage, type WireName } from './wire.js';

/**
 * DNSSEC validation done here rather than trusted from the resolver's AD
 * bit (RFC 4033 §4: a stub that does not trust the path to its resolver
 * validates itself). The resolver is asked with DO and CD set (RFC 4035
 * §3.2), so it hands over signatures and denial records even for data it
 * would call bogus, and the chain is built from a trust anchor down:
 * DS -> DNSKEY -> RRSIG over each RRset (RFC 4035 §5).
 */

/** RFC 4033 §5 / RFC 4035 §4.3 security status. */
export type DnssecStatus = 'secure' | 'insecure' | 'bogus' | 'indeterminate';

/** One zone of the chain of trust. */
export interface DnssecChainLink {
  /** The zone, absolute with its trailing dot. */
  zone: string;
  /** The DS records (or the trust anchor's) that vouch for the zone's keys. */
  ds: Array<{ key_tag: number; algorithm: number; digest_type: number }>;
  /** The zone's DNSKEY RRset. */
  dnskeys: Array<{ tag: number; algorithm: number; flags: number }>;
  /** The zone that signed the DS RRset; null for the trust anchor. */
  signer: string | null;
  status: DnssecStatus;
  reason: string | null;
}

/** The answer the verdict is about, as the resolver gave it with DO set. */
export interface DnssecAnswer {
  name: string;
  type: string;
  rcode: string;
  /** The answer section, RRSIG records included (records for names off the question's chain, or of another type, left out). */
  records: DnsAnswer[];
  /** Records of the answer section for names off the question's chain, or of another type, left out of `records`. */
  ignoredRecords: number;
  /** The resolver's AD bit on a query without CD; null when that query failed. */
  authentic_data: boolean | null;
  /** The resolver that answered the question, `host:port`. */
  resolver: string;
  transport: DnsTransportKind;
  latency_ms: number;
}

export interface DnssecVerdict {
  status: DnssecStatus;
  /** Why the status is not secure (`expired signature ...`, `missing DS ...`), or what made it insecure; null when secure. */
  reason: string | null;
  /**
   * A question of the chain (DS, DNSKEY) that got no answer (a timeout,
   * SERVFAIL): that lookup's error; or `upstream` when the resolver answered
   * the trust anchor's DNSKEY question without the DNSKEY RRset or its
   * RRSIG (it passes no DNSSEC records on). The status is then
   * `indeterminate` for want of an answer: DNSSEC was not checked, which
   * says nothing of the name. Null when every question was answered with
   * what validation needs, whatever the status.
   */
  error: { code: ErrorCode; message: string } | null;
  chain: DnssecChainLink[];
  answer: DnssecAnswer;
}

export interface ValidateOptions {
  /** Where the chain starts; the IANA root KSKs by default. */
  trustAnchors?: TrustAnchor;
}

/** A question and its response, wire form and typed answers. */
interface Asked {
  message: WireMessage;
  answers: DnsAnswer[];
  ignored_answers: number;
  rcode: string;
  resolver: string;
  transport: DnsTransportKind;
  latency_ms: number;
}

/**
 * Validates the RRset of `type` at `name`, or the proof that it does not
 * exist, from the trust anchor down. A question of the chain (DS, DNSKEY)
 * that gets no answer gives `indeterminate` with the error as the reason.
 *
 * @throws NetintelError `invalid_input` for a name that is not a domain
 *   name, `usage` for a type netintel cannot ask; `timeout`, `unreachable`,
 *   `upstream` when the question itself gets no answer (as DnsTransport.query).
 */
export async function validateRrset(ctx: EngineContext, name: string, type: string, options: ValidateOptions = {}): Promise<DnssecVerdict> {
  const ascii = name === '.' ? '.' : normaliseDomain(name).ascii;
  const qtype = typeNumber(type);
  if (qtype === null) throw new NetintelError('usage', `cannot validate record type ${JSON.stringify(type)}: not a type netintel knows`);
  const anchor = options.trustAnchors ?? rootTrustAnchor();
  const resolvers = ctx.resolvers ?? (await readSystemResolvers());
  const settings = { resolvers, tcp: ctx.dnsTcp, timeoutMs: ctx.timeoutMs, retries: ctx.dnsRetries, memory: ctx.dnsMemory ?? null };
  const checking = createDnsTransport({ ...settings, dnssec: 'dnssec-cd' });
  const plain = createDnsTransport({ ...settings, dnssec: 'dnssec' });
  try {
    const lookup = memoisedLookup(checking);
    const adBit = plain.query(ascii, wireTypeName(qtype)).then(
      (exchange) => readMessage(exchange.message).authentic_data,
      () => null,
    );
    const verdict = await runValidation(lookup, anchor, parseName(ascii), qtype, ctx.now());
    return { ...verdict, answer: { ...verdict.answer, authentic_data: await adBit } };
  } finally {
    await Promise.all([checking.close(), plain.close()]);
  }
}

/**
 * The status, reason and error of {@link validateRrset}, for reports that
 * need only those; a question that gets no answer is `indeterminate` with
 * its error here, never an exception (but a bad name or type still throws).
 */
export async function dnssecStatusOf(ctx: EngineContext, name: string, type: string, options: ValidateOptions = {}): Promise<Pick<DnssecVerdict, 'status' | 'reason' | 'error'>> {
  const anchor = options.trustAnchors ?? rootTrustAnchor();
  const qname = parseName(name === '.' ? '.' : normaliseDomain(name).ascii);
  if (!isAtOrBelow(qname, anchor.owner)) {
    return { status: 'indeterminate', reason: outsideAnchor(qname, anchor), error: null };
  }
  try {
    const { status, reason, error } = await validateRrset(ctx, name, type, options);
    return { status, reason, error };
  } catch (error) {
    const failure = toNetintelError(error);
    if (failure.code === 'usage' || failure.code === 'invalid_input') throw failure;
    return { status: 'indeterminate', reason: `no answer: ${failure.message}`, error: { code: failure.code, message: failure.message } };
  }
}

function outsideAnchor(qname: WireName, anchor: TrustAnchor): string {
  return `no trust anchor: ${presentName(qname)} is outside ${presentName(anchor.owner)}`;
}

type Lookup = (name: WireName, type: number) => Promise<Asked>;

function memoisedLookup(transport: DnsTransport): Lookup {
  const asked = new Map<string, Promise<Asked>>();
  return (name, type) => {
    const text = presentName(name);
    const key = `${text} ${type}`;
    let pending = asked.get(key);
    if (!pending) {
      const query = text === '.' ? '.' : text.slice(0, -1);
      pending = transport.query(query, wireTypeName(type)).then((exchange) => ({
        message: readWire(exchange.message, exchange.resolver, key),
        answers: exchange.answers,
        ignored_answers: exchange.ignored_answers,
        rcode: exchange.rcode,
        resolver: exchange.resolver,
        transport: exchange.transport,
        latency_ms: exchange.latencyMs,
      }));
      asked.set(key, pending);
    }
    return pending;
  };
}

/** The wire form of a response; one that cannot be read is the resolver's fault (`upstream`). */
function readWire(message: Buffer, resolver: string, question: string): WireMessage {
  try {
    return readMessage(message);
  } catch (error) {
    if (!(error instanceof WireFormatError)) throw error;
    throw new NetintelError('upstream', `DNS server ${resolver} sent a malformed response for ${question}: ${error.message}`, { details: { resolver } });
  }
}

/** The type as dns-packet spells it on the wire (`UNKNOWN_64` for types it has no name for). */
function wireTypeName(type: number): RecordType {
  const name = typeName(type);
  return (name.startsWith('TYPE') || type === 64 || type === 65 ? `UNKNOWN_${type}` : name) as RecordType;
}

class Verdict extends Error {
  /** Set when the verdict is that DNSSEC could not be checked: the question whose answer lacked what validation needs. */
  constructor(readonly status: DnssecStatus, readonly reason: string, readonly failure: DnssecVerdict['error'] = null) {
    super(reason);
  }
}

async function runValidation(lookup: Lookup, anchor: TrustAnchor, qname: WireName, qtype: number, now: Date): Promise<DnssecVerdict> {
  const chain: DnssecChainLink[] = [];
  // The question itself: its failure is the caller's error, not a verdict.
  const asked = await lookup(qname, qtype);
  const answerOf = (): DnssecVerdict['answer'] => ({
    name: presentName(qname),
    type: typeName(qtype),
    rcode: asked.rcode,
    records: asked.answers,
    ignoredRecords: asked.ignored_answers,
    authentic_data: null,
    resolver: asked.resolver,
    transport: asked.transport,
    latency_ms: asked.latency_ms,
  });
  try {
    if (qtype === TYPE.RRSIG) {
      throw new Verdict('indeterminate', 'RRSIG records are not signed themselves (RFC 4035 §2.2); ask for the type they cover');
    }
    let name = qname;
    let message = asked.message;
    // RFC 4035 §5.3.3 validates each RRset of the answer on its own: a CNAME
    // and then the records of its target, which may sit in another zone.
    for (let hops = 0; ; hops++) {
      const next = await validateAnswer(lookup, anchor, message, name, qtype, now, chain);
      if (next === null) break;
      if (hops >= MAX_CNAME_HOPS) throw new Verdict('indeterminate', `more than ${MAX_CNAME_HOPS} CNAMEs from ${presentName(qname)}`);
      name = next;
      message = (await lookup(name, qtype)).message;
    }
    return { status: 'secure', reason: null, error: null, chain, answer: answerOf() };
  } catch (error) {
    if (error instanceof Verdict) return { status: error.status, reason: error.reason, error: error.failure, chain, answer: answerOf() };
    // A question of the chain that got no answer (the question itself threw above).
    const failure = toNetintelError(error);
    return { status: 'indeterminate', reason: `no answer: ${failure.message}`, error: { code: failure.code, message: failure.message }, chain, answer: answerOf() };
  }
}

/** CNAMEs followed before giving up (a loop, or a chain no resolver would follow). */
const MAX_CNAME_HOPS = 8;

/**
 * One name's answer in `message`: the chain from the anchor to the zone that
 * signed it, then its RRSIGs or denial. Gives the CNAME target when the
 * answer was a CNAME to follow, null when done; throws a Verdict otherwise.
 * Links of zones already in `chain` are not added twice.
 */
async function validateAnswer(lookup: Lookup, anchor: TrustAnchor, message: WireMessage, qname: WireName, qtype: number, now: Date, chain: DnssecChainLink[]): Promise<WireName | null> {
  if (!isAtOrBelow(qname, anchor.owner)) throw new Verdict('indeterminate', outsideAnchor(qname, anchor));
  const links: DnssecChainLink[] = [];
  const keep = (): void => {
    for (const link of links) if (!chain.some((known) => known.zone === link.zone)) chain.push(link);
  };
  try {
    let zone = anchor.owner;
    let keys = await trustedKeys(lookup, zone, anchor.ds, anchor.dnskeys, null, links, now);
    const target = signerOf(message, qname, qtype, anchor.owner) ?? qname;
    for (let depth = zone.length + 1; depth <= target.length; depth++) {
      const child = target.slice(target.length - depth);
      const step = await descend(lookup, zone, keys, child, links, now);
      if (step === null) continue;
      zone = child;
      keys = step;
    }
    return checkAnswer(message, zone, keys, qname, qtype, now);
  } catch (error) {
    // A question of the chain that got no answer leaves its link undecided.
    const last = links[links.length - 1];
    if (!(error instanceof Verdict) && last && last.status === 'secure') {
      last.status = 'indeterminate';
      last.reason = `no answer: ${toNetintelError(error).message}`;
    }
    throw error;
  } finally {
    keep();
  }
}

/**
 * The zone that signed the response: the signer of an RRSIG over the answer
 * (or the CNAME at the name, or a DNAME above it), else of the denial records
 * or SOA in the authority section, else the SOA's owner. Only names between
 * the anchor and the question count.
 */
function signerOf(message: WireMessage, qname: WireName, qtype: number, top: WireName): WireName | null {
  const plausible = (signer: WireName): boolean => isAtOrBelow(qname, signer) && isAtOrBelow(signer, top);
  const answers = (set: SignedRrset): boolean => (sameName(set.owner, qname) && (set.type === qtype || set.type === TYPE.CNAME)) || isDnameAbove(set, qname);
  for (const set of rrsetsOf(message.answer)) {
    if (!answers(set)) continue;
    const signer = set.signatures.find((s) => plausible(s.signer))?.signer;
    if (signer) return signer;
  }
  for (const set of rrsetsOf(message.authority)) {
    const signer = set.signatures.find((s) => plausible(s.signer))?.signer;
    if (signer) return signer;
  }
  const soa = message.authority.find((r) => r.type === TYPE.SOA);
  return soa && plausible(soa.owner) ? soa.owner : null;
}

/**
 * One step down: the DS RRset of `child`, signed by `zone`, and then the
 * child's keys; null when `child` is no zone cut (its DS is proven absent
 * and it is not a delegation).
 */
async function descend(lookup: Lookup, zone: WireName, keys: Dnskey[], child: WireName, chain: DnssecChainLink[], now: Date): Promise<Dnskey[] | null> {
  const asked = await lookup(child, TYPE.DS);
  const dsSet = findRrset(rrsetsOf(asked.message.answer), child, TYPE.DS);
  if (dsSet) {
    const check = checkRrsetSignatures(dsSet, zone, keys, now);
    if (!check.ok) throw failLink(chain, child, [], zone, check.unsupported ? 'insecure' : 'bogus', `${check.reason} on ${presentName(child)} DS`);
    const dsList = dsSet.records.map((r) => readDs(r.rdata));
    return trustedKeys(lookup, child, dsList, [], zone, chain, now);
  }
  const denial = signedDenial(asked.message, zone, keys, now, `${presentName(child)} DS`);
  if (denial.error) throw failLink(chain, child, [], zone, 'bogus', `missing DS: ${denial.error}`);
  const proof = proveDenial(denial.sets, child, TYPE.DS, asked.message.rcode === 3);
  switch (proof.kind) {
    case 'insecure-delegation':
      throw failLink(chain, child, [], zone, 'insecure', `no DS: ${presentName(child)} is an unsigned delegation (RFC 4035 §5.2)`);
    case 'opt-out':
      throw failLink(chain, child, [], zone, 'insecure', `no DS: ${presentName(child)} may be an unsigned delegation (NSEC3 opt-out span, RFC 5155 §6)`);
    case 'too-many-iterations':
      throw failLink(chain, child, [], zone, 'insecure', tooManyIterations(proof.iterations));
    case 'none':
      throw failLink(chain, child, [], zone, 'bogus', `missing DS: ${proof.reason} for ${presentName(child)}`);
    default:
      return null;
  }
}

/** The reason of an insecure verdict from NSEC3 above the iteration limit. */
function tooManyIterations(iterations: number): string {
  return `NSEC3 with ${iterations} iterations, above the limit (RFC 9276 §3.2)`;
}

/** The reason of an insecure verdict whose denial rests on an NSEC3 opt-out span. */
function optOutSpan(proof: Extract<DenialProof, { kind: 'opt-out' }>): string {
  return `NSEC3 opt-out: ${presentName(proof.nextCloser)} is in an opt-out span, where unsigned delegations may exist unseen (RFC 5155 §9.2)`;
}

/**
 * The DNSKEY RRset of `zone`, accepted when a key that one of `ds` (or one
 * of `anchorKeys`) vouches for signed it (RFC 4035 §5.2).
 */
async function trustedKeys(
  lookup: Lookup,
  zone: WireName,
  ds: readonly Ds[],
  anchorKeys: readonly Dnskey[],
  signer: WireName | null,
  chain: DnssecChainLink[],
  now: Date,
): Promise<Dnskey[]> {
  const dsSummary = ds.map((d) => ({ key_tag: d.keyTag, algorithm: d.algorithm, digest_type: d.digestType }));
  const link: DnssecChainLink = { zone: presentName(zone), ds: dsSummary, dnskeys: [], signer: signer ? presentName(signer) : null, status: 'secure', reason: null };
  chain.push(link);
  const fail = (status: DnssecStatus, reason: string, failure: DnssecVerdict['error'] = null): Verdict => {
    link.status = status;
    link.reason = reason;
    return new Verdict(status, reason, failure);
  };
  const usableDs = ds.filter((d) => isSupportedDigest(d.digestType) && isSupportedAlgorithm(d.algorithm));
  const usableAnchors = anchorKeys.filter((k) => isSupportedAlgorithm(k.algorithm));
  if (usableDs.length === 0 && usableAnchors.length === 0) {
    throw fail('insecure', `no DS with a supported algorithm and digest for ${presentName(zone)} (RFC 4035 §5.2)`);
  }
  const asked = await lookup(zone, TYPE.DNSKEY);
  const keySet = findRrset(rrsetsOf(asked.message.answer), zone, TYPE.DNSKEY);
  // At the trust anchor nothing has been proven yet: a resolver that strips DNSSEC records (or drops
  // the DO bit) looks like this, and calling every name bogus would blame the domain. The resolver
  // could not give "the necessary DNSSEC RRs" (RFC 4035 §4.3, Indeterminate): DNSSEC was not checked.
  if (chain.length === 1 && (!keySet || keySet.signatures.length === 0)) {
    const missing = keySet ? `the DNSKEY RRset of the trust anchor ${presentName(zone)} without its RRSIG` : `no DNSKEY RRset for the trust anchor ${presentName(zone)}`;
    const message = `DNS server ${asked.resolver} gave ${missing}: it does not pass DNSSEC records on; try another --resolver`;
    throw fail('indeterminate', message, { code: 'upstream', message });
  }
  if (!keySet) throw fail('bogus', `missing DNSKEY: ${presentName(zone)} has no DNSKEY RRset`);
  const keys = keySet.records.flatMap((r) => {
    try {
      return [readDnskey(r.rdata)];
    } catch {
      return [];
    }
  });
  link.dnskeys = keys.map((k) => ({ tag: k.keyTag, algorithm: k.algorithm, flags: k.flags }));
  const vouched = keys.filter((k) => usableDs.some((d) => dsMatchesKey(d, zone, k)) || usableAnchors.some((a) => a.rdata.equals(k.rdata)));
  if (vouched.length === 0) throw fail('bogus', unvouchedReason(zone, keys, usableDs, usableAnchors));
  const check = checkRrsetSignatures(keySet, zone, vouched, now);
  if (!check.ok) throw fail('bogus', `${check.reason} on ${presentName(zone)} DNSKEY`);
  return keys;
}

/**
 * Why no DNSKEY of the zone is vouched for. A DS whose key tag and algorithm
 * name a DNSKEY that is there, but whose digest is not that key's
 * (RFC 4034 §5.1.4), is a digest mismatch: key tags are only a hint
 * (RFC 4034 Appendix B), so the tag matching says nothing more.
 */
function unvouchedReason(zone: WireName, keys: readonly Dnskey[], ds: readonly Ds[], anchorKeys: readonly Dnskey[]): string {
  const named = (tag: number, algorithm: number): boolean => keys.some((k) => k.keyTag === tag && k.algorithm === algorithm);
  const wrongDigest = ds.find((d) => named(d.keyTag, d.algorithm));
  if (wrongDigest) {
    return `digest mismatch: DS ${wrongDigest.keyTag} (digest type ${wrongDigest.digestType}) is not the digest of DNSKEY ${wrongDigest.keyTag} of ${presentName(zone)}`;
  }
  const otherKey = anchorKeys.find((a) => named(a.keyTag, a.algorithm));
  if (otherKey) return `key mismatch: DNSKEY ${otherKey.keyTag} of ${presentName(zone)} is not the trust anchor's key with that tag`;
  const tags = [...new Set([...ds.map((d) => d.keyTag), ...anchorKeys.map((a) => a.keyTag)])].join(', ');
  return `key tag mismatch: no DNSKEY of ${presentName(zone)} matches DS ${tags}`;
}

function failLink(chain: DnssecChainLink[], child: WireName, ds: DnssecChainLink['ds'], signer: WireName, status: DnssecStatus, reason: string): Verdict {
  chain.push({ zone: presentName(child), ds, dnskeys: [], signer: presentName(signer), status, reason });
  return new Verdict(status, reason);
}

/** The NSEC and NSEC3 RRsets of a response's authority section, each checked against the zone's keys. */
function signedDenial(message: WireMessage, zone: WireName, keys: Dnskey[], now: Date, what: string): { sets: SignedRrset[]; error: string | null } {
  const sets = rrsetsOf(message.authority).filter((s) => (s.type === TYPE.NSEC || s.type === TYPE.NSEC3) && s.records.length > 0);
  if (sets.length === 0) return { sets, error: `denial not proven (no NSEC or NSEC3 records for ${what})` };
  for (const set of sets) {
    const check = checkRrsetSignatures(set, zone, keys, now);
    if (!check.ok) return { sets, error: `${check.reason} on ${presentName(set.owner)} ${typeName(set.type)}` };
  }
  return { sets, error: null };
}

/**
 * The answer RRset's signatures, or the denial of it, in the zone whose keys
 * are known; the CNAME's target (or the DNAME's) when there is one to follow.
 */
function checkAnswer(message: WireMessage, zone: WireName, keys: Dnskey[], qname: WireName, qtype: number, now: Date): WireName | null {
  const sets = rrsetsOf(message.answer);
  const dname = qtype === TYPE.DNAME ? undefined : sets.find((set) => isDnameAbove(set, qname) && set.records.length > 0);
  if (dname) return followDname(message, sets, dname, zone, keys, qname, qtype, now);
  const answerSet = findRrset(sets, qname, qtype) ?? (qtype === TYPE.CNAME ? null : findRrset(sets, qname, TYPE.CNAME));
  if (answerSet) {
    checkSignedAnswer(message, answerSet, zone, keys, qname, now);
    if (answerSet.type === TYPE.CNAME && qtype !== TYPE.CNAME) return readName(answerSet.records[0]!.rdata, 0).name;
    return null;
  }
  const denial = signedDenial(message, zone, keys, now, `${presentName(qname)} ${typeName(qtype)}`);
  if (denial.error) throw new Verdict('bogus', denial.error);
  const nxdomain = message.rcode === 3;
  const proof = proveDenial(denial.sets, qname, qtype, nxdomain);
  if (proof.kind === 'too-many-iterations') throw new Verdict('insecure', tooManyIterations(proof.iterations));
  if (proof.kind === 'opt-out') throw new Verdict('insecure', optOutSpan(proof));
  if (proof.kind === 'none') throw new Verdict('bogus', `${proof.reason} for ${presentName(qname)} ${typeName(qtype)}`);
  if (proof.kind === 'nxdomain' && !nxdomain) throw new Verdict('bogus', `denial not proven (NXDOMAIN proof in a NOERROR answer)`);
  return null;
}

/**
 * Checks the RRSIGs over one RRset of the answer, which `name` led to; an
 * RRset expanded from a wildcard also needs proof that `name` itself does
 * not exist (RFC 4035 §5.3.4).
 */
function checkSignedAnswer(message: WireMessage, set: SignedRrset, zone: WireName, keys: Dnskey[], name: WireName, now: Date): void {
  const what = `${presentName(set.owner)} ${typeName(set.type)}`;
  const check = checkRrsetSignatures(set, zone, keys, now);
  if (!check.ok) throw new Verdict('bogus', `${check.unsupported ? 'no RRSIG with a supported algorithm' : check.reason} on ${what}`);
  if (check.signature.labels >= ownerLabelCount(set.owner)) return;
  const denial = signedDenial(message, zone, keys, now, `the wildcard answer ${what}`);
  if (denial.error) throw new Verdict('bogus', `wildcard answer: ${denial.error}`);
  const expansion = proveExpansion(denial.sets, name.slice(name.length - check.signature.labels - 1));
  if (expansion.kind === 'too-many-iterations') throw new Verdict('insecure', `wildcard answer: ${tooManyIterations(expansion.iterations)}`);
  if (expansion.kind === 'opt-out') throw new Verdict('insecure', `wildcard answer: ${optOutSpan(expansion)}`);
  if (expansion.kind === 'none') throw new Verdict('bogus', `wildcard answer: ${expansion.reason} for ${presentName(name)}`);
}

/** A DNAME RRset whose owner is a proper ancestor of `name`, so redirects it (RFC 6672 §2.2). */
function isDnameAbove(set: SignedRrset, name: WireName): boolean {
  return set.type === TYPE.DNAME && isAtOrBelow(name, set.owner) && !sameName(name, set.owner);
}

/**
 * A name below a signed DNAME: the CNAME beside it is synthesised and
 * unsigned, so the DNAME's signatures vouch for it, and it must be the one
 * the DNAME synthesises (RFC 6672 §5.3.1, RFC 4035 §5.3.3). Gives the name to
 * follow, or null when the CNAME itself was asked for.
 */
function followDname(message: WireMessage, sets: readonly SignedRrset[], dname: SignedRrset, zone: WireName, keys: Dnskey[], qname: WireName, qtype: number, now: Date): WireName | null {
  checkSignedAnswer(message, dname, zone, keys, dname.owner, now);
  const target = [...qname.slice(0, qname.length - dname.owner.length), ...readName(dname.records[0]!.rdata, 0).name];
  const cname = findRrset(sets, qname, TYPE.CNAME);
  const synthesised = cname?.records.every((record) => sameName(readName(record.rdata, 0).name, target)) ?? true;
  if (!synthesised) throw new Verdict('bogus', `the CNAME at ${presentName(qname)} is not the one the DNAME at ${presentName(dname.owner)} synthesises (${presentName(target)})`);
  return qtype === TYPE.CNAME ? null : target;
}
