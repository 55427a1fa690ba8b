import net from 'node:net';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicTargetGuard, guardedConnect, readTargetAddress, targetRefusal } from '../../src/engine/connect-guard.js';
import { canonicalIp } from '../../src/engine/dns/dns-name.js';
import { embeddedIpv4 } from '../../src/engine/address/embedded-ipv4.js';
import { NetintelError } from '../../src/errors.js';

/**
 * The public-target guard against generated addresses: every text form of
 * every special-purpose IPv4 block, every IPv6 form that carries one, the
 * IPv6 special blocks, and public addresses in the same forms.
 */

const RUNS = { numRuns: 300, seed: 18_2 };

/** The IPv4 blocks a server must not probe (RFC 6890 and the IANA registry), plus metadata addresses. */
const SPECIAL_V4: ReadonlyArray<readonly [base: string, bits: number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
  ['255.255.255.255', 32],
  ['168.63.129.16', 32],
  ['100.100.100.200', 32],
];

const SPECIAL_V6: ReadonlyArray<readonly [base: string, bits: number]> = [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
  ['100::', 64],
  ['64:ff9b:1::', 48],
  ['2001:2::', 48],
  ['3fff::', 20],
];

const toUint = (text: string): number => ipaddr.IPv4.parse(text).octets.reduce((value, octet) => value * 256 + octet, 0);
const dotted = (v4: number): string => [v4 >>> 24, (v4 >>> 16) & 255, (v4 >>> 8) & 255, v4 & 255].join('.');
const hex16 = (value: number): string => value.toString(16);

/** An address inside one of `blocks`. */
function v4In(blocks: ReadonlyArray<readonly [string, number]>): fc.Arbitrary<number> {
  return fc.tuple(fc.constantFrom(...blocks), fc.nat()).map(([[base, bits], random]) => {
    const host = bits === 32 ? 0 : random % 2 ** (32 - bits);
    return (toUint(base) + host) >>> 0;
  });
}

/** A public IPv4 address: not special by ipaddr.js's table, nor by the list above. */
const publicV4 = fc
  .nat()
  .map((n) => (n * 2654435761) >>> 0)
  .filter((v4) => ipaddr.IPv4.parse(dotted(v4)).range() === 'unicast' && !SPECIAL_V4.some(([base, bits]) => (v4 ^ toUint(base)) >>> (32 - bits) === 0 || (bits === 32 && v4 === toUint(base))));

/** The text forms inet_aton(3) (and so getaddrinfo and WHATWG URL) reads as an IPv4 address. */
function v4Forms(v4: number): fc.Arbitrary<string> {
  const [a, b, c, d] = [v4 >>> 24, (v4 >>> 16) & 255, (v4 >>> 8) & 255, v4 & 255];
  const part = (value: number): fc.Arbitrary<string> =>
    fc.constantFrom(String(value), `0x${value.toString(16)}`, `0X${value.toString(16).toUpperCase()}`, `0${value.toString(8)}`);
  return fc.oneof(
    fc.constant(dotted(v4)),
    fc.tuple(part(a), part(b), part(c), part(d)).map((parts) => parts.join('.')),
    part(v4).map((whole) => whole),
    fc.tuple(part(a), part((b << 16) | (c << 8) | d)).map((parts) => parts.join('.')),
    fc.tuple(part(a), part(b), part((c << 8) | d)).map((parts) => parts.join('.')),
  );
}

/** The 32 bits of an IPv4 address as two IPv6 groups, or as a dotted quad. */
function tail(v4: number): fc.Arbitrary<string> {
  return fc.constantFrom(`${hex16(v4 >>> 16)}:${hex16(v4 & 0xffff)}`, dotted(v4));
}

const group = fc.integer({ min: 0, max: 0xffff }).map(hex16);

