import { createHash, verify, type KeyObject } from 'node:crypto';
import addressparser from 'nodemailer/lib/addressparser';
import { checkFailure, type CheckFailure } from '../check-failure.js';
import type { EngineContext } from '../context.js';
import { finding, type Finding } from '../findings.js';
import { NetintelError, toNetintelError } from '../../errors.js';
import { createMailDns, type MailDns } from './mail-dns.js';
import { normaliseMailDomain } from './mail-domain.js';
import { DmarcWalker } from './dmarc-discovery.js';
import { failureText } from './mail-errors.js';
import { bodyHashKey, hashDkimBodies, headerHashInput, type BodyHashResult } from './dkim-canonical.js';
import type { DkimPublicKey } from './dkim-key.js';
import { readMessageParts, type MessageField, type MessageParts } from './dkim-message-reader.js';
import { dkimKeyRefusesSignature, looksLikeDkimRecord, readDkimKeyRecord } from './dkim-record.js';
import { isoTime, readDkimSignature, type DkimSignature, type DkimSignatureReading } from './dkim-signature.js';
import { dkimTagValue, trimFws } from './dkim-tag-list.js';

/** RFC 8601 §2.7.1 result names, as Authentication-Results writes them. */
export type DkimSignatureResultCode = 'pass' | 'fail' | 'neutral' | 'policy' | 'temperror' | 'permerror';

/** One DKIM-Signature header of a message and how it verified. */
export interface DkimSignatureCheck {
  /** d= */
  domain: string | null;
  /** s= */
  selector: string | null;
  /** a= (rsa-sha256, ed25519-sha256...) */
  algorithm: string | null;
  /** c= (header/body canonicalization) */
  canonicalization: string | null;
  result: DkimSignatureResultCode;
  /** Why, when it did not pass: "body hash did not verify", "no key", "key revoked"... */
  reason: string | null;
  /** h=: the header fields the signature covers, as listed. */
  signed_headers: string[];
  /** t= and x=, ISO 8601, null when absent. */
  signed_at: string | null;
  expires_at: string | null;
  /**
   * d= aligns with the From domain (relaxed, as DMARC reads it: the same
   * Organizational Domain by the DNS tree walk of RFC 9989), null when there
   * is no From address or a lookup the answer needs failed.
   */
  aligned: boolean | null;
  /** RSA modulus length of the key used, null when no RSA key was read. */
  key_bits: number | null;
  /** l=: the signature covers this many body octets only; null when it covers the whole body. */
  body_length_limit: number | null;
}

/** The DKIM verification of a saved message (`netintel dkim --message FILE`). */
export interface DkimMessageResult {
  kind: 'dkim-message';
  /** Where the message came from (the file name given). */
  source: string;
  /** Addresses of the From header. */
  from: string[];
  /**
   * `pass` when a signature passes; else `temperror` when a key lookup
   * failed (the message may pass once DNS answers); else `fail` when
   * signatures exist; `none` when the message is unsigned.
   */
  status: 'pass' | 'fail' | 'temperror' | 'none';
  signatures: DkimSignatureCheck[];
  /** Whether the signatures could be checked: `all`, `some` (the key lookups of the others failed) or `none`. */
  checked: 'all' | 'some' | 'none';
  /** Why key lookups failed (the most frequent error code among them), null when all were answered. */
  failure: CheckFailure | null;
  findings: Finding[];
}

/**
 * Signatures verified per message, at most: RFC 6376 §6.1 lets verifiers
 * limit the signatures they try, so that a message cannot make them do
 * unbounded work (a key lookup and a body hash each). Later ones are
 * reported as neutral, not tried.
 */
export const MAX_VERIFIED_SIGNATURES = 20;

/**
 * Signers' clocks run ahead by this much before a t= in the future makes a
 * signature be ignored (RFC 6376 §3.5 lets verifiers ignore it); the same
 * allowance dkimpy gives.
 */
const FUTURE_ALLOWANCE_SECONDS = 10 * 3600;

/**
 * Verifies every DKIM-Signature of a message (RFC 6376 §6.1) over
 * node:crypto, the keys looked up through the context's resolver and read
 * by the key check's own reader (dkim-record.ts), so `netintel dkim
 * DOMAIN` and `--message` judge a key record alike. mailauth is not used to
 * verify: it reads key records with its own lenient parser (a repeated tag,
 * a junk tag, s= and h= go unchecked), accepts rsa-sha1 and x= before t=,
 * and splits header fields in quadratic time.
 *
 * @throws NetintelError `invalid_input` when the input is not a message
 *   (no header field first) or is over the limits of the message reader
 *   (dkim-message-reader.ts).
 */
