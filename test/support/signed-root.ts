/**
 * A root zone signed on the fly, so that a test DNS server (dns-server.ts,
 * `signedRoot`) answers as a resolver that passes DNSSEC records on does for
 * unsigned domains: the root's DNSKEY RRset with its RRSIG, and for the DS
 * question of a top-level domain a signed NSEC proving an unsigned
 * delegation (RFC 4035 §5.2). With this root's key as the trust anchor
 * (test/fixtures/dnssec/test-root.key, NETINTEL_TRUST_ANCHOR), a name the
 * server answers for validates as `insecure`, as an unsigned domain does
 * under the real root; without DNSSEC records it could not be checked.
 * A zone below it can be signed with a key of its own (`signedZones`), for
 * a trust anchor at that zone: its DNSKEY RRset and the RRsets of its
 * answers then come with RRSIGs (denials do not: no NSEC chain is made).
 *
 * One ECDSA P-256 key (RFC 6605) signs the root. It is fixed, so that key
 * tags in goldens do not change, and it is a test key for this root only.
 * Signatures are made here with node:crypto and dns-packet's wire encoding,
 * not with netintel's validator code, so the tests do not check that code
 * against itself (test/interop/dnssec-delv-unbound.test.ts holds it to delv
 * and Unbound).
 */
