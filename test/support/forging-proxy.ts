/**
 * A man in the middle for differential DNSSEC tests: a UDP forwarder on
 * 127.0.0.1 that passes every question to an upstream server (NSD) except
 * the ones it is told to forge, which it answers itself with genuine,
 * validly signed records replayed out of place, picked from the signed zone
 * files (`-O full`, one record a line, as dnssec-signzone writes them).
 * TCP on the same port is passed through untouched, for the answers too
 * large for UDP (the forged ones are small and go over UDP).
 */
import dnsPacket from 'dns-packet';
import { base32hexDecode, nsec3Hash } from '../../src/engine/dns/dnssec/denial.js';
import { parseName } from '../../src/engine/dns/dnssec/wire.js';
import { startDnsProxy, type DnsProxy } from './dns-proxy.js';
import { zoneLines, type ZoneLine } from './zone-edit.js';

export interface ForgedAnswer {
  rcode: 'NOERROR' | 'NXDOMAIN';
  authority: dnsPacket.Answer[];
}

export type ForgingProxy = DnsProxy;

/** `forged` maps `name type` (absolute, lower case: `www.c.p. A`) to the answer to give instead of the upstream's. */
export function startForgingProxy(upstreamPort: number, forged: ReadonlyMap<string, ForgedAnswer>): Promise<ForgingProxy> {
  return startDnsProxy(upstreamPort, {
    tcp: true,
    answer(query) {
      const question = query.questions?.[0];
      const forgery = question ? forged.get(`${absolute(question.name).toLowerCase()} ${question.type}`) : undefined;
      return forgery ? forgedResponse(query, forgery) : undefined;
    },
  });
}

const RCODE = { NOERROR: 0, NXDOMAIN: 3 } as const;

function forgedResponse(query: dnsPacket.DecodedPacket, forgery: ForgedAnswer): Buffer {
  const asked = query.flags ?? 0;
  // dns-packet encodes the RCODE only as the low four bits of the flags (RFC 1035 §4.1.1).
  const flags = dnsPacket.AUTHORITATIVE_ANSWER | (asked & (dnsPacket.RECURSION_DESIRED | dnsPacket.CHECKING_DISABLED)) | RCODE[forgery.rcode];
  const opt = (query.additionals ?? []).find((record) => record.type === 'OPT');
  return dnsPacket.encode({
    id: query.id,
    type: 'response',
    flags,
    questions: query.questions,
    answers: [],
    authorities: forgery.authority,
    additionals: opt ? [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: dnsPacket.DNSSEC_OK } as dnsPacket.Answer] : [],
  } as dnsPacket.Packet);
}

/** The RRset of `type` at `owner` in a signed zone file, and the RRSIGs over it, as dns-packet records. */
export function signedRrset(zone: string, owner: string, type: string): dnsPacket.Answer[] {
  const lines = zoneLines(zone).filter((line) => sameName(line.owner, owner) && (line.type === type || (line.type === 'RRSIG' && line.rdata[0] === type)));
  if (!lines.some((line) => line.type === type)) throw new Error(`no ${owner} ${type} in the zone`);
  return lines.map(toRecord);
}

/**
 * The owner of the NSEC3 of a signed zone file that matches `name` (its
 * hash is the owner's) or covers it (its hash falls in the span), for
 * {@link signedRrset}.
 */
export function nsec3Owner(zone: string, name: string, relation: 'matches' | 'covers'): string {
  const lines = zoneLines(zone);
  const param = lines.find((line) => line.type === 'NSEC3PARAM');
  if (!param) throw new Error('no NSEC3PARAM in the zone');
  const salt = param.rdata[3] === '-' ? Buffer.alloc(0) : Buffer.from(param.rdata[3]!, 'hex');
  const hash = nsec3Hash(parseName(name), salt, Number(param.rdata[2]));
  for (const line of lines.filter((l) => l.type === 'NSEC3')) {
    const owner = base32hexDecode(line.owner.split('.')[0]!)!;
    const next = base32hexDecode(line.rdata[4]!)!;
    if (relation === 'matches' ? owner.equals(hash) : covers(owner, next, hash)) return line.owner;
  }
  throw new Error(`no NSEC3 ${relation} ${name}`);
}

function covers(owner: Buffer, next: Buffer, hash: Buffer): boolean {
  const afterOwner = Buffer.compare(owner, hash) < 0;
  const beforeNext = Buffer.compare(hash, next) < 0;
  return Buffer.compare(owner, next) < 0 ? afterOwner && beforeNext : afterOwner || beforeNext;
}

/** One record line of the types a denial is made of (SOA, NSEC, NSEC3, RRSIG), as dns-packet encodes it. */
function toRecord(line: ZoneLine): dnsPacket.Answer {
  const r = line.rdata;
  const base = { name: relativeToRoot(line.owner), ttl: Number(line.ttl), class: 'IN' as const };
  switch (line.type) {
    case 'SOA':
      return { ...base, type: 'SOA', data: { mname: relativeToRoot(r[0]!), rname: relativeToRoot(r[1]!), serial: Number(r[2]), refresh: Number(r[3]), retry: Number(r[4]), expire: Number(r[5]), minimum: Number(r[6]) } };
    case 'NSEC':
      return { ...base, type: 'NSEC', data: { nextDomain: relativeToRoot(r[0]!), rrtypes: r.slice(1) } } as dnsPacket.Answer;
    case 'NSEC3':
      return {
        ...base,
        type: 'NSEC3',
        data: { algorithm: Number(r[0]), flags: Number(r[1]), iterations: Number(r[2]), salt: r[3] === '-' ? Buffer.alloc(0) : Buffer.from(r[3]!, 'hex'), nextDomain: base32hexDecode(r[4]!)!, rrtypes: r.slice(5) },
      } as dnsPacket.Answer;
    case 'RRSIG':
      return {
        ...base,
        type: 'RRSIG',
        data: {
          typeCovered: r[0]!,
          algorithm: Number(r[1]),
          labels: Number(r[2]),
          originalTTL: Number(r[3]),
          expiration: signatureTime(r[4]!),
          inception: signatureTime(r[5]!),
          keyTag: Number(r[6]),
          signersName: relativeToRoot(r[7]!),
          signature: Buffer.from(r.slice(8).join(''), 'base64'),
        },
      } as dnsPacket.Answer;
    default:
      throw new Error(`cannot replay a ${line.type} record`);
  }
}

/** An RRSIG time, YYYYMMDDHHmmSS in UTC (RFC 4034 §3.2), as seconds since the epoch. */
function signatureTime(text: string): number {
  const [y, mo, d, h, mi, s] = [0, 4, 6, 8, 10, 12].map((at, i) => Number(text.slice(at, i === 0 ? 4 : at + 2)));
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, s!) / 1000;
}

/** A name as dns-packet takes it: no trailing dot, the root as `.`. */
function relativeToRoot(name: string): string {
  return name === '.' ? '.' : name.replace(/\.$/, '');
}

function absolute(name: string): string {
  return name === '' || name === '.' ? '.' : `${name.replace(/\.$/, '')}.`;
}

const sameName = (a: string, b: string): boolean => absolute(a).toLowerCase() === absolute(b).toLowerCase();
