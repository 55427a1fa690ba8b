/**
 * The corpus of the differential DKIM test: keys made at test time, the
 * key records published for them (every variant of a record the key check
 * judges), the signing jobs dkimpy runs, and the messages made from what it
 * signs (as signed, tampered with, changed in transit). Each case names the
 * documented difference it falls under, if any (DKIM_DIFFERENCES).
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';

/** Verification time of the whole corpus, seconds: 2026-01-15T12:00:00Z. */
export const NOW = 1_768_478_400;
export const DOMAIN = 'corpus.test';

/**
 * Where netintel and dkimpy give different verdicts, each with the RFC text
 * that decides it. docs/commands/dkim.md lists the same ids.
 */
export const DKIM_DIFFERENCES = {
  'rsa-sha1': 'RFC 8301 §3.1: rsa-sha1 MUST NOT be used for verifying; dkimpy verifies it',
  'key-h-excludes': 'RFC 6376 §6.1.2 step 6: a key whose h= leaves out the hash of a= MUST be ignored (PERMFAIL); dkimpy does not read h=',
  'key-v-not-first': 'RFC 6376 §3.6.1: v= MUST be the first tag, and §6.1.2 step 5 makes a record out of format PERMFAIL; dkimpy takes v= anywhere',
  'key-s-list': 'RFC 6376 §3.6.1: s= is a colon-separated list, so s=email:xmpp includes email; dkimpy compares the whole value with "email" and "*"',
  'key-s-case': 'RFC 6376 §3.6.1 with RFC 5234 §2.3: the ABNF string "email" matches in any case; dkimpy compares bytes',
  'key-t-s': 'RFC 6376 §3.6.1: with t=s the i= domain must be d= itself; dkimpy does not read t=',
  'ed25519-spki': 'RFC 8463 §4.2 puts the 32 key octets alone in p=; netintel also reads them wrapped in a SubjectPublicKeyInfo (with a warning from the key check), dkimpy refuses them',
  'x-not-after-t': 'RFC 6376 §3.5: x= MUST be greater than t=; the check in dkimpy is unreachable (it follows a raise)',
  'time-digits': 'RFC 6376 §3.5: x= is 1*12DIGIT; dkimpy reads any number of digits, so an x= of 13 or more is a far expiry to it',
  'l-beyond-body': 'RFC 6376 §3.5: l= MUST NOT be larger than the canonicalized body; dkimpy hashes the body there is',
  'from-not-signed': 'RFC 6376 §6.1.1: a signature whose h= lacks From MUST be ignored (PERMFAIL); dkimpy verifies it',
  'dkimpy-extra-from': 'RFC 6376 §5.4.2: fields are taken from the bottom up, so a From added above the signed one is not covered and the signature verifies (§8.15 recommends oversigning against it); dkimpy also hashes every added From, so it fails',
} as const;
export type DifferenceId = keyof typeof DKIM_DIFFERENCES;

export interface CorpusKey {
  type: 'rsa' | 'ed25519';
  /** What dkimpy signs with: a PKCS#1 PEM, or the base64 Ed25519 seed. */
  signing: { rsa: string } | { ed25519: string };
  /** p= as published: base64 SPKI (RSA) or the 32 raw octets (Ed25519). */
  p: string;
  /** RSA: the bare RSAPublicKey; Ed25519: the key in a SubjectPublicKeyInfo. */
  other: string;
}

function rsa(bits: number): CorpusKey {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  return {
    type: 'rsa',
    signing: { rsa: privateKey.export({ format: 'pem', type: 'pkcs1' }).toString() },
    p: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    other: publicKey.export({ format: 'der', type: 'pkcs1' }).toString('base64'),
  };
}

function ed25519(): CorpusKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const spki = publicKey.export({ format: 'der', type: 'spki' });
  return {
    type: 'ed25519',
    // The PKCS#8 of an Ed25519 key ends with the 32-octet seed (RFC 8410 §7).
    signing: { ed25519: seedOf(privateKey).toString('base64') },
    p: spki.subarray(12).toString('base64'),
    other: spki.toString('base64'),
  };
}

