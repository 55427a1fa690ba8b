/**
 * The hand-written query encoder and reply reader (dns-wire.ts) against
 * dns-packet, the reference: byte-identical queries, and for replies the
 * same verdict (ignored, or rcode, TC flag and typed answers) as decoding
 * with dns-packet and checking the question, on a corpus of responses of
 * every type (uncompressed as dns-packet writes them, compressed as servers
 * write them, captured from NSD), every truncation of them, and mutated
 * and hand-broken messages.
 */
import { isDeepStrictEqual } from 'node:util';
import dnsPacket from 'dns-packet';
import type { Answer, Packet } from 'dns-packet';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  answersQuestion,
  judgeReply,
  prepareQuery,
  responseCode,
  type DnsQuestion,
  type PreparedQuery,
} from '../../../src/engine/dns/dns-message.js';
import { toDnsAnswer } from '../../../src/engine/dns/dns-records.js';
import { DNS_RECORD_TYPES } from '../../../src/engine/dns/dns-type.js';
import { encodeQueryWire, readReplyWire, UNDECIDED } from '../../../src/engine/dns/dns-wire.js';
import { seededRandom } from '../../support/seeded-random.js';

const OPT: Answer = { type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] };

/** The query as the transport encoded it with dns-packet alone. */
function referenceQuery(id: number, question: DnsQuestion, edns: boolean): Buffer {
  return dnsPacket.encode({
    type: 'query',
    id,
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ name: question.name, type: question.type, class: 'IN' }],
    additionals: edns ? [OPT] : [],
  });
}

interface Verdict {
  rcode: string;
  truncated: boolean;
  answers: unknown[];
}

/** What the transport made of a reply with dns-packet alone: null when ignored. */
function referenceVerdict(message: Buffer, question: DnsQuestion): Verdict | null {
  let packet;
  try {
    packet = dnsPacket.decode(message);
  } catch {
    return null;
  }
  if (!answersQuestion(packet, question)) return null;
  return {
    rcode: responseCode(packet),
    truncated: packet.flag_tc === true,
    answers: (packet.answers ?? []).map(toDnsAnswer).filter((answer) => answer !== null),
  };
}

function verdict(message: Buffer, query: PreparedQuery, withPacket = true): Verdict | null {
  const reply = judgeReply(message, query);
  if (reply === null) return null;
  // The lazily decoded packet is dns-packet's decoding of the same message.
  if (withPacket) expect(reply.packet).toEqual(dnsPacket.decode(message));
  return { rcode: reply.rcode, truncated: reply.truncated, answers: reply.answers };
}

/** Compares with the reference; tells whether the fast reader accepted the message on its own. */
function expectSameVerdict(message: Buffer, query: PreparedQuery, withPacket = true): boolean {
  const actual = verdict(message, query, withPacket);
  const expected = referenceVerdict(message, query.question);
  // expect() only on a difference: tens of thousands of messages are compared.
  if (!isDeepStrictEqual(actual, expected)) expect(actual, message.toString('hex')).toEqual(expected);
  const fast = query.questionEnd > 0 ? readReplyWire(message, query.message, query.questionEnd, query.questionName) : UNDECIDED;
  return typeof fast === 'object';
}

// ------------------------------------------------------------------ corpus

const QUESTION: DnsQuestion = { name: 'example.test', type: 'A' };