/** Every IPv6 form that carries `v4`, with the mechanism's name. */
function v6Embeddings(v4: number): fc.Arbitrary<[form: string, text: string]> {
  const inverted = ~v4 >>> 0;
  return fc.oneof(
    tail(v4).map((t) => ['IPv4-compatible', `::${t}`] as [string, string]),
    tail(v4).map((t) => ['IPv4-compatible', `0:0:0:0:0:0:${t}`] as [string, string]),
    tail(v4).map((t) => ['IPv4-mapped', `::ffff:${t}`] as [string, string]),
    tail(v4).map((t) => ['IPv4-mapped', `0:0:0:0:0:FFFF:${t}`] as [string, string]),
    tail(v4).map((t) => ['IPv4-translated', `::ffff:0:${t}`] as [string, string]),
    tail(v4).map((t) => ['NAT64', `64:ff9b::${t}`] as [string, string]),
    fc.tuple(group, group, group).map(([s, i1, i2]) => ['6to4', `2002:${hex16(v4 >>> 16)}:${hex16(v4 & 0xffff)}:${s}::${i1}:${i2}`] as [string, string]),
    fc.tuple(group, group).map(([flags, port]) => ['Teredo server', `2001:0:${hex16(v4 >>> 16)}:${hex16(v4 & 0xffff)}:${flags}:${port}:${hex16(0x7fff)}:${hex16(0xfffe)}`] as [string, string]),
    fc.tuple(group, group).map(([flags, port]) => ['Teredo client', `2001:0:808:808:${flags}:${port}:${hex16(inverted >>> 16)}:${hex16(inverted & 0xffff)}`] as [string, string]),
    fc.tuple(fc.integer({ min: 0x2a00, max: 0x2aff }), group, fc.constantFrom('0', '200')).map(([p, q, u]) => ['ISATAP', `${hex16(p)}:${q}::${u}:5efe:${hex16(v4 >>> 16)}:${hex16(v4 & 0xffff)}`] as [string, string]),
  );
}

/** The same IPv6 text with a zone index or in brackets, as callers and resolvers write it. */
function v6Dressing(text: string): fc.Arbitrary<string> {
  return fc.constantFrom(text, text.toUpperCase(), `[${text}]`, `${text}%eth0`, `${text}%1`);
}

/** An address inside an IPv6 block. */
function v6In(blocks: ReadonlyArray<readonly [string, number]>): fc.Arbitrary<string> {
  return fc.tuple(fc.constantFrom(...blocks), fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 16, maxLength: 16 })).map(([[base, bits], random]) => {
    const bytes = ipaddr.IPv6.parse(base).toByteArray();
    for (let i = 0; i < 16; i++) {
      const keep = Math.max(0, Math.min(8, bits - 8 * i));
      const mask = (0xff << (8 - keep)) & 0xff;
      bytes[i] = (bytes[i]! & mask) | (random[i]! & ~mask & 0xff);
    }
    return ipaddr.fromByteArray(bytes).toString();
  });
}

/** The canonical form a browser or getaddrinfo gives, as the oracle for the guard's own reading. */
function oracle(text: string): string {
  const bare = text.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  return new URL(`http://${bare.includes(':') ? `[${bare}]` : bare}/`).hostname.replace(/^\[(.*)\]$/, '$1');
}

function refusedBy(text: string): NetintelError {
  try {
    createPublicTargetGuard()(text, { what: 'SMTP server', port: 25 });
  } catch (error) {
    if (error instanceof NetintelError) return error;
    throw error;
  }
  throw new Error(`${text} was let through`);
}

describe('targetRefusal: special-purpose IPv4 in every text form', () => {
  it('refuses an address of every special block, written in any inet_aton form, and reads it as getaddrinfo does', () => {
    fc.assert(
      fc.property(v4In(SPECIAL_V4).chain((v4) => fc.tuple(fc.constant(v4), v4Forms(v4))), ([v4, text]) => {
        const refusal = targetRefusal(text);
        expect(refusal, text).not.toBeNull();
        expect(refusal!.address).toBe(dotted(v4));
        expect(readTargetAddress(text)!.text).toBe(oracle(text));
      }),
      RUNS,
    );
  });

  it('lets a public address through in every form', () => {
    fc.assert(
      fc.property(publicV4.chain((v4) => v4Forms(v4)), (text) => {
        expect(targetRefusal(text), text).toBeNull();
        expect(readTargetAddress(text)!.text).toBe(oracle(text));
      }),
      RUNS,
    );
  });
});

