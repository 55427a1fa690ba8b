/**
 * A message's authentication recomputed, not trusted (RFC 8601 §1.5: the
 * fields a message carries are claims): SPF for the address of the hop
 * that handed the message to the receiving organisation, with the
 * envelope sender and the HELO name it gave (spf-evaluate.ts); every
 * DKIM signature verified (dkim-message.ts); DMARC policy and alignment of
 * the From domain by RFC 9989 (dmarc-discovery.ts: the DNS tree walk). The
 * message's own Authentication-Results are read beside them, and where
 * they disagree it is said. A DNS failure is temperror, never pass or fail.
 */
import addressparser from 'nodemailer/lib/addressparser';
import { parseIpAddress } from '../../address/ip-address.js';
import { specialPurposeOf } from '../../address/special-ranges.js';
import type { EngineContext } from '../../context.js';
import { finding, type Finding } from '../../findings.js';
import { toNetintelError } from '../../../errors.js';
import { DmarcWalker, type DmarcApplied } from '../dmarc-discovery.js';
import type { DmarcPolicy } from '../dmarc-record.js';
import { normaliseMailDomain } from '../mail-domain.js';
import { checkDkimMessage } from '../dkim-message.js';
import { createMailDns, type MailDns } from '../mail-dns.js';
import { evaluateSpf, type SpfResultCode } from '../spf-evaluate.js';
import { fieldValue, fieldValues, type HeaderBlock } from './header-block.js';
import type { Hop } from './hops.js';
import { readAuthResults, type StatedResult } from './auth-results.js';
import { validateArc, type ArcVerdict } from './arc-chain.js';

/** SPF recomputed for the hop into the receiving organisation. */
export interface SpfVerdict {
  /** RFC 7208 §2.6 result; `not_checked` when no hop had a public address. */
  result: SpfResultCode | 'not_checked';
  /** The hop whose address was checked, null when none. */
  hop: number | null;
  ip: string | null;
  helo: string | null;
  /** The envelope sender (Return-Path), null for the null reverse-path or when absent. */
  sender: string | null;
  /** The domain whose policy was checked. */
  domain: string | null;
  reason: string;
}

/** One DKIM signature, verified. */
export interface DkimVerdictSignature {
  domain: string | null;
  selector: string | null;
  algorithm: string | null;
  result: string;
  reason: string | null;
  aligned: boolean | null;
}

/** The DKIM signatures recomputed. */
export interface DkimVerdict {
  /** pass: a signature passes; fail: none does; none: unsigned; temperror: a key could not be fetched and none passes; not_checked: the body was not given. */
  result: 'pass' | 'fail' | 'none' | 'temperror' | 'not_checked';
  signatures: DkimVerdictSignature[];
  reason: string | null;
}

/** DMARC of the From domain (RFC 9989 §3.2.10, §4.10). */
export interface DmarcVerdict {
  result: 'pass' | 'fail' | 'none' | 'temperror' | 'not_checked';
  from_domain: string | null;
  /** The policy that applies (p; sp, or np for a domain that does not exist, of a parent's record; one level lower with t=y), null when none or not known. */
  policy: DmarcPolicy | null;
  policy_domain: string | null;
  spf_aligned: boolean | null;
  dkim_aligned: boolean | null;
  reason: string;
}

/** The authentication of a message: recomputed verdicts and what the message states. */
export interface HeadersAuthentication {
  spf: SpfVerdict;
  dkim: DkimVerdict;
  dmarc: DmarcVerdict;
  /** The ARC chain validated (RFC 8617). */
  arc: ArcVerdict;
  /** Every result of the message's Authentication-Results fields, the topmost field first. */
  stated: StatedResult[];
}

/**
 * The hop that handed the message to the receiving organisation, whose
 * address SPF is checked for: of the hops from a public address that are
 * not an authenticated submission (`with ESMTPSA` and the other protocol
 * names ending in A, RFC 3848, and their UTF8 forms, where SPF does not
 * apply), the newest whose two hosts are of different organisational
 * domains (internal relays left out); when every one is internal (mail
 * between two users of one provider), the newest of them.
 */
export async function receivingHop(hops: readonly Hop[]): Promise<Hop | null> {
  const candidates = [...hops]
    .reverse()
    .filter((hop) => hop.from_ip !== null && specialPurposeOf(parseIpAddress(hop.from_ip)) === null && !/^(UTF8)?(E?SMTP|LMTP)S?A$/i.test(hop.protocol ?? ''));
  // One candidate or none is the answer whatever the domains: the public-suffix list loads only to choose between several.
  if (candidates.length < 2) return candidates[0] ?? null;
  const { domainsAligned } = await import('../organisational-domain.js');
  const sameOrganisation = (a: string | null, b: string | null) => a !== null && b !== null && a.includes('.') && b.includes('.') && domainsAligned(a, b, false);
  return candidates.find((hop) => !sameOrganisation(hop.from_rdns ?? hop.from_helo, hop.by_host)) ?? candidates[0] ?? null;
}