/** One record of every kind dns-packet can write, as answers to a question about example.test. */
const RECORDS: Answer[] = [
  { name: 'example.test', type: 'A', ttl: 300, data: '192.0.2.10' },
  { name: 'example.test', type: 'AAAA', ttl: 300, data: '2001:db8::10' },
  { name: 'example.test', type: 'AAAA', ttl: 300, data: '::ffff:192.0.2.1' },
  { name: 'www.example.test', type: 'CNAME', ttl: 120, data: 'web.example.test' },
  { name: 'example.test', type: 'NS', ttl: 86400, data: 'ns1.example.test' },
  { name: '10.2.0.192.in-addr.arpa', type: 'PTR', ttl: 3600, data: 'example.test' },
  { name: 'example.test', type: 'MX', ttl: 3600, data: { preference: 10, exchange: 'mx1.example.test' } },
  { name: 'example.test', type: 'MX', ttl: 3600, data: { preference: 0, exchange: '.' } },
  {
    name: 'example.test',
    type: 'SOA',
    ttl: 3600,
    data: { mname: 'ns1.example.test', rname: 'hostmaster.example.test', serial: 2024010101, refresh: 7200, retry: 900, expire: 1209600, minimum: 300 },
  },
  {
    name: 'example.test',
    type: 'SOA',
    ttl: 60,
    data: { mname: 'ns1.example.test', rname: 'john\\.doe.example.test', serial: 4294967295, refresh: 1, retry: 2, expire: 3, minimum: 4 },
  },
  { name: 'example.test', type: 'TXT', ttl: 600, data: 'v=spf1 mx -all' },
  { name: 'example.test', type: 'TXT', ttl: 600, data: ['a'.repeat(255), 'b'.repeat(255), 'c'.repeat(10)] },
  { name: 'example.test', type: 'TXT', ttl: 600, data: [] },
  { name: 'example.test', type: 'TXT', ttl: 600, data: [''] },
  { name: 'example.test', type: 'TXT', ttl: 600, data: ['say "hi"', 'back\\slash', 'caf\u00e9 \u20ac'] },
  {
    name: 'split.example.test',
    type: 'TXT',
    ttl: 5,
    data: [Buffer.concat([Buffer.from('price '), Buffer.from('\u20ac').subarray(0, 1)]), Buffer.from('\u20ac').subarray(1)],
  },
  { name: 'example.test', type: 'TXT', ttl: 600, data: [Buffer.from([0xff, 0xfe, 0x00, 0x41])] },
  { name: 'example.test', type: 'CAA', ttl: 3600, data: { flags: 0, tag: 'issue', value: 'letsencrypt.org' } },
  { name: 'example.test', type: 'CAA', ttl: 3600, data: { flags: 128, tag: 'iodef', value: 'mailto:security@example.test' } },
  { name: '_sip._tcp.example.test', type: 'SRV', ttl: 120, data: { priority: 10, weight: 60, port: 5060, target: 'sip.example.test' } },
  { name: 'old.example.test', type: 'DNAME', ttl: 60, data: 'new.example.test' } as Answer,
  { name: 'host.example.test', type: 'HINFO', ttl: 60, data: { cpu: 'X', os: 'Y' } },
  { name: 'svc.example.test', type: 'UNKNOWN_65' as 'NULL', ttl: 60, data: Buffer.from([0, 1, 0]) },
  { name: 'example.test', type: 'DS', ttl: 60, data: { keyTag: 1, algorithm: 8, digestType: 2, digest: Buffer.alloc(32, 7) } },
  { name: 'example.test', type: 'SSHFP', ttl: 60, data: { algorithm: 1, hash: 1, fingerprint: 'a'.repeat(40) } },
  { name: 'caf\u00e9.example.test', type: 'A', ttl: 300, data: '192.0.2.99' },
  { name: '*.example.test', type: 'A', ttl: 0, data: '0.0.0.0' },
  { name: 'example.test', type: 'A', ttl: 4294967295, data: '255.255.255.255' },
];

const AUTHORITY: Answer[] = [
  RECORDS.find((rr) => rr.type === 'SOA')!,
  { name: 'example.test', type: 'NS', ttl: 86400, data: 'ns1.example.test' },
];

const ADDITIONAL: Answer[] = [
  { name: 'ns1.example.test', type: 'A', ttl: 300, data: '192.0.2.53' },
  { name: 'ns1.example.test', type: 'AAAA', ttl: 300, data: '2001:db8::53' },
];

interface Case {
  label: string;
  question: DnsQuestion;
  edns: boolean;
  message: Buffer;
  /** False when the answers hold what the fast reader leaves to dns-packet (see NON_ASCII_NAMES). */
  inPlace: boolean;
}

/**
 * Answer records the fast reader hands to dns-packet by design: a name with
 * octets over 0x7f (dns-packet decodes labels as UTF-8), and a mailbox with
 * a dot inside its first label (dns-packet escapes it; dns-packet's encoder
 * writes `john\\.doe` so, the compressing encoder below does not).
 */
const NON_ASCII_NAMES = new Set<Answer>(RECORDS.filter((rr) => /[^\x00-\x7f]/.test(rr.name)));
const DOT_IN_LABEL = new Set<Answer>(RECORDS.filter((rr) => rr.type === 'SOA' && rr.data.rname.includes('\\')));

