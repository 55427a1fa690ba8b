/**
 * DNS replies a correct server never sends, built octet by octet for the
 * `script` option of the test DNS server (dns-server.ts): compression
 * pointers that loop or point past the end, records cut short, names over
 * 255 octets, rdata lengths past the end of the message, answers about
 * names nobody asked, referrals from a server that does not recurse.
 */
import dnsPacket from 'dns-packet';
import type { Answer, DecodedPacket } from 'dns-packet';

const QR = 0x8000;

/** A response to `query` (its id and question) with the given flags and sections, encoded by dns-packet. */
export function replyTo(
  query: DecodedPacket,
  sections: { flags?: number; answers?: Answer[]; authorities?: Answer[]; additionals?: Answer[] } = {},
): Buffer {
  return dnsPacket.encode({
    type: 'response',
    id: query.id ?? 0,
    // Recursion available and desired, as a recursive resolver answers, unless the test says otherwise.
    flags: sections.flags ?? (dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE),
    questions: query.questions ?? [],
    answers: sections.answers ?? [],
    authorities: sections.authorities ?? [],
    additionals: sections.additionals ?? [],
  });
}

/**
 * A response to `query` whose answer section is `records` (raw octets, the
 * count given): the header and question as a server writes them, then
 * whatever the test wants after them. The question name sits at offset 12.
 */
export function replyWithRawAnswers(query: DecodedPacket, records: Buffer, count: number): Buffer {
  const head = replyTo(query);
  const message = Buffer.concat([head, records]);
  message.writeUInt16BE(count, 6);
  return message;
}

/** The offset of the first octet after the question section of `replyTo(query)`. */
export function answerOffset(query: DecodedPacket): number {
  return replyTo(query).length;
}

/** The fixed part of an A record (type A, class IN, TTL 60, 4 octets of data) and its address. */
function aRecordTail(address = [192, 0, 2, 1]): Buffer {
  return Buffer.from([0, 1, 0, 1, 0, 0, 0, 60, 0, 4, ...address]);
}

/** An answer whose owner name is a compression pointer to itself: a loop. */
export function pointerLoop(query: DecodedPacket): Buffer {
  const at = answerOffset(query);
  return replyWithRawAnswers(query, Buffer.concat([Buffer.from([0xc0 | (at >> 8), at & 0xff]), aRecordTail()]), 1);
}

/** An answer whose owner name is a compression pointer past the end of the message. */
export function pointerPastEnd(query: DecodedPacket): Buffer {
  return replyWithRawAnswers(query, Buffer.concat([Buffer.from([0xff, 0xff]), aRecordTail()]), 1);
}

/** An A record cut off after its type and class. */
export function truncatedRecord(query: DecodedPacket): Buffer {
  return replyWithRawAnswers(query, Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0]), 1);
}

/** An answer owned by a name of five 63-octet labels: 321 octets, over the 255 a name may have. */
export function nameOver255(query: DecodedPacket): Buffer {
  const labels: number[] = [];
  for (let i = 0; i < 5; i++) labels.push(63, ...Buffer.alloc(63, 0x61));
  labels.push(0);
  return replyWithRawAnswers(query, Buffer.concat([Buffer.from(labels), aRecordTail()]), 1);
}

/** A TXT record at the question name whose rdata length (200) runs far past the message, which holds `\x05hello`. */
export function rdlengthPastEnd(query: DecodedPacket): Buffer {
  return replyWithRawAnswers(query, Buffer.from([0xc0, 12, 0, 16, 0, 1, 0, 0, 0, 60, 0, 200, 5, ...Buffer.from('hello')]), 1);
}

/** A reply of QR set and the query's id with nothing after the header: 12 octets that promise a question and hold none. */
export function headerOnly(query: DecodedPacket): Buffer {
  const header = Buffer.alloc(12);
  header.writeUInt16BE(query.id ?? 0, 0);
  header.writeUInt16BE(QR | 0x0180, 2);
  header.writeUInt16BE(1, 4);
  return header;
}

/** A referral: no answer, the name servers of `zone` in the authority section, neither RA nor AA set. */
export function referral(query: DecodedPacket, zone: string, servers: readonly string[]): Buffer {
  return replyTo(query, {
    flags: query.flags !== undefined ? query.flags & dnsPacket.RECURSION_DESIRED : 0,
    authorities: servers.map((server): Answer => ({ name: zone, type: 'NS', ttl: 172800, class: 'IN', data: server })),
    additionals: servers.map((server, index): Answer => ({ name: server, type: 'A', ttl: 172800, class: 'IN', data: `192.0.2.${index + 1}` })),
  });
}