describe('targetRefusal: IPv6 forms that carry a special-purpose IPv4 address', () => {
  it('refuses every embedding (mapped, compatible, translated, NAT64, 6to4, Teredo server and client, ISATAP) and names the IPv4 address', () => {
    fc.assert(
      fc.property(
        v4In(SPECIAL_V4).chain((v4) => fc.tuple(fc.constant(v4), v6Embeddings(v4).chain(([form, text]) => fc.tuple(fc.constant(form), v6Dressing(text))))),
        ([v4, [form, text]]) => {
          const refusal = targetRefusal(text);
          expect(refusal, `${form} ${text}`).not.toBeNull();
          expect(refusal!.address).toBe(oracle(text));
          // The block itself may be refused first (::, ::1); otherwise the reason names the embedded address.
          if (refusal!.embedded !== null) {
            expect(refusal!.embedded).toBe(dotted(v4));
            expect(refusal!.reason).toContain(form);
          }
          expect(refusedBy(text).details).toMatchObject({ rule: 'private-target' });
        },
      ),
      RUNS,
    );
  });

  it('lets the same embeddings of a public IPv4 address through (NAT64, 6to4 and Teredo reach the public Internet)', () => {
    // IPv4-compatible and IPv4-translated addresses lie in space the IETF keeps reserved (outside 2000::/3): refused below.
    const routed = (form: string) => form !== 'IPv4-compatible' && form !== 'IPv4-translated';
    fc.assert(
      fc.property(publicV4.chain((v4) => v6Embeddings(v4).filter(([form]) => routed(form)).chain(([, text]) => v6Dressing(text))), (text) => {
        expect(targetRefusal(text), text).toBeNull();
      }),
      RUNS,
    );
    fc.assert(
      fc.property(publicV4.chain((v4) => v6Embeddings(v4).filter(([form]) => !routed(form)).chain(([, text]) => v6Dressing(text))), (text) => {
        expect(targetRefusal(text)?.reason, text).toMatch(/^reserved by the IETF/);
      }),
      RUNS,
    );
  });

  it('refuses the anycast services of the nearest operator and IPv6 outside global unicast, and lets Teredo, AMT and AS112 through (IANA "Globally Reachable")', () => {
    for (const text of ['192.0.0.9', '192.0.0.10', '192.88.99.1', '2001:1::1', '2001:1::3', '2001:20::1', '2001:30::1', '2001:100::1', '4000::1', 'dead::beef', '::2']) {
      expect(targetRefusal(text), text).not.toBeNull();
    }
    for (const text of ['2001:3::1', '2001:4:112::1', '2a00:1450::1']) {
      expect(targetRefusal(text), text).toBeNull();
    }
  });

  it('keeps the address a probe connects to: canonicalIp gives the guard\'s and the kernel\'s reading of every embedding (::1.2.3.4 is not ::ffff:1.2.3.4)', () => {
    fc.assert(
      fc.property(fc.nat().chain((v4) => v6Embeddings(v4 >>> 0)), ([, text]) => {
        expect(canonicalIp(text)).toBe(oracle(text));
        expect(readTargetAddress(text)!.text).toBe(oracle(text));
      }),
      RUNS,
    );
  });

  it('finds the embedded address where each RFC puts it', () => {
    const loopback = 0x7f000001;
    const found = (text: string) => embeddedIpv4(ipaddr.IPv6.parse(text).toByteArray() as unknown as Uint8Array).map((item) => [item.via.split(' (')[0], item.v4]);
    expect(found('::ffff:7f00:1')).toEqual([['IPv4-mapped', loopback]]);
    expect(found('0::7f00:1')).toEqual([['IPv4-compatible', loopback]]);
    expect(found('::ffff:0:7f00:1')).toEqual([['IPv4-translated', loopback]]);
    expect(found('64:ff9b::7f00:1')).toEqual([['NAT64', loopback]]);
    expect(found('2002:7f00:1::')).toEqual([['6to4', loopback]]);
    // RFC 4380 §4's example: server 65.54.227.120, client 192.0.2.45 (bits inverted).
    expect(found('2001:0:4136:e378:8000:63bf:3fff:fdd2')).toEqual([['Teredo server', 0x4136e378], ['Teredo client', 0xc000022d]]);
    expect(found('2a00:1::200:5efe:7f00:1')).toEqual([['ISATAP', loopback]]);
    expect(found('2a00:1450::1')).toEqual([]);
  });
});

