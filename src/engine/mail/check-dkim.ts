import type { EngineContext } from '../context.js';
import { finding, type Finding } from '../findings.js';
import { NetintelError } from '../../errors.js';
import { normaliseMailDomain } from './mail-domain.js';
import { createMailDns, dnsNameProblem, type MailDns } from './mail-dns.js';
import { failureJson, failureText, withContext } from './mail-errors.js';
import type { DkimPublicKey } from './dkim-key.js';
import { looksLikeDkimRecord, MIN_RSA_BITS, readDkimKeyRecord, type DkimKeyRecord, type DkimRecordProblem } from './dkim-record.js';
import { COMMON_DKIM_SELECTORS } from './dkim-selectors.js';

/** One selector asked: its key record, the key read from it, and what is wrong with them. */
export interface DkimSelectorResult {
  selector: string;
  /** The name asked: `<selector>._domainkey.<domain>`. */
  name: string;
  /** A TXT record was published at the name (after any CNAME). */
  found: boolean;
  /** Where a CNAME at the name leads (the end of the chain), when the selector is delegated (an ESP's key); else null. */
  cname: string | null;
  /** The key record (character strings joined) as published; null when none was found. */
  text: string | null;
  /** The key record read tag by tag; null when nothing was found or it is not a tag list. */
  record: DkimKeyRecord | null;
  /** The key itself; null when there is none or it cannot be read (revoked, malformed). */
  key: DkimPublicKey | null;
  /** Why the lookup failed (timeout, SERVFAIL): not "no key"; else null. */
  error: { code: string; message: string } | null;
  findings: Finding[];
}

/**
 * The verdict on the keys checked:
 * `valid` at least one usable key; `invalid` keys published but none usable
 * (malformed, revoked, too weak); `none` no key at any selector asked;
 * `temperror` no usable key and a lookup failed.
 */
export type DkimStatus = 'valid' | 'invalid' | 'none' | 'temperror';

/** The DKIM check of one domain (`netintel dkim`). */
export interface DkimResult {
  kind: 'dkim';
  domain: string;
  domain_unicode: string;
  status: DkimStatus;
  /** `given`: the selectors asked for; `common`: the list of common selectors was probed. */
  probed: 'given' | 'common';
  /** Every selector asked, in the order asked. With `common`, those not found carry no findings. */
  selectors: DkimSelectorResult[];
  /** The findings of every selector (each names its selector in the evidence), then those of the domain. */
  findings: Finding[];
  /** The resolver that answered, null when no lookup was answered. */
  resolver: string | null;
}

export interface CheckDkimOptions {
  /** Selectors to ask; absent or empty: probe COMMON_DKIM_SELECTORS. */
  selectors?: readonly string[];
  /** Share the DNS answers of a larger check (the e-mail report). */
  dns?: MailDns;
}

/**
 * Checks the DKIM keys of `domain`: the key record at each selector
 * (`<selector>._domainkey.<domain>`, RFC 6376 §3.6.2.1) parsed per §3.6.1,
 * the key read from p= for its type and strength, CNAME delegation followed,
 * revoked and testing keys. Without selectors the common ones are probed at
 * once; selectors cannot be listed, so finding none is not "no DKIM".
 *
 * @throws NetintelError `invalid_input` for a bad domain or selector;
 *   `timeout`, `upstream`, `unreachable` when every lookup failed.
 */
