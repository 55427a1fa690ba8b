import dnsPacket from 'dns-packet';
import type { Answer } from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { toDnsAnswer } from '../../../src/engine/dns/dns-records.js';

/** Puts records through the wire format and back, as they arrive from a server. */
function roundTrip(answers: Answer[]): Answer[] {
  const packet = dnsPacket.decode(dnsPacket.encode({ type: 'response', id: 1, questions: [], answers }));
  return packet.answers ?? [];
}

describe('toDnsAnswer', () => {
  it('joins TXT character strings as octets so a UTF-8 character split across two strings stays whole', () => {
    const euro = Buffer.from('€', 'utf8');
    const [rr] = roundTrip([
      { name: 'split.example', type: 'TXT', ttl: 5, data: [Buffer.concat([Buffer.from('price '), euro.subarray(0, 1)]), euro.subarray(1)] },
    ]);
    const answer = toDnsAnswer(rr!);
    expect(answer?.data).toMatchObject({ text: 'price €' });
  });

  it('shows a name-valued type it does not model (DNAME) as the name', () => {
    const [rr] = roundTrip([{ name: 'old.example', type: 'DNAME', ttl: 60, data: 'new.example' } as Answer]);
    expect(toDnsAnswer(rr!)).toEqual({ name: 'old.example', type: 'DNAME', ttl_seconds: 60, data: 'new.example' });
  });

  it('shows other types in the RFC 3597 generic form, unknown type numbers as TYPEnnn', () => {
    const [hinfo, amtrelay, https] = roundTrip([
      { name: 'host.example', type: 'HINFO', ttl: 60, data: { cpu: 'X', os: 'Y' } },
      { name: 'relay.example', type: 'UNKNOWN_260' as 'NULL', ttl: 60, data: Buffer.from([0, 1, 0]) },
      { name: 'svc.example', type: 'UNKNOWN_65' as 'NULL', ttl: 60, data: Buffer.from([0, 1, 0]) },
    ]);
    expect(toDnsAnswer(hinfo!)).toEqual({ name: 'host.example', type: 'HINFO', ttl_seconds: 60, data: '\\# 4 01580159' });
    expect(toDnsAnswer(amtrelay!)).toEqual({ name: 'relay.example', type: 'TYPE260', ttl_seconds: 60, data: '\\# 3 000100' });
    // SVCB (64) and HTTPS (65) are newer than dns-packet's table; netintel names them (RFC 9460).
    expect(toDnsAnswer(https!)).toEqual({ name: 'svc.example', type: 'HTTPS', ttl_seconds: 60, data: '\\# 3 000100' });
  });

  it('gives CAA flags with the issuer-critical bit', () => {
    const [rr] = roundTrip([{ name: 'example', type: 'CAA', ttl: 1, data: { flags: 128, tag: 'issue', value: ';' } }]);
    expect(toDnsAnswer(rr!)?.data).toEqual({ flags: 128, tag: 'issue', value: ';' });
  });

  it('skips the OPT pseudo-record', () => {
    expect(
      toDnsAnswer({ name: '.', type: 'OPT', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }),
    ).toBeNull();
  });
});
