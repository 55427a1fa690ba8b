import { randomInt } from 'node:crypto';
import dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket, RecordType } from 'dns-packet';
import { NetintelError } from '../../errors.js';
import { chainRecords } from './answer-chain.js';
import { toDnsAnswer } from './dns-records.js';
import { messageProblem, questionEnd } from './message-bounds.js';
import type { DnsAnswer } from './dns-result.js';

/**
 * Building queries and judging replies. The wire format is dns-packet's;
 * this file decides what goes into a query and which reply belongs to
 * which query.
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

/**
 * Whether a query carries an EDNS0 OPT record: `false` none, `true` plain,
 * `'dnssec'` with the DO bit (RFC 4035 §3.2.1) so that RRSIG, NSEC and NSEC3
 * come back, `'dnssec-cd'` with DO and the CD bit (RFC 4035 §3.2.2) for a
 * caller that validates itself and wants the data even where the resolver
 * would call it bogus.
 */
export type EdnsMode = boolean | 'dnssec' | 'dnssec-cd';

/** A uniformly random 16-bit query id: ids must be unpredictable (RFC 5452 §4.3). */
export function randomQueryId(): number {
  return randomInt(0x10000);
}

/** A query ready to send, with what is needed to judge the replies to it. */
export interface PreparedQuery {
  id: number;
  question: DnsQuestion;
  /** The message to send. */
  message: Buffer;
}

/**
 * Encodes a recursive query (RD set) for `question` with message id `id`,
 * with an EDNS0 OPT record (RFC 6891) when `edns` is true. The name must
 * have passed {@link assertQueryName}.
 */
export function prepareQuery(id: number, question: DnsQuestion, edns: EdnsMode): PreparedQuery {
  const dnssecOk = edns === 'dnssec' || edns === 'dnssec-cd';
  const message = dnsPacket.encode({
    type: 'query',
    id,
    flags: dnsPacket.RECURSION_DESIRED | (edns === 'dnssec-cd' ? dnsPacket.CHECKING_DISABLED : 0),
    questions: [{ name: question.name, type: question.type, class: 'IN' }],
    additionals: edns
      ? [{ type: 'OPT', name: '.', udpPayloadSize: EDNS_UDP_PAYLOAD, extendedRcode: 0, ednsVersion: 0, flags: dnssecOk ? dnsPacket.DNSSEC_OK : 0, flag_do: dnssecOk, options: [] }]
      : [],
  });
  return { id, question, message };
}

/** The bytes of {@link prepareQuery}'s query. */
export function encodeQuery(id: number, question: DnsQuestion, edns: EdnsMode): Buffer {
  return prepareQuery(id, question, edns).message;
}

/** A reply accepted for a query: what the transport acts on, and the whole message in dns-packet's form. */
export interface DnsReply {
  readonly kind: 'reply';
  /** The message as received. */
  readonly message: Buffer;
  /** The response code as DNS spells it, see {@link responseCode}. */
  readonly rcode: string;
  /** The TC flag: the answer did not fit (RFC 1035 §4.1.1). */
  readonly truncated: boolean;
  /**
   * The answer section as typed answers (toDnsAnswer): the records owned by
   * the name asked or by a name on its CNAME/DNAME chain (answer-chain.ts),
   * the OPT pseudo-record left out.
   */
  readonly answers: DnsAnswer[];
  /** The records of `answers` in dns-packet's form, for readers of types netintel does not model (the SPF type). */
  readonly answerRecords: Answer[];
  /** Records of the answer section for names off the question's chain, or of another type: left out of `answers`. */
  readonly ignored_answers: number;
  /**
   * The name servers of a referral, null for any other reply: NOERROR, no
   * answer, NS records and no SOA in the authority section, from a server
   * that neither recurses (RA clear) nor is authoritative (AA clear). A
   * recursive resolver answers or says why not; a referral says "ask them",
   * which is no answer to a stub (RFC 1034 §4.3.1, RFC 2308 §2.2).
   */
  readonly referral: string[] | null;
  /** dns-packet's decoding of `message`. */
  readonly packet: DecodedPacket;
}

/** A reply whose id matched a query but that is not a well-formed DNS message; `reason` says what is wrong. */
export interface MalformedReply {
  readonly kind: 'malformed';
  readonly reason: string;
}

/**
 * The reply `message` to `query` when it is one (see {@link answersQuestion}),
 * `malformed` when it is not a well-formed DNS message (see messageProblem),
 * or null when it is a well-formed answer to another question and must be
 * ignored. The message id is the caller's to check. A truncated reply (TC)
 * is read for its question alone: its records may be cut, and the question
 * is asked again over TCP.
 */
