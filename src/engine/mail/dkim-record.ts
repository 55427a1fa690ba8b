/**
 * The DKIM key record (RFC 6376 §3.6.1): a tag-list (§3.2) published as
 * TXT at `<selector>._domainkey.<domain>`. Parsing never throws: any text
 * gives a record (when the tag-list can be read) and the problems found.
 */

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
  keyType: string;
  /** `p=` with whitespace removed; `''` for a revoked key; null when the tag is missing. */
  publicKey: string | null;
  /** `h=`: acceptable hash algorithms, null when absent (all allowed). */
  hashAlgorithms: string[] | null;
  /** `s=`: service types, `['*']` by default. */
  serviceTypes: string[];
  /** `t=` flags, lower case (`y` testing, `s` no subdomains of the i= domain). */
  flags: string[];
  testing: boolean;
  strictSubdomains: boolean;
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

/** RFC 6376 §3.2: tag-name = ALPHA *ALNUMPUNC. */
const TAG_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;
/** RFC 6376 §3.2: tval = 1*VALCHAR, VALCHAR = %x21-3A / %x3C-7E, tvals separated by FWS. */
const TAG_VALUE = /^(?:[\x21-\x3a\x3c-\x7e]+(?:[ \t\r\n]+[\x21-\x3a\x3c-\x7e]+)*)?$/;
/** RFC 6376 §2.4 base64string: base64 characters with folding whitespace anywhere. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Parses a key record. TXT character strings should be joined with nothing
 * between them first (RFC 6376 §3.6.2.2). Leading and trailing whitespace of
 * the record and around each tag and value is ignored (§3.2 allows FWS
 * there), as is a final `;`.
 */
export function parseDkimRecord(text: string): DkimRecordParse {
  const problems: DkimRecordProblem[] = [];
  const tags: DkimKeyRecord['tags'] = [];
  const seen = new Set<string>();
  const parts = text.split(';');
  for (let index = 0; index < parts.length; index++) {
    const part = parts[index]!;
    if (part.trim() === '') {
      // An empty last element is the optional trailing ";"; an empty one elsewhere is ";;".
      if (index !== parts.length - 1) problems.push(problem('syntax', 'error', `an empty tag between two ";" (tag ${index + 1})`, null));
      continue;
    }
    const equals = part.indexOf('=');
    if (equals === -1) {
      problems.push(problem('syntax', 'error', `"${shorten(part.trim())}" is not a tag=value pair`, null));
      continue;
    }
    const name = part.slice(0, equals).trim();
    const value = part.slice(equals + 1).trim();
    if (!TAG_NAME.test(name)) {
      problems.push(problem('syntax', 'error', `"${shorten(name)}" is not a valid tag name`, null));
      continue;
    }
    if (!TAG_VALUE.test(value)) {
      problems.push(problem('syntax', 'error', `the value of ${name}= holds characters a tag value cannot`, name));
      continue;
    }
    // Tag names are case-sensitive (RFC 6376 §3.2): "P=" is an unknown tag, not "p=".
    if (seen.has(name)) {
      problems.push(problem('duplicate_tag', 'error', `${name}= appears more than once, which makes the whole record invalid`, name));
      continue;
    }
    seen.add(name);
    tags.push({ name, value });
  }
  if (tags.length === 0 && problems.length > 0) return { record: null, problems };

  const tag = (name: string) => tags.find((item) => item.name === name)?.value ?? null;
  const version = tag('v');
  if (version !== null && version !== 'DKIM1') {
    problems.push(problem('bad_version', 'error', `v=${shorten(version)} is not "DKIM1"`, 'v'));
  } else if (version !== null && tags[0]!.name !== 'v') {
    problems.push(problem('bad_version', 'error', 'v=DKIM1 must be the first tag of the record', 'v'));
  }

  const rawKey = tag('p');
  const publicKey = rawKey === null ? null : rawKey.replace(/[ \t\r\n]/g, '');
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
    problems.push(problem('not_for_email', 'error', `s=${serviceTypes.join(':')} does not include "email" or "*", so the key may not verify mail`, 's'));
  }

  const flags = (listTag(tag('t')) ?? []).map((item) => item.toLowerCase());
  return {
    record: {
      tags,
      version,
      keyType,
      publicKey,
      hashAlgorithms,
      serviceTypes,
      flags,
      testing: flags.includes('y'),
      strictSubdomains: flags.includes('s'),
      notes: tag('n'),
    },
    problems,
  };
}

/** True when a TXT record reads as a DKIM key record rather than something else published at the name. */
export function looksLikeDkimRecord(text: string): boolean {
  return /^\s*v\s*=\s*DKIM1/i.test(text) || /(^|;)\s*p\s*=/.test(text) || /(^|;)\s*k\s*=/.test(text);
}

/** A colon-separated tag value (h=, s=, t=), items trimmed, empty items dropped; null for an absent tag. */
function listTag(value: string | null): string[] | null {
  if (value === null) return null;
  return value
    .split(':')
    .map((item) => item.trim())
    .filter((item) => item !== '');
}

function problem(code: DkimRecordProblem['code'], severity: DkimRecordProblem['severity'], message: string, tag: string | null): DkimRecordProblem {
  return { code, severity, message, tag };
}

function shorten(text: string): string {
  const printable = text.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > 40 ? `${printable.slice(0, 37)}...` : printable;
}