/** The authentication verdicts of a message and their findings. */
export async function authenticate(ctx: EngineContext, message: Buffer, block: HeaderBlock, hops: readonly Hop[], source: string): Promise<{ authentication: HeadersAuthentication; findings: Finding[] }> {
  const dns = createMailDns(ctx);
  const stated = fieldValues(block, 'authentication-results').flatMap((value, index) => readAuthResults(value, index + 1));
  const fromDomain = fromDomainOf(fieldValue(block, 'from'));
  const [spf, dkim, arc] = await Promise.all([spfVerdict(dns, ctx, block, hops), dkimVerdict(ctx, dns, message, source, bodyGiven(block)), validateArc(ctx, dns, message, block, bodyGiven(block))]);
  const dmarc = await dmarcVerdict(dns, fromDomain, spf, dkim);
  const authentication: HeadersAuthentication = { spf, dkim, dmarc, arc, stated };
  return { authentication, findings: verdictFindings(authentication) };
}

function fromDomainOf(from: string | null): string | null {
  if (from === null) return null;
  const addresses = addressparser(from, { flatten: true }).filter((entry) => entry.address);
  // RFC 7489 §6.6.1: a From with several addresses (or none) has no one domain to check.
  if (addresses.length !== 1) return null;
  const domain = addresses[0]!.address.split('@').pop()!.toLowerCase();
  return domain.includes('.') ? domain : null;
}

async function spfVerdict(dns: MailDns, ctx: EngineContext, block: HeaderBlock, hops: readonly Hop[]): Promise<SpfVerdict> {
  const hop = await receivingHop(hops);
  const returnPath = fieldValue(block, 'return-path');
  const sender = returnPath === null ? null : returnPath.replace(/^\s*<|>\s*$/g, '').trim() || null;
  if (hop === null || hop.from_ip === null) {
    return { result: 'not_checked', hop: null, ip: null, helo: null, sender, domain: null, reason: 'no hop came from a public address' };
  }
  if (sender === null && hop.from_helo === null) {
    return { result: 'not_checked', hop: hop.hop, ip: hop.from_ip, helo: null, sender: null, domain: null, reason: 'neither an envelope sender (Return-Path) nor a HELO name to check' };
  }
  // evaluateSpf turns DNS trouble and a sender or HELO name that is no domain into results itself (RFC 7208 §2.6.6, §4.3):
  // anything it throws is a fault, not a verdict.
  const evaluation = await evaluateSpf(dns, { ip: parseIpAddress(hop.from_ip), sender: sender?.includes('@') ? sender : null, helo: hop.from_helo }, ctx.now());
  return { result: evaluation.result, hop: hop.hop, ip: evaluation.ip, helo: evaluation.helo, sender, domain: evaluation.domain, reason: evaluation.reason };
}

async function dkimVerdict(ctx: EngineContext, dns: MailDns, message: Buffer, source: string, withBody: boolean): Promise<DkimVerdict> {
  const checked = await checkDkimMessage(ctx, message, source, { dns });
  const signatures = checked.signatures.map((signature) => ({
    domain: signature.domain,
    selector: signature.selector,
    algorithm: signature.algorithm,
    result: signature.result,
    reason: signature.reason,
    aligned: signature.aligned,
  }));
  if (checked.status === 'none') return { result: 'none', signatures, reason: null };
  // A signature that passes over an empty body is a pass; one that fails there most likely lost a body that was not pasted.
  if (!withBody && checked.status !== 'pass') {
    return { result: 'not_checked', signatures: signatures.map((signature) => ({ ...signature, result: 'not_checked', reason: 'the body was not given' })), reason: 'only the header block was given: the body hash cannot be verified' };
  }
  if (checked.status === 'pass') return { result: 'pass', signatures, reason: null };
  if (checked.status === 'temperror') return { result: 'temperror', signatures, reason: 'a key could not be fetched' };
  return { result: 'fail', signatures, reason: signatures[0]!.reason };
}

/** Whether a body was given: a header block pasted alone has none, or only the empty lines after it. */
function bodyGiven(block: HeaderBlock): boolean {
  const { body } = block.parts;
  for (const octet of body) if (octet !== 0x0d && octet !== 0x0a && octet !== 0x20 && octet !== 0x09) return true;
  return false;
}

