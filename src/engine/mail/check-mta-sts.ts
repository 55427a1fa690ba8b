import type { EngineContext } from '../context.js';
import { guardedGet, HTTPS_FETCH_KINDS, tooLargeError, type HttpsConnectOptions } from '../http/guarded-get.js';
import { normaliseMailDomain } from './mail-domain.js';
import { finding, type Finding } from '../findings.js';
import { createMailDns, type MailDns } from './mail-dns.js';
import { failureJson, failureText, isUnansweredLookup, withContext, type FailureJson } from './mail-errors.js';
import { reportStage } from '../stage.js';

export type MtaStsMode = 'enforce' | 'testing' | 'none';

/** An MTA-STS policy (RFC 8461 §3.2). */
export interface MtaStsPolicy {
  version: string | null;
  mode: MtaStsMode | null;
  max_age_seconds: number | null;
  /** MX patterns (`mail.example.com`, `*.example.com`). */
  mx: string[];
}

/** The MTA-STS check of one domain: the `_mta-sts` TXT record and the policy over HTTPS. */
export interface MtaStsResult {
  kind: 'mta-sts';
  domain: string;
  /** The `v=STSv1` record at `_mta-sts.<domain>`, null when there is none or several. */
  record: string | null;
  records: string[];
  /** The policy id of the record. */
  id: string | null;
  /** Where the policy is fetched from, null when there is no record. */
  policy_url: string | null;
  /** The parsed policy, null when it could not be fetched or has no valid fields. */
  policy: MtaStsPolicy | null;
  /** The Content-Type the policy was served with. */
  content_type: string | null;
  /** Why the policy could not be fetched, null when it was (or was not asked for). */
  policy_error: FailureJson | null;
  findings: Finding[];
}

/** How the policy fetch connects (port, trusted CAs); tests point it at a local HTTPS server. */
export type MtaStsFetchOptions = HttpsConnectOptions;

export interface CheckMtaStsOptions {
  dns?: MailDns;
  /** The domain's MX exchanges, checked against the policy's mx patterns. */
  mxHosts?: readonly string[];
  fetch?: MtaStsFetchOptions;
}

const MAX_AGE_LIMIT = 31_557_600;

/**
 * Checks MTA-STS (RFC 8461): the `_mta-sts` TXT record (version, id), the
 * policy at `https://mta-sts.<domain>/.well-known/mta-sts.txt` (fetched by
 * the guarded GET: certificate validation, no redirects, at most 64 KiB,
 * the whole fetch within the context's timeout, over the address the
 * configured resolvers give), its fields, and whether every MX matches it.
 *
 * @throws NetintelError `invalid_input` for a bad domain; `timeout`,
 *   `upstream`, `unreachable` when the TXT lookup fails. A failed policy
 *   fetch is a finding with the error (`policy_error`).
 */
