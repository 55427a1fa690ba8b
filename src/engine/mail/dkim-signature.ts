/**
 * The DKIM-Signature header field (RFC 6376 §3.5), read and validated as
 * §6.1.1 asks before any key is fetched: a signature that breaks the
 * grammar, lacks a required tag or names something netintel does not
 * implement is PERMFAIL, with the reason.
 */
import { dkimTagValue, parseDkimTagList, removeFws, trimFws, type DkimTagList } from './dkim-tag-list.js';

export type DkimCanonicalization = 'simple' | 'relaxed';

/** A signature that passed §6.1.1, its values typed. */
export interface DkimSignature {
  /** a=, lower case. */
  algorithm: 'rsa-sha256' | 'ed25519-sha256';
  key_type: 'rsa' | 'ed25519';
  hash: 'sha256';
  /** b=, decoded. */
  signature: Buffer;
  /** bh=, decoded. */
  bodyHash: Buffer;
  headerCanonicalization: DkimCanonicalization;
  bodyCanonicalization: DkimCanonicalization;
  /** d=, lower case. */
  domain: string;
  /** s=, lower case. */
  selector: string;
  /** The domain of i=, lower case (d= when i= is absent, §3.5). */
  identityDomain: string;
  /** h=: the names of the signed fields, lower case, in order, repeats kept. */
  signedFields: string[];
  /** l=, null for the whole body. */
  bodyLength: bigint | null;
  /** t= and x=, seconds since 1970 (at most 12 digits, so always a valid date). */
  signed_at: number | null;
  expires_at: number | null;
}

/** How a DKIM-Signature field reads: its tags, and either the typed signature or why it is PERMFAIL. */
export interface DkimSignatureReading {
  /** The tags that could be read, for showing (first value of a repeated tag). */
  tags: DkimTagList;
  signature: DkimSignature | null;
  /** Why the signature is ignored (PERMFAIL, §6.1.1); null when `signature` is set. */
  refusal: string | null;
}

/** §3.5: the tags a signature must have. */
const REQUIRED = ['v', 'a', 'b', 'bh', 'd', 'h', 's'] as const;
/** RFC 5321 sub-domain (Let-dig [Ldh-str]); selectors may hold "_" too, as published selectors do. */
const LABEL = '[a-z0-9](?:[a-z0-9-]*[a-z0-9])?';
const SELECTOR_LABEL = '[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?';
/** §3.5: domain-name = sub-domain 1*("." sub-domain). */
const DOMAIN = new RegExp(`^${LABEL}(?:\\.${LABEL})+$`, 'i');
/** §3.1: selector = sub-domain *("." sub-domain). */
const SELECTOR = new RegExp(`^${SELECTOR_LABEL}(?:\\.${SELECTOR_LABEL})*$`, 'i');
/** RFC 5322 §3.6.8 field-name. */
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Reads the value of a DKIM-Signature field (after the colon, folding
 * kept). Never throws.
 */
