import { createHash } from 'node:crypto';
import { OPT_OUT_FLAG, readNsec, readNsec3, TYPE, type Nsec, type Nsec3 } from './dnssec-records.js';
import type { SignedRrset } from './rrset.js';
import { compareNames, isAtOrBelow, lowerAscii, nameWire, presentName, sameName, type WireName } from './wire.js';

/**
 * Authenticated denial of existence from NSEC (RFC 4035 §5.4) and NSEC3
 * (RFC 5155 §8) records whose signatures the caller has already checked.
 */

/** What the denial records prove about a question. */
export type DenialProof =
  /** The name does not exist (NXDOMAIN proven, with no wildcard that could have answered). */
  | { kind: 'nxdomain' }
  /** The name exists and has no record of the type. */
  | { kind: 'nodata' }
  /** For DS: a record at the name shows a delegation (NS, no SOA) without DS: the child is unsigned. */
  | { kind: 'insecure-delegation' }
  /**
   * The proof rests on an NSEC3 opt-out span over the next closer name: a
   * name there may exist as an unsigned delegation, so its absence (or its
   * lack of a DS) is not proven (RFC 5155 §6, §9.2).
   */
  | { kind: 'opt-out'; nextCloser: WireName }
  /** NSEC3 with more iterations than validators should compute (RFC 9276 §3.2). */
  | { kind: 'too-many-iterations'; iterations: number }
  | { kind: 'none'; reason: string };

/**
 * What the denial records prove about the next closer name of a wildcard
 * expansion (RFC 4035 §5.3.4, RFC 5155 §8.8): `absent` when it does not
 * exist, so the wildcard rightly answered.
 */
export type ExpansionProof = { kind: 'absent' } | Extract<DenialProof, { kind: 'opt-out' | 'too-many-iterations' | 'none' }>;

/**
 * NSEC3 iterations beyond which a response is treated as insecure
 * (RFC 9276 §3.2 lets validators pick the limit; 150 is BIND's and Unbound's).
 */
export const MAX_NSEC3_ITERATIONS = 150;

interface NsecEntry { owner: WireName; nsec: Nsec }
interface Nsec3Entry { owner: WireName; hash: Buffer; nsec3: Nsec3 }

/**
 * Whether the denial records prove that the next closer name of a wildcard
 * expansion does not exist (RFC 4035 §5.3.4 for NSEC, RFC 5155 §8.8 for
 * NSEC3). The NSEC3 rules of every other proof hold here too: more than
 * {@link MAX_NSEC3_ITERATIONS} iterations, or an opt-out span over the name,
 * prove nothing either way and make the answer insecure.
 */
export function proveExpansion(sets: readonly SignedRrset[], nextCloser: WireName): ExpansionProof {
  const { nsecs, nsec3s } = denialEntries(sets);
  if (nsecs.length > 0) {
    return nsecs.some((e) => nsecProvesAbsent(e, nextCloser))
      ? { kind: 'absent' }
      : notProven('no NSEC covers the next closer name');
  }
  const usable = usableNsec3s(nsec3s);
  if ('kind' in usable) return usable;
  const cover = usable.covering(nextCloser);
  if (!cover) return notProven('no NSEC3 covers the next closer name');
  if (isOptOut(cover)) return { kind: 'opt-out', nextCloser };
  return { kind: 'absent' };
}

function denialEntries(sets: readonly SignedRrset[]): { nsecs: NsecEntry[]; nsec3s: Nsec3Entry[] } {
  const nsecs: NsecEntry[] = [];
  const nsec3s: Nsec3Entry[] = [];
  for (const set of sets) {
    for (const record of set.records) {
      try {
        if (set.type === TYPE.NSEC) nsecs.push({ owner: set.owner, nsec: readNsec(record.rdata) });
        if (set.type === TYPE.NSEC3) {
          const hash = base32hexDecode(set.owner[0]?.toString('latin1') ?? '');
          if (hash) nsec3s.push({ owner: set.owner, hash, nsec3: readNsec3(record.rdata) });
        }
      } catch {
        // A record that cannot be read proves nothing.
      }
    }
  }
  return { nsecs, nsec3s };
}

