import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseIpv4Fast } from '../../../src/engine/address/ip-text.js';
import { DistinctAddresses } from '../../../src/engine/summarize/distinct-addresses.js';

const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((parts) => parts.join('.'));
/** Few distinct values, so that repeats are common; the edges of the IPv4 space included. */
const address = fc.oneof(
  v4,
  fc.constantFrom('0.0.0.0', '255.255.255.255', '0.0.0.1', '255.255.255.254', '2001:db8::1', '::1', '2606:4700::1111'),
  fc.tuple(fc.nat(3), fc.nat(3)).map(([a, b]) => `10.0.${a}.${b}`),
);

describe('DistinctAddresses', () => {
  it('counts what a Set of the texts counts, up to the cap, and says when it stopped', () => {
    fc.assert(
      fc.property(fc.array(address, { maxLength: 3000 }), fc.integer({ min: 1, max: 4000 }), (addresses, cap) => {
        const counted = new DistinctAddresses(cap);
        const oracle = new Set<string>();
        for (const text of addresses) {
          counted.add(text);
          oracle.add(text);
        }
        expect(counted.size).toBe(Math.min(oracle.size, cap));
        expect(counted.capped).toBe(oracle.size > cap);
      }),
      { numRuns: 300 },
    );
  });

  it('grows past its first table without losing an address', () => {
    const counted = new DistinctAddresses(1_000_000);
    for (let i = 0; i < 50_000; i++) counted.add(`${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}.7`);
    for (let i = 0; i < 50_000; i++) counted.add(`${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}.7`);
    expect(counted.size).toBe(50_000);
    expect(counted.capped).toBe(false);
  });

  it('counts addresses alike in their low bits (the shape that piled into one run of slots) exactly, read twice', () => {
    const distinct = new DistinctAddresses(1_000_000);
    const clustered = Array.from({ length: 32_768 }, (_, i) => {
      const value = ((i << 17) | 0x1abcd) >>> 0;
      return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join('.');
    });
    for (let round = 0; round < 2; round++) for (const text of clustered) distinct.add(text);
    expect(distinct.size).toBe(32_768);
    expect(distinct.capped).toBe(false);
  });

  it('keeps as numbers the dotted quads the IPv4 parser reads, and nothing else', () => {
    expect(parseIpv4Fast('255.255.255.255')).toBe(0xffff_ffff);
    expect(parseIpv4Fast('1.2.3.4')).toBe(0x0102_0304);
    for (const text of ['1.2.3', '1.2.3.4.5', '256.1.1.1', '1..2.3', '', '::1', '1.2.3.4a', '1.2.3.', '.1.2.3', '1000.1.1.1']) expect(parseIpv4Fast(text), text).toBe(-1);
  });
});
