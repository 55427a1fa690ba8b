import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanLine } from '../../../src/engine/grep/address-scanner.js';
import { addressFacts, createAddressFilter } from '../../../src/engine/grep/address-filter.js';
import { isIPv4Text, isIPv6Text } from '../../../src/engine/address/ip-text.js';

const found = (line: string, cidr = false) => scanLine(line, { cidr }).map((match) => match.text);

describe('scanLine', () => {
  it.each([
    ['plain IPv4', 'from 192.0.2.1 to 198.51.100.2', ['192.0.2.1', '198.51.100.2']],
    ['a longer dotted digit run is no address', 'version 1.2.3.4.5 here', []],
    ['leading zeros (octal to resolvers)', 'at 01.2.3.4 and 1.02.3.4', []],
    ['octets over 255', '256.1.1.1 1.1.1.256 10.0.0.300', []],
    ['three parts', 'v 1.2.3 x', []],
    ['sentence end', 'It was 8.8.8.8.', ['8.8.8.8']],
    ['comma, semicolon, brackets, quotes', '8.8.8.8, (9.9.9.9); "1.1.1.1" <4.4.4.4>', ['8.8.8.8', '9.9.9.9', '1.1.1.1', '4.4.4.4']],
    ['v4:port', 'peer 1.2.3.4:8080 up', ['1.2.3.4']],
    ['label:v4', 'inet addr:10.0.0.1 Bcast:10.0.0.255', ['10.0.0.1', '10.0.0.255']],
    ['v4: message', '1.2.3.4: connection refused', ['1.2.3.4']],
    ['[v6]:port', 'https://[2001:db8::1]:443/x', ['2001:db8::1']],
    ['v4 in a URL', 'GET http://93.184.216.34/index.html?ip=8.8.4.4&x=1', ['93.184.216.34', '8.8.4.4']],
    [':: forms', '::1 fe80:: 2001:db8::8a2e:370:7334 ::', ['::1', 'fe80::', '2001:db8::8a2e:370:7334']],
    ['IPv4-mapped', 'client ::ffff:192.0.2.128 connected', ['::ffff:192.0.2.128']],
    ['zone index', 'ping fe80::1%eth0. done', ['fe80::1%eth0']],
    ['full IPv6, upper case', '2001:0DB8:0000:0000:0000:FF00:0042:8329', ['2001:0DB8:0000:0000:0000:FF00:0042:8329']],
    ['mail header', 'Received: from x ([192.0.2.1]) by y ([IPv6:2001:db8::25])', ['192.0.2.1', '2001:db8::25']],
    ['JSON', '{"ip":"203.0.113.7","v6":"2606:4700::1111"}', ['203.0.113.7', '2606:4700::1111']],
    ['words around', 'v1.2.3.4 1.2.3.4x 4.3.2.1.in-addr.arpa 1.2.3.4.example host.1.2.3.4', []],
    ['times and MAC addresses', '10:30:00 00:1a:2b:3c:4d:5e', []],
    ['C++ scope', 'std::vector<int> Foo::bar', []],
    ['nine groups', '1:2:3:4:5:6:7:8:9', []],
    ['IPv4-mapped with a port: the whole address, not its IPv4 tail', 'tcp6 ::ffff:192.0.2.1:22 ::ffff:198.51.100.7:5555 ESTABLISHED', ['::ffff:192.0.2.1', '::ffff:198.51.100.7']],
    ['a single trailing colon is punctuation after either version', 'to 1.2.3.4: and 2001:db8::1: and ::ffff:1.2.3.4:', ['1.2.3.4', '2001:db8::1', '::ffff:1.2.3.4']],
    ['a trailing :: is part of the run, so neither version is cut out of it', 'a 1.2.3.4:: b 2001:db8::1:: c ::ffff:1.2.3.4::', []],
    ['a leading ::: is part of the run', ':::1.2.3.4 :::2001:db8::1', []],
    ['hex groups glued before a dotted quad are not cut off', 'abc:1.2.3.4 1:2:3:4:5:6:7:1.2.3.4 ffff:ffff:1.2.3.4', []],
    ['a port is a number up to 65535 and nothing more', '1.2.3.4:65535 5.6.7.8:65536 9.9.9.9:80:90 1.1.1.1::80 2.2.2.2:08', ['1.2.3.4', '2.2.2.2']],
    ['addresses joined by colons, with or without ports', '192.0.2.1:5060:198.51.100.7:5060 10.0.0.1:10.0.0.2 1.2.3.4:2001:db8::1', ['192.0.2.1', '198.51.100.7', '10.0.0.1', '10.0.0.2', '1.2.3.4', '2001:db8::1']],
    ['netstat listeners and times', 'tcp6 :::22 :::* 0.0.0.0:* 10:30:00.123 27:06:00:00', ['0.0.0.0']],
  ])('%s', (_name, line, expected) => {
    expect(found(line)).toEqual(expected);
  });

  it('takes a prefix length after the last address of a run only', () => {
    expect(found('::ffff:10.0.0.0/104 1.2.3.4:80/24 10.0.0.1:10.0.0.0/8', true)).toEqual(['::ffff:10.0.0.0/104', '1.2.3.4', '10.0.0.1', '10.0.0.0/8']);
  });

  it('takes a prefix length with cidr, and the address alone without', () => {
    expect(found('routes 10.0.0.0/8, 2001:db8::/32.', true)).toEqual(['10.0.0.0/8', '2001:db8::/32']);
    expect(found('routes 10.0.0.0/8, 2001:db8::/32.')).toEqual(['10.0.0.0', '2001:db8::']);
    expect(found('bad 1.1.1.1/33 2001:db8::/129 10.0.0.0/08', true)).toEqual(['1.1.1.1', '2001:db8::', '10.0.0.0']);
  });

  it('reports where each match starts and its version', () => {
    expect(scanLine('a 1.2.3.4 [::1]', { cidr: false })).toEqual([
      { text: '1.2.3.4', start: 2, version: 4, prefix_length: null },
      { text: '::1', start: 11, version: 6, prefix_length: null },
    ]);
  });
});

