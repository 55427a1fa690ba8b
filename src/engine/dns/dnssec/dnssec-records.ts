import { createHash } from 'node:crypto';
import { nameWire, readName, WireFormatError, type WireName } from './wire.js';

/** Type numbers of the DNSSEC records (RFC 4034 §2-§5, RFC 5155 §3). */
export const TYPE = { NS: 2, CNAME: 5, SOA: 6, DNAME: 39, DS: 43, RRSIG: 46, NSEC: 47, DNSKEY: 48, NSEC3: 50 } as const;

/** DNSKEY rdata (RFC 4034 §2.1). */
export interface Dnskey {
  flags: number;
  protocol: number;
  algorithm: number;
  publicKey: Buffer;
  /** The key tag (RFC 4034 Appendix B). */
  keyTag: number;
  /** The whole rdata, as hashed into a DS digest. */
  rdata: Buffer;
}

/** DS rdata (RFC 4034 §5.1). */
export interface Ds {
  keyTag: number;
  algorithm: number;
  digestType: number;
  digest: Buffer;
}

/** RRSIG rdata (RFC 4034 §3.1). */
export interface Rrsig {
  typeCovered: number;
  algorithm: number;
  labels: number;
  originalTtl: number;
  expiration: number;
  inception: number;
  keyTag: number;
  signer: Buffer[];
  signature: Buffer;
  /** The rdata without the signature: the start of the signed data (§3.1.8.1). */
  signedPrefix: Buffer;
}

/** NSEC rdata (RFC 4034 §4.1). */
export interface Nsec {
  next: Buffer[];
  types: Set<number>;
}

/** NSEC3 rdata (RFC 5155 §3.2). */
export interface Nsec3 {
  hashAlgorithm: number;
  flags: number;
  iterations: number;
  salt: Buffer;
  /** The next hashed owner name, raw (not base32). */
  nextHash: Buffer;
  types: Set<number>;
}

/** The zone key flag (RFC 4034 §2.1.1) and the secure entry point flag (KSK). */
export const ZONE_KEY_FLAG = 0x0100;
export const SEP_FLAG = 0x0001;
/** The NSEC3 opt-out flag (RFC 5155 §3.1.2.1). */
export const OPT_OUT_FLAG = 0x01;

export function readDnskey(rdata: Buffer): Dnskey {
  if (rdata.length < 5) throw new WireFormatError('DNSKEY too short');
  return {
    flags: rdata.readUInt16BE(0),
    protocol: rdata[2]!,
    algorithm: rdata[3]!,
    publicKey: rdata.subarray(4),
    keyTag: keyTag(rdata),
    rdata,
  };
}

export function readDs(rdata: Buffer): Ds {
  if (rdata.length < 5) throw new WireFormatError('DS too short');
  return { keyTag: rdata.readUInt16BE(0), algorithm: rdata[2]!, digestType: rdata[3]!, digest: rdata.subarray(4) };
}

export function readRrsig(rdata: Buffer): Rrsig {
  if (rdata.length < 19) throw new WireFormatError('RRSIG too short');
  const { name: signer, end } = readName(rdata, 18);
  return {
    typeCovered: rdata.readUInt16BE(0),
    algorithm: rdata[2]!,
    labels: rdata[3]!,
    originalTtl: rdata.readUInt32BE(4),
    expiration: rdata.readUInt32BE(8),
    inception: rdata.readUInt32BE(12),
    keyTag: rdata.readUInt16BE(16),
    signer,
    signature: rdata.subarray(end),
    signedPrefix: Buffer.concat([rdata.subarray(0, 18), nameWire(signer)]),
  };
}

export function readNsec(rdata: Buffer): Nsec {
  const { name: next, end } = readName(rdata, 0);
  return { next, types: readTypeBitmap(rdata.subarray(end)) };
}

