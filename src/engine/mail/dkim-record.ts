/**
 * The DKIM key record (RFC 6376 §3.6.1): a tag-list (§3.2) published as
 * TXT at `<selector>._domainkey.<domain>`. Parsing never throws: any text
 * gives a record (when the tag-list can be read) and the problems found.
 */
import type { KeyObject } from 'node:crypto';
import { loadDkimKey, type DkimPublicKey } from './dkim-key.js';
import { dkimTagValue, parseDkimTagList, removeFws, trimFws } from './dkim-tag-list.js';

/** One problem of a key record; `error` problems make the record unusable (permerror, RFC 6376 §6.1.2). */
export interface DkimRecordProblem {
  code:
    | 'syntax'
    | 'duplicate_tag'
    | 'bad_version'
    | 'no_public_key'
    | 'bad_base64'
    | 'unknown_key_type'
    | 'sha1_only'
    | 'unknown_hash'
    | 'not_for_email';
  severity: 'error' | 'warning' | 'info';
  message: string;
  /** The tag concerned, when there is one. */
  tag: string | null;
}

/** A key record read tag by tag, with the defaults of RFC 6376 §3.6.1 applied. */
export interface DkimKeyRecord {
  /** The tags in record order, values with folding whitespace removed where the grammar allows it. */
  tags: Array<{ name: string; value: string }>;
  /** `v=`, null when absent (it is optional, but must be `DKIM1` and first when present). */
  version: string | null;
  /** `k=`, lower case; `rsa` by default. */
  key_type: string;
  /** `p=` with whitespace removed; `''` for a revoked key; null when the tag is missing. */
  public_key: string | null;
  /** `h=`: acceptable hash algorithms, null when absent (all allowed). */
  hash_algorithms: string[] | null;
  /** `s=`: service types, `['*']` by default. */
  service_types: string[];
  /** `t=` flags, lower case (`y` testing, `s` no subdomains of the i= domain). */
  flags: string[];
  testing: boolean;
  strict_subdomains: boolean;
  /** `n=`: notes for people, as published. */
  notes: string | null;
}

export interface DkimRecordParse {
  /** Null when the text is not a readable tag-list at all. */
  record: DkimKeyRecord | null;
  problems: DkimRecordProblem[];
}

/** Key types a verifier knows: RFC 6376 §3.6.1 (rsa) and RFC 8463 §4.2 (ed25519). */
export const KNOWN_KEY_TYPES: readonly string[] = ['rsa', 'ed25519'];
/** Hash algorithms of RFC 6376 §3.3; RFC 8301 §3.1 forbids sha1 for signing and verifying. */
const KNOWN_HASHES: readonly string[] = ['sha1', 'sha256'];

/** RFC 6376 §2.4 base64string: base64 characters (folding whitespace already removed). */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Parses a key record. TXT character strings should be joined with nothing
 * between them first (RFC 6376 §3.6.2.2). The tag-list is read by
 * {@link parseDkimTagList}, the reader of DKIM-Signature fields too.
 * Values of k=, h= and s= are compared without regard to case, as ABNF
 * strings are (RFC 5234 §2.3).
 */