export function readDkimSignature(value: string): DkimSignatureReading {
  // RFC 8616 §4: i= may hold a UTF-8 local part, so values may carry 8-bit octets.
  const tags = parseDkimTagList(value, { eightBit: true });
  const refuse = (reason: string): DkimSignatureReading => ({ tags, signature: null, refusal: reason });
  if (tags.problems.length > 0) return refuse(`signature syntax error: ${tags.problems[0]!.message}`);
  const tag = (name: string) => dkimTagValue(tags, name);

  const missing = REQUIRED.filter((name) => tag(name) === null);
  if (missing.length > 0) return refuse(`the signature lacks required tag${missing.length > 1 ? 's' : ''} ${missing.map((name) => `${name}=`).join(', ')}`);
  if (tag('v') !== '1') return refuse(`v=${tag('v')} is not 1 (incompatible version)`);

  const algorithm = tag('a')!.toLowerCase();
  if (algorithm === 'rsa-sha1') return refuse('a=rsa-sha1 is not accepted: RFC 8301 §3.1 forbids verifying with SHA-1');
  if (algorithm !== 'rsa-sha256' && algorithm !== 'ed25519-sha256') return refuse(`unsupported algorithm a=${tag('a')}`);

  const canonicalization = readCanonicalization(tag('c'));
  if (canonicalization === null) return refuse(`unsupported canonicalization c=${tag('c')}`);

  const domain = tag('d')!;
  if (!DOMAIN.test(domain)) return refuse(`d=${domain} is not a domain name`);
  const selector = tag('s')!;
  if (!SELECTOR.test(selector)) return refuse(`s=${selector} is not a selector (DNS labels)`);

  const signedFields = tag('h')!.split(':').map((item) => trimFws(item));
  if (signedFields.some((item) => !FIELD_NAME.test(item))) return refuse('h= is not a list of header field names');
  const lowerFields = signedFields.map((item) => item.toLowerCase());
  if (!lowerFields.includes('from')) return refuse('h= does not include From (From field not signed)');

  const lowerDomain = domain.toLowerCase();
  let identityDomain = lowerDomain;
  const identity = tag('i');
  if (identity !== null) {
    const at = identity.lastIndexOf('@');
    identityDomain = at === -1 ? '' : identity.slice(at + 1).toLowerCase();
    if (at === -1 || (identityDomain !== lowerDomain && !identityDomain.endsWith(`.${lowerDomain}`))) {
      return refuse(`i=${identity} is not in d=${domain} or below it (domain mismatch)`);
    }
  }

  const query = tag('q');
  if (query !== null && !query.split(':').some((item) => trimFws(item).toLowerCase() === 'dns/txt')) {
    return refuse(`q=${query} names no key query method netintel knows (dns/txt)`);
  }

  const length = tag('l');
  if (length !== null && !/^\d{1,76}$/.test(length)) return refuse(`l=${length} is not a body length (1 to 76 digits)`);
  const signedAt = tag('t');
  const expiresAt = tag('x');
  for (const [name, time] of [['t', signedAt], ['x', expiresAt]] as const) {
    // sig-t-tag and sig-x-tag are 1*12DIGIT: a longer value is not a time, and no 12-digit one is past what a date can hold.
    if (time !== null && !/^\d{1,12}$/.test(time)) return refuse(`${name}=${shorten(time)} is not a time (1 to 12 digits of seconds since 1970)`);
  }
  if (signedAt !== null && expiresAt !== null && Number(expiresAt) <= Number(signedAt)) {
    // §3.5 x=: "the value of the x= tag MUST be greater than the value of the t= tag if both are present".
    const relation = Number(expiresAt) < Number(signedAt) ? 'is earlier than' : 'is the same time as';
    return refuse(`x= (${isoTime(Number(expiresAt))}) ${relation} t= (${isoTime(Number(signedAt))}), so the signature is invalid: x= must be later than t=`);
  }

  const signature = removeFws(tag('b')!);
  const bodyHash = removeFws(tag('bh')!);
  if (signature === '' || !BASE64.test(signature)) return refuse('b= is not base64');
  if (bodyHash === '' || !BASE64.test(bodyHash)) return refuse('bh= is not base64');

  return {
    tags,
    refusal: null,
    signature: {
      algorithm,
      key_type: algorithm === 'rsa-sha256' ? 'rsa' : 'ed25519',
      hash: 'sha256',
      signature: Buffer.from(signature, 'base64'),
      bodyHash: Buffer.from(bodyHash, 'base64'),
      headerCanonicalization: canonicalization[0],
      bodyCanonicalization: canonicalization[1],
      domain: lowerDomain,
      selector: selector.toLowerCase(),
      identityDomain,
      signedFields: lowerFields,
      bodyLength: length === null ? null : BigInt(length),
      signed_at: signedAt === null ? null : Number(signedAt),
      expires_at: expiresAt === null ? null : Number(expiresAt),
    },
  };
}

/** A t= or x= value (seconds) as ISO 8601. */
export function isoTime(seconds: number): string {
  return new Date(seconds * 1000).toISOString();
}

/** §3.5 c=: header/body, each simple or relaxed; one name is the header's, the body then simple. */
function readCanonicalization(value: string | null): [DkimCanonicalization, DkimCanonicalization] | null {
  if (value === null) return ['simple', 'simple'];
  const parts = value.toLowerCase().split('/');
  if (parts.length > 2) return null;
  const header = parts[0]!;
  const body = parts[1] ?? 'simple';
  if ((header !== 'simple' && header !== 'relaxed') || (body !== 'simple' && body !== 'relaxed')) return null;
  return [header, body];
}

function shorten(text: string): string {
  return text.length > 24 ? `${text.slice(0, 21)}...` : text;
}
