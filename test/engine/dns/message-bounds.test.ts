import dnsPacket from 'dns-packet';
import type { Answer } from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { judgeReply, prepareQuery } from '../../../src/engine/dns/dns-message.js';
import { messageProblem } from '../../../src/engine/dns/message-bounds.js';

const question = { name: 'example.test', type: 'A' as const };
const query = prepareQuery(7, question, false);

function response(sections: { flags?: number; answers?: Answer[]; authorities?: Answer[] }): Buffer {
  return dnsPacket.encode({
    type: 'response',
    id: 7,
    flags: sections.flags ?? dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    questions: [{ name: 'example.test', type: 'A', class: 'IN' }],
    answers: sections.answers ?? [],
    authorities: sections.authorities ?? [],
  });
}

describe('messageProblem: the structure of a reply against its length (RFC 1035 §4.1)', () => {
  it('passes well-formed replies of every type whose data holds names', () => {
    const answers: Answer[] = [
      { name: 'example.test', type: 'A', ttl: 60, data: '192.0.2.1' },
      { name: 'example.test', type: 'MX', ttl: 60, data: { preference: 10, exchange: 'mx.example.test' } },
      { name: 'example.test', type: 'NS', ttl: 60, data: 'ns.example.test' },
      { name: 'example.test', type: 'SOA', ttl: 60, data: { mname: 'ns.example.test', rname: 'hostmaster.example.test', serial: 1, refresh: 2, retry: 3, expire: 4, minimum: 5 } },
      { name: '_sip._tcp.example.test', type: 'SRV', ttl: 60, data: { priority: 1, weight: 2, port: 5060, target: 'sip.example.test' } },
      { name: 'example.test', type: 'TXT', ttl: 60, data: ['v=spf1 -all', ''] },
      { name: 'example.test', type: 'CAA', ttl: 60, data: { flags: 0, tag: 'issue', value: 'ca.example' } },
    ];
    expect(messageProblem(response({ answers }))).toBeNull();
  });

  it('passes compression pointers to earlier names, as servers write them', () => {
    const reply = response({});
    // example.test A at a pointer to the question name (offset 12).
    const message = Buffer.concat([reply, Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 1])]);
    message.writeUInt16BE(1, 6);
    expect(messageProblem(message)).toBeNull();
    expect(judgeReply(message, query)).toMatchObject({ kind: 'reply', answers: [{ name: 'example.test', data: '192.0.2.1' }] });
  });

  it('refuses a name inside rdata that runs past its record', () => {
    const reply = response({ answers: [{ name: 'example.test', type: 'CNAME', ttl: 60, data: 'a.example.test' }] });
    // The rdata length (last record, its 2 octets before the name) cut by 3: the name now ends after it.
    const at = reply.length - Buffer.byteLength('a.example.test') - 2 - 2;
    reply.writeUInt16BE(reply.readUInt16BE(at) - 3, at);
    expect(messageProblem(Buffer.concat([reply, Buffer.alloc(0)]))).toMatch(/runs past the end of its record|does not match its length/);
  });

  it('reads only the question of a truncated reply (TC), whose records may be cut', () => {
    const reply = Buffer.concat([response({ flags: dnsPacket.TRUNCATED_RESPONSE | dnsPacket.RECURSION_AVAILABLE }), Buffer.from([0xc0, 12, 0, 1])]);
    reply.writeUInt16BE(1, 6);
    expect(messageProblem(reply)).not.toBeNull();
    expect(messageProblem(reply, true)).toBeNull();
    expect(judgeReply(reply, query)).toMatchObject({ kind: 'reply', truncated: true, answers: [] });
  });
});

describe('judgeReply: referrals (RFC 1034 §4.3.1, RFC 2308 §2.2)', () => {
  const ns: Answer[] = [{ name: 'example.test', type: 'NS', ttl: 60, data: 'ns1.example.test' }];
  const soa: Answer = { name: 'example.test', type: 'SOA', ttl: 60, data: { mname: 'ns1.example.test', rname: 'h.example.test', serial: 1, refresh: 1, retry: 1, expire: 1, minimum: 1 } };

  it('is a referral: no answer, NS and no SOA in authority, neither RA nor AA', () => {
    expect(judgeReply(response({ flags: 0, authorities: ns }), query)).toMatchObject({ kind: 'reply', referral: ['ns1.example.test'] });
  });

  it('is not a referral from a recursive resolver (RA), an authoritative server (AA), or with a SOA (NODATA)', () => {
    expect(judgeReply(response({ authorities: ns }), query)).toMatchObject({ referral: null });
    expect(judgeReply(response({ flags: dnsPacket.AUTHORITATIVE_ANSWER, authorities: ns }), query)).toMatchObject({ referral: null });
    expect(judgeReply(response({ flags: 0, authorities: [soa, ...ns] }), query)).toMatchObject({ referral: null });
  });
});
