import { scryptSync } from 'node:crypto';
import { performance } from 'node:perf_hooks';

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import {
  dummyVerify,
  hashPassword,
  parseStoredHash,
  passwordProblem,
  SCRYPT_DEFAULTS,
  verifyPassword,
  type ScryptParameters,
} from '../../src/accounts/passwords.js';

// Properties run many hashes: they use the smallest cost the stored form allows.
const CHEAP: ScryptParameters = { log2N: 10, r: 1, p: 1 };

describe('password hashing', () => {
  it('verifies the password it hashed with the default parameters, and nothing else', async () => {
    const stored = await hashPassword('correct horse battery staple');
    expect(stored).toMatch(/^scrypt\$15\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(await verifyPassword('correct horse battery staple', stored)).toBe(true);
    expect(await verifyPassword('correct horse battery stapler', stored)).toBe(false);
    expect(await verifyPassword('Correct horse battery staple', stored)).toBe(false);
    expect(await verifyPassword('', stored)).toBe(false);
  });

  it('salts every hash', async () => {
    const [a, b] = await Promise.all([hashPassword('same password here', CHEAP), hashPassword('same password here', CHEAP)]);
    expect(a).not.toBe(b);
  });

  it('writes the parameters it used into the stored string and uses the ones it reads back', async () => {
    const parameters: ScryptParameters = { log2N: 11, r: 4, p: 2 };
    const stored = await hashPassword('p4ssword-with-params', parameters);
    expect(stored.startsWith('scrypt$11$4$2$')).toBe(true);
    const parsed = parseStoredHash(stored)!;
    expect(parsed.parameters).toEqual(parameters);
    expect(parsed.salt).toHaveLength(16);
    // The key is scrypt with exactly those parameters, computed here independently.
    const expected = scryptSync(Buffer.from('p4ssword-with-params'), parsed.salt, 32, { N: 2 ** 11, r: 4, p: 2 });
    expect(parsed.key.equals(expected)).toBe(true);
    expect(await verifyPassword('p4ssword-with-params', stored)).toBe(true);
    // The same salt and key under other parameters is another hash.
    expect(await verifyPassword('p4ssword-with-params', stored.replace('scrypt$11$4$2$', 'scrypt$11$4$1$'))).toBe(false);
    expect(await verifyPassword('p4ssword-with-params', stored.replace('scrypt$11$4$2$', 'scrypt$10$4$2$'))).toBe(false);
  });

  it('hashes the NFKC form, so equivalent spellings of a password verify', async () => {
    const stored = await hashPassword('ｐａｓｓｗｏｒｄ１２', CHEAP);
    expect(await verifyPassword('password12', stored)).toBe(true);
    const composed = await hashPassword('caf\u00e9-au-lait', CHEAP);
    expect(await verifyPassword('cafe\u0301-au-lait', composed)).toBe(true);
  });

  it('refuses stored strings with parameters out of bounds instead of running them', async () => {
    const stored = await hashPassword('bounded password', CHEAP);
    const [, , , , salt, key] = stored.split('$');
    expect(parseStoredHash(`scrypt$18$8$1$${salt}$${key}`)).not.toBeNull(); // 256 MiB: the most a stored string may ask for
    for (const head of ['scrypt$30$8$1', 'scrypt$9$8$1', 'scrypt$15$64$1', 'scrypt$15$8$0', 'scrypt$20$32$1', 'scrypt$015$8$1', 'bcrypt$10$1$1']) {
      expect(parseStoredHash(`${head}$${salt}$${key}`)).toBeNull();
      expect(await verifyPassword('bounded password', `${head}$${salt}$${key}`)).toBe(false);
    }
  });

  it('refuses a key cut short or lengthened, though scrypt of that length would match its prefix', async () => {
    const stored = await hashPassword('prefix password', CHEAP);
    const parsed = parseStoredHash(stored)!;
    const head = stored.split('$').slice(0, 5).join('$');
    const short = scryptSync(Buffer.from('prefix password'), parsed.salt, 24, { N: 2 ** 10, r: 1, p: 1 });
    const long = scryptSync(Buffer.from('prefix password'), parsed.salt, 48, { N: 2 ** 10, r: 1, p: 1 });
    expect(short.equals(parsed.key.subarray(0, 24))).toBe(true);
    expect(await verifyPassword('prefix password', `${head}$${short.toString('base64url')}`)).toBe(false);
    expect(await verifyPassword('prefix password', `${head}$${long.toString('base64url')}`)).toBe(false);
  });

  it('hashes and verifies any string (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 40 }), async (password, other) => {
        const stored = await hashPassword(password, CHEAP);
        expect(await verifyPassword(password, stored)).toBe(!password.includes('\0'));
        const same = Buffer.from(password.normalize('NFKC')).equals(Buffer.from(other.normalize('NFKC')));
        expect(await verifyPassword(other, stored)).toBe(same && !other.includes('\0'));
      }),
      { numRuns: 40 },
    );
  });

  it('never matches a password with a NUL, though scrypt derives the same key with trailing NULs (HMAC pads its key with zeros)', async () => {
    const stored = await hashPassword('pass phrase', CHEAP);
    const parsed = parseStoredHash(stored)!;
    const padded = scryptSync(Buffer.from('pass phrase\0\0'), parsed.salt, 32, { N: 2 ** 10, r: 1, p: 1 });
    expect(padded.equals(parsed.key)).toBe(true);
    expect(await verifyPassword('pass phrase', stored)).toBe(true);
    for (const other of ['pass phrase\0', 'pass phrase\0\0', '\0pass phrase', 'pass\0phrase']) expect(await verifyPassword(other, stored)).toBe(false);
    // An older password that ended in NUL signs in without it: the same key.
    expect(await verifyPassword('pass phrase', await hashPassword('pass phrase\0', CHEAP))).toBe(true);
  });

  it('never throws on a malformed stored string, it answers false (property)', async () => {
    const valid = await hashPassword('the real password', CHEAP);
    const part = fc.oneof(fc.string({ unit: 'binary', maxLength: 50 }), fc.constantFrom('', '10', '1', '0', '-1', '1e1', '99999999999999999999', 'AAAA', '=', '$'));
    const structured = fc.tuple(fc.constantFrom('scrypt', 'Scrypt', ''), fc.constantFrom('10', '11', '015', 'x', ''), part, part, part, part).map((parts) => parts.join('$'));
    const mutated = fc.tuple(fc.nat({ max: valid.length - 1 }), fc.string({ unit: 'binary', maxLength: 3 }), fc.nat({ max: 3 })).map(
      ([at, insert, drop]) => valid.slice(0, at) + insert + valid.slice(at + drop),
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.string({ unit: 'binary' }), structured, mutated), async (stored) => {
        fc.pre(stored !== valid);
        expect(await verifyPassword('the real password', stored)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});

describe('dummyVerify', () => {
  function median(values: number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)]!;
  }

  async function timed(run: () => Promise<unknown>): Promise<number> {
    const start = performance.now();
    await run();
    return performance.now() - start;
  }

  it('is always false and costs about what a real verification costs', async () => {
    const stored = await hashPassword('an existing account password');
    expect(stored.startsWith(`scrypt$${SCRYPT_DEFAULTS.log2N}$${SCRYPT_DEFAULTS.r}$${SCRYPT_DEFAULTS.p}$`)).toBe(true);
    const real: number[] = [];
    const dummy: number[] = [];
    for (let run = 0; run < 5; run++) {
      real.push(await timed(() => verifyPassword('a guessed password', stored)));
      dummy.push(await timed(async () => expect(await dummyVerify('a guessed password')).toBe(false)));
    }
    const ratio = median(dummy) / median(real);
    expect(ratio).toBeGreaterThan(0.5);
    expect(ratio).toBeLessThan(2);
  });
});

