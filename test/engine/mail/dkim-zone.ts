/**
 * DKIM keys made at test time (node:crypto) and the zone that publishes
 * them under `dkim.test`: one selector per situation (RSA 2048, 1024, 512,
 * Ed25519, revoked, testing mode, CNAME-delegated to an ESP's name, a
 * dangling CNAME, malformed records, two records, a PKCS#1 key; with keys
 * made at test time also an Ed25519 key in a SubjectPublicKeyInfo, t=s and
 * an s= list).
 */
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { dkimSign } from 'mailauth/lib/dkim/sign.js';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import type { ZoneRecord } from '../../support/dns-server.js';

export interface TestKey {
  privateKey: KeyObject;
  /** p= as a verifier reads it: base64 DER SubjectPublicKeyInfo (RSA) or the 32 raw octets (Ed25519, RFC 8463 §4.2). */
  p: string;
  /** The private key as PEM (PKCS#8), the form signing libraries take. */
  pem: string;
}

export function rsaKey(bits: number): TestKey {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  return { privateKey, p: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'), pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() };
}

export function ed25519Key(): TestKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  // The SPKI of an Ed25519 key is a 12-octet prefix and the 32 key octets.
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(12);
  return { privateKey, p: raw.toString('base64'), pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString() };
}

/** A TXT record split into character strings of at most 255 octets, as zone files publish long keys. */
export function dkimTxt(name: string, text: string): ZoneRecord {
  const strings: string[] = [];
  for (let offset = 0; offset < text.length; offset += 255) strings.push(text.slice(offset, offset + 255));
  return { name, type: 'TXT', data: strings };
}

export interface DkimZone {
  records: ZoneRecord[];
  keys: { rsa2048: TestKey; rsa1024: TestKey; rsa512: TestKey; ed25519: TestKey; esp: TestKey };
}

/** The p= values a zone publishes. */
interface PublishedKeys {
  rsa2048: string;
  rsa1024: string;
  rsa512: string;
  ed25519: string;
  esp: string;
}

/** A zone with keys made now, for tests that sign with them. */
export function makeDkimZone(domain = 'dkim.test'): DkimZone {
  const keys = { rsa2048: rsaKey(2048), rsa1024: rsaKey(1024), rsa512: rsaKey(512), ed25519: ed25519Key(), esp: rsaKey(2048) };
  const published = { rsa2048: keys.rsa2048.p, rsa1024: keys.rsa1024.p, rsa512: keys.rsa512.p, ed25519: keys.ed25519.p, esp: keys.esp.p };
  const at = (selector: string) => `${selector}._domainkey.${domain}`;
  const edSpki = createPublicKey(keys.ed25519.privateKey).export({ format: 'der', type: 'spki' }).toString('base64');
  const more = [
    // The Ed25519 key wrapped in a SubjectPublicKeyInfo instead of its 32 raw octets (RFC 8463 §4.2).
    dkimTxt(at('ed-spki'), `v=DKIM1; k=ed25519; p=${edSpki}`),
    // t=s: the i= domain of a signature must be d= itself.
    dkimTxt(at('strict'), `v=DKIM1; t=s; p=${keys.rsa2048.p}`),
    // s= is a list: email among other service types.
    dkimTxt(at('slist'), `v=DKIM1; s=email:xmpp; p=${keys.rsa2048.p}`),
  ];
  return { records: [...dkimZoneRecords(domain, published), ...more], keys };
}

/**
 * The same zone with public keys made once and kept here, so that the
 * end-to-end goldens do not change from run to run; SIGNED_MESSAGE_FILE was
 * signed with the private halves of the rsa2048 and ed keys (then thrown away).
 */
