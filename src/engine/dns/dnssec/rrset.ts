import { readRrsig, type Dnskey, type Rrsig, TYPE, ZONE_KEY_FLAG } from './dnssec-records.js';
import { isSupportedAlgorithm, verifySignature } from './verify-signature.js';
import { compareNames, nameWire, sameName, type WireName, type WireRecord } from './wire.js';

/** The records of one owner, type and class, and the RRSIGs over them. */
export interface SignedRrset {
  owner: WireName;
  type: number;
  records: WireRecord[];
  signatures: Rrsig[];
}

/** Groups a section into RRsets, each with the RRSIGs that cover it. */
export function rrsetsOf(section: readonly WireRecord[]): SignedRrset[] {
  const sets: SignedRrset[] = [];
  const find = (owner: WireName, type: number): SignedRrset => {
    let set = sets.find((s) => s.type === type && sameName(s.owner, owner));
    if (!set) sets.push((set = { owner, type, records: [], signatures: [] }));
    return set;
  };
  for (const record of section) {
    if (record.type === TYPE.RRSIG) {
      let sig: Rrsig;
      try {
        sig = readRrsig(record.rdata);
      } catch {
        continue;
      }
      find(record.owner, sig.typeCovered).signatures.push(sig);
    } else {
      find(record.owner, record.type).records.push(record);
    }
  }
  return sets;
}

/** The RRset of `type` at `owner` in a section, or null. */
export function findRrset(sets: readonly SignedRrset[], owner: WireName, type: number): SignedRrset | null {
  return sets.find((s) => s.type === type && sameName(s.owner, owner) && s.records.length > 0) ?? null;
}

/** Why an RRset's signatures did not validate, or `ok`. */
export type SignatureCheck =
  | { ok: true; signature: Rrsig; key: Dnskey }
  | { ok: false; reason: string; unsupported: boolean };

/**
 * Checks that some RRSIG over `set` made by one of `keys` of `zone` is valid
 * at `now` (RFC 4035 §5.3): signer is the zone, labels field no greater
 * than the owner's, validity window (serial arithmetic, RFC 4034 §3.1.5),
 * a key with the same tag and algorithm and the zone key flag, and the
 * signature over the canonical RRset (RFC 4034 §3.1.8.1, §6.2, §6.3).
 */
export function checkRrsetSignatures(set: SignedRrset, zone: WireName, keys: readonly Dnskey[], now: Date): SignatureCheck {
  if (set.signatures.length === 0) return { ok: false, reason: 'no RRSIG', unsupported: false };
  const nowSeconds = Math.floor(now.getTime() / 1000) >>> 0;
  const failures: string[] = [];
  let anySupported = false;
  for (const signature of set.signatures) {
    if (!sameName(signature.signer, zone)) {
      failures.push('signer is not the zone');
      continue;
    }
    if (!isSupportedAlgorithm(signature.algorithm)) continue;
    anySupported = true;
    if (signature.labels > ownerLabelCount(set.owner)) {
      failures.push('labels field larger than the owner name');
      continue;
    }
    if (serialLessThan(signature.expiration, nowSeconds)) {
      failures.push(`expired signature (${timestamp(signature.expiration)})`);
      continue;
    }
    if (serialLessThan(nowSeconds, signature.inception)) {
      failures.push(`signature not yet valid (from ${timestamp(signature.inception)})`);
      continue;
    }
    const candidates = keys.filter((k) => k.keyTag === signature.keyTag && k.algorithm === signature.algorithm && (k.flags & ZONE_KEY_FLAG) !== 0 && k.protocol === 3);
    if (candidates.length === 0) {
      failures.push(`key tag mismatch (no DNSKEY with tag ${signature.keyTag})`);
      continue;
    }
    const data = signedData(set, signature);
    const key = candidates.find((k) => verifySignature(signature.algorithm, k.publicKey, data, signature.signature));
    if (key) return { ok: true, signature, key };
    failures.push('bad signature');
  }
  if (!anySupported && failures.length === 0) return { ok: false, reason: 'unsupported algorithm', unsupported: true };
  return { ok: false, reason: mostTelling(failures), unsupported: false };
}

// The reason to show when several signatures failed: the most specific.
const REASON_ORDER = ['bad signature', 'expired signature', 'signature not yet valid', 'key tag mismatch', 'labels field', 'signer is not'];

function mostTelling(failures: string[]): string {
  for (const prefix of REASON_ORDER) {
    const found = failures.find((f) => f.startsWith(prefix));
    if (found) return found;
  }
  return failures[0] ?? 'no RRSIG';
}

/** The number of labels of an owner for the RRSIG labels field: the root and a leading `*` not counted (RFC 4034 §3.1.3). */
export function ownerLabelCount(owner: WireName): number {
  return owner.length > 0 && owner[0]!.length === 1 && owner[0]![0] === 0x2a ? owner.length - 1 : owner.length;
}

/** The data an RRSIG signs (RFC 4034 §3.1.8.1): its rdata up to the signature, then the RRset in canonical form and order. */
export function signedData(set: SignedRrset, signature: Rrsig): Buffer {
  // RFC 4035 §5.3.2: an answer expanded from a wildcard is signed as `*.` and the RRSIG's labels rightmost labels.
  const owner = signature.labels < ownerLabelCount(set.owner) ? [Buffer.from('*'), ...set.owner.slice(set.owner.length - signature.labels)] : set.owner;
  const ownerWire = nameWire(owner);
  const unique = new Map<string, Buffer>();
  for (const record of set.records) unique.set(record.rdata.toString('hex'), record.rdata);
  const sorted = [...unique.values()].sort(Buffer.compare);
  const parts: Buffer[] = [signature.signedPrefix];
  for (const rdata of sorted) {
    const header = Buffer.alloc(10);
    header.writeUInt16BE(set.type, 0);
    header.writeUInt16BE(set.records[0]!.klass, 2);
    header.writeUInt32BE(signature.originalTtl, 4);
    header.writeUInt16BE(rdata.length, 8);
    parts.push(ownerWire, header, rdata);
  }
  return Buffer.concat(parts);
}

/** True when serial `a` comes before `b` (RFC 1982 arithmetic on 32 bits). */
function serialLessThan(a: number, b: number): boolean {
  return a !== b && ((a < b && b - a < 0x80000000) || (a > b && a - b > 0x80000000));
}

function timestamp(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace(/\.000Z$/, 'Z');
}

/** Sorts names canonically (RFC 4034 §6.1). */
export function sortNames<T extends { owner: WireName }>(items: T[]): T[] {
  return items.sort((a, b) => compareNames(a.owner, b.owner));
}