function seedOf(key: KeyObject): Buffer {
  const der = key.export({ format: 'der', type: 'pkcs8' });
  return der.subarray(der.length - 32);
}

/** A dkimpy signing job (test/interop/dkim-dkimpy.py). */
export interface SignJob {
  message: string;
  domain: string;
  selector: string;
  algorithm: 'rsa-sha256' | 'rsa-sha1' | 'ed25519-sha256';
  key: CorpusKey['signing'];
  canonicalize: [string, string];
  headers: string[];
  length?: boolean;
  identity?: string | null;
  tags?: Record<string, string | null>;
  extra?: Array<[string, string]>;
  custom?: boolean;
}

/** One signature to verify: the message, which signature (0 = the topmost), and the difference it shows, if any. */
export interface CorpusCase {
  id: string;
  message: Buffer;
  index: number;
  difference: DifferenceId | null;
  /** netintel's own expectation where the case is about the cryptography: a tampered message must give `fail`. */
  netintel?: 'fail';
}

/** A signing job and what to make of the signature field it gives. */
export interface CorpusJob {
  job: SignJob;
  cases: (header: string) => CorpusCase[];
}

export interface Corpus {
  /** Key records by name (`<selector>._domainkey.corpus.test`), as TXT text. */
  zone: Record<string, string>;
  jobs: CorpusJob[];
}

const CANONICALIZATIONS: Array<[string, string]> = [
  ['simple', 'simple'],
  ['simple', 'relaxed'],
  ['relaxed', 'simple'],
  ['relaxed', 'relaxed'],
];

const SIGNED = ['from', 'to', 'subject', 'date', 'message-id'];

/** The messages signed: plain, 8-bit, empty body, whitespace in the body, folded fields. */
const MESSAGES: Record<string, string> = {
  plain: lines([
    'From: Alice <alice@corpus.test>',
    'To: Bob <bob@example.test>',
    'Subject: Quarterly figures for the board',
    'Date: Thu, 15 Jan 2026 11:00:00 +0000',
    'Message-ID: <q1@corpus.test>',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'The figures are attached.',
    'Regards,  Alice',
  ]),
  eightbit: Buffer.from(
    lines([
      'From: =?utf-8?q?Z=C3=B6e?= <zoe@corpus.test>',
      'To: bob@example.test',
      'Subject: Grüße aus Köln — 10 €',
      'Date: Thu, 15 Jan 2026 11:00:00 +0000',
      'Message-ID: <q2@corpus.test>',
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      'Content-Transfer-Encoding: 8bit',
      '',
      'Café crème, 10 € — façade, naïve, Ærø.',
      'Ünïcödé  text\twith tabs.',
    ]),
    'utf8',
  ).toString('latin1'),
  empty: `${lines(['From: alice@corpus.test', 'To: bob@example.test', 'Subject: (empty)', 'Date: Thu, 15 Jan 2026 11:00:00 +0000', 'Message-ID: <q3@corpus.test>'])}\r\n`,
  whitespace: lines([
    'From: alice@corpus.test',
    'To: bob@example.test',
    'Subject:   spaced    out  ',
    'Date: Thu, 15 Jan 2026 11:00:00 +0000',
    'Message-ID: <q4@corpus.test>',
    '',
    'trailing spaces   ',
    '\tleading tab and  inner   runs\t ',
    '',
    'after an empty line',
    '',
    '',
    '',
  ]),
  folded: lines([
    'From: Alice Example\r\n <alice@corpus.test>',
    'To: Bob <bob@example.test>,\r\n\tCarol <carol@example.test>,\r\n  Dave <dave@example.test>',
    'Subject: A subject long enough to be folded\r\n over three lines by a careful\r\n mail user agent',
    'Date: Thu, 15 Jan 2026\r\n 11:00:00 +0000',
    'Message-ID: <q5@corpus.test>',
    '',
    `${'A long line of body text without a break. '.repeat(40)}`,
    'short line',
  ]),
};

function lines(items: string[]): string {
  return `${items.join('\r\n')}\r\n`;
}