export function parseDkimRecord(text: string): DkimRecordParse {
  const list = parseDkimTagList(text);
  const problems: DkimRecordProblem[] = list.problems.map((item) => problem(item.code, 'error', item.message, item.tag));
  const tags = list.tags;
  if (tags.length === 0 && problems.length > 0) return { record: null, problems };

  const tag = (name: string) => dkimTagValue(list, name);
  const version = tag('v');
  if (version !== null && version !== 'DKIM1') {
    problems.push(problem('bad_version', 'error', `v=${shorten(version)} is not "DKIM1"`, 'v'));
  } else if (version !== null && tags[0]!.name !== 'v') {
    problems.push(problem('bad_version', 'error', 'v=DKIM1 must be the first tag of the record', 'v'));
  }

  const rawKey = tag('p');
  const publicKey = rawKey === null ? null : removeFws(rawKey);
  if (publicKey === null) problems.push(problem('no_public_key', 'error', 'the record has no p= tag (the public key)', 'p'));
  else if (publicKey !== '' && !BASE64.test(publicKey)) problems.push(problem('bad_base64', 'error', 'p= is not valid base64', 'p'));

  const keyType = (tag('k') ?? 'rsa').toLowerCase();
  if (!KNOWN_KEY_TYPES.includes(keyType)) problems.push(problem('unknown_key_type', 'error', `k=${shorten(keyType)} is not a key type verifiers know (rsa, ed25519)`, 'k'));

  const hashAlgorithms = listTag(tag('h'));
  if (hashAlgorithms !== null) {
    const lowered = hashAlgorithms.map((item) => item.toLowerCase());
    const unknown = lowered.filter((item) => !KNOWN_HASHES.includes(item));
    if (unknown.length > 0) problems.push(problem('unknown_hash', 'info', `h= names hash algorithms verifiers ignore: ${unknown.join(', ')}`, 'h'));
    if (!lowered.includes('sha256')) {
      problems.push(problem('sha1_only', 'error', `h=${hashAlgorithms.join(':')} does not allow sha256, and verifiers no longer accept sha1 signatures`, 'h'));
    }
  }

  const serviceTypes = listTag(tag('s')) ?? ['*'];
  if (!serviceTypes.some((item) => item === '*' || item.toLowerCase() === 'email')) {
    problems.push(problem('not_for_email', 'error', `s=${serviceTypes.join(':')} does not include "email" or "*", so verifiers ignore the record for mail`, 's'));
  }

  const flags = (listTag(tag('t')) ?? []).map((item) => item.toLowerCase());
  return {
    record: {
      tags,
      version,
      key_type: keyType,
      public_key: publicKey,
      hash_algorithms: hashAlgorithms,
      service_types: serviceTypes,
      flags,
      testing: flags.includes('y'),
      strict_subdomains: flags.includes('s'),
      notes: tag('n'),
    },
    problems,
  };
}

/** Why no signature can verify with a key record (RFC 6376 §6.1.2), as a verifier reports it. */
export interface DkimKeyRefusal {
  /** `policy` for a key too weak to accept (RFC 8301 §3.2); `permerror` for the rest. */
  result: 'permerror' | 'policy';
  reason: string;
}

/**
 * A key record judged once for both its users: the key check
 * (`netintel dkim DOMAIN`) turns it into findings, the message verifier
 * into a result per signature, so the two cannot disagree about whether
 * signatures can verify with the record. The key check reports an error
 * (or a revoked key) exactly when no signature can: `refusal` is set, or
 * h= leaves out sha256 (every a= is then refused, by
 * {@link dkimKeyRefusesSignature} or, for rsa-sha1, by RFC 8301 §3.1).
 */
export interface DkimKeyReading extends DkimRecordParse {
  /** The key of p=, null when p= is absent, empty, not base64, or k= unknown. */
  key: DkimPublicKey | null;
  /** node:crypto's object of `key`. */
  keyObject: KeyObject | null;
  /** Why p= does not decode to a key of type k=; null when it does or was not tried. */
  keyProblem: string | null;
  /** Why a verifier ignores the record for every signature; null when signatures can verify with it. */
  refusal: DkimKeyRefusal | null;
}

/**
 * Reads a key record and judges it (RFC 6376 §3.6.1, §6.1.2 steps 5 and
 * 7; RFC 8301 §3.2; RFC 8463 §4.2). An `s=` without `email` or `*` makes
 * the record one that mail verifiers ignore (§3.6.1), which is a
 * PERMFAIL like a malformed record. `h=` is judged per signature by
 * {@link dkimKeyRefusesSignature}. Never throws.
 */
