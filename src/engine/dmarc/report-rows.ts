import type { DmarcAggregateReport, DmarcReportEntry } from './aggregate-report.js';
import type { DmarcSource } from './source-enrichment.js';

/** One record of one report, with its report's identity and its source enriched: a row of `-f csv`. */
export interface DmarcReportRow {
  kind: 'dmarc-record';
  /** The file the report came from (and the archive entry or attachment). */
  file: string;
  org_name: string;
  report_id: string;
  begin: string;
  end: string;
  /** The domain of the published policy the report is about. */
  domain: string;
  /** The published policy (p=). */
  policy: string | null;
  source_ip: string;
  count: number;
  /** What the receiver did: none, quarantine or reject. */
  disposition: string;
  /** The DMARC result: pass when aligned DKIM or aligned SPF passed (RFC 7489 §6.6.2). */
  dmarc: 'pass' | 'fail';
  /** DKIM and SPF as the receiver evaluated them for DMARC (aligned results). */
  dkim: string;
  spf: string;
  header_from: string;
  envelope_from: string | null;
  /** The DKIM signatures checked: `domain` `selector` `result` and whether the domain aligns with header_from. */
  dkim_results: Array<{ domain: string; selector: string | null; result: string; aligned: boolean }>;
  /** The SPF checks: `domain` `scope` `result` and whether the domain aligns with header_from. */
  spf_results: Array<{ domain: string; scope: string | null; result: string; aligned: boolean }>;
  /** Why the receiver applied another disposition than the policy's (RFC 7489 §7.2.1: forwarded, local_policy...). */
  overrides: string[];
  source: DmarcSource;
}

/** The organisational-domain alignment of two domains; strict: the same domain (RFC 7489 §3.1). */
export type Alignment = (fromDomain: string, domain: string, strict: boolean) => boolean;

/** The most domain pairs whose alignment is remembered; past it the memory starts over. */
const ALIGNMENTS_KEPT = 10_000;

/**
 * Alignment by the public suffix list (organisational-domain.ts, RFC 7489's
 * reading), each pair of domains worked out once. Reports are read without
 * asking DNS, so RFC 9989's tree walk (dmarc-discovery.ts) is not used here;
 * the receiver's own DMARC result is what counts a source as failing.
 */
export async function loadAlignment(): Promise<Alignment> {
  const { domainsAligned } = await import('../mail/organisational-domain.js');
  const known = new Map<string, boolean>();
  return (fromDomain, domain, strict) => {
    const key = `${strict ? 's' : 'r'} ${fromDomain} ${domain}`;
    let aligned = known.get(key);
    if (aligned === undefined) {
      aligned = domainsAligned(fromDomain, domain, strict);
      if (known.size >= ALIGNMENTS_KEPT) known.clear();
      known.set(key, aligned);
    }
    return aligned;
  };
}

export function reportRow(report: DmarcAggregateReport, entry: DmarcReportEntry, file: string, source: DmarcSource, aligned: Alignment): DmarcReportRow {
  const from = entry.header_from;
  return {
    kind: 'dmarc-record',
    file,
    org_name: report.org_name,
    report_id: report.report_id,
    begin: report.begin,
    end: report.end,
    domain: report.policy.domain,
    policy: report.policy.p,
    source_ip: entry.source_ip,
    count: entry.count,
    disposition: entry.disposition,
    dmarc: entry.dkim === 'pass' || entry.spf === 'pass' ? 'pass' : 'fail',
    dkim: entry.dkim,
    spf: entry.spf,
    header_from: from,
    envelope_from: entry.envelope_from,
    dkim_results: entry.dkim_results.map((result) => ({ ...result, aligned: aligned(from, result.domain, report.policy.adkim === 's') })),
    spf_results: entry.spf_results.map((result) => ({ ...result, aligned: aligned(from, result.domain, report.policy.aspf === 's') })),
    overrides: entry.reasons.map((reason) => reason.type),
    source,
  };
}
