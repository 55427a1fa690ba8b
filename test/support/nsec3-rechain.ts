/**
 * An NSEC3 chain rebuilt with another iteration count, and signed again.
 *
 * dnssec-signzone refuses more than 150 NSEC3 iterations (BIND's limit, as
 * RFC 9276 §3.2 allows), yet zones signed with more exist and validators must
 * treat them as insecure. So a zone is signed by dnssec-signzone with a small
 * count, and this module hashes every name of its NSEC3 chain again with the
 * new count (RFC 5155 §5), keeps each record's flags and type bit map, links
 * the chain in the new hash order, updates NSEC3PARAM, and signs the new
 * NSEC3 and NSEC3PARAM RRsets with the zone's ZSK (RFC 4034 §3.1.8.1, §6)
 * using the private key dnssec-keygen wrote. delv and Unbound check the
 * result in the differential test, so a mistake here shows as bogus there.
 */
import { createHash, createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { zoneLines, zoneText, type ZoneLine } from './zone-edit.js';

/** The zone `zone` (a `-O full` dnssec-signzone output) with its NSEC3 chain hashed with `iterations`. */
export async function rechainNsec3(signed: string, zone: string, iterations: number, keyDir: string): Promise<string> {
  const lines = zoneLines(signed);
  const param = lines.find((line) => line.type === 'NSEC3PARAM' && sameName(line.owner, zone));
  if (!param) throw new Error(`${zone} has no NSEC3PARAM`);
  const [, , oldIterations, saltText] = param.rdata;
  const salt = saltText === '-' ? Buffer.alloc(0) : Buffer.from(saltText!, 'hex');

  // Every name that can own an NSEC3: the owners and the empty non-terminals between them and the apex.
  const names = new Map<string, string>();
  for (const line of lines) {
    if (line.type === 'NSEC3' || (line.type === 'RRSIG' && line.rdata[0] === 'NSEC3')) continue;
    for (let name = line.owner.toLowerCase(); name.endsWith(zone) || name === zone; name = parentOf(name)) {
      names.set(base32hex(nsec3Hash(name, salt, Number(oldIterations))), name);
      if (name === zone) break;
    }
  }
  const chain = lines
    .filter((line) => line.type === 'NSEC3')
    .map((line) => {
      const name = names.get(line.owner.split('.')[0]!.toLowerCase());
      if (name === undefined) throw new Error(`no name of ${zone} hashes to ${line.owner}`);
      const [algorithm, flags, , , , ...types] = line.rdata;
      return { ttl: line.ttl, algorithm: Number(algorithm), flags: Number(flags), types, hash: nsec3Hash(name, salt, iterations) };
    })
    .sort((a, b) => Buffer.compare(a.hash, b.hash));

  const zsk = await zoneSigningKey(lines, zone, keyDir);
  const kept = lines.filter((line) => line.type !== 'NSEC3' && !(line.type === 'RRSIG' && (line.rdata[0] === 'NSEC3' || line.rdata[0] === 'NSEC3PARAM')));
  param.rdata = [param.rdata[0]!, param.rdata[1]!, String(iterations), saltText!];
  const added: ZoneLine[] = [zsk.sign(param)];
  chain.forEach((link, i) => {
    const next = chain[(i + 1) % chain.length]!.hash;
    const record: ZoneLine = {
      owner: `${base32hex(link.hash)}.${zone}`,
      ttl: link.ttl,
      klass: 'IN',
      type: 'NSEC3',
      rdata: [String(link.algorithm), String(link.flags), String(iterations), saltText!, base32hex(next).toUpperCase(), ...link.types],
    };
    added.push(record, zsk.sign(record));
  });
  return zoneText([...kept, ...added]);
}

/** The NSEC3 hash (RFC 5155 §5): SHA-1 over the lowercased wire name and salt, then `iterations` more times. */
function nsec3Hash(name: string, salt: Buffer, iterations: number): Buffer {
  let digest = createHash('sha1').update(nameWire(name)).update(salt).digest();
  for (let i = 0; i < iterations; i++) digest = createHash('sha1').update(digest).update(salt).digest();
  return digest;
}

function parentOf(name: string): string {
  const dot = name.indexOf('.');
  return dot < 0 || dot === name.length - 1 ? '.' : name.slice(dot + 1);
}

function sameName(a: string, b: string): boolean {
  return a.toLowerCase() === b.toLowerCase();
}

/** The uncompressed, lowercased wire form of an absolute name without escapes (RFC 4034 §6.2). */
function nameWire(name: string): Buffer {
  const labels = name === '.' ? [] : name.toLowerCase().replace(/\.$/, '').split('.');
  return Buffer.concat([...labels.flatMap((label) => [Buffer.from([label.length]), Buffer.from(label, 'ascii')]), Buffer.from([0])]);
}

function base32hex(bytes: Buffer): string {
  const alphabet = '0123456789abcdefghijklmnopqrstuv';
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += alphabet[(buffer >> bits) & 31];
    }
  }
  if (bits > 0) out += alphabet[(buffer << (5 - bits)) & 31];
  return out;
}