export async function checkMtaSts(ctx: EngineContext, domain: string, options: CheckMtaStsOptions = {}): Promise<MtaStsResult> {
  const name = normaliseMailDomain(domain).ascii;
  const dns = options.dns ?? createMailDns(ctx);
  const findings: Finding[] = [];
  const result: MtaStsResult = {
    kind: 'mta-sts',
    domain: name,
    record: null,
    records: [],
    id: null,
    policy_url: null,
    policy: null,
    content_type: null,
    policy_error: null,
    findings,
  };
  const location = `_mta-sts.${name}`;
  let lookup;
  try {
    lookup = await dns.lookup(location, 'TXT');
  } catch (error) {
    throw withContext(error, `the MTA-STS lookup of ${location} failed`);
  }
  const { records, discarded } = stsRecordsOf(lookup.records.map((record) => record.text));
  result.records = records;
  for (const text of discarded) {
    findings.push(finding('mta_sts_record_invalid', 'error', `A TXT record at ${location} does not begin with "v=STSv1;", so senders discard it: "${text}"`, 'RFC 8461 §3.1', { record: text }));
  }
  if (records.length === 0) {
    findings.push(finding('mta_sts_absent', 'info', `${name} publishes no MTA-STS policy: senders may deliver over unauthenticated or plain connections`, 'RFC 8461 §3.1', { location }));
    return result;
  }
  if (records.length > 1) {
    findings.push(finding('mta_sts_multiple_records', 'error', `${location} holds ${records.length} MTA-STS records; senders then treat the domain as having no policy`, 'RFC 8461 §3.1', { records }));
    return result;
  }
  const record = records[0]!;
  result.record = record;
  const read = readStsRecord(record);
  if (read.id === null) {
    findings.push(finding('mta_sts_record_invalid', 'error', `The MTA-STS record ${read.problem}; senders ignore it`, 'RFC 8461 §3.1', { record }));
  } else {
    result.id = read.id;
  }

  const policyHost = `mta-sts.${name}`;
  result.policy_url = `https://${policyHost}/.well-known/mta-sts.txt`;
  let fetched: { body: string; contentType: string | null };
  try {
    reportStage(ctx, 'mta-sts', policyHost);
    fetched = await fetchPolicy(ctx, dns, result.policy_url, options.fetch ?? {});
  } catch (error) {
    result.policy_error = failureJson(error);
    findings.push(
      finding('mta_sts_policy_unavailable', isUnansweredLookup(error) ? 'unknown' : 'error', `The MTA-STS policy at ${result.policy_url} could not be fetched: ${failureText(error)}; senders then apply no policy`, 'RFC 8461 §3.3', {
        url: result.policy_url,
        error: result.policy_error,
      }),
    );
    return result;
  }
  result.content_type = fetched.contentType;
  if (!/^text\/plain\s*(;|$)/i.test(fetched.contentType ?? '')) {
    findings.push(
      finding('mta_sts_content_type', 'warning', `The MTA-STS policy is served as ${fetched.contentType ?? 'no Content-Type'}; it must be text/plain`, 'RFC 8461 §3.2', {
        content_type: fetched.contentType,
      }),
    );
  }
  const parsed = parsePolicy(fetched.body);
  result.policy = parsed.policy;
  for (const problem of parsed.problems) findings.push(finding('mta_sts_policy_invalid', 'error', `MTA-STS policy: ${problem}`, 'RFC 8461 §3.2', { url: result.policy_url }));
  for (const field of parsed.repeated) {
    findings.push(finding('mta_sts_policy_repeated_field', 'warning', `MTA-STS policy: "${field}" is given more than once; senders use the first`, 'RFC 8461 §3.2', { url: result.policy_url, field }));
  }
  const policy = parsed.policy;
  if (parsed.problems.length === 0) {
    if (policy.mode === 'enforce') {
      findings.push(finding('mta_sts_enforce', 'pass', `MTA-STS policy in enforce mode (max_age ${policy.max_age_seconds} s)`, 'RFC 8461 §5', { mode: policy.mode }));
    } else if (policy.mode === 'testing') {
      findings.push(finding('mta_sts_testing', 'info', 'MTA-STS policy in testing mode: failures are reported, mail is still delivered', 'RFC 8461 §5', { mode: policy.mode }));
    } else {
      findings.push(finding('mta_sts_mode_none', 'info', 'MTA-STS policy in mode none: senders apply no policy', 'RFC 8461 §5', { mode: policy.mode }));
    }
    if (policy.max_age_seconds !== null && policy.max_age_seconds < 86_400) {
      findings.push(
        finding('mta_sts_max_age_short', 'warning', `max_age is ${policy.max_age_seconds} s; policies are meant to be cached for weeks, so a short max_age weakens the protection`, 'RFC 8461 §3.2', {
          max_age_seconds: policy.max_age_seconds,
        }),
      );
    }
  }
  if (policy.mode !== null && policy.mode !== 'none') {
    for (const host of options.mxHosts ?? []) {
      if (!policy.mx.some((pattern) => mxMatches(pattern, host))) {
        findings.push(
          finding(
            'mta_sts_mx_not_covered',
            policy.mode === 'enforce' ? 'error' : 'warning',
            `The MX host ${host} matches no mx pattern of the MTA-STS policy (${policy.mx.join(', ') || 'none'}): senders ${policy.mode === 'enforce' ? 'will not deliver to it' : 'report it'}`,
            'RFC 8461 §4.1',
            { host, patterns: policy.mx },
          ),
        );
      }
    }
  }
  return result;
}

/** True when an MX host matches a policy pattern; `*.` matches exactly one leftmost label (RFC 8461 §4.1). */
export function mxMatches(pattern: string, host: string): boolean {
  const p = pattern.toLowerCase().replace(/\.$/, '');
  const h = host.toLowerCase().replace(/\.$/, '');
  if (p.startsWith('*.')) {
    const rest = p.slice(2);
    const dot = h.indexOf('.');
    return dot > 0 && h.slice(dot + 1) === rest;
  }
  return p === h;
}

/**
 * The MTA-STS records among the TXT strings at `_mta-sts.<domain>`: those
 * that begin with "v=STSv1;" (RFC 8461 §3.1: the others are discarded before
 * they are counted), and those discarded that look meant to be one.
 */
export function stsRecordsOf(texts: readonly string[]): { records: string[]; discarded: string[] } {
  const records = texts.filter((text) => /^v=STSv1[ \t]*;/.test(text));
  return { records, discarded: texts.filter((text) => /^v=STSv1/i.test(text) && !records.includes(text)) };
}

/**
 * The id of an MTA-STS record by RFC 8461 §3.1's grammar: "v=STSv1", then
 * fields after "; " (space allowed around each ";", one at the end), the
 * first id of 1 to 32 letters and digits, any other field a name and a
 * value without spaces, "=" or ";". Otherwise null, and what is wrong.
 */
