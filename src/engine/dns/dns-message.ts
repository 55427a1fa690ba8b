import { randomBytes } from 'node:crypto';
import dnsPacket from 'dns-packet';
import type { DecodedPacket, RecordType } from 'dns-packet';
import { NetintelError } from '../../errors.js';

/**
 * Building queries and judging replies. The wire format itself is
 * dns-packet's; this file decides what goes into a query and which reply
 * belongs to which query.
 */

/** One question: an ASCII name (normalised, no trailing dot) and a type, class IN. */
export interface DnsQuestion {
  name: string;
  type: RecordType;
}

/**
 * The EDNS0 UDP payload size we advertise: 1232 octets avoids IP
 * fragmentation on common paths (DNS Flag Day 2020, RFC 9715).
 */
export const EDNS_UDP_PAYLOAD = 1232;

// Query ids must be unpredictable (RFC 5452 §4.3); drawing two bytes at a
// time from the CSPRNG is slow at bulk rates, so draw a pool at once.
const ID_POOL_BYTES = 4096;
let idPool = randomBytes(ID_POOL_BYTES);
let idOffset = 0;

/** A uniformly random 16-bit query id. */
export function randomQueryId(): number {
  if (idOffset >= ID_POOL_BYTES) {
    idPool = randomBytes(ID_POOL_BYTES);
    idOffset = 0;
  }
  const id = idPool.readUInt16BE(idOffset);
  idOffset += 2;
  return id;
}

/**
 * Encodes a recursive query (RD set) for `question` with message id `id`,
 * with an EDNS0 OPT record (RFC 6891) when `edns` is true. The name must
 * have passed {@link assertQueryName}.
 */
export function encodeQuery(id: number, question: DnsQuestion, edns: boolean): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ name: question.name, type: question.type, class: 'IN' }],
    additionals: edns
      ? [{ type: 'OPT', name: '.', udpPayloadSize: EDNS_UDP_PAYLOAD, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }]
      : [],
  });
}

/** Decodes a message, or gives null when it is not a well-formed DNS message. */
export function decodeMessage(message: Buffer): DecodedPacket | null {
  try {
    return dnsPacket.decode(message);
  } catch {
    return null;
  }
}

/**
 * True when `packet` is a response to `question`: QR set, exactly one
 * question, same type, class IN, and the same name compared
 * case-insensitively (RFC 4343). Together with the id this is what RFC 5452
 * §9.1 asks a resolver to check before accepting a reply.
 */
export function answersQuestion(packet: DecodedPacket, question: DnsQuestion): boolean {
  if (!packet.flag_qr || packet.questions?.length !== 1) return false;
  const asked = packet.questions[0];
  if (!asked || asked.type !== question.type || (asked.class ?? 'IN') !== 'IN') return false;
  return sameName(asked.name, question.name);
}

/**
 * The response code of a message as DNS spells it (`NOERROR`, `NXDOMAIN`,
 * `SERVFAIL`, ...), including the upper eight bits carried in an OPT record
 * (RFC 6891 §6.1.3), so that e.g. BADVERS is not read as NOERROR.
 */
export function responseCode(packet: DecodedPacket): string {
  const low = (packet.flags ?? 0) & 0x0f;
  const opt = packet.additionals?.find((rr) => rr.type === 'OPT');
  const high = opt && 'extendedRcode' in opt ? opt.extendedRcode : 0;
  const code = (high << 4) | low;
  return RCODE_NAMES[code] ?? `RCODE${code}`;
}

// IANA "DNS RCODEs" registry, the values a DNS response can carry.
const RCODE_NAMES: Record<number, string> = {
  0: 'NOERROR',
  1: 'FORMERR',
  2: 'SERVFAIL',
  3: 'NXDOMAIN',
  4: 'NOTIMP',
  5: 'REFUSED',
  6: 'YXDOMAIN',
  7: 'YXRRSET',
  8: 'NXRRSET',
  9: 'NOTAUTH',
  10: 'NOTZONE',
  11: 'DSOTYPENI',
  16: 'BADVERS',
  23: 'BADCOOKIE',
};

function sameName(a: string, b: string): boolean {
  const strip = (name: string): string => (name.length > 1 && name.endsWith('.') ? name.slice(0, -1) : name);
  return strip(a).toLowerCase() === strip(b).toLowerCase();
}

/**
 * Guards the encoder, which writes label lengths without checking them: a
 * label over 63 octets would turn into a compression pointer on the wire.
 *
 * @throws NetintelError `invalid_input` when the name breaks the RFC 1035
 *   §2.3.4 limits (callers normally normalise names before this point).
 */
export function assertQueryName(name: string): void {
  if (name === '.' || name === '') return;
  const bare = name.endsWith('.') ? name.slice(0, -1) : name;
  const labels = bare.split('.');
  const tooLong = Buffer.byteLength(bare) > 253 || labels.some((l) => l.length === 0 || Buffer.byteLength(l) > 63);
  if (tooLong) {
    throw new NetintelError('invalid_input', `Cannot query ${JSON.stringify(name)}: not a valid DNS name`, {
      details: { input: name },
    });
  }
}