export async function checkDkimMessage(ctx: EngineContext, message: Buffer, source: string, options: { dns?: MailDns } = {}): Promise<DkimMessageResult> {
  const parts = readMessageParts(message, source);
  const dns = options.dns ?? createMailDns(ctx);
  const now = Math.floor(ctx.now().getTime() / 1000);
  const fields = parts.fields.filter((field) => field.key === 'dkim-signature');

  const pending = fields.map((field, index) => startSignature(field, index, now));
  await Promise.all(pending.map((item) => (item.verdict === null ? fetchKey(dns, item) : Promise.resolve())));
  const ready = pending.filter((item) => item.verdict === null && item.key !== null);
  const bodyHashes = hashDkimBodies(
    parts.body,
    ready.map((item) => ({ canonicalization: item.signature!.bodyCanonicalization, limit: item.signature!.bodyLength })),
  );
  for (const item of ready) finishSignature(item, parts, bodyHashes);

  const from = fromAddresses(parts.fields);
  const fromDomain = from.length > 0 ? from[0]!.split('@').pop()!.toLowerCase() : null;
  const align = fromDomain !== null && pending.some((item) => item.base.domain) ? await relaxedAlignment(dns, fromDomain) : null;
  const alignedFlags = await Promise.all(pending.map((item) => (align && item.base.domain ? align(item.base.domain) : null)));
  const signatures: DkimSignatureCheck[] = pending.map((item, index) => ({
    ...item.base,
    result: item.verdict!.result,
    reason: item.verdict!.result === 'pass' ? null : item.verdict!.reason,
    aligned: alignedFlags[index] ?? null,
    key_bits: item.key?.type === 'rsa' ? item.key.bits : null,
  }));

  const findings: Finding[] = [];
  if (signatures.length === 0) {
    findings.push(finding('dkim_message_unsigned', 'warning', `${source} has no DKIM-Signature header`, 'RFC 6376 §6.1', { source }));
  }
  signatures.forEach((signature, index) => findings.push(signatureFinding(signature, index)));
  const passing = signatures.filter((signature) => signature.result === 'pass');
  // A signature whose alignment could not be learnt (null) is not said to be unaligned.
  if (passing.length > 0 && from.length > 0 && passing.every((signature) => signature.aligned === false)) {
    findings.push(
      finding(
        'dkim_signature_not_aligned',
        'warning',
        `No passing signature is aligned with the From domain ${fromDomain}: DMARC needs d= to be that domain or share its Organizational Domain`,
        'RFC 9989 §3.2.10.1',
        { from, domains: passing.map((signature) => signature.domain) },
      ),
    );
  }
  for (const signature of signatures) {
    if (signature.algorithm?.toLowerCase() === 'rsa-sha1') {
      findings.push(finding('dkim_signature_sha1', 'warning', `The signature of ${signature.domain} uses rsa-sha1, which verifiers must not accept`, 'RFC 8301 §3.1', { domain: signature.domain, selector: signature.selector }));
    }
    if (signature.body_length_limit !== null) {
      findings.push(
        finding('dkim_signature_body_length', 'warning', `The signature of ${signature.domain} covers only the first ${signature.body_length_limit} body octets (l=): content can be appended`, 'RFC 6376 §8.2', {
          domain: signature.domain,
          selector: signature.selector,
          limit: signature.body_length_limit,
        }),
      );
    }
  }
  const lookupFailures = pending.flatMap((item) => (item.lookupFailure === null ? [] : [item.lookupFailure]));
  const status: DkimMessageResult['status'] = signatures.length === 0 ? 'none' : passing.length > 0 ? 'pass' : lookupFailures.length > 0 ? 'temperror' : 'fail';
  const checked = lookupFailures.length === 0 ? 'all' : lookupFailures.length === signatures.length ? 'none' : 'some';
  return { kind: 'dkim-message', source, from, status, signatures, checked, failure: checkFailure(lookupFailures), findings };
}

interface Verdict {
  result: DkimSignatureResultCode;
  reason: string;
}