describe('createAddressFilter', () => {
  const run = (line: string, options: Partial<Parameters<typeof createAddressFilter>[0]>) => {
    const filter = createAddressFilter({ versions: new Set([4, 6]), excludeReserved: false, unique: false, ...options });
    return scanLine(line, { cidr: true }).flatMap((match) => (filter(match) ? [addressFacts(match).canonical] : []));
  };

  it('keeps one version', () => {
    expect(run('8.8.8.8 2001:4860::8888 ::ffff:1.2.3.4', { versions: new Set([4]) })).toEqual(['8.8.8.8']);
    expect(run('8.8.8.8 2001:4860::8888 ::ffff:1.2.3.4', { versions: new Set([6]) })).toEqual(['2001:4860::8888', '1.2.3.4']);
  });

  it('keeps an IPv4-mapped address followed by a port as IPv6 text', () => {
    expect(run('peer ::ffff:1.2.3.4:80 up', { versions: new Set([6]) })).toEqual(['1.2.3.4']);
    expect(run('peer ::ffff:1.2.3.4:80 up', { versions: new Set([4]) })).toEqual([]);
  });

  it('drops special-purpose addresses and CIDRs', () => {
    expect(run('10.1.1.1 8.8.8.8 192.0.2.1 ::1 fe80::1%eth0 2606:4700::1 10.0.0.0/8 ::ffff:127.0.0.1', { excludeReserved: true })).toEqual([
      '8.8.8.8',
      '2606:4700::1',
    ]);
  });

  it('keeps the first of each address, compared in canonical form', () => {
    expect(run('2001:DB8::1 2001:db8:0::1 8.8.8.8 8.8.8.8 ::ffff:8.8.8.8 fe80::1%eth0 fe80::1%eth1', { unique: true })).toEqual([
      '2001:db8::1',
      '8.8.8.8',
      'fe80::1%eth0',
      'fe80::1%eth1',
    ]);
  });
});

// A token boundary: no letter, digit, underscore, dot or colon on either side of a match.
const boundaryOk = (line: string, start: number, end: number) =>
  !/[A-Za-z0-9_]/.test(line[start - 1] ?? ' ') && !/[A-Za-z0-9_]/.test(line[end] ?? ' ');

