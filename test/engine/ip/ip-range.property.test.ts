/**
 * The range parser and range2cidr, as properties over random IPv4 and IPv6
 * ranges: the CIDR list of any range covers exactly the range, in order,
 * and has as few blocks as the prefix-tree decomposition (an independent
 * oracle: every CIDR block is a node of the binary tree of prefixes, and
 * the fewest nodes covering a range are the maximal ones inside it).
 * Addresses are checked against ipaddr.js.
 */
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { addressText, looksLikeIpRange, parseIpRange, rangeCidrs, rangeSize } from '../../../src/engine/address/ip-range.js';
import { describeRange } from '../../../src/engine/ip/ip-range-record.js';
import { expectValueOrNetintelError, fuzz } from '../hostile-inputs.js';

const MAX4 = (1n << 32n) - 1n;
const MAX6 = (1n << 128n) - 1n;

function value(text: string): bigint {
  const parsed = ipaddr.parse(text);
  return parsed.toByteArray().reduce((sum, byte) => (sum << 8n) | BigInt(byte), 0n);
}

function text(bits: 32 | 128, address: bigint): string {
  const bytes: number[] = [];
  for (let i = bits / 8 - 1; i >= 0; i--) bytes.push(Number((address >> BigInt(8 * i)) & 0xffn));
  return bits === 32 ? bytes.join('.') : (ipaddr.fromByteArray(bytes) as ipaddr.IPv6).toRFC5952String();
}

/** The fewest CIDR blocks covering lo..hi: the maximal prefix-tree nodes inside it. */
function minimalBlockCount(lo: bigint, hi: bigint, nodeStart: bigint, nodeBits: number): number {
  const nodeEnd = nodeStart + (1n << BigInt(nodeBits)) - 1n;
  if (nodeEnd < lo || nodeStart > hi) return 0;
  if (nodeStart >= lo && nodeEnd <= hi) return 1;
  const half = 1n << BigInt(nodeBits - 1);
  return minimalBlockCount(lo, hi, nodeStart, nodeBits - 1) + minimalBlockCount(lo, hi, nodeStart + half, nodeBits - 1);
}

/** A range of the family: either end anywhere, or a short one (the common case of logs and ACLs). */
function rangeOf(max: bigint): fc.Arbitrary<readonly [bigint, bigint]> {
  return fc
    .tuple(fc.bigInt({ min: 0n, max }), fc.oneof(fc.bigInt({ min: 0n, max: 300n }), fc.bigInt({ min: 0n, max })))
    .map(([start, length]) => [start, start + length > max ? max : start + length] as const);
}

function checkCover(bits: 32 | 128, first: bigint, last: bigint, cidrs: readonly string[]): void {
  let cursor = first;
  for (const cidr of cidrs) {
    const [address, prefix] = cidr.split('/');
    const start = value(address!);
    const size = 1n << BigInt(bits - Number(prefix));
    // In order and contiguous: each block starts where the one before ended; aligned on its size.
    expect(start).toBe(cursor);
    expect(start % size).toBe(0n);
    // The text is canonical: what ipaddr.js writes for the same block.
    expect(address).toBe(text(bits, start));
    cursor = start + size;
  }
  // Exactly the range: nothing before first (checked by the first block), nothing after last.
  expect(cursor - 1n).toBe(last);
  expect(cidrs.length).toBe(minimalBlockCount(first, last, 0n, bits));
}

describe('parseIpRange and rangeCidrs (range2cidr)', () => {
  it('covers an IPv4 a-b range exactly with the fewest blocks, in order', () => {
    fc.assert(
      fc.property(rangeOf(MAX4), ([first, last]) => {
        const range = parseIpRange(`${text(32, first)}-${text(32, last)}`);
        expect([range.version, range.form, range.first, range.last]).toEqual([4, 'range', first, last]);
        expect(rangeSize(range)).toBe(last - first + 1n);
        checkCover(32, first, last, rangeCidrs(range));
      }),
      fuzz(500),
    );
  });

  it('covers an IPv6 a-b range exactly with the fewest blocks, in order', () => {
    fc.assert(
      fc.property(rangeOf(MAX6), ([first, last]) => {
        const range = parseIpRange(` ${text(128, first)} - ${text(128, last)} `);
        expect([range.version, range.first, range.last]).toEqual([6, first, last]);
        checkCover(128, first, last, rangeCidrs(range));
      }),
      fuzz(500),
    );
  });

  it('reads a CIDR as the block holding its address, as ipaddr.js does, in both families', () => {
    const cidr = fc.oneof(
      fc.tuple(fc.constant(32 as const), fc.bigInt({ min: 0n, max: MAX4 }), fc.integer({ min: 0, max: 32 })),
      fc.tuple(fc.constant(128 as const), fc.bigInt({ min: 0n, max: MAX6 }), fc.integer({ min: 0, max: 128 })),
    );
    fc.assert(
      fc.property(cidr, ([bits, address, prefix]) => {
        const input = `${text(bits, address)}/${prefix}`;
        const range = parseIpRange(input);
        const [network] = ipaddr.parseCIDR(input);
        const hostBits = BigInt(bits - prefix);
        expect(range.form).toBe('cidr');
        expect(range.prefix_length).toBe(prefix);
        expect(range.first).toBe((address >> hostBits) << hostBits);
        expect(rangeSize(range)).toBe(1n << hostBits);
        expect(range.first <= address && address <= range.last).toBe(true);
        expect(rangeCidrs(range)).toEqual([`${text(bits, range.first)}/${prefix}`]);
        // ipaddr.js agrees on the network address (its own helper exists for IPv4 only).
        if (bits === 32) expect(addressText(4, range.first)).toBe(ipaddr.IPv4.networkAddressFromCIDR(input).toString());
        expect(network.kind()).toBe(bits === 32 ? 'ipv4' : 'ipv6');
        const facts = describeRange(input);
        expect(facts.count).toBe((1n << hostBits).toString());
        if (bits === 32 && prefix <= 30) {
          expect(facts.network?.broadcast).toBe(ipaddr.IPv4.broadcastAddressFromCIDR(input).toString());
          expect(facts.network?.netmask).toBe(ipaddr.IPv4.subnetMaskFromPrefixLength(prefix).toString());
          expect(facts.network?.hosts).toBe(((1n << hostBits) - 2n).toString());
        }
      }),
      fuzz(500),
    );
  });

  it('refuses a start after its end in either family, naming the order that would work', () => {
    fc.assert(
      fc.property(fc.oneof(fc.constant([32, MAX4] as const), fc.constant([128, MAX6] as const)), fc.bigInt({ min: 1n, max: MAX6 }), fc.bigInt({ min: 1n, max: MAX6 }), ([bits, max], a, gap) => {
        const high = a % (max + 1n) === 0n ? 1n : a % (max + 1n);
        const low = high - 1n - ((gap - 1n) % high);
        const input = `${text(bits, high)}-${text(bits, low)}`;
        expect(() => parseIpRange(input)).toThrow(`write the lower address first: ${text(bits, low)}-${text(bits, high)}`);
      }),
      fuzz(300),
    );
  });

  it('answers any text with a range or an invalid_input error, never anything else', () => {
    const pieces = fc.constantFrom('1', '0', '255', '256', '.', ':', '::', '/', '-', ' ', 'f', 'ffff', '%eth0', '01', '/33', '/129', '1.2.3.4', '::1');
    const texts = fc.oneof(fc.string({ maxLength: 40 }), fc.array(pieces, { maxLength: 10 }).map((parts) => parts.join('')));
    fc.assert(
      fc.property(texts, (input) => {
        expectValueOrNetintelError(() => parseIpRange(input));
      }),
      fuzz(2000),
    );
  });
});