/** One signature on its way through §6.1.1, §6.1.2 and §6.1.3; `verdict` is set when it is decided. */
interface SignatureWork {
  field: MessageField;
  base: Omit<DkimSignatureCheck, 'result' | 'reason' | 'aligned' | 'key_bits'>;
  signature: DkimSignature | null;
  key: DkimPublicKey | null;
  keyObject: KeyObject | null;
  verdict: Verdict | null;
  /** The key lookup's error when DNS gave no answer (the verdict is then temperror). */
  lookupFailure: NetintelError | null;
}

/** §6.1.1: the signature field read and validated, and judged against the clock. */
function startSignature(field: MessageField, index: number, now: number): SignatureWork {
  const reading = readDkimSignature(field.raw.slice(field.valueStart));
  const work: SignatureWork = { field, base: baseOf(reading), signature: reading.signature, key: null, keyObject: null, verdict: null, lookupFailure: null };
  const signature = reading.signature;
  if (index >= MAX_VERIFIED_SIGNATURES) {
    work.verdict = { result: 'neutral', reason: `not verified: netintel verifies the first ${MAX_VERIFIED_SIGNATURES} signatures of a message (RFC 6376 §6.1 lets verifiers limit them)` };
  } else if (signature === null) {
    work.verdict = { result: 'permerror', reason: reading.refusal! };
  } else if (signature.expires_at !== null && signature.expires_at < now) {
    // §3.5 x=: signatures MAY be considered invalid past it; netintel ignores them, as neutral (the signature was not judged).
    work.verdict = { result: 'neutral', reason: `the signature expired at ${isoTime(signature.expires_at)} (x=${signature.expires_at})` };
  } else if (signature.signed_at !== null && signature.signed_at > now + FUTURE_ALLOWANCE_SECONDS) {
    // §3.5 t=: "Implementations MAY ignore signatures that have a timestamp in the future."
    work.verdict = { result: 'neutral', reason: `t= (${isoTime(signature.signed_at)}) is in the future: the signature is ignored until then` };
  }
  return work;
}

/** §6.1.2: the key record fetched and judged by the key check's reader. */
async function fetchKey(dns: MailDns, work: SignatureWork): Promise<void> {
  const signature = work.signature!;
  const name = `${signature.selector}._domainkey.${signature.domain}`;
  let lookup;
  try {
    lookup = await dns.lookup(name, 'TXT');
  } catch (error) {
    if (error instanceof NetintelError && error.code === 'invalid_input') {
      work.verdict = { result: 'permerror', reason: `s= and d= do not make a name DNS can ask (${name})` };
    } else {
      // Step 2: no answer is TEMPFAIL, never "no key".
      work.verdict = { result: 'temperror', reason: `the key lookup failed: ${failureText(error)}` };
      work.lookupFailure = toNetintelError(error);
    }
    return;
  }
  // The record the key check reads: the first TXT that reads as a key record (step 4 lets the verifier choose).
  const published = lookup.records.find((record) => looksLikeDkimRecord(record.text));
  if (!published) {
    const other = lookup.records.length > 0 ? ' (the TXT records there are not key records)' : '';
    work.verdict = { result: 'permerror', reason: `no key at ${name}${other}` };
    return;
  }
  const reading = readDkimKeyRecord(published.text);
  work.key = reading.key;
  if (reading.refusal) {
    work.verdict = { result: reading.refusal.result, reason: reading.refusal.reason };
    return;
  }
  const refused = dkimKeyRefusesSignature(reading.record!, signature);
  if (refused !== null) {
    work.verdict = { result: 'permerror', reason: refused };
    return;
  }
  work.keyObject = reading.keyObject;
}

/** §6.1.3: body hash, then the signature over the header hash. */
function finishSignature(work: SignatureWork, parts: MessageParts, bodyHashes: ReadonlyMap<string, BodyHashResult>): void {
  const signature = work.signature!;
  const body = bodyHashes.get(bodyHashKey({ canonicalization: signature.bodyCanonicalization, limit: signature.bodyLength }))!;
  if (signature.bodyLength !== null && signature.bodyLength > BigInt(body.canonicalLength)) {
    // §3.5 l=: "This value MUST NOT be larger than the actual number of octets in the canonicalized message body."
    work.verdict = { result: 'permerror', reason: `l=${signature.bodyLength} is more than the ${body.canonicalLength} octets of the canonicalized body` };
    return;
  }
  if (!body.digest.equals(signature.bodyHash)) {
    work.verdict = { result: 'fail', reason: 'body hash did not verify' };
    return;
  }
  const input = headerHashInput(parts.fields, signature.signedFields, work.field, signature.headerCanonicalization);
  let verified = false;
  try {
    verified =
      signature.key_type === 'rsa'
        ? verify('sha256', input, work.keyObject!, signature.signature)
        : // RFC 8463 §3: Ed25519 (PureEdDSA) signs the SHA-256 hash of the header input.
          verify(null, createHash('sha256').update(input).digest(), work.keyObject!, signature.signature);
  } catch {
    verified = false;
  }
  work.verdict = verified ? { result: 'pass', reason: '' } : { result: 'fail', reason: 'signature did not verify (a signed header field or the signature was changed)' };
}