export function judgeReply(message: Buffer, query: PreparedQuery): DnsReply | MalformedReply | null {
  const truncated = message.length >= 4 && (message[2]! & 0x02) !== 0;
  const problem = messageProblem(message, truncated);
  if (problem !== null) return { kind: 'malformed', reason: problem };
  let packet: DecodedPacket;
  try {
    packet = dnsPacket.decode(message);
  } catch (error) {
    if (!truncated) return { kind: 'malformed', reason: `it cannot be decoded (${(error as Error).message})` };
    packet = dnsPacket.decode(questionPart(message));
  }
  if (!answersQuestion(packet, query.question)) return null;
  const { related, ignored } = chainRecords(query.question, packet.answers ?? []);
  const answers: DnsAnswer[] = [];
  for (const rr of related) {
    const answer = toDnsAnswer(rr);
    if (answer) answers.push(answer);
  }
  const rcode = responseCode(packet);
  // A truncated reply is asked again over TCP before anything is read of it.
  const referral = truncated ? null : referralOf(packet, rcode);
  return { kind: 'reply', message, rcode, truncated, answers, answerRecords: related, ignored_answers: ignored, referral, packet };
}

/** The header and question section of a message, with no records: what is read of a truncated reply whose records are cut. */
function questionPart(message: Buffer): Buffer {
  const head = Buffer.from(message.subarray(0, questionEnd(message)));
  head.writeUInt16BE(0, 6);
  head.writeUInt16BE(0, 8);
  head.writeUInt16BE(0, 10);
  return head;
}

/** The NS names of a referral (see DnsReply.referral), or null. */
function referralOf(packet: DecodedPacket, rcode: string): string[] | null {
  if (rcode !== 'NOERROR' || (packet.answers?.length ?? 0) > 0 || packet.flag_aa === true || packet.flag_ra === true) return null;
  const authorities = packet.authorities ?? [];
  if (authorities.some((rr) => rr.type === 'SOA')) return null;
  const servers = authorities.flatMap((rr) => (rr.type === 'NS' ? [String(rr.data)] : []));
  return servers.length > 0 ? servers : null;
}

/** Decodes a message, or gives null when it is not a well-formed DNS message. */
export function decodeMessage(message: Buffer): DecodedPacket | null {
  if (messageProblem(message) !== null) return null;
  try {
    return dnsPacket.decode(message);
  } catch {
    return null;
  }
}

/**
 * True when `packet` is a response to `question`: QR set, the opcode of the
 * query (QUERY; a NOTIFY or UPDATE reply answers no question asked here),
 * exactly one question, same type, class IN, and the same name compared
 * case-insensitively (RFC 4343). Together with the id this is what RFC 5452
 * §9.1 asks a resolver to check before accepting a reply.
 */
export function answersQuestion(packet: DecodedPacket, question: DnsQuestion): boolean {
  if (!packet.flag_qr || opcodeOf(packet) !== QUERY_OPCODE || packet.questions?.length !== 1) return false;
  const asked = packet.questions[0];
  if (!asked || asked.type !== question.type || (asked.class ?? 'IN') !== 'IN') return false;
  return sameName(asked.name, question.name);
}

/** OPCODE 0, a standard query (RFC 1035 §4.1.1), the only kind netintel asks. */
const QUERY_OPCODE = 0;

/** The OPCODE of a message: bits 11 to 14 of its flags. */
function opcodeOf(packet: DecodedPacket): number {
  return ((packet.flags ?? 0) >> 11) & 0x0f;
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
  return rcodeName((high << 4) | low);
}

/** The name of a response code number (`NOERROR`, ...; `RCODE<n>` for one without a name). */
export function rcodeName(code: number): string {
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
  // Plain ASCII (octets = characters) is checked in one pass; other names
  // take the general path below, which counts UTF-8 octets.
  const end = name.charCodeAt(name.length - 1) === 0x2e ? name.length - 1 : name.length;
  let labelLength = 0;
  let valid = end <= 253;
  for (let i = 0; i < end; i++) {
    const code = name.charCodeAt(i);
    if (code > 0x7f) {
      assertQueryNameOctets(name);
      return;
    }
    if (code === 0x2e) {
      if (labelLength === 0) valid = false;
      labelLength = 0;
    } else if (++labelLength > 63) {
      valid = false;
    }
  }
  if (!valid || labelLength === 0) throw invalidQueryName(name);
}

function assertQueryNameOctets(name: string): void {
  const bare = name.endsWith('.') ? name.slice(0, -1) : name;
  const labels = bare.split('.');
  const tooLong = Buffer.byteLength(bare) > 253 || labels.some((l) => l.length === 0 || Buffer.byteLength(l) > 63);
  if (tooLong) throw invalidQueryName(name);
}

function invalidQueryName(name: string): NetintelError {
  return new NetintelError('invalid_input', `cannot query ${JSON.stringify(name)}: not a valid DNS name`, {
    details: { input: name },
  });
}