describe('password rules', () => {
  const MESSAGE = 'a password must be 10 to 256 bytes long and not only spaces';

  it('accepts 10 to 256 bytes of UTF-8', () => {
    expect(passwordProblem('0123456789')).toBeNull();
    expect(passwordProblem('x'.repeat(256))).toBeNull();
    expect(passwordProblem('ééééé')).toBeNull(); // five characters, ten bytes
    expect(passwordProblem('  leading and trailing spaces count  ')).toBeNull();
  });

  it('refuses short, long and blank passwords with one message', () => {
    expect(passwordProblem('012345678')).toBe(MESSAGE);
    expect(passwordProblem('')).toBe(MESSAGE);
    expect(passwordProblem('x'.repeat(257))).toBe(MESSAGE);
    expect(passwordProblem('é'.repeat(129))).toBe(MESSAGE); // 258 bytes
    expect(passwordProblem(' '.repeat(20))).toBe(MESSAGE);
    expect(passwordProblem('\t\n\u3000\u00a0\u2003 \t\n\u3000\u00a0')).toBe(MESSAGE);
  });

  it('refuses a NUL anywhere', () => {
    for (const password of ['pass phrase\0', '\0pass phrase', 'pass\0phrase']) expect(passwordProblem(password)).toBe('a password cannot contain the NUL character (U+0000)');
  });

  it('measures the NFKC form', () => {
    // Circled digits are 3 bytes each but NFKC makes them ASCII digits.
    expect(passwordProblem('①②③④⑤')).toBe(MESSAGE);
    expect(passwordProblem('①②③④⑤⑥⑦⑧⑨⑩')).toBeNull(); // 12345678910: 11 bytes
  });

});