function response(question: DnsQuestion, fields: Partial<Packet>, id = 0x1234): Packet {
  return { type: 'response', id, flags: dnsPacket.AUTHORITATIVE_ANSWER, questions: [{ name: question.name, type: question.type, class: 'IN' }], ...fields };
}

/**
 * Encodes a response with name compression as servers write it (RFC 1035
 * §4.1.4): every name, in owners and in the RDATA of NS, CNAME, PTR, MX and
 * SOA, points to an earlier occurrence of its longest known suffix.
 */
function compressed(packet: Packet): Buffer {
  const out: number[] = [];
  const seen = new Map<string, number>();
  const u16 = (value: number) => out.push((value >> 8) & 0xff, value & 0xff);
  const u32 = (value: number) => out.push((value >>> 24) & 0xff, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff);
  const name = (text: string) => {
    const labels = text === '.' ? [] : text.replace(/\.$/, '').split('.');
    for (let i = 0; i < labels.length; i++) {
      const suffix = labels.slice(i).join('.').toLowerCase();
      const at = seen.get(suffix);
      if (at !== undefined) {
        u16(0xc000 | at);
        return;
      }
      if (out.length < 0x3fff) seen.set(suffix, out.length);
      const bytes = Buffer.from(labels[i]!, 'utf8');
      out.push(bytes.length, ...bytes);
    }
    out.push(0);
  };
  const header = dnsPacket.encode({ ...packet, questions: [], answers: [], authorities: [], additionals: [] });
  out.push(...header.subarray(0, 4));
  u16(packet.questions?.length ?? 0);
  u16(packet.answers?.length ?? 0);
  u16(packet.authorities?.length ?? 0);
  u16(packet.additionals?.length ?? 0);
  for (const q of packet.questions ?? []) {
    name(q.name);
    out.push(...dnsPacket.encode({ type: 'query', questions: [{ ...q, name: '.' }] }).subarray(13));
  }
  for (const rr of [...(packet.answers ?? []), ...(packet.authorities ?? []), ...(packet.additionals ?? [])]) {
    if (rr.type === 'OPT') {
      out.push(...dnsPacket.encode({ type: 'response', additionals: [rr] }).subarray(12));
      continue;
    }
    name(rr.name);
    const fixed = dnsPacket.encode({ type: 'response', answers: [{ ...rr, name: '.' } as Answer] }).subarray(13);
    out.push(...fixed.subarray(0, 8));
    const data = (rr as { data: unknown }).data;
    const lengthAt = out.length;
    u16(0);
    switch (rr.type) {
      case 'NS':
      case 'CNAME':
      case 'PTR':
        name(data as string);
        break;
      case 'MX': {
        const mx = data as { preference: number; exchange: string };
        u16(mx.preference);
        name(mx.exchange);
        break;
      }
      case 'SOA': {
        const soa = data as { mname: string; rname: string; serial: number; refresh: number; retry: number; expire: number; minimum: number };
        name(soa.mname);
        name(soa.rname);
        for (const value of [soa.serial, soa.refresh, soa.retry, soa.expire, soa.minimum]) u32(value);
        break;
      }
      default:
        out.push(...fixed.subarray(10));
    }
    const rdLength = out.length - lengthAt - 2;
    out[lengthAt] = rdLength >> 8;
    out[lengthAt + 1] = rdLength & 0xff;
  }
  return Buffer.from(out);
}