export async function checkDkim(ctx: EngineContext, domain: string, options: CheckDkimOptions = {}): Promise<DkimResult> {
  const name = normaliseMailDomain(domain);
  const given = (options.selectors ?? []).map((selector) => normaliseSelector(selector));
  const probed: DkimResult['probed'] = given.length > 0 ? 'given' : 'common';
  const selectors = probed === 'given' ? [...new Set(given)] : COMMON_DKIM_SELECTORS;
  const dns = options.dns ?? createMailDns(ctx);
  const outcomes = await Promise.all(selectors.map((selector) => checkSelector(dns, name.ascii, selector, probed)));
  // Findings last, after what they are about.
  const results = outcomes.map(({ result: { findings, ...rest } }): DkimSelectorResult => ({ ...rest, findings }));

  const answered = outcomes.find((outcome) => outcome.resolver !== null);
  if (!answered) {
    const failed = outcomes.find((outcome) => outcome.failure !== null)!;
    throw withContext(failed.failure, `the DKIM key lookup${selectors.length > 1 ? 's' : ''} of ${name.ascii} failed`);
  }

  const findings = results.flatMap((result) => result.findings);
  const found = results.filter((result) => result.found);
  if (probed === 'common') {
    if (found.length === 0) {
      findings.push(
        finding(
          'dkim_no_common_selector',
          'info',
          `No DKIM key at any of ${selectors.length} common selectors of ${name.ascii}. Selectors cannot be listed from DNS, so this does not mean the domain has no DKIM: read s= in the DKIM-Signature of a message it sent and give it with --selector`,
          'RFC 6376 §3.1',
          { selectors: [...selectors] },
        ),
      );
    } else {
      findings.push(
        finding(
          'dkim_common_selector_found',
          'info',
          `Keys at ${found.length} of ${selectors.length} common selectors (${found.map((result) => result.selector).join(', ')}); selectors cannot be listed from DNS, so the domain may sign with others too`,
          'RFC 6376 §3.1',
          { found: found.map((result) => result.selector), probed: selectors.length },
        ),
      );
    }
  }

  const usable = found.some((result) => result.key !== null && !result.findings.some((item) => item.severity === 'error'));
  const failed = results.some((result) => result.error !== null);
  const status: DkimStatus = usable ? 'valid' : failed ? 'temperror' : found.length > 0 ? 'invalid' : 'none';
  return { kind: 'dkim', domain: name.ascii, domain_unicode: name.unicode, status, probed, selectors: results, findings, resolver: answered.resolver };
}

/** A selector as it goes into DNS: lower case, one or more labels (RFC 6376 §3.1: sub-domain *("." sub-domain)). */
function normaliseSelector(input: string): string {
  const selector = input.trim().toLowerCase();
  const label = '[a-z0-9](?:[a-z0-9_-]*[a-z0-9])?';
  const valid = new RegExp(`^${label}(?:\\.${label})*$`).test(selector) && dnsNameProblem(`${selector}._domainkey.x`) === null;
  if (!valid) {
    throw new NetintelError('invalid_input', `invalid DKIM selector ${JSON.stringify(input)} (give DNS labels of letters, digits, "-" and "_", as in s= of a DKIM-Signature, e.g. --selector google,s1)`, {
      details: { input },
    });
  }
  return selector;
}

interface SelectorOutcome {
  result: DkimSelectorResult;
  resolver: string | null;
  failure: unknown;
}

