/**
 * The key check (`netintel dkim DOMAIN --selector S`) and the message
 * verifier (`netintel dkim --message`) read key records with one reader,
 * so they cannot disagree: for any key record, the check finds a usable key
 * exactly when a good signature made with that key verifies. Records are
 * generated from every tag variant the reader judges (v=, k=, p= encodings
 * and sizes, h=, s=, t=, repeated and junk tags, any order), and served to
 * both through the same DNS fake.
 */
import fc from 'fast-check';
import { createPublicKey } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngineContext } from '../../../src/engine/context.js';
import { checkDkim } from '../../../src/engine/mail/check-dkim.js';
import { checkDkimMessage } from '../../../src/engine/mail/dkim-message.js';
import type { MailDns } from '../../../src/engine/mail/mail-dns.js';
import { ed25519Key, rsaKey, type TestKey, mailauthSign } from './dkim-zone.js';

const ctx = createEngineContext({ resolvers: [], timeoutMs: 1000, dnsRetries: 0 });
afterAll(() => ctx.close());

const keys = { rsa2048: rsaKey(2048), rsa512: rsaKey(512), ed: ed25519Key() };
const MESSAGE = 'From: alice@agree.test\r\nTo: bob@example.test\r\nSubject: agreement\r\n\r\nHello.\r\n';

async function signedWith(key: TestKey, algorithm?: string): Promise<Buffer> {
  const result = await mailauthSign(MESSAGE, { signatureData: [{ signingDomain: 'agree.test', selector: 's', privateKey: key.pem, ...(algorithm ? { algorithm } : {}) }] });
  return Buffer.from(result.signatures + MESSAGE);
}

const messages = { rsa2048: await signedWith(keys.rsa2048), rsa512: await signedWith(keys.rsa512), ed: await signedWith(keys.ed, 'ed25519-sha256') };

/** The p= values, and which signed message goes with each (the key a signer holding it would sign with). */
const P_VALUES: Record<string, { p: string; message: keyof typeof messages }> = {
  'rsa spki': { p: keys.rsa2048.p, message: 'rsa2048' },
  'rsa pkcs1': { p: der(keys.rsa2048, 'pkcs1'), message: 'rsa2048' },
  'rsa 512': { p: keys.rsa512.p, message: 'rsa512' },
  'ed raw': { p: keys.ed.p, message: 'ed' },
  'ed spki': { p: der(keys.ed, 'spki'), message: 'ed' },
  'folded rsa spki': { p: `${keys.rsa2048.p.slice(0, 60)} ${keys.rsa2048.p.slice(60)}`, message: 'rsa2048' },
  revoked: { p: '', message: 'rsa2048' },
  'not a key': { p: 'bm90IGEga2V5', message: 'rsa2048' },
  'not base64': { p: 'abc!', message: 'rsa2048' },
};

function der(key: TestKey, type: 'pkcs1' | 'spki'): string {
  return createPublicKey(key.privateKey)
    .export({ format: 'der', type: type as 'spki' })
    .toString('base64');
}

/** A MailDns that answers every TXT question with `record`. */
function serving(record: string): MailDns {
  return {
    queries: 0,
    lookup: async (name: string, type: string) => ({
      name,
      type,
      status: 'answer',
      records: [{ text: record, strings: [record] }],
      answers: [],
      ttl_seconds: 300,
      resolver: 'fake',
    }),
    lookupSpfType: async (name: string) => ({ name, status: 'nodata', records: [] }),
  } as unknown as MailDns;
}

const option = <T>(values: T[]) => fc.option(fc.constantFrom(...values), { nil: undefined });
const record = fc
  .record({
    v: option(['DKIM1', 'DKIM2', 'dkim1']),
    vFirst: fc.boolean(),
    k: option(['rsa', 'ed25519', 'RSA', 'dsa']),
    p: fc.option(fc.constantFrom(...Object.keys(P_VALUES)), { nil: undefined }),
    h: option(['sha256', 'sha1', 'sha1:sha256', 'sha512', 'SHA256', '']),
    s: option(['email', '*', 'xmpp', 'email:xmpp', 'EMAIL', 'tlsrpt', '']),
    t: option(['y', 's', 'y:s']),
    n: option(['rotated in 2026']),
    junk: option(['k rsa', '1x=2', '', 'foo=bar', 'repeat']),
    order: fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
  })
  .map((spec) => {
    const tags: string[] = [];
    for (const name of ['k', 'p', 'h', 's', 't', 'n'] as const) {
      const value = name === 'p' ? (spec.p === undefined ? undefined : P_VALUES[spec.p]!.p) : spec[name];
      if (value !== undefined) tags.push(`${name}=${value}`);
    }
    if (spec.junk !== undefined) tags.push(spec.junk === 'repeat' ? (tags[0] ?? 'p=') : spec.junk);
    const shuffled = tags.map((tag, index) => ({ tag, rank: spec.order[index] ?? 0 })).sort((a, b) => a.rank - b.rank).map((item) => item.tag);
    if (spec.v !== undefined) shuffled.splice(spec.vFirst ? 0 : shuffled.length, 0, `v=${spec.v}`);
    return { text: shuffled.join('; '), message: messages[spec.p === undefined ? 'rsa2048' : P_VALUES[spec.p]!.message] };
  });

describe('the key check and the message verifier judge a key record alike', () => {
  it('property: the key check finds a usable key exactly when a good signature with that key verifies', async () => {
    await fc.assert(
      fc.asyncProperty(record, async ({ text, message }) => {
        const dns = serving(text);
        const checked = await checkDkim(ctx, 'agree.test', { selectors: ['s'], dns });
        const verified = await checkDkimMessage(ctx, message, 'agree.eml', { dns });
        const signature = verified.signatures[0]!;
        const agree = (checked.status === 'valid') === (signature.result === 'pass');
        expect(agree, `${text}: the key check says ${checked.status}, the verifier ${signature.result} (${signature.reason})`).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it.each([
    ['v=DKIM1; p=KEY; p=KEY', 'invalid'],
    ['v=DKIM1; k rsa; p=KEY', 'invalid'],
    ['v=DKIM1; s=xmpp; p=KEY', 'invalid'],
    ['v=DKIM1; h=sha1; p=KEY', 'invalid'],
    ['v=DKIM1; s=email:xmpp; p=KEY', 'valid'],
    ['v=DKIM1; h=sha1:sha256; t=y; foo=bar; p=KEY', 'valid'],
  ])('%s: the key check says %s and the verifier agrees', async (template, status) => {
    const dns = serving(template.replaceAll('KEY', keys.rsa2048.p));
    const checked = await checkDkim(ctx, 'agree.test', { selectors: ['s'], dns });
    const verified = await checkDkimMessage(ctx, messages.rsa2048, 'agree.eml', { dns });
    expect(checked.status).toBe(status);
    expect(verified.signatures[0]!.result === 'pass').toBe(status === 'valid');
  });
});