// Type mnemonics the test zones use in NSEC3 bit maps.
const TYPES: Record<string, number> = { A: 1, NS: 2, CNAME: 5, SOA: 6, MX: 15, TXT: 16, AAAA: 28, DS: 43, RRSIG: 46, NSEC: 47, DNSKEY: 48, NSEC3: 50, NSEC3PARAM: 51 };

function typeNumber(mnemonic: string): number {
  const generic = /^TYPE(\d+)$/.exec(mnemonic);
  const number = generic ? Number(generic[1]) : TYPES[mnemonic];
  if (number === undefined) throw new Error(`type ${mnemonic} is not in the table of the NSEC3 re-chainer`);
  return number;
}

/** The type bit maps field (RFC 4034 §4.1.2). */
function typeBitmap(mnemonics: readonly string[]): Buffer {
  const windows = new Map<number, number[]>();
  for (const type of mnemonics.map(typeNumber)) {
    const octets = windows.get(type >> 8) ?? [];
    const at = (type & 0xff) >> 3;
    while (octets.length <= at) octets.push(0);
    octets[at]! |= 0x80 >> (type & 7);
    windows.set(type >> 8, octets);
  }
  return Buffer.concat([...windows.entries()].sort(([a], [b]) => a - b).map(([window, octets]) => Buffer.from([window, octets.length, ...octets])));
}

/** The rdata in wire form of the two record types this module writes. */
function rdataWire(line: ZoneLine): Buffer {
  const [algorithm, flags, iterations, saltText, next, ...types] = line.rdata;
  const salt = saltText === '-' ? Buffer.alloc(0) : Buffer.from(saltText!, 'hex');
  const head = Buffer.from([Number(algorithm), Number(flags), Number(iterations) >> 8, Number(iterations) & 0xff, salt.length]);
  if (line.type === 'NSEC3PARAM') return Buffer.concat([head, salt]);
  const hash = base32hexDecode(next!);
  return Buffer.concat([head, salt, Buffer.from([hash.length]), hash, typeBitmap(types)]);
}

function base32hexDecode(text: string): Buffer {
  const alphabet = '0123456789abcdefghijklmnopqrstuv';
  const bytes: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const char of text.toLowerCase()) {
    buffer = (buffer << 5) | alphabet.indexOf(char);
    bits += 5;
    if (bits >= 8) {
      bits -= 8;
      bytes.push((buffer >> bits) & 0xff);
    }
  }
  return Buffer.from(bytes);
}

interface ZoneSigner {
  /** An RRSIG line over the RRset of the one record `line`, with the window of the zone's other signatures. */
  sign(line: ZoneLine): ZoneLine;
}

/**
 * The key that signed the zone's SOA (its ZSK), read from the K*.private and
 * K*.key files dnssec-keygen wrote to `keyDir`.
 */
