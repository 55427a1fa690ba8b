/**
 * Trust anchor files: the zone-file reader (RFC 1035 §5.1) over the forms
 * dnssec-keygen, dnssec-dsfromkey and unbound's trust-anchor-file use, key
 * tags (RFC 4034 Appendix B) and DS digests (RFC 4509) checked against the
 * IANA root KSKs, and a property over generated records.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dsMatchesKey, keyTag } from '../../../src/engine/dns/dnssec/dnssec-records.js';
import { parseRecords, parseTrustAnchors, RecordSyntaxError, rootTrustAnchor } from '../../../src/engine/dns/dnssec/trust-anchor.js';
import { presentName } from '../../../src/engine/dns/dnssec/wire.js';

// The root KSKs as Debian's dns-root-data ships them (root.key), with their key tags in comments.
const ROOT_KEYS = `. IN DNSKEY 257 3 8 AwEAAaz/tAm8yTn4Mfeh5eyI96WSVexTBAvkMgJzkKTOiW1vkIbzxeF3+/4RgWOq7HrxRixHlFlExOLAJr5emLvN7SWXgnLh4+B5xQlNVz8Og8kvArMtNROxVQuCaSnIDdD5LKyWbRd2n9WGe2R8PzgCmr3EgVLrjyBxWezF0jLHwVN8efS3rCj/EWgvIWgb9tarpVUDK/b58Da+sqqls3eNbuv7pr+eoZG+SrDK6nWeL3c6H5Apxz7LjVc1uTIdsIXxuOLYA4/ilBmSVIzuDWfdRUfhHdY6+cn8HFRm+2hM8AnXGXws9555KrUB5qihylGa8subX2Nn6UwNR1AkUTV74bU= ; keytag 20326
. IN DNSKEY 257 3 8 AwEAAa96jeuknZlaeSrvyAJj6ZHv28hhOKkx3rLGXVaC6rXTsDc449/cidltpkyGwCJNnOAlFNKF2jBosZBU5eeHspaQWOmOElZsjICMQMC3aeHbGiShvZsx4wMYSjH8e7Vrhbu6irwCzVBApESjbUdpWWmEnhathWu1jo+siFUiRAAxm9qyJNg/wOZqqzL/dL/q8PkcRU5oUKEpUge71M3ej2/7CPqpdVwuMoTvoB+ZOT4YeGyxMvHmbrxlFzGOHOijtzN+u1TQNatX2XBuzZNQ1K+s2CXkPIZo7s6JgZyvaBevYtxPvYLw4z9mR7K2vaF18UYH9Z9GNUUeayffKC73PYc= ; keytag 38696
`;

describe('trust anchors', () => {
  it('computes the root KSK tags and finds each key digested by the built-in root DS records', () => {
    const keys = parseTrustAnchors(ROOT_KEYS);
    expect(keys.dnskeys.map((key) => key.keyTag)).toEqual([20326, 38696]);
    expect(keys.dnskeys.map((key) => keyTag(key.rdata))).toEqual([20326, 38696]);
    const root = rootTrustAnchor();
    expect(presentName(root.owner)).toBe('.');
    expect(root.ds.map((ds) => ds.keyTag)).toEqual([20326, 38696]);
    keys.dnskeys.forEach((key, i) => expect(dsMatchesKey(root.ds[i]!, root.owner, key)).toBe(true));
    expect(dsMatchesKey(root.ds[0]!, root.owner, keys.dnskeys[1]!)).toBe(false);
  });

  it('reads a dnssec-keygen key file: comments, TTL, base64 split across fields', () => {
    const anchor = parseTrustAnchors(`; This is a key-signing key, keyid 56737, for test.
; Created: 20261127102526 (Fri Nov 27 10:25:26 2026)
test. 3600 IN DNSKEY 257 3 13 Mqk+gBbiuOqim9R2o9waMoCsrY9ElBhhpWhdB//MCAIeSV/Dqfea+6Wu FDpCK0PFqbM2WM2+rdhd/CbzQ6Sm+w==
`);
    expect(presentName(anchor.owner)).toBe('test.');
    expect(anchor.dnskeys).toHaveLength(1);
    expect(anchor.dnskeys[0]).toMatchObject({ flags: 257, protocol: 3, algorithm: 13 });
    expect(anchor.dnskeys[0]!.publicKey).toHaveLength(64);
  });

  it('reads DS records as dnssec-dsfromkey prints them and unbound reads them, class and TTL in either order, parentheses, mnemonics', () => {
    const anchor = parseTrustAnchors(`$ORIGIN example.
child IN 300 DS 34979 8 2 ( C9CEE043BB717DF6F6EF614B4DA9D15AC9617482799B39718343EF66
                           9CFD2F0B ) ; a comment
child.example. DS 4242 ECDSAP256SHA256 2 00112233
`);
    expect(presentName(anchor.owner)).toBe('child.example.');
    expect(anchor.ds).toEqual([
      { keyTag: 34979, algorithm: 8, digestType: 2, digest: Buffer.from('C9CEE043BB717DF6F6EF614B4DA9D15AC9617482799B39718343EF669CFD2F0B', 'hex') },
      { keyTag: 4242, algorithm: 13, digestType: 2, digest: Buffer.from('00112233', 'hex') },
    ]);
  });

  it.each([
    ['', /no DS or DNSKEY record/],
    ['test. IN A 192.0.2.1\n', /no DS or DNSKEY record/],
    ['a. DS 1 8 2 00\nb. DS 1 8 2 00\n', /two owners, a\. and b\./],
    ['test. DS 70000 8 2 00\n', /key tag "70000" is not a number from 0 to 65535/],
    ['test. DS 1 8 2 XYZ\n', /expected "key-tag algorithm digest-type hex-digest"/],
    ['test. DNSKEY 257 3 13 !!!\n', /expected "flags protocol algorithm base64-key"/],
    ['test. DNSKEY 257 3 NOSUCHALG AAAA\n', /unknown algorithm "NOSUCHALG"/],
    ['test. DS ( 1 8 2 00\n', /"\(" without "\)"/],
    ['$INCLUDE other\n', /unsupported directive \$INCLUDE/],
    ['test. CH DS 1 8 2 00\n', /class CH, not IN/],
  ])('refuses %j, saying why', (text, message) => {
    expect(() => parseTrustAnchors(text)).toThrow(RecordSyntaxError);
    expect(() => parseTrustAnchors(text)).toThrow(message);
  });

  const label = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,10}$/);
  const owner = fc.array(label, { minLength: 0, maxLength: 4 }).map((labels) => (labels.length === 0 ? '.' : `${labels.join('.')}.`));
  const space = fc.constantFrom(' ', '\t', '  ', ' \t ');
  const ds = fc.record({ keyTag: fc.integer({ min: 0, max: 65535 }), algorithm: fc.integer({ min: 0, max: 255 }), digestType: fc.integer({ min: 0, max: 255 }), digest: fc.uint8Array({ minLength: 1, maxLength: 48 }) });
  const dnskey = fc.record({ flags: fc.integer({ min: 0, max: 65535 }), protocol: fc.integer({ min: 0, max: 255 }), algorithm: fc.integer({ min: 0, max: 255 }), key: fc.uint8Array({ minLength: 1, maxLength: 300 }) });

  it('reads back every DS and DNSKEY it is given, however the fields are spaced, split, commented or ordered (property)', () => {
    fc.assert(
      fc.property(
        owner,
        fc.array(fc.oneof(ds.map((d) => ({ kind: 'DS' as const, d })), dnskey.map((k) => ({ kind: 'DNSKEY' as const, k }))), { minLength: 1, maxLength: 4 }),
        fc.option(fc.integer({ min: 0, max: 2147483647 })),
        fc.boolean(),
        fc.boolean(),
        space,
        fc.integer({ min: 1, max: 20 }),
        (name, records, ttl, classFirst, parenthesised, gap, splitAt) => {
          const lines = records.map((record) => {
            const head = [name, ...(classFirst ? ['IN', ...(ttl === null ? [] : [String(ttl)])] : [...(ttl === null ? [] : [String(ttl)]), 'IN'])];
            const data =
              record.kind === 'DS'
                ? [String(record.d.keyTag), String(record.d.algorithm), String(record.d.digestType), ...split(Buffer.from(record.d.digest).toString('hex'), splitAt * 2)]
                : [String(record.k.flags), String(record.k.protocol), String(record.k.algorithm), ...split(Buffer.from(record.k.key).toString('base64'), splitAt * 4)];
            const rdata = parenthesised ? `( ${data.slice(0, 3).join(gap)}\n${gap}${data.slice(3).join(gap)} ) ; end` : data.join(gap);
            return `${head.join(gap)}${gap}${record.kind}${gap}${rdata}`;
          });
          const anchor = parseTrustAnchors(`; generated\n${lines.join('\n')}\n`);
          expect(presentName(anchor.owner)).toBe(name);
          expect(anchor.ds.map((d) => [d.keyTag, d.algorithm, d.digestType, d.digest.toString('hex')])).toEqual(
            records.flatMap((r) => (r.kind === 'DS' ? [[r.d.keyTag, r.d.algorithm, r.d.digestType, Buffer.from(r.d.digest).toString('hex')]] : [])),
          );
          expect(anchor.dnskeys.map((k) => [k.flags, k.protocol, k.algorithm, k.publicKey.toString('base64')])).toEqual(
            records.flatMap((r) => (r.kind === 'DNSKEY' ? [[r.k.flags, r.k.protocol, r.k.algorithm, Buffer.from(r.k.key).toString('base64')]] : [])),
          );
        },
      ),
    );
  });

  it('throws only RecordSyntaxError on any text (property)', () => {
    const zoneish = fc.array(fc.constantFrom('test.', 'IN', 'DS', 'DNSKEY', '300', '(', ')', ';', '"', '\n', ' ', '1', '8', '2', 'AAAA', '00', '$TTL', '$ORIGIN', '@', '\\', 'x'), { maxLength: 30 }).map((parts) => parts.join(' '));
    fc.assert(
      fc.property(fc.oneof(fc.string(), zoneish), (text) => {
        try {
          parseTrustAnchors(text);
        } catch (error) {
          expect(error).toBeInstanceOf(RecordSyntaxError);
        }
      }),
    );
  });

  it('keeps quoted strings whole and repeats the owner on indented lines', () => {
    expect(parseRecords('a.test. IN TXT "one ; two" "(x)"\n  IN TXT "three"\n')).toEqual([
      { owner: 'a.test.', ttl: null, klass: 'IN', type: 'TXT', rdata: ['one ; two', '(x)'] },
      { owner: 'a.test.', ttl: null, klass: 'IN', type: 'TXT', rdata: ['three'] },
    ]);
  });
});

function split(text: string, size: number): string[] {
  return text.match(new RegExp(`.{1,${size}}`, 'g')) ?? [text];
}