/** The corpus: keys made now, records for them, signing jobs and their cases. */
export function buildCorpus(): Corpus {
  const keys = { rsa1024: rsa(1024), rsa2048: rsa(2048), ed: ed25519(), rsa512: rsa(512) };
  const zone: Record<string, string> = {};
  const at = (selector: string) => `${selector}._domainkey.${DOMAIN}`;
  zone[at('rsa1024')] = `v=DKIM1; p=${keys.rsa1024.p}`;
  zone[at('rsa2048')] = `v=DKIM1; k=rsa; p=${keys.rsa2048.p}`;
  zone[at('ed')] = `v=DKIM1; k=ed25519; p=${keys.ed.p}`;
  const jobs: CorpusJob[] = [];
  const sign = (job: Partial<SignJob> & Pick<SignJob, 'selector' | 'key'>): SignJob => ({
    message: MESSAGES['plain']!,
    domain: DOMAIN,
    algorithm: 'key' in job && 'ed25519' in job.key ? 'ed25519-sha256' : 'rsa-sha256',
    canonicalize: ['relaxed', 'relaxed'],
    headers: SIGNED,
    ...job,
  });

  // 1. Every key, canonicalization and message, as signed and changed.
  for (const [selector, key] of [['rsa1024', keys.rsa1024], ['rsa2048', keys.rsa2048], ['ed', keys.ed]] as const) {
    for (const canonicalize of CANONICALIZATIONS) {
      for (const [name, message] of Object.entries(MESSAGES)) {
        const label = `${selector} ${canonicalize.join('/')} ${name}`;
        jobs.push({ job: sign({ selector, key: key.signing, canonicalize, message }), cases: (header) => messageVariants(label, header, message, canonicalize) });
      }
      // Oversigned: From twice and an absent Reply-To, so neither can be added.
      const label = `${selector} ${canonicalize.join('/')} oversigned`;
      jobs.push({
        job: sign({ selector, key: key.signing, canonicalize, headers: [...SIGNED, 'from', 'reply-to'] }),
        cases: (header) => {
          const message = MESSAGES['plain']!;
          return [
            one(`${label}: as signed`, header + message),
            { ...one(`${label}: a From added on top`, `From: Mallory <mallory@evil.test>\r\n${header}${message}`), netintel: 'fail' as const },
            { ...one(`${label}: a Reply-To added`, header + message.replace('Subject:', 'Reply-To: mallory@evil.test\r\nSubject:')), netintel: 'fail' as const },
          ];
        },
      });
    }
  }

  // 2. Key record variants, signed relaxed/relaxed and simple/simple.
  const rsaRecords: Array<[string, string, DifferenceId | null]> = [
    ['dup-p', `v=DKIM1; p=${keys.rsa2048.p}; p=${keys.rsa2048.p}`, null],
    ['dup-k', `v=DKIM1; k=rsa; k=rsa; p=${keys.rsa2048.p}`, null],
    ['junk', `v=DKIM1; k rsa; p=${keys.rsa2048.p}`, null],
    ['junk-name', `v=DKIM1; 1x=2; p=${keys.rsa2048.p}`, null],
    ['empty-tag', `v=DKIM1;; p=${keys.rsa2048.p}`, null],
    ['unknown-tag', `v=DKIM1; foo=bar; p=${keys.rsa2048.p}`, null],
    ['late-v', `k=rsa; v=DKIM1; p=${keys.rsa2048.p}`, 'key-v-not-first'],
    ['v2', `v=DKIM2; p=${keys.rsa2048.p}`, null],
    ['no-v', `p=${keys.rsa2048.p}`, null],
    ['spaced', ` v = DKIM1 ;\tk=rsa ; p=${keys.rsa2048.p.slice(0, 50)} ${keys.rsa2048.p.slice(50)} ;`, null],
    ['s-email', `v=DKIM1; s=email; p=${keys.rsa2048.p}`, null],
    ['s-star', `v=DKIM1; s=*; p=${keys.rsa2048.p}`, null],
    ['s-xmpp', `v=DKIM1; s=xmpp; p=${keys.rsa2048.p}`, null],
    ['s-tlsrpt', `v=DKIM1; s=tlsrpt; p=${keys.rsa2048.p}`, null],
    ['s-list', `v=DKIM1; s=email:xmpp; p=${keys.rsa2048.p}`, 'key-s-list'],
    ['s-upper', `v=DKIM1; s=EMAIL; p=${keys.rsa2048.p}`, 'key-s-case'],
    ['h-sha256', `v=DKIM1; h=sha256; p=${keys.rsa2048.p}`, null],
    ['h-both', `v=DKIM1; h=sha1:sha256; p=${keys.rsa2048.p}`, null],
    ['h-upper', `v=DKIM1; h=SHA256; p=${keys.rsa2048.p}`, null],
    ['h-sha1', `v=DKIM1; h=sha1; p=${keys.rsa2048.p}`, 'key-h-excludes'],
    ['h-sha512', `v=DKIM1; h=sha512; p=${keys.rsa2048.p}`, 'key-h-excludes'],
    ['pkcs1', `v=DKIM1; k=rsa; p=${keys.rsa2048.other}`, null],
    ['pkcs1-1024', `v=DKIM1; p=${keys.rsa1024.other}`, null],
    ['revoked', 'v=DKIM1; k=rsa; p=', null],
    ['no-p', 'v=DKIM1; k=rsa; n=no key here', null],
    ['bad-base64', 'v=DKIM1; p=abc!', null],
    ['k-dsa', `v=DKIM1; k=dsa; p=${keys.rsa2048.p}`, null],
    ['k-ed-rsa-key', `v=DKIM1; k=ed25519; p=${keys.rsa2048.p}`, null],
    ['testing', `v=DKIM1; t=y; p=${keys.rsa2048.p}`, null],
    ['not-a-key', 'google-site-verification=abc123', null],
  ];
  for (const [selector, record, difference] of rsaRecords) {
    zone[at(selector)] = record;
    for (const canonicalize of [['relaxed', 'relaxed'], ['simple', 'simple']] as Array<[string, string]>) {
      const label = `key record ${selector} (${record.slice(0, 30)}...) ${canonicalize.join('/')}`;
      jobs.push({ job: sign({ selector, key: keys.rsa2048.signing, canonicalize }), cases: (header) => [one(label, header + MESSAGES['plain']!, difference)] });
    }
  }
  // Keys the records above do not carry: a short RSA key, Ed25519 variants, a key type that does not suit a=.
  const otherRecords: Array<[string, string, CorpusKey, DifferenceId | null]> = [
    ['short', `v=DKIM1; p=${keys.rsa512.p}`, keys.rsa512, null],
    ['ed-spki', `v=DKIM1; k=ed25519; p=${keys.ed.other}`, keys.ed, 'ed25519-spki'],
    ['ed-no-k', `v=DKIM1; p=${keys.ed.p}`, keys.ed, null],
    ['ed-h-sha256', `v=DKIM1; k=ed25519; h=sha256; p=${keys.ed.p}`, keys.ed, null],
    ['ed-h-sha1', `v=DKIM1; k=ed25519; h=sha1; p=${keys.ed.p}`, keys.ed, 'key-h-excludes'],
    ['ed-s-xmpp', `v=DKIM1; k=ed25519; s=xmpp; p=${keys.ed.p}`, keys.ed, null],
    ['ed-dup', `v=DKIM1; k=ed25519; k=ed25519; p=${keys.ed.p}`, keys.ed, null],
    ['absent', '', keys.rsa2048, null],
  ];
  for (const [selector, record, key, difference] of otherRecords) {
    if (record !== '') zone[at(selector)] = record;
    for (const canonicalize of [['relaxed', 'relaxed'], ['simple', 'simple']] as Array<[string, string]>) {
      const label = `key record ${selector} ${canonicalize.join('/')}`;
      jobs.push({ job: sign({ selector, key: key.signing, canonicalize }), cases: (header) => [one(label, header + MESSAGES['plain']!, difference)] });
    }
  }
  // An Ed25519 signature under an RSA record.
  jobs.push({ job: sign({ selector: 'rsa2048', key: keys.ed.signing }), cases: (header) => [one('ed25519 signature under an RSA key record', header + MESSAGES['plain']!)] });
  // t=s: the i= domain must be d= itself.
  zone[at('strict')] = `v=DKIM1; t=s; p=${keys.rsa2048.p}`;
  jobs.push({ job: sign({ selector: 'strict', key: keys.rsa2048.signing, identity: `alice@${DOMAIN}` }), cases: (header) => [one('t=s key, i= in d=', header + MESSAGES['plain']!)] });
  jobs.push({
    job: sign({ selector: 'strict', key: keys.rsa2048.signing, tags: { i: `@news.${DOMAIN}` } }),
    cases: (header) => [one('t=s key, i= below d=', header + MESSAGES['plain']!, 'key-t-s')],
  });

  // 3. Signature variants: algorithms, t= and x=, l=, i=, v=, q=, tags, h=, c=.
  const variant = (id: string, job: Partial<SignJob>, difference: DifferenceId | null = null, then: (message: string) => string = (message) => message) =>
    jobs.push({ job: sign({ selector: 'rsa2048', key: keys.rsa2048.signing, ...job }), cases: (header) => [one(`signature ${id}`, then(header + (job.message ?? MESSAGES['plain']!)), difference)] });
  variant('a=rsa-sha1 (2048)', { algorithm: 'rsa-sha1' }, 'rsa-sha1');
  variant('a=rsa-sha1 (1024)', { algorithm: 'rsa-sha1', selector: 'rsa1024', key: keys.rsa1024.signing, canonicalize: ['simple', 'simple'] }, 'rsa-sha1');
  variant('x= a day ahead', { tags: { x: String(NOW + 86_400) } });
  variant('x= two days ago', { tags: { t: String(NOW - 3 * 86_400), x: String(NOW - 2 * 86_400) } });
  variant('t= two days ahead', { tags: { t: String(NOW + 2 * 86_400) } });
  variant('t= ten minutes ahead', { tags: { t: String(NOW + 600) } });
  variant('x= before t=, both ahead', { tags: { t: String(NOW + 7200), x: String(NOW + 3600) } }, 'x-not-after-t');
  variant('x= before t=, x= a few minutes ago', { tags: { t: String(NOW - 100), x: String(NOW - 200) } }, 'x-not-after-t');
  variant('x= equal to t=', { tags: { t: String(NOW + 100), x: String(NOW + 100) } }, 'x-not-after-t');
  variant('t= of 17 digits', { tags: { t: '99999999999999999' } });
  variant('t= past the largest date', { tags: { t: '8640000000001' } });
  variant('x= of 17 digits', { tags: { x: '99999999999999999' } }, 'time-digits');
  variant('x= past the largest date', { tags: { x: '8640000000001' } }, 'time-digits');
  variant('x= of 12 digits', { tags: { x: '999999999999' } });
  variant('no t=', { tags: { t: null } });
  variant('l= the body, as signed', { length: true });
  variant('l= the body, text appended', { length: true }, null, (message) => `${message}P.S. Pay to IBAN XX00 0000.\r\n`);
  variant('l= the body, empty body', { length: true, message: MESSAGES['empty']! });
  variant('l= beyond the body', { length: true, tags: { l: '100000' } }, 'l-beyond-body');
  variant('i= a subdomain of d=', { tags: { i: `@news.${DOMAIN}` } });
  variant('i= a user at d=', { identity: `alice@${DOMAIN}` });
  variant('i= outside d=', { tags: { i: '@other.test' } });
  variant('v=2', { tags: { v: '2' } });
  variant('q=dns/other', { tags: { q: 'dns/other' } });
  variant('no q=', { tags: { q: null } });
  variant('an unknown tag', { extra: [['foo', 'bar']] });
  variant('a repeated tag', { extra: [['s', 'rsa2048']] });
  variant('h= without From', { custom: true, headers: ['to', 'subject', 'date'] }, 'from-not-signed');
  variant('c=relaxed (body simple)', { canonicalize: ['relaxed', 'simple'], tags: { c: 'relaxed' } });
  variant('c= absent (simple/simple)', { canonicalize: ['simple', 'simple'], tags: { c: null } });
  variant('c=relaxed/other', { tags: { c: 'relaxed/other' } });
  variant('d= of another domain', { domain: 'other.test', tags: { i: null } });

  // 4. Two signatures on one message, each verified: the jobs run in order, so the second sees the first's field.
  let lower = '';
  jobs.push({
    job: sign({ selector: 'ed', key: keys.ed.signing }),
    cases: (header) => {
      lower = header;
      return [];
    },
  });
  jobs.push({
    job: sign({ selector: 'rsa2048', key: keys.rsa2048.signing, canonicalize: ['simple', 'simple'] }),
    cases: (header) => {
      const both = header + lower + MESSAGES['plain']!;
      return [one('two signatures: the top one (rsa2048, simple/simple)', both), { ...one('two signatures: the lower one (ed25519, relaxed/relaxed)', both), index: 1 }];
    },
  });
  return { zone, jobs };
}