/** The addresses of the From fields (groups flattened). */
function fromAddresses(fields: readonly MessageField[]): string[] {
  const out: string[] = [];
  for (const field of fields) {
    if (field.key !== 'from') continue;
    const value = Buffer.from(field.raw.slice(field.valueStart), 'latin1').toString('utf8');
    for (const entry of addressparser(value, { flatten: true })) if (entry.address) out.push(entry.address);
  }
  return out;
}

/**
 * DMARC relaxed alignment with the From domain (RFC 9989 §3.2.10.1): the same
 * Organizational Domain, found by the DNS tree walk. Null for a signature
 * whose alignment could not be learnt (a lookup failed, or the From domain
 * is not a domain name).
 */
async function relaxedAlignment(dns: MailDns, fromDomain: string): Promise<(domain: string) => Promise<boolean | null>> {
  let author: string;
  try {
    author = normaliseMailDomain(fromDomain).ascii;
  } catch {
    return async () => null;
  }
  const walker = new DmarcWalker(dns);
  return async (domain) => walker.aligns(author, domain, false).catch(() => null);
}

/** What a signature shows of itself, from its tags as written (also when it could not be read). */
function baseOf(reading: DkimSignatureReading): SignatureWork['base'] {
  const tag = (name: string) => dkimTagValue(reading.tags, name);
  const fold = (value: string | null) => (value === null ? null : value.replace(/[ \t\r\n]+/g, ' '));
  // 1*12DIGIT (§3.5): anything else is not a time and shows as none (the refusal says why).
  const time = (value: string | null) => (value !== null && /^\d{1,12}$/.test(value) ? isoTime(Number(value)) : null);
  const limit = tag('l');
  const limitNumber = limit !== null && /^\d{1,15}$/.test(limit) ? Number(limit) : null;
  return {
    domain: fold(tag('d')),
    selector: fold(tag('s')),
    algorithm: fold(tag('a')),
    canonicalization: fold(tag('c')),
    signed_headers: (tag('h') ?? '')
      .split(':')
      .map((item) => trimFws(item))
      .filter((item) => item !== ''),
    signed_at: time(tag('t')),
    expires_at: time(tag('x')),
    body_length_limit: limitNumber,
  };
}

const RESULT_SEVERITY: Readonly<Record<DkimSignatureResultCode, Finding['severity']>> = {
  pass: 'pass',
  fail: 'error',
  permerror: 'error',
  policy: 'error',
  // Not a verdict on the message: the key could not be fetched (docs/exit-codes.md: checks that could not run are unknown).
  temperror: 'unknown',
  neutral: 'warning',
};

/** Where each result comes from: RFC 6376 §6.1.1 (signature), §6.1.2 (key), §6.1.3 (hashes); RFC 8301 §3.2 (key size). */
const SIGNATURE_RFC: Readonly<Record<DkimSignatureResultCode, string>> = {
  pass: 'RFC 6376 §6.1.3',
  fail: 'RFC 6376 §6.1.3',
  permerror: 'RFC 6376 §6.1.1, §6.1.2',
  policy: 'RFC 8301 §3.2',
  temperror: 'RFC 6376 §6.1.2',
  neutral: 'RFC 6376 §3.5, §6.1',
};

function signatureFinding(signature: DkimSignatureCheck, index: number): Finding {
  const who = `Signature ${index + 1} (d=${signature.domain ?? '?'}, s=${signature.selector ?? '?'}, ${signature.algorithm ?? 'no a='})`;
  const message = signature.result === 'pass' ? `${who} verifies` : `${who}: ${signature.result}, ${signature.reason ?? 'no reason given'}`;
  return finding(`dkim_signature_${signature.result}`, RESULT_SEVERITY[signature.result], message, SIGNATURE_RFC[signature.result], {
    index: index + 1,
    domain: signature.domain,
    selector: signature.selector,
    algorithm: signature.algorithm,
    result: signature.result,
    reason: signature.reason,
  });
}