import { createPrivateKey, createPublicKey, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import type { Answer } from 'dns-packet';
import { parseTrustAnchors, type TrustAnchor } from '../../src/engine/dns/dnssec/trust-anchor.js';
import { REPO_ROOT } from './cli.js';

/** The trust anchor file of this root: its key as a DNSKEY record. */
export const TEST_ROOT_ANCHOR_FILE = join(REPO_ROOT, 'test/fixtures/dnssec/test-root.key');

/** This root's trust anchor, as the engine's options take it (`trustAnchors`). */
export function testRootTrustAnchor(): TrustAnchor {
  return parseTrustAnchors(readFileSync(TEST_ROOT_ANCHOR_FILE, 'utf8'));
}

/** The parts of dns-packet's wire encoding its type declarations leave out. */
const wire = dnsPacket as unknown as {
  name: { encode(name: string): Buffer };
  record(type: string): { encode(data: unknown): Buffer };
  answer: { encode(record: unknown): Buffer };
};

const PRIVATE_KEY = createPrivateKey({
  format: 'jwk',
  key: {
    kty: 'EC',
    crv: 'P-256',
    x: 'eYTsMJL6MrePQW2CJ4e1w7zA0Z4iV_zhV2PlbHVblzI',
    y: 'FFK8qjW3ZVJYgaRGMXofz25iGs2tTVmUMqP4V1ym7NU',
    d: 'XCY35_YBkTnj50q3-cQCGSqmAamUEQo3i-9XugTNLNw',
  },
});

const ALGORITHM = 13; // ECDSAP256SHA256 (RFC 6605)
const TTL = 86_400;
/**
 * One validity window for every signature, 2001 to 2060: wide enough for
 * the tests' fixed clocks (2024) and for today, and under the 68 years that
 * RRSIG's serial arithmetic allows (RFC 4034 §3.1.5).
 */
const INCEPTION = Date.UTC(2001, 0, 1) / 1000;
const EXPIRATION = Date.UTC(2060, 0, 1) / 1000;

/** A zone's one signing key (a key-signing key that also signs the zone's data) and what DNS says of it. */
export interface ZoneKey {
  /** The zone, lower case, no trailing dot ('' for the root). */
  apex: string;
  privateKey: KeyObject;
  dnskey: { flags: number; algorithm: number; key: Buffer };
  keyTag: number;
}

/** The key of a zone from its ECDSA P-256 private key. */
export function zoneKey(apex: string, privateKey: KeyObject): ZoneKey {
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  const key = Buffer.concat([Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  const dnskey = { flags: 257, algorithm: ALGORITHM, key };
  return { apex: apex.replace(/\.$/, '').toLowerCase(), privateKey, dnskey, keyTag: keyTag(rdataOf('DNSKEY', dnskey)) };
}

const ROOT_KEY = zoneKey('', PRIVATE_KEY);

/** A record to sign: any of dns-packet's answers but OPT. */
type Signable = Extract<Answer, { ttl?: number }>;

const SOA = {
  mname: 'a.root-servers.test',
  rname: 'hostmaster.root-servers.test',
  serial: 2026120101,
  refresh: 1800,
  retry: 900,
  expire: 604_800,
  minimum: 86_400,
};

/** What the server puts in its reply. */
export interface RootAnswer {
  rcode: number;
  answers: Answer[];
  authorities: Answer[];
}

/**
 * The root's answer to a question it is authoritative for: DNSKEY, SOA and
 * NS at the root, and DS of a top-level domain (every one an unsigned
 * delegation); undefined for any other question. RRSIG and NSEC records go
 * with it only when the query set DO (RFC 3225, RFC 4035 §3.2.1).
 */
export function rootAnswer(name: string, type: string, dnssecOk: boolean): RootAnswer | undefined {
  const owner = name.replace(/\.$/, '').toLowerCase();
  if (owner === '') {
    if (type === 'DNSKEY') return keyAnswer(ROOT_KEY, dnssecOk);
    if (type === 'SOA') return { rcode: 0, answers: signed([{ name: '.', type: 'SOA', ttl: TTL, data: SOA }], ROOT_KEY, dnssecOk), authorities: [] };
    if (type === 'NS') return { rcode: 0, answers: signed([{ name: '.', type: 'NS', ttl: TTL, data: 'a.root-servers.test' }], ROOT_KEY, dnssecOk), authorities: [] };
    return undefined;
  }
  if (type !== 'DS' || owner.includes('.')) return undefined;
  // NODATA for DS at a delegation: the NSEC at the name says NS and no DS (RFC 4035 §3.1.4.1).
  const nsec: Answer = { name: owner, type: 'NSEC', ttl: SOA.minimum, data: { nextDomain: `\u0000.${owner}`, rrtypes: ['NS', 'RRSIG', 'NSEC'] } };
  const soa: Answer = { name: '.', type: 'SOA', ttl: SOA.minimum, data: SOA };
  return { rcode: 0, answers: [], authorities: [...signed([soa], ROOT_KEY, dnssecOk), ...(dnssecOk ? signed([nsec], ROOT_KEY, true) : [])] };
}

/** The DNSKEY RRset at a zone's apex, signed by its key when DO was set. */
export function keyAnswer(key: ZoneKey, dnssecOk: boolean): RootAnswer {
  return { rcode: 0, answers: signed([{ name: key.apex === '' ? '.' : key.apex, type: 'DNSKEY', ttl: TTL, data: key.dnskey }], key, dnssecOk), authorities: [] };
}

/** The records of an answer, each RRset followed by its RRSIG by `key`. */
export function withSignatures(records: Answer[], key: ZoneKey): Answer[] {
  const sets = new Map<string, Signable[]>();
  for (const record of records as Signable[]) {
    const id = `${record.name.toLowerCase()} ${record.type}`;
    sets.set(id, [...(sets.get(id) ?? []), record]);
  }
  return [...sets.values()].flatMap((rrset) => signed(rrset, key, true));
}

/** An RRset, followed by its RRSIG when DO was set. */
function signed(rrset: Signable[], key: ZoneKey, dnssecOk: boolean): Answer[] {
  return dnssecOk ? [...rrset, signature(rrset, key)] : rrset;
}

/** The RRSIG over one RRset (RFC 4034 §3.1.8.1: the RRSIG rdata without its signature, then the RRs in canonical form and order). */
function signature(rrset: Signable[], key: ZoneKey): Answer {
  const first = rrset[0]!;
  const owner = first.name === '.' ? '' : first.name.toLowerCase();
  const rrsig = {
    typeCovered: first.type,
    algorithm: ALGORITHM,
    labels: owner === '' ? 0 : owner.split('.').length,
    originalTTL: first.ttl ?? 300,
    expiration: EXPIRATION,
    inception: INCEPTION,
    keyTag: key.keyTag,
    signersName: key.apex === '' ? '.' : key.apex,
    signature: Buffer.alloc(0),
  };
  const records = rrset
    .map((rr) => rdataOf(rr.type, (rr as { data: unknown }).data))
    .sort(Buffer.compare)
    .map((rdata) => {
      const head = Buffer.alloc(10);
      head.writeUInt16BE(typeNumber(first), 0);
      head.writeUInt16BE(1, 2); // class IN
      head.writeUInt32BE(first.ttl ?? 300, 4);
      head.writeUInt16BE(rdata.length, 8);
      return Buffer.concat([wire.name.encode(owner === '' ? '.' : owner), head, rdata]);
    });
  const data = Buffer.concat([rdataOf('RRSIG', rrsig), ...records]);
  const value = sign('sha256', data, { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return { name: first.name, type: 'RRSIG', ttl: first.ttl ?? 300, data: { ...rrsig, signature: value } } as Answer;
}

/** The rdata of a record as dns-packet writes it, without its length. */
function rdataOf(type: string, data: unknown): Buffer {
  const encoder = wire.record(type);
  return encoder.encode(data).subarray(2);
}

/** A record's type number, as dns-packet writes it after the owner name (here the root's one octet). */
function typeNumber(record: Signable): number {
  return wire.answer.encode({ ...record, name: '.' }).readUInt16BE(1);
}

/** RFC 4034 Appendix B: the key tag of a DNSKEY's rdata. */
function keyTag(rdata: Buffer): number {
  let sum = 0;
  for (let i = 0; i < rdata.length; i++) sum += i & 1 ? rdata[i]! : rdata[i]! << 8;
  sum += (sum >> 16) & 0xffff;
  return sum & 0xffff;
}

/** The trust anchor file's text, as dnssec-keygen writes a key (checked against the committed file by the tests). */
export function testRootAnchorText(): string {
  return `. IN DNSKEY 257 3 ${ALGORITHM} ${ROOT_KEY.dnskey.key.toString('base64')}\n`;
}