async function checkSelector(dns: MailDns, domain: string, selector: string, probed: DkimResult['probed']): Promise<SelectorOutcome> {
  const name = `${selector}._domainkey.${domain}`;
  const findings: Finding[] = [];
  const result: DkimSelectorResult = { selector, name, found: false, cname: null, text: null, record: null, key: null, error: null, findings };
  const evidence = (extra: Record<string, unknown> = {}) => ({ selector, name, ...extra });
  let lookup;
  try {
    lookup = await dns.lookup(name, 'TXT');
  } catch (error) {
    if (error instanceof NetintelError && error.code === 'invalid_input') {
      throw withContext(error, `cannot ask for the DKIM key of selector ${selector}`);
    }
    result.error = failureJson(error);
    findings.push(
      finding('dkim_lookup_failed', 'unknown', `The lookup of the DKIM key ${name} failed: ${failureText(error)}; verifiers get temperror, this is not "no key"`, 'RFC 6376 §6.1.2', evidence({ error: failureJson(error) })),
    );
    return { result, resolver: null, failure: error };
  }

  const chain = lookup.answers.filter((answer) => answer.type === 'CNAME').map((answer) => String(answer.data).replace(/\.$/, '').toLowerCase());
  if (chain.length > 0) result.cname = chain[chain.length - 1]!;
  const records = lookup.records.filter((record) => looksLikeDkimRecord(record.text));

  if (records.length === 0) {
    if (result.cname !== null && lookup.status !== 'answer') {
      // A CNAME to an ESP's name that does not answer: the delegation was set up and the ESP side removed or never made.
      findings.push(
        finding(
          'dkim_cname_dangling',
          'error',
          `${name} is a CNAME to ${result.cname}, which ${lookup.status === 'nxdomain' ? 'does not exist' : 'publishes no key'}: signatures with selector ${selector} fail`,
          'RFC 6376 §6.1.2',
          evidence({ cname: result.cname, chain, status: lookup.status }),
        ),
      );
    } else if (probed === 'given') {
      const other = lookup.records.map((record) => record.text);
      findings.push(
        finding(
          'dkim_selector_not_found',
          'warning',
          `No DKIM key at ${name}${lookup.status === 'nxdomain' ? ' (the name does not exist)' : other.length > 0 ? ' (TXT records there are not key records)' : ''}: signatures with selector ${selector} fail with "no key"`,
          'RFC 6376 §6.1.2',
          evidence({ status: lookup.status, otherRecords: other }),
        ),
      );
    }
    return { result, resolver: lookup.resolver, failure: null };
  }

  result.found = true;
  const published = records[0]!;
  result.text = published.text;
  if (result.cname !== null) {
    findings.push(
      finding('dkim_cname_delegated', 'info', `Selector ${selector} is delegated by CNAME to ${result.cname} (a provider publishes and rotates the key)`, 'RFC 6376 §3.6.2.1', evidence({ cname: result.cname, chain })),
    );
  }
  if (records.length > 1) {
    findings.push(
      finding(
        'dkim_multiple_records',
        'warning',
        `${name} publishes ${records.length} key records; verifiers may use any of them, so results are unpredictable: keep one`,
        'RFC 6376 §3.6.2.2',
        evidence({ records: records.map((record) => record.text) }),
      ),
    );
  }

  // The same reading the message verifier judges signatures by (dkim-record.ts).
  const reading = readDkimKeyRecord(published.text);
  if (reading.record) result.record = reading.record;
  for (const problem of reading.problems) findings.push(problemFinding(problem, selector, name, published.text));
  const record = reading.record;
  const broken = reading.problems.some((problem) => problem.severity === 'error');

  if (record && record.public_key === '') {
    findings.push(
      finding('dkim_key_revoked', 'warning', `The key of selector ${selector} is revoked (empty p=): signatures made with it fail`, 'RFC 6376 §3.6.1', evidence({ record: published.text })),
    );
  } else if (record && !broken && reading.keyProblem !== null) {
    findings.push(finding('dkim_key_invalid', 'error', `The key of selector ${selector} cannot be used: ${reading.keyProblem}`, record.key_type === 'ed25519' ? 'RFC 8463 §4.2' : 'RFC 6376 §3.6.1', evidence({ key_type: record.key_type })));
  } else if (!broken && reading.key !== null) {
    result.key = reading.key;
    findings.push(...keyFindings(reading.key, selector, name));
  }
  if (record?.testing) {
    findings.push(
      finding('dkim_testing_mode', 'warning', `Selector ${selector} is in testing mode (t=y): verifiers may treat its signatures as unsigned; remove y from t= once signing works`, 'RFC 6376 §3.6.1', evidence({ flags: record.flags })),
    );
  }
  if (findings.every((item) => item.severity !== 'error' && item.id !== 'dkim_key_revoked')) {
    findings.unshift(finding('dkim_record_found', 'pass', `A DKIM key record at ${name}`, 'RFC 6376 §3.6.2.2', evidence({ record: published.text })));
  }
  return { result, resolver: lookup.resolver, failure: null };
}