export const FIXED_DKIM_ZONE: readonly ZoneRecord[] = dkimZoneRecords('dkim.test', {
  rsa2048: 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAuy2pRy2W0JGo6uxdBKNC3Oy8gJfjySX4PAvK5FcTA3Ki3RvocplqA0X87MNTJjq3aoHaULcWWBIP8/wcqtt/lktB8Gj7dhrG1jPcTfnKliTEGBynLoI2JesPxMPySw8QcoNWZ/L2QcgFgfqu+D3NKEtSj2kh2jbTy7XgR1a6XRa0fmWYAqrztQpkLJAO0sLcOGuqlBEgfaNMggY5oPcK1wSCB10/ABDpq2p73qMH0yuFkG7Fv/K+lTAns6zd2kMCthDba0gEyuH1MnCAn/99RGSBCACG75wZV+yNP6jWQO5NsjBvLQ7+eT5QZfFwsk0rwkdoeAPuedDV8ZgDJ9s5UQIDAQAB',
  rsa1024: 'MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC7Kl+5AmGdCkrnL/LHWxkf+tFawGuEgleycX9+yWOZhl3KdxWd5Hdzyc2hRnTQ62Jw5WvYIfX3DvMsnkwGbmtw2k9YejsIEXKMcU+loibDLsuEfnDHiMB/LE+zB8ZoU5hZKwRQcvXFlSd3bIA1pn7+zI0OiPjGhvbVBz6rnNnU7QIDAQAB',
  rsa512: 'MFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBAMThsWrF0MJ8rlOGljk/W2myYF2sOJIP1/yGVXYt81RNRVilGOoyxazmCKkKOeX9sEvgJbR0n2VrxurXO0ukeAMCAwEAAQ==',
  ed25519: 'EHNu1OwDIK8Lm9CjyooI5B41dLQDFrKP8rWb54BDX4E=',
  esp: 'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAuy2pRy2W0JGo6uxdBKNC3Oy8gJfjySX4PAvK5FcTA3Ki3RvocplqA0X87MNTJjq3aoHaULcWWBIP8/wcqtt/lktB8Gj7dhrG1jPcTfnKliTEGBynLoI2JesPxMPySw8QcoNWZ/L2QcgFgfqu+D3NKEtSj2kh2jbTy7XgR1a6XRa0fmWYAqrztQpkLJAO0sLcOGuqlBEgfaNMggY5oPcK1wSCB10/ABDpq2p73qMH0yuFkG7Fv/K+lTAns6zd2kMCthDba0gEyuH1MnCAn/99RGSBCACG75wZV+yNP6jWQO5NsjBvLQ7+eT5QZfFwsk0rwkdoeAPuedDV8ZgDJ9s5UQIDAQAB',
});

/** A message signed by dkim.test (selectors rsa2048 and ed) that verifies against FIXED_DKIM_ZONE; path from the repository root. */
export const SIGNED_MESSAGE_FILE = 'test/engine/mail/fixtures/dkim-signed.eml';

