import { leavesPartUnchecked, type Finding } from '../findings.js';
import type { EmailReport } from './check-email.js';

/** The tests of GET /api/email-tests: form 2 (`general`) or form 1 (`type=mx|spf|smtp|dkim|bimi|dnssec|dane`). */
export const EMAIL_TEST_TYPES = ['general', 'mx', 'spf', 'smtp', 'dkim', 'bimi', 'dnssec', 'dane'] as const;
export type EmailTestType = (typeof EMAIL_TEST_TYPES)[number];

/** The checks of the report, in the order their findings are listed. */
export const EMAIL_CHECKS = ['mx', 'spf', 'dmarc', 'mta_sts', 'tls_rpt', 'dkim', 'bimi', 'dnssec', 'smtp', 'dane'] as const;
export type EmailCheck = (typeof EMAIL_CHECKS)[number];

/** The findings of a check that ran, as the report lists them: the SMTP probe's DANE findings under DANE. */
export function ownFindings(report: EmailReport, check: EmailCheck): Finding[] {
  if (check === 'smtp') return (report.smtp ?? []).flatMap((server) => server.findings.filter((item) => !isDaneFinding(item)));
  if (check === 'dane') return (report.dane ?? []).flatMap((host) => host.findings);
  return report[check]?.findings ?? [];
}

/** The checks that ran but left a part of themselves unchecked: an `unknown` finding among their own (a DKIM selector, an MX host). */
export function checksRunInPart(report: EmailReport): EmailCheck[] {
  return EMAIL_CHECKS.filter((check) => report[check] !== null && leavesPartUnchecked(ownFindings(report, check)));
}

/** A finding of DANE (listed under DANE, though the SMTP probe makes it). */
export function isDaneFinding(item: Finding): boolean {
  return item.id.startsWith('dane_');
}