/** Key strength: RFC 8301 §3.2 (RSA at least 1024 bits to verify, 2048 to sign); Ed25519 per RFC 8463. */
function keyFindings(key: DkimPublicKey, selector: string, name: string): Finding[] {
  const evidence = { selector, name, type: key.type, bits: key.bits, encoding: key.encoding };
  const out: Finding[] = [];
  if (key.type === 'ed25519') {
    out.push(finding('dkim_key_strength', 'pass', `Selector ${selector} has an Ed25519 key`, 'RFC 8463 §3', evidence));
    if (key.encoding === 'spki-ed25519') {
      out.push(finding('dkim_key_encoding', 'warning', `The Ed25519 key of selector ${selector} is wrapped in SubjectPublicKeyInfo; p= should hold the 32 key octets alone: netintel reads the wrapped form, but other verifiers (dkimpy among them) reject it`, 'RFC 8463 §4.2', evidence));
    }
    return out;
  }
  if (key.bits < MIN_RSA_BITS) {
    out.push(finding('dkim_key_weak', 'error', `The RSA key of selector ${selector} has ${key.bits} bits; verifiers must not accept keys under 1024 bits, so its signatures fail`, 'RFC 8301 §3.2', evidence));
  } else if (key.bits < 2048) {
    out.push(finding('dkim_key_1024', 'warning', `The RSA key of selector ${selector} has ${key.bits} bits; signers should use at least 2048`, 'RFC 8301 §3.2', evidence));
  } else {
    out.push(finding('dkim_key_strength', 'pass', `The RSA key of selector ${selector} has ${key.bits} bits`, 'RFC 8301 §3.2', evidence));
  }
  if (key.encoding === 'pkcs1') {
    // RFC 6376 §3.6.1 names the bare RSAPublicKey, but key generators publish a SubjectPublicKeyInfo and some verifiers read only that.
    out.push(
      finding(
        'dkim_key_encoding',
        'warning',
        `The RSA key of selector ${selector} is a bare RSAPublicKey: RFC 6376 names that form and netintel verifies with it, but keys are usually published as a SubjectPublicKeyInfo and some verifiers read only that`,
        'RFC 6376 §3.6.1',
        evidence,
      ),
    );
  }
  return out;
}

const PROBLEM_FINDINGS: Readonly<Record<DkimRecordProblem['code'], { id: string; rfc: string }>> = {
  syntax: { id: 'dkim_syntax_error', rfc: 'RFC 6376 §3.2' },
  duplicate_tag: { id: 'dkim_duplicate_tag', rfc: 'RFC 6376 §3.2' },
  bad_version: { id: 'dkim_bad_version', rfc: 'RFC 6376 §3.6.1' },
  no_public_key: { id: 'dkim_no_public_key', rfc: 'RFC 6376 §3.6.1' },
  bad_base64: { id: 'dkim_key_invalid', rfc: 'RFC 6376 §3.6.1' },
  unknown_key_type: { id: 'dkim_unknown_key_type', rfc: 'RFC 6376 §3.6.1, RFC 8463 §4.2' },
  sha1_only: { id: 'dkim_sha1_only', rfc: 'RFC 8301 §3.1' },
  unknown_hash: { id: 'dkim_unknown_hash', rfc: 'RFC 6376 §3.6.1' },
  not_for_email: { id: 'dkim_not_for_email', rfc: 'RFC 6376 §3.6.1' },
};

function problemFinding(problem: DkimRecordProblem, selector: string, name: string, text: string): Finding {
  const { id, rfc } = PROBLEM_FINDINGS[problem.code];
  const consequence = problem.severity === 'error' ? ': verifiers answer permerror for its signatures' : '';
  return finding(id, problem.severity, `In the key record of selector ${selector}, ${problem.message}${consequence}`, rfc, { selector, name, tag: problem.tag, record: text });
}
