/**
 * Parsers of what the network sends (DNS replies, SPF and DMARC-like
 * records, MTA-STS policies, EHLO replies) never throw, whatever the bytes:
 * an exception there would escape from a socket callback. And the parsers
 * of user-given SMTP options return or throw invalid_input.
 */
import dnsPacket from 'dns-packet';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { judgeReply, prepareQuery } from '../../src/engine/dns/dns-message.js';
import { parsePolicy, readStsRecord, stsRecordsOf } from '../../src/engine/mail/check-mta-sts.js';
import { parseSpfRecord } from '../../src/engine/mail/spf-record.js';
import { parseBlacklistTarget } from '../../src/engine/blacklist/check-blacklist.js';
import { leadingHostname, parseEhloExtensions } from '../../src/engine/smtp/ehlo-extensions.js';
import { normaliseEhloName, normaliseMailbox, parsePort } from '../../src/engine/smtp/smtp-input.js';
import { expectValueOrNetintelError, fuzz, hostileDomain, hostileIp } from './hostile-inputs.js';

const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 300 }));
const spfLike = fc
  .array(fc.oneof(fc.constantFrom('v=spf1', 'include:', 'a', 'mx', 'ptr', 'exists:', 'redirect=', 'exp=', 'ip4:', 'ip6:', '-all', '~all', '?', '+', '%{', '%{ir}', '%{l1r-}', '}', '/', '//', ':', '.', '..', ' ', '\t', '\0', '=', '1.2.3.4/33', '::ffff:1.2.3.4/129', 'a'.repeat(300)), hostileDomain, hostileIp), { maxLength: 12 })
  .map((parts) => parts.join(''));

describe('DNS replies from the network', () => {
  const question = { name: 'example.test', type: 'A' as const };
  const query = prepareQuery(0x1234, question, true);
  const reply = dnsPacket.encode({
    type: 'response',
    id: 0x1234,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    questions: [{ name: 'example.test', type: 'A', class: 'IN' }],
    answers: [
      { name: 'example.test', type: 'CNAME', ttl: 60, data: 'alias.example.test' },
      { name: 'alias.example.test', type: 'A', ttl: 60, data: '192.0.2.1' },
      { name: 'alias.example.test', type: 'TXT', ttl: 60, data: ['v=spf1 -all'] },
    ],
  });

  it('judgeReply never throws for a mutated or truncated reply: an accepted reply decodes, a refused one says why', () => {
    const mutated = fc.tuple(fc.array(fc.tuple(fc.nat(reply.length - 1), fc.nat(255)), { maxLength: 8 }), fc.nat(reply.length), fc.uint8Array({ maxLength: 40 })).map(([edits, cut, tail]) => {
      const bytes = Buffer.from(reply);
      for (const [at, value] of edits) if (at >= 2) bytes[at] = value;
      return Buffer.concat([bytes.subarray(0, Math.max(12, cut)), Buffer.from(tail)]);
    });
    fc.assert(
      fc.property(fc.oneof(mutated, fc.uint8Array({ maxLength: 600 }).map((bytes) => Buffer.from(bytes))), (message) => {
        const judged = judgeReply(message, query);
        if (judged?.kind === 'reply') {
          expect(typeof judged.rcode).toBe('string');
          expect(Array.isArray(judged.answers)).toBe(true);
          expect(() => judged.packet).not.toThrow();
        } else if (judged?.kind === 'malformed') {
          expect(judged.reason).toMatch(/\S/);
        }
      }),
      fuzz(4000),
    );
  });
});

describe('records and replies as servers publish them', () => {
  it('parseSpfRecord never throws', () => {
    fc.assert(fc.property(fc.oneof(spfLike, text), (record) => void parseSpfRecord(record)), fuzz(3000));
  });

  it('parsePolicy (MTA-STS) never throws', () => {
    const policy = fc.array(fc.oneof(fc.constantFrom('version: STSv1', 'mode: enforce', 'mode: x', 'mx: *.', 'mx: ..', 'max_age: 99999999999999999999', 'max_age: -1', ':', '\r\n', '\n', 'mx:'), text), { maxLength: 8 }).map((lines) => lines.join('\n'));
    fc.assert(fc.property(policy, (body) => void parsePolicy(body)), fuzz(2000));
  });

  it('stsRecordsOf and readStsRecord (the _mta-sts record) never throw, and give an id only by the grammar', () => {
    const record = fc.array(fc.oneof(fc.constantFrom('v=STSv1', 'V=STSv1', ';', ' ', '\t', 'id=', 'id=abc', '=', 'x'.repeat(40), 'ext=v', '\0'), text), { maxLength: 8 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(fc.array(record, { maxLength: 3 }), (texts) => {
        const { records, discarded } = stsRecordsOf(texts);
        for (const each of records) {
          const { id, problem } = readStsRecord(each);
          if (id === null) expect(problem).toEqual(expect.any(String));
          else expect(id).toMatch(/^[A-Za-z0-9]{1,32}$/);
        }
        expect(records.length + discarded.length).toBeLessThanOrEqual(texts.length);
      }),
      fuzz(3000),
    );
  });

  it('parseEhloExtensions and leadingHostname never throw', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(text, fc.constantFrom('SIZE 99999999999999999999', 'AUTH=PLAIN LOGIN', 'AUTH', 'STARTTLS', '[IPv6:::1]', '[1.2.3.4]')), { maxLength: 6 }), (lines) => {
        parseEhloExtensions(lines);
        for (const line of lines) leadingHostname(line);
      }),
      fuzz(2000),
    );
  });
});

describe('user-given targets and SMTP options', () => {
  it('parseBlacklistTarget returns a target or throws invalid_input', () => {
    fc.assert(fc.property(fc.oneof(hostileDomain, hostileIp), (input) => expectValueOrNetintelError(() => parseBlacklistTarget(input))), fuzz(2000));
  });

  it('parsePort, normaliseEhloName and normaliseMailbox return or throw invalid_input (CRLF injection, 0, 65536)', () => {
    const port = fc.oneof(fc.integer({ min: -5, max: 70000 }).map(String), fc.constantFrom('0', '65536', '25\r\n', '0x19', '2.5e1', '', ' 25', '２５'), text);
    const mailbox = fc.oneof(fc.tuple(text, hostileDomain).map(([local, domain]) => `${local}@${domain}`), fc.constantFrom('a@b.test\r\nRCPT TO:<x@y>', '<>', '@', 'a@', '@b'), text);
    fc.assert(
      fc.property(port, hostileDomain, mailbox, (portText, ehlo, address) => {
        expectValueOrNetintelError(() => parsePort(portText), ['invalid_input', 'usage']);
        expectValueOrNetintelError(() => normaliseEhloName(ehlo), ['invalid_input', 'usage']);
        expectValueOrNetintelError(() => normaliseMailbox('the sender', address, true), ['invalid_input', 'usage']);
      }),
      fuzz(2000),
    );
  });
});