/** Replies captured from NSD 4.6 (bench zone): compressed owners and RDATA names, authority and additional sections. */
const NSD_REPLIES: Array<{ name: string; type: DnsQuestion['type']; edns: boolean; reply: string }> = [
  { name: 'h00001.bench.test', type: 'A', edns: true, reply: '123485000001000100010002066830303030310562656e636804746573740000010001c00c000100010000012c00040a000001c013000200010000012c0006036e7331c013c03f000100010000012c00047f00000100002904d0000000000000' },
  { name: 'h00002.bench.test', type: 'MX', edns: true, reply: '123585000001000100010002066830303030320562656e6368047465737400000f0001c00c000f00010000012c0008000a036d7832c013c013000200010000012c0006036e7331c013c043000100010000012c00047f00000100002904d0000000000000' },
  { name: 'h00003.bench.test', type: 'TXT', edns: true, reply: '123685000001000100010002066830303030330562656e636804746573740000100001c00c001000010000012c001918763d73706631206970343a31302e302e302e33202d616c6cc013000200010000012c0006036e7331c013c054000100010000012c00047f00000100002904d0000000000000' },
  { name: 'nope.bench.test', type: 'A', edns: true, reply: '123785030001000000010001046e6f70650562656e636804746573740000010001c011000600010000012c0027036e7331c0110a686f73746d6173746572c0110000000100001c2000000384001275000000012c00002904d0000000000000' },
  { name: 'h00004.bench.test', type: 'AAAA', edns: true, reply: '123885000001000000010001066830303030340562656e6368047465737400001c0001c013000600010000012c0027036e7331c0130a686f73746d6173746572c0130000000100001c2000000384001275000000012c00002904d0000000000000' },
  { name: 'bench.test', type: 'SOA', edns: true, reply: '1239850000010001000100020562656e636804746573740000060001c00c000600010000012c0027036e7331c00c0a686f73746d6173746572c00c0000000100001c2000000384001275000000012cc00c000200010000012c0002c028c028000100010000012c00047f00000100002904d0000000000000' },
  { name: 'bench.test', type: 'NS', edns: true, reply: '123a850000010001000000020562656e636804746573740000020001c00c000200010000012c0006036e7331c00cc028000100010000012c00047f00000100002904d0000000000000' },
  { name: 'H00005.Bench.Test', type: 'MX', edns: false, reply: '123b85000001000100010001064830303030350542656e6368045465737400000f0001c00c000f00010000012c0008000a036d7835c013c013000200010000012c0006036e7331c013c043000100010000012c00047f000001' },
  { name: 'bench.test', type: 'TXT', edns: false, reply: '123c850000010000000100000562656e636804746573740000100001c00c000600010000012c0027036e7331c00c0a686f73746d6173746572c00c0000000100001c2000000384001275000000012c' },
];

/** Well-formed replies: every record kind in each section, rcodes, TC, EDNS variants, compressed and not, and NSD's. */
function corpus(): Case[] {
  const cases: Case[] = [];
  const add = (label: string, question: DnsQuestion, edns: boolean, packet: Packet) => {
    const answers = packet.answers ?? [];
    const nonAscii = answers.some((rr) => NON_ASCII_NAMES.has(rr));
    const dotInLabel = answers.some((rr) => DOT_IN_LABEL.has(rr));
    cases.push({ label, question, edns, message: dnsPacket.encode(packet), inPlace: !nonAscii && !dotInLabel });
    cases.push({ label: `${label}, compressed`, question, edns, message: compressed(packet), inPlace: !nonAscii });
  };
  for (const [i, rr] of RECORDS.entries()) {
    const question: DnsQuestion = { name: QUESTION.name, type: DNS_RECORD_TYPES[i % DNS_RECORD_TYPES.length]! };
    add(`answer ${rr.type} #${i}`, question, true, response(question, { answers: [rr], authorities: AUTHORITY, additionals: [...ADDITIONAL, OPT] }));
    add(`authority ${rr.type} #${i}`, question, true, response(question, { authorities: [rr], additionals: [OPT] }));
    add(`additional ${rr.type} #${i}`, question, false, response(question, { answers: [RECORDS[0]!], additionals: [rr] }));
  }
  add('every record in one answer', QUESTION, true, response(QUESTION, { answers: RECORDS, authorities: AUTHORITY, additionals: [...ADDITIONAL, OPT] }));
  add('a CNAME chain to A records', { name: 'www.example.test', type: 'A' }, true, response({ name: 'www.example.test', type: 'A' }, {
    answers: [
      { name: 'www.example.test', type: 'CNAME', ttl: 120, data: 'web.example.test' },
      { name: 'web.example.test', type: 'CNAME', ttl: 60, data: 'origin.example.test' },
      { name: 'origin.example.test', type: 'A', ttl: 30, data: '192.0.2.80' },
      { name: 'origin.example.test', type: 'A', ttl: 30, data: '192.0.2.81' },
    ],
    additionals: [OPT],
  }));
  for (const rcode of [0, 1, 2, 3, 4, 5, 9, 15]) {
    add(`rcode ${rcode}`, QUESTION, true, response(QUESTION, { flags: dnsPacket.AUTHORITATIVE_ANSWER | rcode, authorities: [AUTHORITY[0]!], additionals: [OPT] }));
  }
  add('BADVERS (extended rcode 1 in OPT)', QUESTION, true, response(QUESTION, { additionals: [{ ...OPT, extendedRcode: 1 } as Answer] }));
  add('extended rcode in a second OPT only', QUESTION, true, response(QUESTION, { additionals: [OPT, { ...OPT, extendedRcode: 1 } as Answer] }));
  add('OPT in the answer section', QUESTION, true, response(QUESTION, { answers: [RECORDS[0]!, { ...OPT, extendedRcode: 1 } as Answer] }));
  add('OPT with an option', QUESTION, true, response(QUESTION, {
    answers: [RECORDS[0]!],
    additionals: [{ ...OPT, options: [{ code: 10, data: Buffer.from('0123456789abcdef', 'hex') }] } as unknown as Answer],
  }));
  add('truncated (TC)', QUESTION, true, response(QUESTION, { flags: dnsPacket.AUTHORITATIVE_ANSWER | dnsPacket.TRUNCATED_RESPONSE, additionals: [OPT] }));
  add('no EDNS, NODATA', { name: 'example.test', type: 'MX' }, false, response({ name: 'example.test', type: 'MX' }, { authorities: [AUTHORITY[0]!] }));
  add('root question', { name: '.', type: 'NS' }, true, response({ name: '.', type: 'NS' }, { answers: [{ name: '.', type: 'NS', ttl: 1, data: 'a.root-servers.net' }], additionals: [OPT] }));
  add('trailing dot in the question', { name: 'example.test.', type: 'A' }, true, response({ name: 'example.test.', type: 'A' }, { answers: [RECORDS[0]!], additionals: [OPT] }));
  add('upper case in the question', { name: 'EXAMPLE.Test', type: 'TXT' }, true, response({ name: 'EXAMPLE.Test', type: 'TXT' }, { answers: [{ ...RECORDS[0]!, name: 'EXAMPLE.Test' }], additionals: [OPT] }));
  const long = `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`;
  add('a 253-octet name', { name: long, type: 'A' }, true, response({ name: long, type: 'A' }, { answers: [{ ...RECORDS[0]!, name: long }], additionals: [OPT] }));
  for (const [i, nsd] of NSD_REPLIES.entries()) {
    const question = { name: nsd.name, type: nsd.type };
    cases.push({ label: `NSD reply #${i} (${nsd.name} ${nsd.type})`, question, edns: nsd.edns, message: Buffer.from(nsd.reply, 'hex'), inPlace: true });
  }
  return cases;
}

