/**
 * Properties of remote mode's answer check (src/remote/answer-subject.ts):
 * a record names the target asked however either was written, another
 * target's record is refused, and no server's record makes the check throw.
 * Addresses are compared here through the WHATWG URL parser's serialisation,
 * not netintel's own parser.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { subjectProblem } from '../../src/remote/answer-subject.js';

/** An address's canonical text as the URL standard serialises a host (IPv6 compressed, lower case). */
const urlHost = (address: string): string => new URL(`http://${address.includes(':') ? `[${address}]` : address}/`).hostname;

/** The same IPv6 address written out in full, upper case: another text of it. */
function expanded(address: string): string {
  const host = urlHost(address).slice(1, -1);
  const [head, tail] = host.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups = tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((group) => group.padStart(4, '0').toUpperCase()).join(':');
}

const ipRecord = (ip: unknown) => ({ kind: 'ip', ip });
const dnsRecord = (domain: string) => ({ kind: 'dns', target: domain, domain, domain_unicode: domain });

describe('subjectProblem (remote answers name the target asked)', () => {
  it('an IP record of the address asked passes, in any text of it; another address is refused', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), fc.oneof(fc.ipV4(), fc.ipV6()), (asked, other) => {
        expect(subjectProblem(ipRecord(asked), asked, 'ip')).toBeNull();
        if (asked.includes(':')) expect(subjectProblem(ipRecord(expanded(asked)), asked, 'ip')).toBeNull();
        // Two addresses of one family are the same only when the URL standard serialises them alike.
        const same = asked.includes(':') === other.includes(':') && urlHost(asked) === urlHost(other);
        const problem = subjectProblem(ipRecord(other), asked, 'ip');
        if (same) expect(problem).toBeNull();
        else if (!isMappedPair(asked, other)) expect(problem).toMatch(/^asked about /);
      }),
      { numRuns: 1000 },
    );
  });

  it('a DNS record of the name asked passes, whatever its case or a trailing dot; another name is refused', () => {
    fc.assert(
      fc.property(fc.domain(), fc.domain(), fc.boolean(), (asked, other, dot) => {
        expect(subjectProblem(dnsRecord(`${asked.toUpperCase()}${dot ? '.' : ''}`), asked, 'domain')).toBeNull();
        const problem = subjectProblem(dnsRecord(other), asked, 'domain');
        if (other.toLowerCase() === asked.toLowerCase()) expect(problem).toBeNull();
        else expect(problem).toMatch(/^asked about /);
      }),
      { numRuns: 1000 },
    );
  });

  it('an AS record of the number asked passes however the number is written; another number is refused', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_294_967_295 }), fc.integer({ min: 0, max: 4_294_967_295 }), fc.constantFrom('AS', 'as', ''), (asked, other, prefix) => {
        expect(subjectProblem({ kind: 'asn', asn: asked }, `${prefix}${asked}`, 'asn')).toBeNull();
        const problem = subjectProblem({ kind: 'asn', asn: other }, `${prefix}${asked}`, 'asn');
        if (other === asked) expect(problem).toBeNull();
        else expect(problem).toBe(`asked about ${JSON.stringify(`${prefix}${asked}`)}, the record is for "AS${other}"`);
      }),
      { numRuns: 1000 },
    );
  });

  it('a blocklist record of the address or name asked passes; another target is refused', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.domain()), fc.oneof(fc.ipV4(), fc.domain()), (asked, other) => {
        expect(subjectProblem({ kind: 'blacklist', target: asked.toUpperCase() }, asked, 'target')).toBeNull();
        const problem = subjectProblem({ kind: 'blacklist', target: other }, asked, 'target');
        if (other.toLowerCase() === asked.toLowerCase()) expect(problem).toBeNull();
        else expect(problem).toMatch(/^asked about /);
      }),
      { numRuns: 1000 },
    );
  });

  it('never throws on whatever a server sends, and refuses a record without the field it must name', () => {
    fc.assert(
      fc.property(fc.anything(), fc.string(), fc.constantFrom('ip' as const, 'domain' as const, 'asn' as const, 'target' as const), (record, asked, subject) => {
        const problem = subjectProblem(record, asked, subject);
        expect(problem === null || typeof problem === 'string').toBe(true);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6()), fc.anything(), (asked, junk) => {
        fc.pre(typeof junk !== 'string');
        expect(subjectProblem(ipRecord(junk), asked, 'ip')).toMatch(/^asked about /);
      }),
      { numRuns: 500 },
    );
  });
});

/** An IPv4 address and its IPv4-mapped IPv6 form (::ffff:a.b.c.d), which the check takes as one address. */
function isMappedPair(a: string, b: string): boolean {
  const mapped = (v6: string, v4: string) => v6.includes(':') && !v4.includes(':') && urlHost(v6) === urlHost(`::ffff:${v4}`);
  return mapped(a, b) || mapped(b, a);
}