/** Proves what the NSEC or NSEC3 RRsets among `sets` say about `qname`/`qtype`; `nxdomain` asks for proof the name does not exist. */
export function proveDenial(sets: readonly SignedRrset[], qname: WireName, qtype: number, nxdomain: boolean): DenialProof {
  const { nsecs, nsec3s } = denialEntries(sets);
  if (nsecs.length > 0) return proveWithNsec(nsecs, qname, qtype, nxdomain);
  if (nsec3s.length > 0) return proveWithNsec3(nsec3s, qname, qtype, nxdomain);
  return notProven('no NSEC or NSEC3 records');
}

function proveWithNsec(entries: NsecEntry[], qname: WireName, qtype: number, nxdomain: boolean): DenialProof {
  const match = entries.find((e) => sameName(e.owner, qname));
  if (match) {
    if (nxdomain) return notProven('NSEC shows the name exists');
    const flaw = nodataFlaw(match.nsec.types, qname, qtype);
    if (flaw) return notProven(`the NSEC at ${presentName(qname)} ${flaw}`);
    return qtype === TYPE.DS && isDelegation(match.nsec.types) ? { kind: 'insecure-delegation' } : { kind: 'nodata' };
  }
  const covering = entries.find((e) => nsecProvesAbsent(e, qname));
  if (!covering) return notProven('no NSEC covers the name');
  // RFC 4035 §3.1.3.2: an empty non-terminal is covered by an NSEC whose next name is below it.
  if (isAtOrBelow(covering.nsec.next, qname) && !sameName(covering.nsec.next, qname)) {
    return nxdomain ? notProven('the name is an empty non-terminal') : { kind: 'nodata' };
  }
  const encloser = closestEncloser(qname, covering);
  const wildcard = [Buffer.from('*'), ...encloser];
  if (!nxdomain) {
    // RFC 4035 §3.1.3.4: NODATA from a wildcard, the name covered and the wildcard without the type.
    const atWildcard = entries.find((e) => sameName(e.owner, wildcard));
    if (atWildcard && !nodataFlaw(atWildcard.nsec.types, wildcard, qtype)) return { kind: 'nodata' };
    return notProven('NSEC shows NXDOMAIN for a NOERROR answer');
  }
  // RFC 4035 §5.4: NXDOMAIN also needs proof that no wildcard at the closest encloser exists.
  if (!entries.some((e) => nsecProvesAbsent(e, wildcard))) return notProven('no NSEC denies the wildcard');
  return { kind: 'nxdomain' };
}

function notProven(why: string): Extract<DenialProof, { kind: 'none' }> {
  return { kind: 'none', reason: `denial not proven (${why})` };
}

/** A zone cut as the parent's NSEC or NSEC3 there shows it: NS without SOA. */
function isDelegation(types: ReadonlySet<number>): boolean {
  return types.has(TYPE.NS) && !types.has(TYPE.SOA);
}

/**
 * Why the NSEC or NSEC3 at `name`, with type bit map `types`, fails to prove
 * that `name` has no `qtype` RRset (a NODATA answer); null when it proves it.
 */
function nodataFlaw(types: ReadonlySet<number>, name: WireName, qtype: number): string | null {
  if (types.has(qtype) || types.has(TYPE.CNAME)) return 'lists the type';
  // RFC 6840 §4.1: the parent's record at a zone cut (an "ancestor
  // delegation") denies nothing at that name but its DS; the other RRsets
  // there are the child's apex, which a replayed parent record would hide.
  if (qtype !== TYPE.DS && isDelegation(types)) return 'is the parent side of a delegation, RFC 6840 §4.1';
  // RFC 4035 §3.1.4.1: DS exists only on the parent side of a zone cut, so
  // the child's apex record cannot deny it; the root alone has no parent.
  if (qtype === TYPE.DS && types.has(TYPE.SOA) && name.length > 0) return 'is the child side of a delegation, which cannot deny its DS, RFC 4035 §3.1.4.1';
  return null;
}

