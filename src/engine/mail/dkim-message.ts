import type { EngineContext } from '../context.js';
import { finding, type Finding } from '../findings.js';
import { NetintelError } from '../../errors.js';
import { createMailDns, type MailDns } from './mail-dns.js';
import { failureText } from './mail-errors.js';
import { parseDkimRecord } from './dkim-record.js';

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
  signedHeaders: string[];
  /** t= and x=, ISO 8601, null when absent. */
  signedAt: string | null;
  expiresAt: string | null;
  /** d= aligns with the From domain (relaxed, as DMARC reads it), null when there is no From address. */
  aligned: boolean | null;
  /** RSA modulus length of the key used, null when no RSA key was read. */
  keyBits: number | null;
  /** l=: the signature covers this many body octets only; null when it covers the whole body. */
  bodyLengthLimit: number | null;
}

/** The DKIM verification of a saved message (`netintel dkim --message FILE`). */
export interface DkimMessageResult {
  kind: 'dkim-message';
  /** Where the message came from (the file name given). */
  source: string;
  /** Addresses of the From header. */
  from: string[];
  /** `pass` when a signature passes, `fail` when signatures exist and none passes, `none` when unsigned. */
  status: 'pass' | 'fail' | 'none';
  signatures: DkimSignatureCheck[];
  findings: Finding[];
}

/** The part of mailauth's result this check reads (mailauth/lib/dkim/verify). */
interface MailauthDkimResult {
  signingDomain?: string;
  selector?: string;
  signature?: string;
  algo?: string;
  format?: string;
  status: { result: string; comment?: string; aligned?: string | false };
  signingHeaders?: { keys?: string };
  signTime?: string | null;
  expiresAfter?: string | null;
  modulusLength?: number;
  rr?: string;
  canonBodyLengthLimited?: boolean;
  canonBodyLengthLimit?: number;
}

/**
 * Verifies every DKIM-Signature of a message (RFC 6376 §6) with mailauth,
 * whose key lookups go through the context's resolver. Signatures mailauth
 * cannot read (an unknown algorithm, no d= or s=) are reported as permerror.
 *
 * @throws NetintelError `invalid_input` when the input is not a message
 *   (no header section).
 */
export async function checkDkimMessage(ctx: EngineContext, message: Buffer, source: string, options: { dns?: MailDns } = {}): Promise<DkimMessageResult> {
  if (!/^[\x21-\x39\x3b-\x7e]+:/.test(message.subarray(0, 1000).toString('latin1'))) {
    throw new NetintelError('invalid_input', `${source} does not start with a header field, so it is not a saved message (RFC 5322)`, { details: { source } });
  }
  const dns = options.dns ?? createMailDns(ctx);
  const { dkimVerify } = await import('mailauth/lib/dkim/verify.js');
  const failures = new Map<string, string>();
  const verified = await dkimVerify(message, { resolver: mailauthResolver(dns, failures), curTime: ctx.now() });
  const results = (verified.results as unknown as MailauthDkimResult[]).filter((result) => result.signingDomain);
  const headerLines = (verified.headers?.parsed ?? []).filter((header) => header.key === 'dkim-signature').map((header) => String(header.line));

  const signatures: DkimSignatureCheck[] = [];
  for (const line of headerLines) {
    const tags = signatureTags(line);
    const result = results.find((item) => item.signature !== undefined && item.signature === tags.get('b')?.replace(/\s+/g, ''));
    signatures.push(result ? fromMailauth(result, tags, failures) : unreadable(tags));
  }

  const from = verified.headerFrom;
  const findings: Finding[] = [];
  if (signatures.length === 0) {
    findings.push(finding('dkim_message_unsigned', 'warning', `${source} has no DKIM-Signature header`, 'RFC 6376 §6.1', { source }));
  }
  signatures.forEach((signature, index) => findings.push(signatureFinding(signature, index)));
  const passing = signatures.filter((signature) => signature.result === 'pass');
  if (passing.length > 0 && from.length > 0 && !passing.some((signature) => signature.aligned)) {
    findings.push(
      finding(
        'dkim_signature_not_aligned',
        'warning',
        `No passing signature is aligned with the From domain ${from[0]!.split('@').pop()}: DMARC needs d= to be that domain or share its organisational domain`,
        'RFC 7489 §3.1.1',
        { from, domains: passing.map((signature) => signature.domain) },
      ),
    );
  }
  for (const signature of signatures) {
    if (signature.algorithm?.toLowerCase() === 'rsa-sha1') {
      findings.push(finding('dkim_signature_sha1', 'warning', `The signature of ${signature.domain} uses rsa-sha1, which verifiers must not accept`, 'RFC 8301 §3.1', { domain: signature.domain, selector: signature.selector }));
    }
    if (signature.bodyLengthLimit !== null) {
      findings.push(
        finding('dkim_signature_body_length', 'warning', `The signature of ${signature.domain} covers only the first ${signature.bodyLengthLimit} body octets (l=): content can be appended`, 'RFC 6376 §8.2', {
          domain: signature.domain,
          selector: signature.selector,
          limit: signature.bodyLengthLimit,
        }),
      );
    }
  }
  const status: DkimMessageResult['status'] = signatures.length === 0 ? 'none' : passing.length > 0 ? 'pass' : 'fail';
  return { kind: 'dkim-message', source, from, status, signatures, findings };
}

/**
 * mailauth asks for TXT records like `dns.promises.resolve`: the character
 * strings of each record, or an error whose code says NXDOMAIN (ENOTFOUND)
 * or no record (ENODATA); any other code is a temperror.
 */