describe('range edge cases', () => {
  it('counts whole address spaces exactly: 0.0.0.0/0 and ::/0 (a decimal string past 2^53)', () => {
    expect(describeRange('0.0.0.0/0')).toMatchObject({ first: '0.0.0.0', last: '255.255.255.255', count: '4294967296', cidrs: ['0.0.0.0/0'] });
    expect(describeRange('::/0')).toMatchObject({
      first: '::',
      last: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
      count: '340282366920938463463374607431768211456',
      cidrs: ['::/0'],
      network: { netmask: '::', hostmask: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', broadcast: null },
    });
    expect(describeRange('0.0.0.0-255.255.255.255').cidrs).toEqual(['0.0.0.0/0']);
  });

  it('gives a /32 and a /128 one address, and a /31 two hosts and no broadcast (RFC 3021)', () => {
    expect(describeRange('192.0.2.7/32')).toMatchObject({ first: '192.0.2.7', last: '192.0.2.7', count: '1', network: { hosts: '1', broadcast: null, netmask: '255.255.255.255' } });
    expect(describeRange('2001:db8::7/128')).toMatchObject({ first: '2001:db8::7', last: '2001:db8::7', count: '1', network: { hosts: '1', netmask: 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff' } });
    expect(describeRange('192.0.2.6/31')).toMatchObject({ count: '2', network: { hosts: '2', broadcast: null, first_host: '192.0.2.6', last_host: '192.0.2.7' } });
    expect(describeRange('192.0.2.5/30')).toMatchObject({ first: '192.0.2.4', network: { cidr: '192.0.2.4/30', broadcast: '192.0.2.7', hosts: '2', first_host: '192.0.2.5' } });
    expect(describeRange('192.0.2.9-192.0.2.9')).toMatchObject({ count: '1', cidrs: ['192.0.2.9/32'], network: null });
  });

  it.each([
    ['192.0.2.9-192.0.2.1', 'its start is after its end'],
    ['2001:db8::9-2001:db8::1', 'its start is after its end'],
    ['192.0.2.1-2001:db8::1', 'mix IPv4 and IPv6'],
    ['192.0.2.0/33', 'from 0 to 32'],
    ['2001:db8::/129', 'from 0 to 128'],
    ['192.0.2.0/024', 'without leading zeros'],
    ['192.0.2.0/', 'from 0 to 32'],
    ['fe80::1%eth0/64', 'is not an IPv4 or IPv6 address'],
    ['192.0.2.1-192.0.2.2-192.0.2.3', 'write a CIDR such as'],
    ['1.2.3/24', '"1.2.3" is not an IPv4 or IPv6 address'],
    ['-', 'is not an IPv4 or IPv6 address'],
  ])('refuses %s with invalid_input', (input, message) => {
    expect(() => parseIpRange(input)).toThrow(message);
    try {
      parseIpRange(input);
    } catch (error) {
      expect((error as { code: string }).code).toBe('invalid_input');
    }
  });

  it('tells ranges from addresses, host names and AS numbers', () => {
    for (const range of ['192.0.2.0/28', '2001:db8::/124', '192.0.2.1-192.0.2.9', '2001:db8::a - 2001:db8::f']) expect(looksLikeIpRange(range)).toBe(true);
    for (const other of ['192.0.2.1', '2001:db8::1', 'example.com', 'my-host.example', 'abc-def.de', 'cafe-babe.be', 'AS15169', 'not-an-ip']) expect(looksLikeIpRange(other)).toBe(false);
  });
});