/**
 * Why names below an existing name, whose NSEC or NSEC3 has type bit map
 * `types`, cannot be denied by this zone's records; null when they can.
 * RFC 6840 §4.1 and RFC 5155 §8.3: below a delegation the names are the
 * child zone's, and below a DNAME they are redirected (RFC 6672 §2.3).
 */
function enclosedNamesFlaw(types: ReadonlySet<number>): string | null {
  if (isDelegation(types)) return 'is a delegation: the names below it are in the child zone, RFC 6840 §4.1';
  if (types.has(TYPE.DNAME)) return 'is a DNAME: the names below it are redirected, RFC 6840 §4.1';
  return null;
}

/** The NSEC proves `name` absent: it covers the name and is not at a cut above it (RFC 6840 §4.1). */
function nsecProvesAbsent(entry: NsecEntry, name: WireName): boolean {
  return nsecCovers(entry, name) && !isAncestorCut(entry, name);
}

/** The NSEC is at a delegation or DNAME strictly above `name`, so it says nothing about `name`. */
function isAncestorCut(entry: NsecEntry, name: WireName): boolean {
  return enclosedNamesFlaw(entry.nsec.types) !== null && isAtOrBelow(name, entry.owner) && !sameName(name, entry.owner);
}

/** True when `name` falls strictly between an NSEC's owner and next name, in canonical order, wrapping at the apex. */
function nsecCovers(entry: NsecEntry, name: WireName): boolean {
  const afterOwner = compareNames(entry.owner, name) < 0;
  const beforeNext = compareNames(name, entry.nsec.next) < 0;
  if (compareNames(entry.owner, entry.nsec.next) < 0) return afterOwner && beforeNext;
  // The last NSEC of the zone points back to the apex.
  return (afterOwner || beforeNext) && isAtOrBelow(name, entry.nsec.next);
}

function closestEncloser(qname: WireName, covering: NsecEntry): WireName {
  for (let i = 1; i <= qname.length; i++) {
    const ancestor = qname.slice(i);
    if (isAtOrBelow(covering.owner, ancestor) || isAtOrBelow(covering.nsec.next, ancestor)) return ancestor;
  }
  return [];
}

interface Nsec3Chain {
  zone: WireName;
  /** The NSEC3 whose owner is the hash of `name`. */
  matching(name: WireName): Nsec3Entry | undefined;
  /** The NSEC3 whose span covers the hash of `name`. */
  covering(name: WireName): Nsec3Entry | undefined;
}

/**
 * The NSEC3 records a validator may use (SHA-1, RFC 5155 §8.1), hashing with
 * their parameters; or why none can be used. RFC 9276 §3.2 lets a validator
 * treat NSEC3 above its iteration limit as insecure rather than compute it,
 * whatever the proof it is part of.
 */
function usableNsec3s(entries: readonly Nsec3Entry[]): Nsec3Chain | Extract<DenialProof, { kind: 'too-many-iterations' | 'none' }> {
  const usable = entries.filter((e) => e.nsec3.hashAlgorithm === 1);
  if (usable.length === 0) return notProven('unknown NSEC3 hash algorithm');
  const highest = Math.max(...usable.map((e) => e.nsec3.iterations));
  if (highest > MAX_NSEC3_ITERATIONS) return { kind: 'too-many-iterations', iterations: highest };
  const zone = usable[0]!.owner.slice(1);
  const { salt, iterations } = usable[0]!.nsec3;
  const hashOf = (name: WireName): Buffer => nsec3Hash(name, salt, iterations);
  return {
    zone,
    matching: (name) => {
      const hash = hashOf(name);
      return usable.find((e) => e.hash.equals(hash) && isAtOrBelow(e.owner, zone));
    },
    covering: (name) => {
      const hash = hashOf(name);
      return usable.find((e) => nsec3Covers(e, hash));
    },
  };
}