function dkimZoneRecords(domain: string, keys: PublishedKeys): ZoneRecord[] {
  const at = (selector: string) => `${selector}._domainkey.${domain}`;
  // A bare RSAPublicKey (PKCS#1) instead of a SubjectPublicKeyInfo.
  const pkcs1Der = createPublicKey({ key: Buffer.from(keys.esp, 'base64'), format: 'der', type: 'spki' }).export({ format: 'der', type: 'pkcs1' }).toString('base64');
  return [
    dkimTxt(at('rsa2048'), `v=DKIM1; k=rsa; p=${keys.rsa2048}`),
    // Folding whitespace inside p= and around tags, as some DNS consoles publish it.
    dkimTxt(at('rsa1024'), ` v = DKIM1 ;\tk=rsa ; h=sha256 ; p=${keys.rsa1024.slice(0, 40)} ${keys.rsa1024.slice(40)} ;`),
    dkimTxt(at('rsa512'), `v=DKIM1; p=${keys.rsa512}`),
    dkimTxt(at('ed'), `v=DKIM1; k=ed25519; p=${keys.ed25519}`),
    dkimTxt(at('revoked'), 'v=DKIM1; k=rsa; p='),
    dkimTxt(at('testing'), `v=DKIM1; t=y:s; p=${keys.rsa2048}`),
    // An ESP's delegation: the customer's selector is a CNAME into the ESP's zone.
    { name: at('esp'), type: 'CNAME', data: 's1.domainkey.u123.wl.esp.test' },
    dkimTxt('s1.domainkey.u123.wl.esp.test', `k=rsa; t=s; p=${keys.esp}`),
    // The ESP's own signing key, for messages it signs as itself (d=esp.test).
    dkimTxt('s1._domainkey.esp.test', `v=DKIM1; p=${keys.esp}`),
    { name: at('gone'), type: 'CNAME', data: 's2.domainkey.u999.wl.esp.test' },
    // Malformed records.
    dkimTxt(at('v2'), `v=DKIM2; p=${keys.rsa2048}`),
    dkimTxt(at('late-v'), `k=rsa; v=DKIM1; p=${keys.rsa2048}`),
    dkimTxt(at('dup'), `v=DKIM1; p=${keys.rsa2048}; p=${keys.rsa1024}`),
    dkimTxt(at('nokey'), 'v=DKIM1; k=rsa; n=forgot the key'),
    dkimTxt(at('garbage'), 'v=DKIM1; k=rsa; p=bm90IGEga2V5'),
    dkimTxt(at('dsa'), `v=DKIM1; k=dsa; p=${keys.rsa2048}`),
    dkimTxt(at('sha1'), `v=DKIM1; h=sha1; p=${keys.rsa2048}`),
    dkimTxt(at('noemail'), `v=DKIM1; s=xmpp; p=${keys.rsa2048}`),
    dkimTxt(at('syntax'), `v=DKIM1; k rsa; p=${keys.rsa2048}`),
    dkimTxt(at('pkcs1'), `v=DKIM1; p=${pkcs1Der}`),
    dkimTxt(at('two'), `v=DKIM1; p=${keys.rsa2048}`),
    dkimTxt(at('two'), `v=DKIM1; p=${keys.rsa1024}`),
    { name: at('other'), type: 'TXT', data: 'google-site-verification=abc' },
    // The common selectors of a Google Workspace and Microsoft 365 customer.
    dkimTxt(`google._domainkey.common.test`, `v=DKIM1; k=rsa; p=${keys.rsa2048}`),
    { name: 'selector1._domainkey.common.test', type: 'CNAME', data: 'selector1-common-test._domainkey.tenant.onmicrosoft.test' },
    dkimTxt('selector1-common-test._domainkey.tenant.onmicrosoft.test', `v=DKIM1; k=rsa; p=${keys.esp}`),
    { name: 'nodkim.test', type: 'TXT', data: 'v=spf1 -all' },
  ];
}

type SignOptions = Parameters<typeof dkimSign>[1] & { signatureData: Array<{ signingDomain: string; selector: string; privateKey: string }> };

/**
 * mailauth's signer, retried when its own verifier rejects what it made: now
 * and then (1 in 600 and 1 in 1,200 signatures in two runs here) its folding of the header it
 * signs differs from the one it emits, and both mailauth's and this
 * project's verifiers call the result a bad signature. A test that signs a
 * message to check a verdict needs a signature that is good by a verifier
 * other than the one under test.
 */
export async function mailauthSign(message: string, options: SignOptions): Promise<Awaited<ReturnType<typeof dkimSign>>> {
  const published = new Map(options.signatureData.map((item) => [`${item.selector}._domainkey.${item.signingDomain}`.toLowerCase(), publishedKey(item.privateKey)]));
  const resolver = async (name: string) => {
    const record = published.get(name.toLowerCase());
    if (record === undefined) throw Object.assign(new Error(`no TXT at ${name}`), { code: 'ENOTFOUND' });
    return [[record]];
  };
  for (let attempt = 0; ; attempt++) {
    // Another second, another t=: a signature of other bytes (x= moves along with it).
    const shift = (time: Date | number | string | undefined) => new Date(new Date(time ?? Date.now()).getTime() + attempt * 1000);
    const signed = await dkimSign(message, attempt === 0 ? options : { ...options, signTime: shift(options.signTime), ...(options.expires ? { expires: shift(options.expires) } : {}) });
    const { results } = await dkimVerify(Buffer.from(signed.signatures + message), { resolver, minBitLength: 512 });
    if (attempt === 4 || !results.some((result: { status: { result: string } }) => result.status.result === 'fail')) return signed;
  }
}

function publishedKey(pem: string): string {
  const key = createPublicKey(pem);
  const spki = key.export({ format: 'der', type: 'spki' });
  return key.asymmetricKeyType === 'ed25519' ? `v=DKIM1; k=ed25519; p=${spki.subarray(12).toString('base64')}` : `v=DKIM1; k=rsa; p=${spki.toString('base64')}`;
}