describe('targetRefusal: IPv6 special-purpose blocks', () => {
  it('refuses every address of every block, with or without a zone index', () => {
    fc.assert(
      fc.property(v6In(SPECIAL_V6).chain((text) => v6Dressing(text)), (text) => {
        expect(targetRefusal(text), text).not.toBeNull();
      }),
      RUNS,
    );
  });

  it('lets public IPv6 through', () => {
    fc.assert(
      fc.property(v6In([['2a00::', 12], ['2600::', 12], ['2400::', 12]]).chain((text) => v6Dressing(text)), (text) => {
        fc.pre(!/:5efe:/i.test(text));
        expect(targetRefusal(text), text).toBeNull();
      }),
      RUNS,
    );
  });

  it('refuses the unspecified address, multicast, broadcast and metadata in their usual spellings', () => {
    for (const text of ['0.0.0.0', '0', '::', '[::]', '255.255.255.255', '224.0.0.251', 'ff02::1%eth0', '169.254.169.254', 'fd00:ec2::254', '168.63.129.16', '100.100.100.200', 'fe80::1%eth0']) {
      expect(targetRefusal(text), text).not.toBeNull();
    }
  });

  it('says invalid_input for what is not an address in any form', () => {
    for (const text of ['mx.example.com', '127.0.0.1.', '1e3.0.0.1', '08.0.0.1', '::ffff:0x7f.1', '', '[::1', '127.0.0.1 ']) {
      expect(() => targetRefusal(text), text).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    }
  });
});

describe('guardedConnect: the check at connect time', () => {
  let server: net.Server;
  let port = 0;
  let connections = 0;

  beforeAll(async () => {
    server = net.createServer((socket) => {
      connections += 1;
      socket.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as net.AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const attempt = (host: string): Promise<unknown> =>
    new Promise((resolve, reject) => {
      let socket: net.Socket;
      try {
        socket = net.connect({ host, port, ...guardedConnect(createPublicTargetGuard(), host, { what: 'test peer', port }) });
      } catch (error) {
        reject(error);
        return;
      }
      socket.once('connect', () => {
        socket.destroy();
        resolve('connected');
      });
      socket.once('error', reject);
    });

  it('refuses an IP literal before any socket opens', async () => {
    await expect(attempt('127.0.0.1')).rejects.toMatchObject({ code: 'forbidden', details: { address: '127.0.0.1', rule: 'private-target' } });
    await expect(attempt('::ffff:127.0.0.1')).rejects.toMatchObject({ code: 'forbidden', details: { embedded: '127.0.0.1' } });
    expect(connections).toBe(0);
  });

  it('refuses a name once getaddrinfo resolves it to loopback, and forms Node hands to getaddrinfo (0x7f.1, 2130706433)', async () => {
    for (const host of ['localhost', '0x7f.1', '2130706433', '127.1']) {
      await expect(attempt(host), host).rejects.toMatchObject({ code: 'forbidden', details: { address: '127.0.0.1' } });
    }
    expect(connections).toBe(0);
  });

  it('connects when no guard is set (the CLI)', async () => {
    const socket = net.connect({ host: '127.0.0.1', port, ...guardedConnect(null, '127.0.0.1', { what: 'test peer', port }) });
    await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.destroy();
    expect(connections).toBe(1);
  });
});