export function readDkimKeyRecord(text: string): DkimKeyReading {
  const parsed = parseDkimRecord(text);
  const reading: DkimKeyReading = { ...parsed, key: null, keyObject: null, keyProblem: null, refusal: null };
  // sha1_only refuses per signature, with the signature's algorithm named; unknown_hash is a note.
  const recordError = parsed.problems.find((item) => item.severity === 'error' && item.code !== 'sha1_only');
  const record = parsed.record;
  if (record && record.public_key !== null && record.public_key !== '' && !parsed.problems.some((item) => item.code === 'bad_base64' || item.code === 'unknown_key_type')) {
    const loaded = loadDkimKey(record.key_type, record.public_key);
    if ('message' in loaded) reading.keyProblem = loaded.message;
    else {
      reading.key = loaded.key;
      reading.keyObject = loaded.object;
    }
  }
  if (recordError) reading.refusal = { result: 'permerror', reason: `the key record is invalid: ${recordError.message}` };
  else if (record === null) reading.refusal = { result: 'permerror', reason: 'the key record is not a tag list' };
  else if (record.public_key === '') reading.refusal = { result: 'permerror', reason: 'key revoked (empty p=)' };
  else if (reading.keyProblem !== null) reading.refusal = { result: 'permerror', reason: `the key cannot be used: ${reading.keyProblem}` };
  else if (reading.key && reading.key.type === 'rsa' && reading.key.bits < MIN_RSA_BITS) {
    // RFC 8301 §3.2: "Verifiers MUST NOT consider signatures using RSA keys of less than 1024 bits as valid signatures."
    reading.refusal = { result: 'policy', reason: `the RSA key has ${reading.key.bits} bits; keys under ${MIN_RSA_BITS} bits are not accepted` };
  }
  return reading;
}

/** RFC 8301 §3.2: the smallest RSA key a verifier accepts. */
export const MIN_RSA_BITS = 1024;

/** What a signature asks of the key that verifies it. */
export interface DkimSignatureNeeds {
  /** The key type of a= (`rsa-sha256` needs rsa). */
  key_type: 'rsa' | 'ed25519';
  /** The hash of a=. */
  hash: 'sha1' | 'sha256';
  /** d=, lower case. */
  domain: string;
  /** The domain of i= (or d= when i= is absent), lower case. */
  identityDomain: string;
}

/**
 * Why a usable key record may not verify this signature, or null: k= must
 * suit a= (RFC 6376 §6.1.2 step 8), h= must list the hash of a= (step 6),
 * and with t=s the i= domain must be d= itself (§3.6.1).
 */
export function dkimKeyRefusesSignature(record: DkimKeyRecord, needs: DkimSignatureNeeds): string | null {
  if (record.key_type !== needs.key_type) return `a= needs an ${needs.key_type === 'rsa' ? 'RSA' : 'Ed25519'} key, but the key record has k=${record.key_type}`;
  if (record.hash_algorithms !== null && !record.hash_algorithms.some((item) => item.toLowerCase() === needs.hash)) {
    return `the key record's h=${record.hash_algorithms.join(':')} does not allow ${needs.hash} (inappropriate hash algorithm)`;
  }
  if (record.strict_subdomains && needs.identityDomain !== needs.domain) {
    return `the key record's t=s forbids an i= domain (${needs.identityDomain}) below d= (${needs.domain})`;
  }
  return null;
}

/** True when a TXT record reads as a DKIM key record rather than something else published at the name. */
export function looksLikeDkimRecord(text: string): boolean {
  return /^\s*v\s*=\s*DKIM1/i.test(text) || /(^|;)\s*p\s*=/.test(text) || /(^|;)\s*k\s*=/.test(text);
}

/** A colon-separated tag value (h=, s=, t=), items trimmed of folding whitespace, empty items dropped; null for an absent tag. */
function listTag(value: string | null): string[] | null {
  if (value === null) return null;
  return value
    .split(':')
    .map((item) => trimFws(item))
    .filter((item) => item !== '');
}

function problem(code: DkimRecordProblem['code'], severity: DkimRecordProblem['severity'], message: string, tag: string | null): DkimRecordProblem {
  return { code, severity, message, tag };
}

function shorten(text: string): string {
  const printable = text.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > 40 ? `${printable.slice(0, 37)}...` : printable;
}