const CORPUS = corpus();

function queryFor(testCase: Case): PreparedQuery {
  return prepareQuery(testCase.message.readUInt16BE(0), testCase.question, testCase.edns);
}

/** Writes `bytes` over `message` at `offset`, in a copy. */
function patched(message: Buffer, offset: number, bytes: number[]): Buffer {
  const copy = Buffer.from(message);
  bytes.forEach((byte, i) => (copy[offset + i] = byte));
  return copy;
}

// ------------------------------------------------------------------ tests

describe('encodeQueryWire', () => {
  const names = [
    'example.com',
    'example.com.',
    'EXAMPLE.Com',
    '.',
    'a',
    '_dmarc.example.com',
    '_sip._tcp.example.com',
    'xn--bcher-kva.example',
    '*.example.com',
    '0/26.2.0.192.in-addr.arpa',
    'host:name/with~odd!chars.example',
    '10.2.0.192.in-addr.arpa',
    '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa',
    `${'x'.repeat(63)}.example`,
    `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`,
    `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}.`,
  ];

  it('writes the bytes dns-packet writes for every supported type, name, id and EDNS setting', () => {
    let compared = 0;
    for (const name of names) {
      for (const type of DNS_RECORD_TYPES) {
        for (const edns of [true, false]) {
          for (const id of [0, 1, 0x1234, 0x8000, 0xffff]) {
            const wire = encodeQueryWire(id, name, type, edns, 1232);
            expect(wire, `${name} ${type}`).not.toBeNull();
            expect(wire!.equals(referenceQuery(id, { name, type }, edns)), `${name} ${type} edns=${edns} id=${id}`).toBe(true);
            expect(prepareQuery(id, { name, type }, edns).message.equals(wire!)).toBe(true);
            compared += 1;
          }
        }
      }
    }
    expect(compared).toBe(names.length * DNS_RECORD_TYPES.length * 2 * 5);
  });

  it('leaves names and types it does not handle to dns-packet, whose bytes prepareQuery then sends', () => {
    const refused: Array<[string, string]> = [
      ['b\u00fccher.example', 'A'],
      ['a b.example', 'A'],
      ['tab\t.example', 'A'],
      ['', 'A'],
      ['a..b', 'A'],
      ['.example', 'A'],
      ['example..', 'A'],
      [`${'x'.repeat(64)}.example`, 'A'],
      [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`, 'A'],
      ['example.com', 'SPF'],
      ['example.com', 'UNKNOWN_65'],
      ['example.com', 'ANY'],
      ['example.com', 'a'],
      ['example.com', 'constructor'],
    ];
    for (const [name, type] of refused) {
      expect(encodeQueryWire(7, name, type, true, 1232), `${name} ${type}`).toBeNull();
      const question = { name, type } as DnsQuestion;
      if (name === '' || name === '.example' || name.includes('..') || /x{64}|d{62}/.test(name)) continue;
      const prepared = prepareQuery(7, question, true);
      expect(prepared.message.equals(referenceQuery(7, question, true))).toBe(true);
      expect(prepared.questionEnd).toBe(0);
    }
  });
});

describe('readReplyWire and judgeReply', () => {
  it('read every well-formed reply of the corpus in place, as dns-packet does', () => {
    expect(CORPUS.length).toBeGreaterThan(150);
    let read = 0;
    for (const testCase of CORPUS) {
      const query = queryFor(testCase);
      const expected = referenceVerdict(testCase.message, testCase.question);
      expect(expected, testCase.label).not.toBeNull();
      expect(verdict(testCase.message, query), testCase.label).toEqual(expected);
      const fast = readReplyWire(testCase.message, query.message, query.questionEnd, query.questionName);
      if (testCase.inPlace) {
        expect(fast, testCase.label).not.toBe(UNDECIDED);
        read += 1;
      }
    }
    expect(read).toBeGreaterThan(CORPUS.length * 0.8);
  });

  it('judges every truncation of every reply as dns-packet does', () => {
    // dns-packet throws on most cuts; without stack traces that is cheap.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    onTestFinished(() => {
      Error.stackTraceLimit = stackTraceLimit;
    });
    let accepted = 0;
    for (const testCase of CORPUS) {
      const query = queryFor(testCase);
      for (let length = 0; length < testCase.message.length; length++) {
        if (expectSameVerdict(testCase.message.subarray(0, length), query, false)) accepted += 1;
      }
    }
    // A cut that leaves dns-packet a readable message (dns-packet reads an
    // A record past the end as "undefined" octets) is left to dns-packet.
    expect(accepted).toBe(0);
  });

  it('judges randomly mutated replies as dns-packet does', () => {
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    onTestFinished(() => {
      Error.stackTraceLimit = stackTraceLimit;
    });
    const next = seededRandom(20260601);
    const special = [0x00, 0x01, 0x04, 0x3f, 0x40, 0x80, 0xc0, 0xc0, 0xff];
    let mutations = 0;
    let accepted = 0;
    for (const testCase of CORPUS) {
      const query = queryFor(testCase);
      for (let i = 0; i < 60; i++) {
        const copy = Buffer.from(testCase.message);
        const edits = 1 + Math.floor(next() * 3);
        for (let e = 0; e < edits; e++) {
          // Mostly after the question, where the records are.
          const from = next() < 0.8 ? query.questionEnd || 12 : 0;
          const at = from + Math.floor(next() * (copy.length - from));
          copy[at] = next() < 0.5 ? special[Math.floor(next() * special.length)]! : Math.floor(next() * 256);
        }
        if (expectSameVerdict(copy, query, accepted < 500)) accepted += 1;
        mutations += 1;
      }
    }
    expect(mutations).toBe(CORPUS.length * 60);
    // Many mutations leave a message the fast reader still accepts (a
    // changed TTL, address or text): those verdicts were compared too.
    expect(accepted).toBeGreaterThan(mutations / 10);
  });

  describe('hand-broken replies', () => {
    const question: DnsQuestion = { name: 'example.test', type: 'MX' };
    const packet = response(question, {
      answers: [
        { name: 'example.test', type: 'MX', ttl: 60, data: { preference: 10, exchange: 'mx1.example.test' } },
        { name: 'example.test', type: 'A', ttl: 60, data: '192.0.2.1' },
      ],
      additionals: [OPT],
    });
    const message = compressed(packet);
    const query = prepareQuery(0x1234, question, true);
    const answerAt = query.questionEnd;
    // The first answer's owner is the pointer 0xc00c; its RDATA starts after owner, type, class, TTL, RDLENGTH.
    const mxRdata = answerAt + 2 + 10;

    it('the unbroken reply is read in place', () => {
      expect(message.readUInt16BE(answerAt)).toBe(0xc00c);
      expect(readReplyWire(message, query.message, query.questionEnd, query.questionName)).not.toBe(UNDECIDED);
      expectSameVerdict(message, query);
    });

    const broken: Array<[string, Buffer]> = [
      ['QR clear', patched(message, 2, [message[2]! & 0x7f])],
      ['no question', patched(message, 4, [0, 0])],
      ['two questions', patched(message, 4, [0, 2])],
      ['another question type', patched(message, answerAt - 3, [1])],
      ['another question class', patched(message, answerAt - 1, [3])],
      ['the question name in other case', patched(message, 13, [0x45])],
      ['the question name changed', patched(message, 13, [0x66])],
      ['a pointer to itself', patched(message, answerAt, [0xc0, answerAt])],
      ['a pointer forward', patched(message, answerAt, [0xc0, answerAt + 20])],
      ['a pointer into the header', patched(message, answerAt, [0xc0, 2])],
      ['a label type 0x40', patched(message, answerAt, [0x40, 0x0c])],
      ['a label type 0x80', patched(message, answerAt, [0x80, 0x0c])],
      ['a label running past the end', patched(message, mxRdata + 2, [0x3f])],
      ['an MX RDLENGTH too short', patched(message, mxRdata - 2, [0, 4])],
      ['an MX RDLENGTH too long', patched(message, mxRdata - 2, [0, 40])],
      ['an MX RDLENGTH of zero', patched(message, mxRdata - 2, [0, 0])],
      ['an answer count too high', patched(message, 6, [0, 9])],
      ['an additional count too high', patched(message, 10, [0, 2])],
      ['an answer count of zero', patched(message, 6, [0, 0])],
      ['trailing garbage', Buffer.concat([message, Buffer.from([1, 2, 3])])],
      ['a header only', message.subarray(0, 12)],
      ['eleven octets', message.subarray(0, 11)],
      ['nothing', Buffer.alloc(0)],
    ];
    for (const [label, bytes] of broken) {
      it(`judges a reply with ${label} as dns-packet does`, () => expectSameVerdict(bytes, query));
    }

    it('judges A RDATA of the wrong length, which dns-packet reads as four octets anyway, as dns-packet does', () => {
      const a = dnsPacket.encode(response({ name: 'example.test', type: 'A' }, { answers: [RECORDS[0]!, RECORDS[0]!] }));
      const aQuery = prepareQuery(0x1234, { name: 'example.test', type: 'A' }, false);
      const rdLengthAt = aQuery.questionEnd + 14 + 8;
      expect(a.readUInt16BE(rdLengthAt)).toBe(4);
      for (const rdLength of [0, 3, 5, 6]) expectSameVerdict(patched(a, rdLengthAt, [0, rdLength]), aQuery);
    });

    it('judges TXT character strings running past the RDATA as dns-packet does', () => {
      const txt = dnsPacket.encode(response({ name: 'example.test', type: 'TXT' }, { answers: [RECORDS.find((rr) => rr.type === 'TXT')!] }));
      const txtQuery = prepareQuery(0x1234, { name: 'example.test', type: 'TXT' }, false);
      const stringAt = txtQuery.questionEnd + 14 + 10;
      for (const length of [0, 13, 14, 15, 200]) expectSameVerdict(patched(txt, stringAt, [length]), txtQuery);
    });

    it('judges a name over 254 octets built from pointers as dns-packet does', () => {
      // Four 63-octet labels, then a pointer back to the first: 256 octets.
      const labels = [0x3f, ...Buffer.alloc(63, 0x61), 0x3f, ...Buffer.alloc(63, 0x62), 0x3f, ...Buffer.alloc(63, 0x63), 0x3f, ...Buffer.alloc(63, 0x64)];
      const head = dnsPacket.encode(response(question, { answers: [] }));
      const ownerAt = head.length;
      const body = Buffer.from([...labels, 0xc0, ownerAt, 0, 15, 0, 1, 0, 0, 0, 60, 0, 3, 0, 10, 0]);
      expectSameVerdict(Buffer.concat([patched(head, 6, [0, 1]), body]), prepareQuery(0x1234, question, false));
    });
  });
});