/** What DMARC reads of SPF: the result and the domain checked. */
export type DmarcSpfInput = Pick<SpfVerdict, 'result' | 'domain'>;
/** What DMARC reads of DKIM: the result and each signature's result and d=. */
export interface DmarcDkimInput {
  result: DkimVerdict['result'];
  signatures: ReadonlyArray<Pick<DkimVerdictSignature, 'result' | 'domain'>>;
}

/**
 * The DMARC verdict of a message (RFC 9989 §3.2.10, §4.10): the From domain's
 * policy, found by the DNS tree walk, and whether a passing SPF or DKIM
 * identity aligns with it.
 */
export async function dmarcVerdict(dns: MailDns, fromDomain: string | null, spf: DmarcSpfInput, dkim: DmarcDkimInput): Promise<DmarcVerdict> {
  // The result first, as in the other verdicts (JSON keeps the order members are written in).
  const { result, ...rest } = await dmarcOf(dns, fromDomain, spf, dkim);
  return { result, ...rest };
}

async function dmarcOf(dns: MailDns, fromDomain: string | null, spf: DmarcSpfInput, dkim: DmarcDkimInput): Promise<DmarcVerdict> {
  const base = { from_domain: fromDomain, policy: null, policy_domain: null, spf_aligned: null, dkim_aligned: null };
  if (fromDomain === null) return { ...base, result: 'not_checked', reason: 'the From field does not hold exactly one address' };
  let domain: string;
  try {
    domain = normaliseMailDomain(fromDomain).ascii;
  } catch {
    return { ...base, result: 'not_checked', reason: 'the From domain is not a domain name' };
  }
  const walker = new DmarcWalker(dns);
  let author: DmarcApplied;
  try {
    author = await walker.applied(domain);
  } catch (error) {
    return { ...base, result: 'temperror', reason: `the DMARC record could not be read: ${toNetintelError(error).message}` };
  }
  if (author.record === null) return { ...base, result: 'none', reason: `${fromDomain} publishes no DMARC policy` };
  if (author.policyTags === null) return { ...base, policy_domain: author.record.domain, result: 'none', reason: `the DMARC record of ${author.record.domain} has no valid policy and no report address, so it is not applied` };
  const strict = (tag: string | null) => tag?.toLowerCase() === 's';
  const aligns = async (identifier: string | null, strictMode: boolean): Promise<{ aligned: boolean; error?: unknown }> => {
    if (identifier === null) return { aligned: false };
    try {
      return { aligned: await walker.aligns(domain, identifier, strictMode) };
    } catch (error) {
      return { aligned: false, error };
    }
  };
  // SPF first, so that many signatures cannot use up the walks it needs (as mailauth orders them).
  const spfCheck = spf.result === 'pass' ? await aligns(spf.domain, strict(author.record.tags.aspf)) : { aligned: false };
  const dkimChecks: Array<{ aligned: boolean; error?: unknown }> = [];
  for (const signature of dkim.signatures) if (signature.result === 'pass') dkimChecks.push(await aligns(signature.domain, strict(author.record.tags.adkim)));
  const spfAligned = spfCheck.aligned;
  const dkimAligned = dkimChecks.some((check) => check.aligned);
  const verdict = { ...base, policy: author.policy, policy_domain: author.record.domain, spf_aligned: spfAligned, dkim_aligned: dkimAligned };
  if (spfAligned || dkimAligned) return { ...verdict, result: 'pass', reason: `${[spfAligned ? 'SPF' : null, dkimAligned ? 'DKIM' : null].filter(Boolean).join(' and ')} aligned with ${fromDomain}` };
  const walkError = [spfCheck, ...dkimChecks].find((check) => check.error !== undefined)?.error;
  if (walkError !== undefined) return { ...verdict, result: 'temperror', reason: `an identity's alignment could not be learnt: ${toNetintelError(walkError).message}` };
  if (author.existenceError !== null) return { ...verdict, result: 'temperror', reason: `nothing aligned, and whether ${fromDomain} exists (np or sp) could not be learnt: ${toNetintelError(author.existenceError).message}` };
  // RFC 7489 §6.6.2: an identifier that could not be checked (temperror) leaves the verdict open, not failed.
  if (spf.result === 'temperror' || dkim.result === 'temperror') return { ...verdict, result: 'temperror', reason: 'SPF or DKIM could not be checked, and nothing else aligned' };
  if (dkim.result === 'not_checked' && dkim.signatures.length > 0) return { ...verdict, result: 'not_checked', reason: 'SPF did not align, and the DKIM signatures could not be verified without the body' };
  return { ...verdict, result: 'fail', reason: `neither a passing SPF nor a passing DKIM identity aligns with ${fromDomain}` };
}