function mailauthResolver(dns: MailDns, failures: Map<string, string>): (name: string, type: string) => Promise<string[][]> {
  return async (name, type) => {
    if (type !== 'TXT') throw Object.assign(new Error(`no ${type} lookups here`), { code: 'ENOTIMP' });
    let lookup;
    try {
      lookup = await dns.lookup(name, 'TXT');
    } catch (error) {
      failures.set(name.toLowerCase(), failureText(error));
      const code = error instanceof NetintelError ? error.code : 'internal';
      throw Object.assign(new Error(error instanceof Error ? error.message : String(error)), { code });
    }
    if (lookup.status === 'nxdomain') throw Object.assign(new Error(`${name} does not exist`), { code: 'ENOTFOUND' });
    if (lookup.records.length === 0) throw Object.assign(new Error(`${name} has no TXT record`), { code: 'ENODATA' });
    return lookup.records.map((record) => record.strings);
  };
}

/** The tags of a DKIM-Signature header field (RFC 6376 §3.5), values with whitespace folded. */
function signatureTags(line: string): Map<string, string> {
  const value = line.slice(line.indexOf(':') + 1);
  const tags = new Map<string, string>();
  for (const part of value.split(';')) {
    const equals = part.indexOf('=');
    if (equals === -1) continue;
    const name = part.slice(0, equals).trim();
    if (!tags.has(name)) tags.set(name, part.slice(equals + 1).replace(/\s+/g, ' ').trim());
  }
  return tags;
}

function baseOf(tags: Map<string, string>): Omit<DkimSignatureCheck, 'result' | 'reason' | 'aligned' | 'keyBits'> {
  const limit = tags.get('l');
  const time = (tag: string) => {
    const seconds = Number(tags.get(tag));
    return tags.has(tag) && Number.isFinite(seconds) ? new Date(seconds * 1000).toISOString() : null;
  };
  return {
    domain: tags.get('d') ?? null,
    selector: tags.get('s') ?? null,
    algorithm: tags.get('a') ?? null,
    canonicalization: tags.get('c') ?? null,
    signedHeaders: (tags.get('h') ?? '').split(':').map((item) => item.trim()).filter((item) => item !== ''),
    signedAt: time('t'),
    expiresAt: time('x'),
    bodyLengthLimit: limit !== undefined && /^\d+$/.test(limit) ? Number(limit) : null,
  };
}

/** mailauth's outcome in RFC 8601 terms; its "neutral" covers cases RFC 6376 §6.1 calls PERMFAIL. */
function fromMailauth(result: MailauthDkimResult, tags: Map<string, string>, failures: ReadonlyMap<string, string>): DkimSignatureCheck {
  const comment = result.status.comment ?? null;
  let code: DkimSignatureResultCode;
  let reason = comment;
  switch (result.status.result) {
    case 'pass':
      code = 'pass';
      break;
    case 'fail':
      code = 'fail';
      reason = 'signature did not verify (a signed header field or the signature was changed)';
      break;
    case 'policy':
      code = 'policy';
      reason = 'the key is too short (RSA under 1024 bits)';
      break;
    case 'temperror': {
      code = 'temperror';
      const name = `${result.selector}._domainkey.${result.signingDomain}`.toLowerCase();
      const failure = failures.get(name);
      if (failure !== undefined) reason = `the key lookup failed: ${failure}`;
      break;
    }
    default:
      if (comment === 'body hash did not verify') {
        // RFC 6376 §6.1.3 step 4: the body was changed after signing.
        code = 'fail';
      } else if (comment === 'expired' || comment === 'invalid expiration') {
        code = 'neutral';
        reason = comment === 'expired' ? `the signature expired (x=${tags.get('x')})` : 'x= is earlier than t=';
      } else {
        code = 'permerror';
        if (comment === 'no key') reason = `no key at ${result.selector}._domainkey.${result.signingDomain}`;
        else if (result.rr !== undefined && parseDkimRecord(result.rr).record?.publicKey === '') reason = 'key revoked (empty p=)';
      }
  }
  return {
    ...baseOf(tags),
    domain: result.signingDomain ?? null,
    selector: result.selector ?? null,
    result: code,
    reason: code === 'pass' ? null : reason,
    aligned: result.status.aligned === undefined ? null : Boolean(result.status.aligned),
    keyBits: result.modulusLength ?? null,
  };
}

/** A signature mailauth skipped: RFC 6376 §6.1.1 makes it PERMFAIL (permerror). */
function unreadable(tags: Map<string, string>): DkimSignatureCheck {
  const base = baseOf(tags);
  const reason = !base.domain || !base.selector
    ? 'the signature lacks d= or s='
    : `unsupported algorithm or canonicalization (a=${base.algorithm ?? ''}, c=${base.canonicalization ?? 'simple/simple'})`;
  return { ...base, result: 'permerror', reason, aligned: null, keyBits: null };
}

const RESULT_SEVERITY: Readonly<Record<DkimSignatureResultCode, Finding['severity']>> = {
  pass: 'pass',
  fail: 'error',
  permerror: 'error',
  policy: 'error',
  temperror: 'warning',
  neutral: 'warning',
};

/** Where each result comes from: RFC 6376 §6.1.1 (signature), §6.1.2 (key), §6.1.3 (hashes); RFC 8301 §3.2 (key size). */
const SIGNATURE_RFC: Readonly<Record<DkimSignatureResultCode, string>> = {
  pass: 'RFC 6376 §6.1.3',
  fail: 'RFC 6376 §6.1.3',
  permerror: 'RFC 6376 §6.1.1, §6.1.2',
  policy: 'RFC 8301 §3.2',
  temperror: 'RFC 6376 §6.1.2',
  neutral: 'RFC 6376 §3.5',
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