describe('scanLine properties', () => {
  it('does not read `::` glued to a word as the start of an address (found by the property below)', () => {
    expect(scanLine('_::0', { cidr: false })).toEqual([]);
    expect(scanLine('std::1 x::ffff:1.2.3.4', { cidr: false })).toEqual([]);
    expect(scanLine('IPv6:2001:db8::1', { cidr: false }).map((match) => match.text)).toEqual(['2001:db8::1']);
  });

  it('never throws on any text, and every match is a valid address found at a token boundary', () => {
    const alphabet = fc.constantFrom(...'0123456789abcdefABCDEFxz.:%/[]-_ ,;"\n\té'.split(''));
    const text = fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: alphabet, maxLength: 200 }), fc.string({ unit: 'binary', maxLength: 80 }));
    fc.assert(
      fc.property(text, fc.boolean(), (line, cidr) => {
        for (const match of scanLine(line, { cidr })) {
          expect(line.slice(match.start, match.start + match.text.length)).toBe(match.text);
          expect(boundaryOk(line, match.start, match.start + match.text.length)).toBe(true);
          const address = match.text.replace(/\/\d+$/, '');
          expect(match.version === 4 ? isIPv4Text(address) : isIPv6Text(address)).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
  });

  // What an address and a port are, written apart from the scanner: the scanner's grammar as a model.
  const isAddress = (text: string) => isIPv4Text(text) || (isIPv6Text(text) && !text.includes('%') && /[0-9a-f]/i.test(text));
  const isPort = (text: string) => /^\d{1,5}$/.test(text) && Number(text) <= 65535;
  const hexGroup = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'.split('')), minLength: 1, maxLength: 4 });
  const dottedAddress = fc.oneof(fc.ipV4(), fc.ipV4().map((v4) => `::ffff:${v4}`), fc.ipV6().filter((v6) => v6.includes('.')));

  it('never cuts an address out of hex groups glued before it: the run is one address or nothing', () => {
    // Groups joined by colons, an empty one giving `::`; the first is not empty, so no leading colon is punctuation.
    const prefix = fc.tuple(hexGroup, fc.array(fc.oneof(hexGroup, fc.constant('')), { maxLength: 3 })).map(([first, rest]) => `${[first, ...rest].join(':')}:`);
    fc.assert(
      fc.property(prefix, fc.oneof(fc.ipV4(), fc.ipV6(), dottedAddress), (before, address) => {
        const run = before + address;
        expect(found(`x ${run} y`)).toEqual(isAddress(run) ? [run] : []);
      }),
      { numRuns: 3000 },
    );
  });

  it('reads what follows a dotted quad after a colon as a port or an address, else drops the whole run', () => {
    const rest = fc.array(fc.oneof(hexGroup, fc.constant('')), { minLength: 1, maxLength: 9 }).filter((groups) => groups.at(-1) !== '').map((groups) => groups.join(':'));
    fc.assert(
      fc.property(dottedAddress, rest, (address, after) => {
        const colon = after.indexOf(':');
        const [port, next] = colon === -1 ? [after, ''] : [after.slice(0, colon), after.slice(colon + 1)];
        const expected = isAddress(after) ? [address, after] : isPort(after) ? [address] : isPort(port) && isAddress(next) ? [address, next] : [];
        expect(found(`x ${address}:${after} y`)).toEqual(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('finds every address of addresses and ports joined by colons, as netstat and SIP logs write them', () => {
    const item = fc.tuple(dottedAddress, fc.option(fc.integer({ min: 0, max: 65535 }).map(String), { nil: undefined }));
    const last = fc.oneof(fc.ipV6().filter((v6) => /[0-9a-f]/i.test(v6)), dottedAddress);
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 4 }), fc.option(last, { nil: undefined }), (items, tail) => {
        const parts = items.flatMap(([address, port]) => (port === undefined ? [address] : [address, port]));
        if (tail !== undefined) parts.push(tail);
        // A port followed by an address that could take it as its first group is read as that longer address.
        fc.pre(parts.every((part, i) => !(isPort(part) && i + 1 < parts.length && isAddress(`${part}:${parts[i + 1]}`))));
        expect(found(`(${parts.join(':')})`)).toEqual(parts.filter((part) => !isPort(part)));
      }),
      { numRuns: 3000 },
    );
  });

  it('finds every address embedded between separators', () => {
    const v4 = fc.ipV4();
    const v6 = fc.ipV6().filter((address) => /[0-9a-f]/i.test(address));
    const separator = fc.constantFrom(' ', ', ', '. ', '\t', ' (', ') ', '"', '<', '>', '=', '; ', ' [', '] ', '/', '|', '->', ' : ');
    const piece = fc.tuple(fc.oneof(v4, v6), separator);
    fc.assert(
      fc.property(separator, fc.array(piece, { minLength: 1, maxLength: 8 }), (lead, pieces) => {
        // `x.y` after an IPv6 address would continue it as a dotted tail; a separator ends each.
        const line = lead + pieces.map(([address, after]) => address + after).join('');
        expect(found(line)).toEqual(pieces.map(([address]) => address));
      }),
      { numRuns: 2000 },
    );
  });
});
