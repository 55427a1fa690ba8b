/**
 * The greedy split of an address range into CIDR blocks, checked as a
 * property over random IPv4 and IPv6 ranges: the blocks are aligned,
 * contiguous, cover exactly the range, and each is the largest possible
 * at its start (which makes the split the minimal one).
 */
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { cidrContaining, rangeToCidrs } from '../../../src/engine/address/range-to-cidrs.js';
import { fuzz } from '../hostile-inputs.js';

const MAX6 = (1n << 128n) - 1n;

function v6Text(value: bigint): string {
  const parts: number[] = [];
  for (let i = 7; i >= 0; i--) parts.push(Number((value >> BigInt(i * 16)) & 0xffffn));
  return ipaddr.IPv6.parse(parts.map((part) => part.toString(16)).join(':')).toRFC5952String();
}

function v6Value(text: string): bigint {
  return ipaddr.IPv6.parse(text).parts.reduce((sum, part) => (sum << 16n) | BigInt(part), 0n);
}

function checkSplit(start: bigint, end: bigint, bits: number, blocks: Array<[bigint, number]>): void {
  let cursor = start;
  for (const [block, prefix] of blocks) {
    const size = 1n << BigInt(bits - prefix);
    expect(block).toBe(cursor);
    expect(block % size).toBe(0n);
    const doubled = size * 2n;
    // Maximal: the next larger block either is misaligned or passes the end.
    expect(prefix === 0 || block % doubled !== 0n || block + doubled - 1n > end).toBe(true);
    cursor = block + size;
  }
  expect(cursor - 1n).toBe(end);
}

const v6Range = fc
  .tuple(fc.bigInt({ min: 0n, max: MAX6 }), fc.oneof(fc.bigInt({ min: 0n, max: 1n << 20n }), fc.bigInt({ min: 0n, max: MAX6 })))
  .map(([start, length]) => [start, start + length > MAX6 ? MAX6 : start + length] as const);

describe('rangeToCidrs', () => {
  it('splits IPv6 ranges into aligned, contiguous, maximal blocks covering exactly the range', () => {
    fc.assert(
      fc.property(v6Range, ([start, end]) => {
        const blocks = rangeToCidrs(v6Text(start), v6Text(end)).map((cidr): [bigint, number] => {
          const [text, prefix] = cidr.split('/');
          return [v6Value(text!), Number(prefix)];
        });
        checkSplit(start, end, 128, blocks);
      }),
      fuzz(400),
    );
  });

  it('splits IPv4 ranges the same way, and cidrContaining names the block holding an address', () => {
    fc.assert(
      fc.property(fc.nat({ max: 0xffff_ffff }), fc.nat({ max: 0xffff_ffff }), fc.double({ min: 0, max: 1, noNaN: true }), (a, b, at) => {
        const [start, end] = a <= b ? [a, b] : [b, a];
        const text = (value: number) => ipaddr.fromByteArray([value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255]).toString();
        const cidrs = rangeToCidrs(text(start), text(end));
        const blocks = cidrs.map((cidr): [bigint, number] => {
          const [address, prefix] = cidr.split('/');
          return [BigInt(ipaddr.IPv4.parse(address!).toByteArray().reduce((sum, byte) => sum * 256 + byte, 0)), Number(prefix)];
        });
        checkSplit(BigInt(start), BigInt(end), 32, blocks);
        const inside = start + Math.floor((end - start) * at);
        expect(cidrs).toContain(cidrContaining(text(start), text(end), text(inside)));
      }),
      fuzz(400),
    );
  });
});
