import { isIP, isIPv4, isIPv6 } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ipVersionOf, isIPv4Text, isIPv6Text } from '../../../src/engine/address/ip-text.js';

/**
 * Seeded near-addresses: IPv4 with parts up to 300 and stray leading zeros,
 * IPv6 with 1 to 9 groups, a `::`, an embedded IPv4 or a zone, then half of
 * them mutated by one character. A failure names an input that reproduces.
 */
function* nearAddresses(count: number): Generator<string> {
  let seed = 20261122;
  // mulberry32
  const next = (n: number) => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = Math.imul(seed ^ (seed >>> 15), seed | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) % n;
  };
  const v4 = () => Array.from({ length: 3 + next(3) }, () => (next(8) === 0 ? '0' : '') + String(next(301))).join('.');
  const group = () => next(0x10000).toString(16).slice(0, 1 + next(5)) || '0';
  const v6 = () => {
    const groups = Array.from({ length: 1 + next(9) }, group);
    if (next(2) === 0) groups.splice(next(groups.length + 1), 0, '');
    let text = groups.join(':').replace(/^:/, '::').replace(/:$/, '::');
    if (next(4) === 0) text += `:${v4()}`;
    if (next(6) === 0) text += `%eth${next(3)}`;
    return text;
  };
  const alphabet = '0123456789abcdefABCDEFg:.% ';
  for (let i = 0; i < count; i++) {
    let text = next(2) === 0 ? v4() : v6();
    if (next(2) === 0) {
      const at = next(text.length + 1);
      text = text.slice(0, at) + alphabet[next(alphabet.length)] + text.slice(at + next(2));
    }
    yield text;
  }
}

const CORPUS = [
  '', '1.2.3', '1.2.3.4', '256.1.1.1', '01.2.3.4', '1.2.3.4/33', '0.0.0.0', '255.255.255.255', ' 1.2.3.4', '1.2.3.4 ',
  '::', '::1', '::g', 'fe80::1%eth0', 'fe80::1%', '::ffff:1.2.3.4', '::ffff:1.2.3.04', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8:9',
  '1:2:3:4:5:6:1.2.3.4', '1::2::3', '2001:4860:4860::8888', '2001:DB8::1', ':::', '1:', ':1', '1.2.3.4\n', 'a'.repeat(10_000),
  // The edges of the hand-written IPv6 reader: how many groups '::' may stand between, where a dotted quad may go, zones.
  'a:b:c:d:e:f:1::', 'a:b:c:d:e:f::1.2.3.4', 'a:b:c:d:e::1.2.3.4', '::1.2.3.4', '1::', '1:2:3:4:5:6:7::', '::1:2:3:4:5:6:7',
  '::1:2:3:4:5:6:7:8', '1::2:3:4:5:6:7:8', '12345::', '1:2:3:4:5:6:7:1.2.3.4', '1.2.3.4::', '1.2.3.4::1', '::1.2.3.4:1',
  'ffff::1.2.3.4.5', '::01.2.3.4', 'fe80::1%en0/', 'fe80::1%a:b.c-d', '::%1', '%1', '1.2.3.4%eth0', ':1:2:3:4:5:6:7',
  '1:2:3:4:5:6:7:', '1:2:3:4:5:6:7:8%', '1:2:3:4:5:6:7:8%1', '::ffff:', '::ffff:1.2.3', 'ABCD:EF01::', 'abcd:ef01:2345:6789:abcd:ef01:2345:6789',
];

describe('IP address text tests without node:net', () => {
  it('agree with node:net on a corpus and on 20,000 near-addresses', () => {
    for (const text of [...CORPUS, ...nearAddresses(20_000)]) {
      expect([text, isIPv4Text(text), isIPv6Text(text), ipVersionOf(text)]).toEqual([text, isIPv4(text), isIPv6(text), isIP(text)]);
    }
  });

  it('meet valid and invalid texts of both families among the near-addresses', () => {
    const texts = [...nearAddresses(20_000)];
    const counts = [isIPv4, isIPv6].map((valid) => texts.filter((text) => valid(text)).length);
    for (const count of counts) expect(count).toBeGreaterThan(300);
    expect(texts.filter((text) => isIP(text) === 0).length).toBeGreaterThan(300);
  });
});