const isOptOut = (entry: Nsec3Entry): boolean => (entry.nsec3.flags & OPT_OUT_FLAG) !== 0;

function proveWithNsec3(entries: Nsec3Entry[], qname: WireName, qtype: number, nxdomain: boolean): DenialProof {
  const chain = usableNsec3s(entries);
  if ('kind' in chain) return chain;
  const { zone, matching, covering } = chain;

  const match = matching(qname);
  if (match) {
    if (nxdomain) return notProven('NSEC3 shows the name exists');
    const flaw = nodataFlaw(match.nsec3.types, qname, qtype);
    if (flaw) return notProven(`the NSEC3 of ${presentName(qname)} ${flaw}`);
    return qtype === TYPE.DS && isDelegation(match.nsec3.types) ? { kind: 'insecure-delegation' } : { kind: 'nodata' };
  }
  // RFC 5155 §8.3: the closest encloser proof.
  for (let i = 1; i <= qname.length; i++) {
    const encloser = qname.slice(i);
    const atEncloser = isAtOrBelow(encloser, zone) ? matching(encloser) : undefined;
    if (!atEncloser) continue;
    const flaw = enclosedNamesFlaw(atEncloser.nsec3.types);
    if (flaw) return notProven(`the closest encloser ${presentName(encloser)} ${flaw}`);
    const nextCloser = qname.slice(i - 1);
    const cover = covering(nextCloser);
    if (!cover) return notProven('no NSEC3 covers the next closer name');
    // RFC 5155 §9.2: a closest encloser proof whose next closer name lies in an
    // opt-out span proves nothing about names there, which may be unsigned
    // delegations; the answer is not secure, whatever else the proof holds.
    const optOut: DenialProof | null = isOptOut(cover) ? { kind: 'opt-out', nextCloser } : null;
    const wildcard = [Buffer.from('*'), ...encloser];
    if (!nxdomain) {
      // RFC 5155 §8.7: NODATA from a wildcard, which matches an NSEC3 without the type.
      const atWildcard = matching(wildcard);
      if (atWildcard && !nodataFlaw(atWildcard.nsec3.types, wildcard, qtype)) return optOut ?? { kind: 'nodata' };
      // RFC 5155 §8.6: no NSEC3 at the name, only an opt-out span over it (a DS
      // question for an unsigned delegation, or an empty non-terminal above one).
      if (optOut) return optOut;
      return notProven('no NSEC3 matches the name');
    }
    if (!covering(wildcard)) return notProven('no NSEC3 denies the wildcard');
    return optOut ?? { kind: 'nxdomain' };
  }
  return notProven('no closest encloser');
}

function nsec3Covers(entry: Nsec3Entry, hash: Buffer): boolean {
  const afterOwner = Buffer.compare(entry.hash, hash) < 0;
  const beforeNext = Buffer.compare(hash, entry.nsec3.nextHash) < 0;
  if (Buffer.compare(entry.hash, entry.nsec3.nextHash) < 0) return afterOwner && beforeNext;
  return afterOwner || beforeNext;
}

/** The NSEC3 hash of a name (RFC 5155 §5): SHA-1 over the canonical name and salt, then `iterations` more times. */
export function nsec3Hash(name: WireName, salt: Buffer, iterations: number): Buffer {
  let digest = createHash('sha1').update(nameWire(name.map(lowerAscii))).update(salt).digest();
  for (let i = 0; i < iterations; i++) digest = createHash('sha1').update(digest).update(salt).digest();
  return digest;
}

const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';

/** Decodes the base32hex owner label of an NSEC3 (RFC 4648 §7, no padding), or null. */
export function base32hexDecode(text: string): Buffer | null {
  const bytes: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const char of text.toLowerCase()) {
    const value = BASE32HEX.indexOf(char);
    if (value < 0) return null;
    buffer = (buffer << 5) | value;
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((buffer >> bits) & 0xff);
    }
  }
  return bytes.length > 0 ? Buffer.from(bytes) : null;
}
