import { isIPv4 } from 'node:net';
import { Readable } from 'node:stream';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { readTargetBatches } from '../../../src/engine/bulk/read-targets.js';
import { isIpAddress, parseIpAddress, quoteInput, v4ToText } from '../../../src/engine/address/ip-address.js';
import { parseIpv4Fast } from '../../../src/engine/address/ip-text.js';
import { seededRandom } from '../../support/seeded-random.js';
import { netintelErrorOf } from '../../support/netintel-error.js';

describe('parseIpAddress on valid text', () => {
  it('parses a dotted quad into its text, version, bytes and uint32', () => {
    const address = parseIpAddress('8.8.4.4');
    expect(address.text).toBe('8.8.4.4');
    expect(address.version).toBe(4);
    expect([...address.bytes]).toEqual([8, 8, 4, 4]);
    expect(address.v4).toBe(0x08080404);
  });

  it('keeps the extremes of IPv4 as unsigned numbers', () => {
    expect(parseIpAddress('0.0.0.0').v4).toBe(0);
    expect(parseIpAddress('255.255.255.255').v4).toBe(4294967295);
    expect(parseIpAddress('128.0.0.1').v4).toBe(2147483649);
  });

  it.each([
    ['2001:db8::1', '2001:db8::1'],
    ['2001:DB8::1', '2001:db8::1'],
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['2001:4860:4860:0:0:0:0:8888', '2001:4860:4860::8888'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['FE80:0:0:0:0:0:0:1', 'fe80::1'],
    ['0:0:0:0:0:0:0:0', '::'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'],
  ])('normalises IPv6 %s to the RFC 5952 form %s', (input, text) => {
    const address = parseIpAddress(input);
    expect(address.text).toBe(text);
    expect(address.version).toBe(6);
    expect(address.bytes).toHaveLength(16);
    expect(address.v4).toBe(0);
  });

  it('gives the same bytes for the compressed, expanded and upper-case forms of one IPv6 address', () => {
    const forms = ['2001:4860:4860::8888', '2001:4860:4860:0000:0000:0000:0000:8888', '2001:4860:4860:0:0:0:0:8888', '2001:4860:4860::8888'.toUpperCase()];
    const bytes = forms.map((form) => Buffer.from(parseIpAddress(form).bytes).toString('hex'));
    expect(new Set(bytes)).toEqual(new Set(['20014860486000000000000000008888']));
  });

  it.each(['::ffff:1.2.3.4', '::FFFF:1.2.3.4', '::ffff:102:304', '0:0:0:0:0:ffff:0102:0304'])(
    'unwraps the IPv4-mapped address %s to 1.2.3.4',
    (input) => {
      const address = parseIpAddress(input);
      expect(address).toEqual({ text: '1.2.3.4', version: 4, bytes: Uint8Array.from([1, 2, 3, 4]), v4: 0x01020304 });
    },
  );

  it('reads the deprecated IPv4-compatible form ::1.2.3.4 as the IPv6 address ::102:304, not as IPv4', () => {
    expect(parseIpAddress('::1.2.3.4').text).toBe('::102:304');
    expect(parseIpAddress('::1.2.3.4').version).toBe(6);
    expect(parseIpAddress('::102:304').text).toBe('::102:304');
  });

  it('keeps an IPv4 tail inside another IPv6 prefix (NAT64) as IPv6', () => {
    const address = parseIpAddress('64:ff9b::8.8.8.8');
    expect(address.text).toBe('64:ff9b::808:808');
    expect(address.version).toBe(6);
  });
});

describe('parseIpAddress on IPv6, against ipaddr.js', () => {
  it('gives the bytes and the RFC 5952 text ipaddr.js gives, for 5,000 seeded addresses in four text forms each', () => {
    const random = seededRandom(0x5952);
    let compared = 0;
    for (let n = 0; n < 5000; n++) {
      // Zero runs of random length and place, so that every compression case occurs.
      const groups = Array.from({ length: 8 }, () => (random() < 0.45 ? 0 : Math.floor(random() * 0x10000)));
      const bytes = Uint8Array.from(groups.flatMap((group) => [group >> 8, group & 255]));
      const reference = ipaddr.fromByteArray([...bytes]) as ipaddr.IPv6;
      if (reference.isIPv4MappedAddress()) continue;
      const forms = [
        reference.toRFC5952String(),
        reference.toNormalizedString(),
        reference.toFixedLengthString().toUpperCase(),
        reference.toString(),
      ];
      for (const form of forms) {
        const address = parseIpAddress(form);
        expect([form, address.text, [...address.bytes]]).toEqual([form, reference.toRFC5952String(), [...bytes]]);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(19_000);
  });
});

describe('parseIpAddress on invalid text', () => {
  const corpus: Array<[label: string, input: string, shown: string]> = [
    ['three parts', '1.2.3', '"1.2.3"'],
    ['an octet over 255', '256.1.1.1', '"256.1.1.1"'],
    ['a CIDR suffix', '1.2.3.4/33', '"1.2.3.4/33"'],
    ['a valid CIDR suffix', '1.2.3.0/24', '"1.2.3.0/24"'],
    ['a non-hex IPv6 group', '::g', '"::g"'],
    ['an IPv6 zone index', 'fe80::1%eth0', '"fe80::1%eth0"'],
    ['the empty string', '', '""'],
    ['a leading-zero (octal-looking) octet', '010.1.1.1', '"010.1.1.1"'],
    ['a hex shorthand', '0x7f.0.0.1', '"0x7f.0.0.1"'],
    ['a single integer', '134744072', '"134744072"'],
    ['five parts', '1.2.3.4.5', '"1.2.3.4.5"'],
    ['a trailing dot', '1.2.3.4.', '"1.2.3.4."'],
    ['two double colons', '1::2::3', '"1::2::3"'],
    ['nine IPv6 groups', '1:2:3:4:5:6:7:8:9', '"1:2:3:4:5:6:7:8:9"'],
    ['brackets', '[::1]', '"[::1]"'],
    ['a port', '1.2.3.4:80', '"1.2.3.4:80"'],
    ['a NUL byte', '1.2.3.4\u0000', '"1.2.3.4\\u0000"'],
    ['a CR left by a CRLF line ending', '1.2.3.4\r', '"1.2.3.4\\r"'],
    ['a leading space', ' 1.2.3.4', '" 1.2.3.4"'],
    ['a tab and a newline', '\t8.8.8.8\n', '"\\t8.8.8.8\\n"'],
    ['an escape character', '\u001b[31m1.2.3.4', '"\\u001b[31m1.2.3.4"'],
    ['a host name', 'example.com', '"example.com"'],
    ['Arabic-Indic digits', '١.٢.٣.٤', '"١.٢.٣.٤"'],
  ];

  it.each(corpus)('rejects %s with invalid_input naming the input', (_label, input, shown) => {
    const error = netintelErrorOf(() => parseIpAddress(input));
    expect(error.code).toBe('invalid_input');
    expect(error.message).toBe(`${shown} is not a valid IPv4 or IPv6 address`);
    expect(error.details).toEqual({ input });
    expect(isIpAddress(input)).toBe(false);
  });

  it('cuts a 10,000-character line to 80 characters in the message and gives its length', () => {
    const input = '1'.repeat(10_000);
    const error = netintelErrorOf(() => parseIpAddress(input));
    expect(error.code).toBe('invalid_input');
    expect(error.message).toBe(`"${'1'.repeat(80)}…" (10000 characters) is not a valid IPv4 or IPv6 address`);
    expect(error.message.length).toBeLessThan(200);
    expect(error.details.input).toBe(input);
  });

  it('escapes every control character of the input in the message', () => {
    const input = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('');
    const error = netintelErrorOf(() => parseIpAddress(input));
    // eslint-disable-next-line no-control-regex
    expect(error.message).not.toMatch(/[\u0000-\u001f]/);
    expect(error.message.startsWith('"\\u0000\\u0001')).toBe(true);
  });

  it('quotes inputs of exactly 80 characters whole and cuts those of 81', () => {
    expect(quoteInput('a'.repeat(80))).toBe(`"${'a'.repeat(80)}"`);
    expect(quoteInput('a'.repeat(81))).toBe(`"${'a'.repeat(80)}…" (81 characters)`);
  });

  it('rejects "1.2.3.4\\r" itself, while the bulk reader strips the CR of a CRLF line before parsing', async () => {
    expect(netintelErrorOf(() => parseIpAddress('1.2.3.4\r')).code).toBe('invalid_input');
    const batches: string[] = [];
    for await (const batch of readTargetBatches(Readable.from([Buffer.from('1.2.3.4\r\n')]))) batches.push(...batch.map((target) => target.text));
    expect(batches).toEqual(['1.2.3.4']);
    expect(parseIpAddress(batches[0]!).text).toBe('1.2.3.4');
  });
});

describe('parseIpv4Fast', () => {
  function reference(text: string): number {
    return isIPv4(text) ? text.split('.').reduce((value, part) => value * 256 + Number(part), 0) : -1;
  }

  it.each([
    ['0.0.0.0', 0],
    ['8.8.8.8', 0x08080808],
    ['255.255.255.255', 4294967295],
    ['192.168.0.1', 3232235521],
    ['1.2.3', -1],
    ['1.2.3.4.5', -1],
    ['256.0.0.1', -1],
    ['01.2.3.4', -1],
    ['1..2.3', -1],
    ['.1.2.3', -1],
    ['1.2.3.', -1],
    ['1.2.3.4 ', -1],
    ['', -1],
    ['1000.1.1.1', -1],
    ['0.0.0.00', -1],
  ])('reads %s as %d', (text, value) => {
    expect(parseIpv4Fast(text)).toBe(value);
  });

  it('agrees with node:net on a seeded corpus of 20,000 near-addresses', () => {
    const random = seededRandom(0x1f2e3d);
    const alphabet = '0123456789....12525x :';
    const corpus: string[] = [];
    for (let i = 0; i < 10_000; i++) {
      const length = 1 + Math.floor(random() * 17);
      let text = '';
      for (let j = 0; j < length; j++) text += alphabet[Math.floor(random() * alphabet.length)];
      corpus.push(text);
    }
    for (let i = 0; i < 10_000; i++) {
      const octets = Array.from({ length: 4 }, () => {
        const pick = random();
        if (pick < 0.1) return `0${Math.floor(random() * 10)}`;
        if (pick < 0.2) return String(250 + Math.floor(random() * 10));
        return String(Math.floor(random() * 256));
      });
      corpus.push(octets.join('.'));
    }
    const mismatches = corpus.filter((text) => parseIpv4Fast(text) !== reference(text));
    expect(mismatches).toEqual([]);
    expect(corpus.filter((text) => reference(text) >= 0).length).toBeGreaterThan(5000);
  });

  it('round-trips every value it returns through v4ToText', () => {
    for (const text of ['0.0.0.0', '1.2.3.4', '127.0.0.1', '200.100.50.25', '255.255.255.255']) {
      expect(v4ToText(parseIpv4Fast(text))).toBe(text);
    }
  });
});
