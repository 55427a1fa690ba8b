/**
 * Property-based tests of the engine's input parsers: whatever the text,
 * each returns a value or throws NetintelError('invalid_input'), never
 * another exception; what they accept is well formed and stable.
 */
import { isIP } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isAsnText, lookupAsn } from '../../src/engine/asn/lookup-asn.js';
import { createEngineContext } from '../../src/engine/context.js';
import { assertQueryName } from '../../src/engine/dns/dns-message.js';
import { canonicalIp, isPlainAsciiName, normaliseDomain, parseDnsTarget, reverseName } from '../../src/engine/dns/dns-name.js';
import { parseResolverAddress } from '../../src/engine/dns/resolver-address.js';
import { isIpAddress, parseIpAddress } from '../../src/engine/address/ip-address.js';
import { queryName } from '../../src/engine/mail/mail-dns.js';
import { normaliseSmtpHost } from '../../src/engine/smtp/smtp-input.js';
import { expectValueOrNetintelError, fuzz, hostileAsn, hostileDomain, hostileIp } from './hostile-inputs.js';

const INVISIBLE = /[\p{Cc}\p{Cf}\p{Z}]/u;

describe('normaliseDomain on hostile names', () => {
  it('returns a name or throws invalid_input, never another exception', () => {
    fc.assert(fc.property(hostileDomain, (input) => expectValueOrNetintelError(() => normaliseDomain(input))), fuzz(3000));
  });

  it('refuses in one line, with no control, format or line-breaking character of the input left raw', () => {
    fc.assert(
      fc.property(hostileDomain, (input) => {
        try {
          normaliseDomain(input);
        } catch (error) {
          expect((error as Error).message).not.toMatch(/[\p{Cc}\p{Cf}\u2028\u2029]/u);
        }
      }),
      fuzz(3000),
    );
  });

  it('accepts only well-formed names: ASCII, labels of 1 to 63 octets, at most 253, no numeric top label, nothing invisible', () => {
    fc.assert(
      fc.property(hostileDomain, (input) => {
        let name;
        try {
          name = normaliseDomain(input);
        } catch {
          return;
        }
        expect(INVISIBLE.test(input), 'an accepted input holds no invisible character').toBe(false);
        if (name.ascii === '.') return;
        expect(name.ascii).toMatch(/^[\x21-\x7e]+$/);
        expect(name.ascii.length).toBeLessThanOrEqual(253);
        const labels = name.ascii.split('.');
        for (const label of labels) expect(label.length >= 1 && label.length <= 63, label).toBe(true);
        expect(labels.at(-1)).not.toMatch(/^[0-9]+$/);
        expect(name.ascii).toBe(name.ascii.toLowerCase());
      }),
      fuzz(3000),
    );
  });

  it('is idempotent, and the Unicode form reads back to the same ASCII form', () => {
    fc.assert(
      fc.property(hostileDomain, (input) => {
        let name;
        try {
          name = normaliseDomain(input);
        } catch {
          return;
        }
        expect(normaliseDomain(name.ascii)).toEqual(name);
        if (name.unicode !== '.') expect(normaliseDomain(name.unicode).ascii).toBe(name.ascii);
      }),
      fuzz(3000),
    );
  });

  it('agrees with its fast path: a plain name is returned as it is', () => {
    fc.assert(
      fc.property(hostileDomain, (input) => {
        if (isPlainAsciiName(input)) expect(normaliseDomain(input)).toEqual({ ascii: input, unicode: input });
      }),
      fuzz(3000),
    );
  });
});

describe('the other name and address parsers on hostile text', () => {
  it('parseDnsTarget returns a target or throws invalid_input; an address target is its reverse name', () => {
    fc.assert(
      fc.property(fc.oneof(hostileDomain, hostileIp), (input) => {
        expectValueOrNetintelError(() => {
          const target = parseDnsTarget(input);
          if (target.reverse) expect(target.ascii).toBe(reverseName(input));
          else expect(parseDnsTarget(target.ascii).ascii).toBe(target.ascii);
        });
      }),
      fuzz(3000),
    );
  });

  it('queryName and assertQueryName (the wire checks) return or throw invalid_input', () => {
    fc.assert(
      fc.property(hostileDomain, (input) => {
        expectValueOrNetintelError(() => queryName(input));
        expectValueOrNetintelError(() => assertQueryName(input));
      }),
      fuzz(2000),
    );
  });

  it('normaliseSmtpHost returns a host or throws invalid_input', () => {
    fc.assert(fc.property(fc.oneof(hostileDomain, hostileIp), (input) => expectValueOrNetintelError(() => normaliseSmtpHost(input))), fuzz(2000));
  });

  it('parseIpAddress accepts exactly what node:net calls an address (zones refused), and its text is a fixed point', () => {
    fc.assert(
      fc.property(hostileIp, (input) => {
        expectValueOrNetintelError(() => {
          const address = parseIpAddress(input);
          expect(isIP(input)).not.toBe(0);
          expect(parseIpAddress(address.text)).toEqual(address);
          expect(canonicalIp(address.text)).toBe(address.text);
        });
        expect(isIpAddress(input)).toBe(isIP(input) !== 0 && !input.includes('%'));
      }),
      fuzz(3000),
    );
  });

  it('parseResolverAddress returns a resolver or throws invalid_input', () => {
    fc.assert(
      fc.property(fc.oneof(hostileIp, hostileDomain, fc.tuple(hostileIp, fc.integer({ min: -1, max: 70000 })).map(([ip, port]) => `[${ip}]:${port}`)), (input) =>
        expectValueOrNetintelError(() => parseResolverAddress(input)),
      ),
      fuzz(2000),
    );
  });
});

describe('AS numbers on hostile text', () => {
  const ctx = createEngineContext();

  it('lookupAsn returns a record or throws invalid_input / not_found, never another exception', () => {
    fc.assert(fc.property(hostileAsn, (input) => expectValueOrNetintelError(() => lookupAsn(ctx, input, 'memory'), ['invalid_input', 'not_found'])), fuzz(1500));
  });

  it('isAsnText holds exactly for AS0 to AS4294967295, and then lookupAsn never says invalid_input', () => {
    fc.assert(
      fc.property(hostileAsn, (input) => {
        const match = /^(?:AS)?([0-9]{1,10})$/i.exec(input);
        const expected = match !== null && Number(match[1]) <= 0xffff_ffff;
        expect(isAsnText(input)).toBe(expected);
        if (expected) expectValueOrNetintelError(() => lookupAsn(ctx, input, 'memory'), ['not_found']);
      }),
      fuzz(1500),
    );
  });
});