/** The results the topmost Authentication-Results states for a method, or null when it states none. */
function statedResults(stated: readonly StatedResult[], method: string): string[] | null {
  const top = stated.length === 0 ? null : stated[0]!.field;
  const found = stated.filter((item) => item.field === top && item.method === method).map((item) => item.result);
  return found.length === 0 ? null : found;
}

function verdictFindings(auth: HeadersAuthentication): Finding[] {
  const found: Finding[] = [];
  const { spf, dkim, dmarc } = auth;
  if (spf.result === 'fail' || spf.result === 'softfail' || spf.result === 'permerror') {
    found.push(finding('headers_spf_fail', spf.result === 'softfail' ? 'warning' : 'error', `SPF ${spf.result} for ${spf.ip} (hop ${spf.hop}) sending as ${spf.domain ?? spf.sender}: ${spf.reason}`, 'RFC 7208 §2.6', { hop: spf.hop, ip: spf.ip, domain: spf.domain, result: spf.result }));
  } else if (spf.result === 'temperror') {
    found.push(finding('headers_spf_temperror', 'unknown', `SPF could not be checked for ${spf.ip}: ${spf.reason}`, 'RFC 7208 §2.6.6', { hop: spf.hop, ip: spf.ip, domain: spf.domain }));
  }
  if (dkim.result === 'fail') {
    found.push(finding('headers_dkim_fail', 'error', `no DKIM signature verifies: ${dkim.signatures.map((signature) => `d=${signature.domain} ${signature.result}${signature.reason ? ` (${signature.reason})` : ''}`).join('; ')}`, 'RFC 6376 §6.1', { signatures: dkim.signatures.length }));
  } else if (dkim.result === 'temperror') {
    found.push(finding('headers_dkim_temperror', 'unknown', 'a DKIM key could not be fetched, and no signature passes', 'RFC 6376 §6.1.2', null));
  } else if (dkim.result === 'none') {
    found.push(finding('headers_dkim_none', 'info', 'the message carries no DKIM signature', 'RFC 6376 §6.1', null));
  }
  if (dmarc.result === 'fail') {
    const enforced = dmarc.policy === 'reject' || dmarc.policy === 'quarantine';
    found.push(finding('headers_dmarc_fail', enforced ? 'error' : 'warning', `DMARC fails for ${dmarc.from_domain} (policy ${dmarc.policy}): ${dmarc.reason}`, 'RFC 7489 §6.6.2', { from_domain: dmarc.from_domain, policy: dmarc.policy }));
  } else if (dmarc.result === 'temperror') {
    found.push(finding('headers_dmarc_temperror', 'unknown', `DMARC could not be checked for ${dmarc.from_domain}: ${dmarc.reason}`, 'RFC 7489 §6.6.2', { from_domain: dmarc.from_domain }));
  }
  if (auth.arc.result === 'fail') {
    found.push(finding('headers_arc_broken', 'warning', `the ARC chain of ${auth.arc.instances} set${auth.arc.instances === 1 ? '' : 's'} does not validate: ${auth.arc.reason}`, 'RFC 8617 §5.2', { instances: auth.arc.instances, reason: auth.arc.reason }));
  } else if (auth.arc.result === 'temperror') {
    found.push(finding('headers_arc_temperror', 'unknown', `the ARC chain could not be validated: ${auth.arc.reason}`, 'RFC 8617 §5.2', { instances: auth.arc.instances }));
  }
  for (const [method, recomputed] of [['spf', spf.result], ['dkim', dkim.result], ['dmarc', dmarc.result], ['arc', auth.arc.result]] as const) {
    const said = statedResults(auth.stated, method);
    // Only a verdict reached here can disagree: what could not be checked now says nothing against the receiver's.
    if (said === null || recomputed === 'temperror' || recomputed === 'not_checked') continue;
    const agrees = method === 'dkim' ? said.includes('pass') === (recomputed === 'pass') : said.includes(recomputed);
    if (!agrees) {
      found.push(
        finding('headers_auth_results_disagree', 'warning', `the message's Authentication-Results says ${method}=${said.join(',')}, recomputed now: ${recomputed}`, 'RFC 8601 §7.1', {
          method,
          stated: said,
          recomputed,
          authserv_id: auth.stated[0]!.authserv_id,
        }),
      );
    }
  }
  return found;
}