/** One case with the message as text (one character per octet). */
function one(id: string, message: string, difference: DifferenceId | null = null): CorpusCase {
  return { id, message: Buffer.from(message, 'latin1'), index: 0, difference };
}

/** A signed message as signed and as changed after signing. */
function messageVariants(label: string, header: string, message: string, canonicalize: [string, string]): CorpusCase[] {
  const [headers, body] = splitMessage(message);
  const simpleHeader = canonicalize[0] === 'simple';
  const simpleBody = canonicalize[1] === 'simple';
  const tampered = body === '' ? 'Tampered.\r\n' : body.replace(/^(.)/, 'X$1');
  const bodyLines = body === '' ? ' \t\r\n' : body.replace(/\r\n/g, '  \t\r\n');
  const cases: CorpusCase[] = [
    one(`${label}: as signed`, header + message),
    { ...one(`${label}: body changed`, header + headers + tampered), netintel: 'fail' },
    { ...one(`${label}: Subject changed`, header + message.replace(/^Subject: /m, 'Subject: Re: ')), netintel: 'fail' },
    { ...one(`${label}: signature changed`, changeSignature(header) + message), netintel: 'fail' },
    one(`${label}: Subject refolded`, header + refold(message)),
    one(`${label}: LF line ends`, (header + message).replace(/\r\n/g, '\n')),
    one(`${label}: spaces added at line ends of the body`, header + headers + bodyLines),
    one(`${label}: empty lines added at the end`, `${header}${message}\r\n\r\n`),
    one(`${label}: Received added on top`, `Received: from relay.example.test by mx.example.test; Thu, 15 Jan 2026 11:00:05 +0000\r\n${header}${message}`),
    one(`${label}: a From added on top`, `From: Mallory <mallory@evil.test>\r\n${header}${message}`, 'dkimpy-extra-from'),
  ];
  if (simpleHeader) cases[4]!.netintel = 'fail';
  if (simpleBody) cases[6]!.netintel = 'fail';
  return cases;
}

/** [header section with its empty line, body]. */
function splitMessage(message: string): [string, string] {
  const end = message.indexOf('\r\n\r\n');
  return [message.slice(0, end + 4), message.slice(end + 4)];
}

/** The Subject field folded again at its last space (a relay re-folding it): relaxed header canonicalization does not see it. */
function refold(message: string): string {
  return message.replace(/^(Subject:[^\r\n]*) ([^ \t\r\n]+[ \t]*)(?=\r\n)/m, '$1\r\n $2');
}

/** One base64 character of b= changed, so that the signature no longer verifies. */
function changeSignature(header: string): string {
  let index = header.search(/[;\s]b=/) + 3;
  for (let seen = 0; ; index++) if (/[A-Za-z0-9+/]/.test(header[index]!) && ++seen === 20) break;
  return header.slice(0, index) + (header[index] === 'A' ? 'B' : 'A') + header.slice(index + 1);
}