export function readNsec3(rdata: Buffer): Nsec3 {
  if (rdata.length < 6) throw new WireFormatError('NSEC3 too short');
  const saltLength = rdata[4]!;
  const hashAt = 5 + saltLength;
  const hashLength = rdata[hashAt]!;
  const typesAt = hashAt + 1 + hashLength;
  if (typesAt > rdata.length) throw new WireFormatError('NSEC3 cut short');
  return {
    hashAlgorithm: rdata[0]!,
    flags: rdata[1]!,
    iterations: rdata.readUInt16BE(2),
    salt: rdata.subarray(5, hashAt),
    nextHash: rdata.subarray(hashAt + 1, typesAt),
    types: readTypeBitmap(rdata.subarray(typesAt)),
  };
}

/** The type bit maps field (RFC 4034 §4.1.2). */
export function readTypeBitmap(bitmap: Buffer): Set<number> {
  const types = new Set<number>();
  let at = 0;
  while (at + 2 <= bitmap.length) {
    const window = bitmap[at]!;
    const length = bitmap[at + 1]!;
    if (length < 1 || length > 32 || at + 2 + length > bitmap.length) throw new WireFormatError('bad type bit map');
    for (let i = 0; i < length; i++) {
      const octet = bitmap[at + 2 + i]!;
      for (let bit = 0; bit < 8; bit++) if (octet & (0x80 >> bit)) types.add(window * 256 + i * 8 + bit);
    }
    at += 2 + length;
  }
  if (at !== bitmap.length) throw new WireFormatError('bad type bit map');
  return types;
}

/** The key tag of DNSKEY rdata (RFC 4034 Appendix B; algorithm 1 is not supported and not special-cased). */
export function keyTag(rdata: Buffer): number {
  let sum = 0;
  for (let i = 0; i < rdata.length; i++) sum += i & 1 ? rdata[i]! : rdata[i]! << 8;
  sum += (sum >> 16) & 0xffff;
  return sum & 0xffff;
}

/**
 * DS digest types: SHA-256 (RFC 4509), SHA-384 (RFC 6605 §2), and SHA-1
 * (RFC 4034 §5.1.4), which RFC 8624 §3.3 still requires validators to accept.
 */
const DIGESTS: Record<number, string> = { 1: 'sha1', 2: 'sha256', 4: 'sha384' };

export function isSupportedDigest(digestType: number): boolean {
  return digestType in DIGESTS;
}

/** True when `ds` is the digest of `key` at `owner` (RFC 4034 §5.1.4: digest over owner | DNSKEY rdata). */
export function dsMatchesKey(ds: Ds, owner: WireName, key: Dnskey): boolean {
  const algorithm = DIGESTS[ds.digestType];
  if (!algorithm || ds.keyTag !== key.keyTag || ds.algorithm !== key.algorithm) return false;
  const digest = createHash(algorithm).update(nameWire(owner)).update(key.rdata).digest();
  return digest.equals(ds.digest);
}

// Mnemonics of the types a verdict names (IANA "Resource Record (RR) TYPEs").
const TYPE_NAMES: Record<number, string> = {
  1: 'A', 2: 'NS', 5: 'CNAME', 6: 'SOA', 12: 'PTR', 15: 'MX', 16: 'TXT', 28: 'AAAA', 33: 'SRV', 39: 'DNAME',
  43: 'DS', 46: 'RRSIG', 47: 'NSEC', 48: 'DNSKEY', 50: 'NSEC3', 51: 'NSEC3PARAM', 52: 'TLSA', 64: 'SVCB',
  65: 'HTTPS', 257: 'CAA',
};

export function typeName(type: number): string {
  return TYPE_NAMES[type] ?? `TYPE${type}`;
}

export function typeNumber(name: string): number | null {
  const upper = name.toUpperCase();
  for (const [number, mnemonic] of Object.entries(TYPE_NAMES)) if (mnemonic === upper) return Number(number);
  const generic = /^TYPE(\d{1,5})$/.exec(upper);
  return generic && Number(generic[1]) < 65536 ? Number(generic[1]) : null;
}
