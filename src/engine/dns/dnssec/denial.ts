import { createHash } from 'node:crypto';
import { OPT_OUT_FLAG, readNsec, readNsec3, TYPE, type Nsec, type Nsec3 } from './dnssec-records.js';
import type { SignedRrset } from './rrset.js';
import { compareNames, isAtOrBelow, lowerAscii, nameWire, sameName, type WireName } from './wire.js';

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
    return nsecs.some((e) => nsecCovers(e, nextCloser) && !isAncestorDelegation(e, nextCloser))
      ? { kind: 'absent' }
      : { kind: 'none', reason: 'denial not proven (no NSEC covers the next closer name)' };
  }
  const usable = usableNsec3s(nsec3s);
  if ('kind' in usable) return usable;
  const cover = usable.covering(nextCloser);
  if (!cover) return { kind: 'none', reason: 'denial not proven (no NSEC3 covers the next closer name)' };
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
  return { kind: 'none', reason: 'denial not proven (no NSEC or NSEC3 records)' };
}

function proveWithNsec(entries: NsecEntry[], qname: WireName, qtype: number, nxdomain: boolean): DenialProof {
  const match = entries.find((e) => sameName(e.owner, qname));
  if (match) {
    if (nxdomain) return { kind: 'none', reason: 'denial not proven (NSEC shows the name exists)' };
    const types = match.nsec.types;
    if (types.has(qtype) || types.has(TYPE.CNAME)) return { kind: 'none', reason: 'denial not proven (NSEC lists the type)' };
    if (qtype === TYPE.DS && types.has(TYPE.NS) && !types.has(TYPE.SOA)) return { kind: 'insecure-delegation' };
    return { kind: 'nodata' };
  }
  const covering = entries.find((e) => nsecCovers(e, qname) && !isAncestorDelegation(e, qname));
  if (!covering) return { kind: 'none', reason: 'denial not proven (no NSEC covers the name)' };
  // RFC 4035 §3.1.3.2: an empty non-terminal is covered by an NSEC whose next name is below it.
  if (isAtOrBelow(covering.nsec.next, qname) && !sameName(covering.nsec.next, qname)) {
    return nxdomain ? { kind: 'none', reason: 'denial not proven (the name is an empty non-terminal)' } : { kind: 'nodata' };
  }
  const encloser = closestEncloser(qname, covering);
  const wildcard = [Buffer.from('*'), ...encloser];
  if (!nxdomain) {
    // RFC 4035 §3.1.3.4: NODATA from a wildcard, the name covered and the wildcard without the type.
    const atWildcard = entries.find((e) => sameName(e.owner, wildcard));
    if (atWildcard && !atWildcard.nsec.types.has(qtype) && !atWildcard.nsec.types.has(TYPE.CNAME)) return { kind: 'nodata' };
    return { kind: 'none', reason: 'denial not proven (NSEC shows NXDOMAIN for a NOERROR answer)' };
  }
  // RFC 4035 §5.4: NXDOMAIN also needs proof that no wildcard at the closest encloser exists.
  if (!entries.some((e) => nsecCovers(e, wildcard))) return { kind: 'none', reason: 'denial not proven (no NSEC denies the wildcard)' };
  return { kind: 'nxdomain' };
}

/**
 * RFC 6840 §4.1: an NSEC at a delegation point (NS without SOA) or at a
 * DNAME says nothing about the names below it, which belong to the child.
 */
function isAncestorDelegation(entry: NsecEntry, name: WireName): boolean {
  const types = entry.nsec.types;
  const cut = (types.has(TYPE.NS) && !types.has(TYPE.SOA)) || types.has(DNAME);
  return cut && isAtOrBelow(name, entry.owner) && !sameName(name, entry.owner);
}

const DNAME = 39;

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
  if (usable.length === 0) return { kind: 'none', reason: 'denial not proven (unknown NSEC3 hash algorithm)' };
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
    if (nxdomain) return { kind: 'none', reason: 'denial not proven (NSEC3 shows the name exists)' };
    const types = match.nsec3.types;
    if (types.has(qtype) || types.has(TYPE.CNAME)) return { kind: 'none', reason: 'denial not proven (NSEC3 lists the type)' };
    if (qtype === TYPE.DS && types.has(TYPE.NS) && !types.has(TYPE.SOA)) return { kind: 'insecure-delegation' };
    return { kind: 'nodata' };
  }
  // RFC 5155 §8.3: the closest encloser proof.
  for (let i = 1; i <= qname.length; i++) {
    const encloser = qname.slice(i);
    if (!isAtOrBelow(encloser, zone) || !matching(encloser)) continue;
    const nextCloser = qname.slice(i - 1);
    const cover = covering(nextCloser);
    if (!cover) return { kind: 'none', reason: 'denial not proven (no NSEC3 covers the next closer name)' };
    // RFC 5155 §9.2: a closest encloser proof whose next closer name lies in an
    // opt-out span proves nothing about names there, which may be unsigned
    // delegations; the answer is not secure, whatever else the proof holds.
    const optOut: DenialProof | null = isOptOut(cover) ? { kind: 'opt-out', nextCloser } : null;
    const wildcard = [Buffer.from('*'), ...encloser];
    if (!nxdomain) {
      // RFC 5155 §8.7: NODATA from a wildcard, which matches an NSEC3 without the type.
      const atWildcard = matching(wildcard);
      if (atWildcard && !atWildcard.nsec3.types.has(qtype) && !atWildcard.nsec3.types.has(TYPE.CNAME)) return optOut ?? { kind: 'nodata' };
      // RFC 5155 §8.6: no NSEC3 at the name, only an opt-out span over it (a DS
      // question for an unsigned delegation, or an empty non-terminal above one).
      if (optOut) return optOut;
      return { kind: 'none', reason: 'denial not proven (no NSEC3 matches the name)' };
    }
    if (!covering(wildcard)) return { kind: 'none', reason: 'denial not proven (no NSEC3 denies the wildcard)' };
    return optOut ?? { kind: 'nxdomain' };
  }
  return { kind: 'none', reason: 'denial not proven (no closest encloser)' };
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