async function zoneSigningKey(lines: readonly ZoneLine[], zone: string, keyDir: string): Promise<ZoneSigner> {
  const soaSignature = lines.find((line) => line.type === 'RRSIG' && line.rdata[0] === 'SOA' && sameName(line.owner, zone));
  if (!soaSignature) throw new Error(`${zone} SOA is not signed`);
  const [, algorithmText, , , expiration, inception, tag] = soaSignature.rdata;
  const algorithm = Number(algorithmText);
  const base = join(keyDir, `K${zone}+${algorithmText!.padStart(3, '0')}+${tag!.padStart(5, '0')}`);
  const [privateText, publicText] = await Promise.all([readFile(`${base}.private`, 'utf8'), readFile(`${base}.key`, 'utf8')]);
  const key = privateKey(algorithm, privateText, publicText);
  const hash = { 8: 'sha256', 10: 'sha512', 13: 'sha256', 14: 'sha384', 15: null, 16: null }[algorithm];
  if (hash === undefined) throw new Error(`algorithm ${algorithm} is not one the NSEC3 re-chainer signs with`);
  const seconds = (stamp: string): number => Date.UTC(+stamp.slice(0, 4), +stamp.slice(4, 6) - 1, +stamp.slice(6, 8), +stamp.slice(8, 10), +stamp.slice(10, 12), +stamp.slice(12, 14)) / 1000;
  return {
    sign(line) {
      const labels = line.owner.replace(/\.$/, '').split('.').filter((label) => label !== '').length;
      const prefix = Buffer.alloc(18);
      prefix.writeUInt16BE(typeNumber(line.type), 0);
      prefix[2] = algorithm;
      prefix[3] = labels;
      prefix.writeUInt32BE(Number(line.ttl), 4);
      prefix.writeUInt32BE(seconds(expiration!), 8);
      prefix.writeUInt32BE(seconds(inception!), 12);
      prefix.writeUInt16BE(Number(tag), 16);
      const rdata = rdataWire(line);
      const header = Buffer.alloc(10);
      header.writeUInt16BE(typeNumber(line.type), 0);
      header.writeUInt16BE(1, 2);
      header.writeUInt32BE(Number(line.ttl), 4);
      header.writeUInt16BE(rdata.length, 8);
      const data = Buffer.concat([prefix, nameWire(zone), nameWire(line.owner), header, rdata]);
      const signature = algorithm === 13 || algorithm === 14 ? sign(hash, data, { key, dsaEncoding: 'ieee-p1363' }) : sign(hash ?? null, data, key);
      return {
        owner: line.owner,
        ttl: line.ttl,
        klass: 'IN',
        type: 'RRSIG',
        rdata: [line.type, String(algorithm), String(labels), line.ttl, expiration!, inception!, tag!, zone, signature.toString('base64')],
      };
    },
  };
}

/** A private key from BIND's K*.private format (v1.3) and the DNSKEY in K*.key. */
function privateKey(algorithm: number, privateText: string, publicText: string): KeyObject {
  const fields = new Map<string, Buffer>();
  for (const line of privateText.split('\n')) {
    const match = /^(\w+):\s*(\S+)/.exec(line);
    if (match) fields.set(match[1]!, Buffer.from(match[2]!, 'base64'));
  }
  const keyLine = publicText.split('\n').find((line) => /\sDNSKEY\s/.test(line) && !line.startsWith(';'))!;
  const publicKey = Buffer.from(keyLine.trim().split(/\s+/).slice(6).join(''), 'base64');
  const b64 = (name: string): string => fields.get(name)!.toString('base64url');
  switch (algorithm) {
    case 8:
    case 10:
      return createPrivateKey({
        key: { kty: 'RSA', n: b64('Modulus'), e: b64('PublicExponent'), d: b64('PrivateExponent'), p: b64('Prime1'), q: b64('Prime2'), dp: b64('Exponent1'), dq: b64('Exponent2'), qi: b64('Coefficient') },
        format: 'jwk',
      });
    case 13:
    case 14: {
      const half = publicKey.length / 2;
      return createPrivateKey({
        key: { kty: 'EC', crv: algorithm === 13 ? 'P-256' : 'P-384', d: b64('PrivateKey'), x: publicKey.subarray(0, half).toString('base64url'), y: publicKey.subarray(half).toString('base64url') },
        format: 'jwk',
      });
    }
    default:
      return createPrivateKey({ key: { kty: 'OKP', crv: algorithm === 15 ? 'Ed25519' : 'Ed448', d: b64('PrivateKey'), x: publicKey.toString('base64url') }, format: 'jwk' });
  }
}