export function readStsRecord(record: string): { id: string | null; problem: string | null } {
  const parts = record.split(';');
  if (parts.length < 2 || !/^v=STSv1[ \t]*$/.test(parts[0]!)) return { id: null, problem: 'does not begin with "v=STSv1;"' };
  let id: string | null = null;
  for (let index = 1; index < parts.length; index += 1) {
    const field = parts[index]!.replace(/^[ \t]+|[ \t]+$/g, '');
    if (field.length === 0) {
      if (index === parts.length - 1) continue;
      return { id: null, problem: 'has an empty field between two ";"' };
    }
    const eq = field.indexOf('=');
    const name = field.slice(0, eq);
    const value = field.slice(eq + 1);
    if (eq > 0 && name === 'id' && id === null) {
      if (!/^[A-Za-z0-9]{1,32}$/.test(value)) return { id: null, problem: `needs an id of 1 to 32 letters and digits, not "${value}"` };
      id = value;
    } else if (eq <= 0 || !FIELD_NAME.test(name) || !/^[\x21-\x3a\x3c\x3e-\x7e]+$/.test(value)) {
      return { id: null, problem: `has a field that is not name=value ("${field}")` };
    }
  }
  return id === null ? { id: null, problem: 'has no id' } : { id, problem: null };
}

/** A field name of a policy or record (RFC 8461 §3.1 sts-ext-name; version, mode, max_age and mx are of its form). */
const FIELD_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/;

/**
 * Parses a policy body (RFC 8461 §3.2): every problem that makes senders
 * refuse it, and the fields other than mx given more than once, of which
 * senders use the first (§3.2).
 */
export function parsePolicy(body: string): { policy: MtaStsPolicy; problems: string[]; repeated: string[] } {
  const policy: MtaStsPolicy = { version: null, mode: null, max_age_seconds: null, mx: [] };
  const problems: string[] = [];
  const repeated: string[] = [];
  const seen = new Set<string>();
  body.split(/\r?\n/).forEach((line, index) => {
    if (line.trim().length === 0) return;
    const colon = line.indexOf(':');
    if (colon <= 0) {
      problems.push(`line ${index + 1} is not a "key: value" pair`);
      return;
    }
    // The name runs up to the colon: " mode: enforce" or "mode : enforce" sets no mode for a sender.
    const key = line.slice(0, colon);
    if (!FIELD_NAME.test(key)) {
      problems.push(`line ${index + 1}: "${key}" is not a field name (nothing may stand before the name or between it and the colon)`);
      return;
    }
    const value = line.slice(colon + 1).trim();
    if (key !== 'mx' && seen.has(key)) {
      if (!repeated.includes(key)) repeated.push(key);
      return;
    }
    seen.add(key);
    switch (key) {
      case 'version':
        policy.version = value;
        if (value !== 'STSv1') problems.push(`version is "${value}", not STSv1`);
        break;
      case 'mode':
        if (value === 'enforce' || value === 'testing' || value === 'none') policy.mode = value;
        else problems.push(`mode is "${value}", not enforce, testing or none`);
        break;
      case 'max_age':
        if (/^\d{1,10}$/.test(value) && Number(value) <= MAX_AGE_LIMIT) policy.max_age_seconds = Number(value);
        else problems.push(`max_age "${value}" is not an integer from 0 to ${MAX_AGE_LIMIT}`);
        break;
      case 'mx':
        if (/^(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+\.?$/.test(value)) policy.mx.push(value);
        else problems.push(`mx "${value}" is not a host name or "*." pattern`);
        break;
      default:
        break;
    }
  });
  if (!seen.has('version')) problems.push('the version field is missing');
  if (!seen.has('mode')) problems.push('the mode field is missing');
  if (!seen.has('max_age')) problems.push('the max_age field is missing');
  if ((policy.mode === 'enforce' || policy.mode === 'testing') && policy.mx.length === 0) problems.push(`mode ${policy.mode} needs at least one mx field`);
  return { policy, problems, repeated };
}

/**
 * GETs the policy through the engine's guarded GET. RFC 8461 §3.3: 3xx
 * redirects must not be followed, and senders may bound the fetch in time
 * and size (it suggests a minute and 64 kilobytes). The size is the RFC's;
 * the time is the context's timeout for the whole fetch, since a diagnosis
 * should not wait a minute on a host that drips its answer.
 */
async function fetchPolicy(ctx: EngineContext, dns: MailDns, url: string, connect: MtaStsFetchOptions): Promise<{ body: string; contentType: string | null }> {
  const kind = HTTPS_FETCH_KINDS.mtaStsPolicy;
  const document = await guardedGet(ctx, { ...kind, url, connect, dns });
  if (document.truncated) throw tooLargeError(url, kind.maxOctets);
  return { body: document.body.toString('utf8'), contentType: document.contentType };
}
