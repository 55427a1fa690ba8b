/**
 * The wire reader of the validator over whole messages: what dns-packet
 * encodes reads back record for record, names inside rdata come out
 * uncompressed and lowercased where RFC 4034 §6.2 says, and any octets at
 * all give records or a WireFormatError, nothing else (property).
 */
import dnsPacket from 'dns-packet';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nameWire, parseName, presentName, readMessage, WireFormatError } from '../../../src/engine/dns/dnssec/wire.js';

describe('readMessage', () => {
  it('reads every section, drops OPT, and gives rdata in canonical form', () => {
    const message = dnsPacket.encode({
      type: 'response',
      id: 1,
      flags: dnsPacket.AUTHENTIC_DATA | dnsPacket.RECURSION_DESIRED,
      questions: [{ name: 'Mail.Example.test', type: 'MX' }],
      answers: [
        { name: 'Mail.Example.test', type: 'MX', ttl: 60, data: { preference: 10, exchange: 'MX1.Example.test' } },
        { name: 'Mail.Example.test', type: 'TXT', ttl: 60, data: ['Keep Case'] },
      ],
      authorities: [{ name: 'Example.test', type: 'SOA', ttl: 60, data: { mname: 'NS.Example.test', rname: 'Host.Example.test', serial: 1, refresh: 2, retry: 3, expire: 4, minimum: 5 } }],
      additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, flags: 0, options: [] } as dnsPacket.Answer],
    });
    const read = readMessage(message);
    expect(read.authentic_data).toBe(true);
    expect(read.answer.map((r) => [presentName(r.owner), r.type, r.ttl])).toEqual([
      ['mail.example.test.', 15, 60],
      ['mail.example.test.', 16, 60],
    ]);
    // The owner keeps its case on the wire (presentName lowercases); MX's name is lowercased, TXT's text is not.
    expect(read.answer[0]!.owner.map((l) => l.toString())).toEqual(['Mail', 'Example', 'test']);
    expect(read.answer[0]!.rdata).toEqual(Buffer.concat([Buffer.from([0, 10]), nameWire(parseName('mx1.example.test'))]));
    expect(read.answer[1]!.rdata.toString('latin1')).toBe('\tKeep Case');
    expect(read.authority[0]!.rdata.subarray(0, nameWire(parseName('ns.example.test')).length)).toEqual(nameWire(parseName('ns.example.test')));
    expect(read.additional).toEqual([]);
  });

  it('gives records or a WireFormatError for any octets (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        try {
          readMessage(Buffer.from(bytes));
        } catch (error) {
          expect(error).toBeInstanceOf(WireFormatError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('gives records or a WireFormatError for well-framed messages with damaged rdata (property)', () => {
    const header = Buffer.from('000181800000000100000000', 'hex');
    const record = fc.record({
      type: fc.constantFrom(1, 2, 5, 6, 15, 16, 33, 43, 46, 47, 48, 50),
      rdata: fc.uint8Array({ maxLength: 40 }),
    });
    fc.assert(
      fc.property(record, ({ type, rdata }) => {
        const fixed = Buffer.alloc(10);
        fixed.writeUInt16BE(type, 0);
        fixed.writeUInt16BE(1, 2);
        fixed.writeUInt16BE(rdata.length, 8);
        try {
          readMessage(Buffer.concat([header, Buffer.from([0]), fixed, Buffer.from(rdata)]));
        } catch (error) {
          expect(error).toBeInstanceOf(WireFormatError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
