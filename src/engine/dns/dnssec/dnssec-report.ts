import { finding, type Finding } from '../../findings.js';
import type { EngineContext } from '../../context.js';
import type { DnsTarget } from '../dns-name.js';
import type { DnsResult } from '../dns-result.js';
import type { DnsRecordType } from '../dns-type.js';
import { answerStatus } from '../query-records.js';
import { rootTrustAnchor, type TrustAnchor } from './trust-anchor.js';
import { validateRrset, type DnssecChainLink, type DnssecStatus, type DnssecVerdict } from './validate.js';
import { presentName } from './wire.js';

/** The DNSSEC part of a `dns --dnssec` result. */
export interface DnssecReport {
  status: DnssecStatus;
  reason: string | null;
  /** The zone the trust anchor is for (`.` for the IANA root). */
  trust_anchor: string;
  /** The resolver's AD bit (RFC 4035 §3.2.3) on the same question without CD; null when that query failed. */
  authentic_data: boolean | null;
  /**
   * Why the status is `indeterminate` when a DS or DNSKEY question of the
   * chain got no answer (a timeout, SERVFAIL): the lookup's error, and the
   * finding `dnssec_unchecked` instead of a verdict. Null otherwise.
   */
  error: DnssecVerdict['error'];
  chain: DnssecChainLink[];
  findings: Finding[];
}

/** A DNS result with its DNSSEC verdict. */
export type DnssecDnsResult = DnsResult & { dnssec: DnssecReport };

/**
 * `netintel dns --dnssec` for one type of one target: the answer (RRSIGs
 * included), validated from `anchor` (the IANA root by default).
 *
 * @throws NetintelError as validateRrset.
 */
export async function resolveDnssecType(ctx: EngineContext, target: DnsTarget, type: DnsRecordType, anchor: TrustAnchor = rootTrustAnchor()): Promise<DnssecDnsResult> {
  const verdict = await validateRrset(ctx, target.ascii, type, { trustAnchors: anchor });
  const { answer } = verdict;
  const matching = answer.records.filter((record) => record.type === type).length;
  return {
    kind: 'dns',
    target: target.target,
    domain: target.ascii,
    domain_unicode: target.unicode,
    type,
    status: answerStatus(answer.rcode, matching),
    rcode: answer.rcode,
    answers: answer.records,
    ignored_answers: answer.ignoredRecords,
    resolver: answer.resolver,
    transport: answer.transport,
    latency_ms: answer.latency_ms,
    dnssec: dnssecReport(verdict, presentName(anchor.owner)),
  };
}

/** The verdict as a report with findings. */
function dnssecReport(verdict: DnssecVerdict, trustAnchor: string): DnssecReport {
  return {
    status: verdict.status,
    reason: verdict.reason,
    trust_anchor: trustAnchor,
    authentic_data: verdict.answer.authentic_data,
    error: verdict.error,
    chain: verdict.chain,
    findings: dnssecFindings(verdict, trustAnchor),
  };
}

/** The findings of a verdict; ids and severities are listed in docs/commands/dns.md. */
function dnssecFindings(verdict: DnssecVerdict, trustAnchor: string): Finding[] {
  const subject = `${verdict.answer.name} ${verdict.answer.type}`;
  const evidence = { name: verdict.answer.name, type: verdict.answer.type, reason: verdict.reason, trust_anchor: trustAnchor };
  const findings: Finding[] = [];
  switch (verdict.status) {
    case 'secure':
      findings.push(finding('dnssec_secure', 'pass', `${subject} is signed and validates from the trust anchor for ${trustAnchor}`, 'RFC 4035 §5', evidence));
      break;
    case 'insecure':
      findings.push(finding('dnssec_insecure', 'info', `${subject} is not protected by DNSSEC: ${verdict.reason}`, 'RFC 4035 §5.2', evidence));
      break;
    case 'bogus':
      findings.push(finding('dnssec_bogus', 'error', `${subject} fails DNSSEC validation: ${verdict.reason}`, 'RFC 4035 §5.5', evidence));
      break;
    default:
      // A chain question that got no answer: DNSSEC was not checked, which says nothing of the name (findings.ts, unknown).
      if (verdict.error !== null) findings.push(finding('dnssec_unchecked', 'unknown', `${subject}: DNSSEC could not be checked: ${verdict.error.message}`, 'RFC 4035 §5', { ...evidence, error: verdict.error }));
      else findings.push(finding('dnssec_indeterminate', 'warning', `${subject}: DNSSEC status cannot be decided: ${verdict.reason}`, 'RFC 4033 §5', evidence));
  }
  const ad = verdict.answer.authentic_data;
  if (ad === true && verdict.status === 'bogus') {
    findings.push(finding('dnssec_resolver_ad_on_bogus', 'error', `the resolver ${verdict.answer.resolver} set AD on data that does not validate`, 'RFC 4035 §3.2.3', { resolver: verdict.answer.resolver }));
  } else if (ad === false && verdict.status === 'secure') {
    findings.push(finding('dnssec_resolver_not_validating', 'info', `the resolver ${verdict.answer.resolver} did not set AD: it does not validate, or does not say so to this client`, 'RFC 4035 §3.2.3', { resolver: verdict.answer.resolver }));
  }
  return findings;
}
