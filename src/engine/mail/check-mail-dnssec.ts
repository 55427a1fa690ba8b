import type { EngineContext } from '../context.js';
import { failureReason } from '../check-failure.js';
import { finding, type Finding } from '../findings.js';
import { validateRrset, type DnssecStatus } from '../dns/dnssec/validate.js';
import type { TrustAnchor } from '../dns/dnssec/trust-anchor.js';
import { toNetintelError, type ErrorCode } from '../../errors.js';

/** The DNSSEC verdict of one RRset the mail of a domain depends on. */
export interface MailDnssecCheck {
  name: string;
  type: 'MX' | 'A';
  status: DnssecStatus;
  /** Why it is not secure, or null. */
  reason: string | null;
  /** The zone whose keys signed the answer, when one did. */
  signer: string | null;
  /**
   * Why the status could not be decided for want of an answer (the RRset or
   * a DS or DNSKEY of its chain could not be fetched): the lookup's error.
   * Its finding is then `unknown`, never a verdict on the domain. Null when
   * every question was answered.
   */
  error: { code: ErrorCode; message: string } | null;
}

/** DNSSEC of a domain's mail: its MX RRset, and each MX host's address RRset. */
export interface MailDnssecResult {
  domain: MailDnssecCheck;
  mx: MailDnssecCheck[];
  findings: Finding[];
}

/**
 * Validates, from the trust anchor (the IANA root unless given), the RRsets
 * senders rely on: the domain's MX records and each MX host's A records.
 * DANE (RFC 7672 §2.2) needs both the MX RRset and the host's TLSA records
 * to be secure; a bogus answer is one validating resolvers refuse, so mail
 * to it is deferred.
 */
export async function checkMailDnssec(ctx: EngineContext, domain: string, mxHosts: readonly string[], trustAnchors?: TrustAnchor): Promise<MailDnssecResult> {
  const options = trustAnchors ? { trustAnchors } : {};
  const check = async (name: string, type: 'MX' | 'A'): Promise<MailDnssecCheck> => {
    try {
      const verdict = await validateRrset(ctx, name, type, options);
      const signer = verdict.chain.at(-1)?.signer ?? null;
      // A chain question that got no answer leaves the status undecided: that is "could not check", not a verdict.
      return { name, type, status: verdict.status, reason: verdict.reason, signer, error: verdict.error };
    } catch (error) {
      // The question itself got no answer; a name that cannot be asked (invalid_input) is undecided, not unchecked.
      const failure = toNetintelError(error);
      const unanswered = failure.code !== 'invalid_input' && failure.code !== 'usage' && failure.code !== 'internal';
      return { name, type, status: 'indeterminate', reason: failure.message, signer: null, error: unanswered ? { code: failure.code, message: failure.message } : null };
    }
  };
  const [own, ...hosts] = await Promise.all([check(domain, 'MX'), ...mxHosts.map((host) => check(host, 'A'))]);
  const findings: Finding[] = [judge(own!, 'domain'), ...hosts.map((host) => judge(host, 'mx'))];
  return { domain: own!, mx: hosts, findings };
}

const IDS = {
  domain: { secure: 'dnssec_domain_secure', insecure: 'dnssec_domain_unsigned', bogus: 'dnssec_domain_bogus', indeterminate: 'dnssec_domain_indeterminate', unchecked: 'dnssec_domain_unchecked' },
  mx: { secure: 'dnssec_mx_secure', insecure: 'dnssec_mx_unsigned', bogus: 'dnssec_mx_bogus', indeterminate: 'dnssec_mx_indeterminate', unchecked: 'dnssec_mx_unchecked' },
} as const;

function judge(check: MailDnssecCheck, of: 'domain' | 'mx'): Finding {
  const subject = `${check.name} ${check.type}`;
  const evidence = { name: check.name, type: check.type, status: check.status, reason: check.reason };
  if (check.error) {
    return finding(IDS[of].unchecked, 'unknown', `${subject}: DNSSEC could not be checked: ${failureReason(check.error.code)} (${check.error.code})`, null, { ...evidence, error: check.error });
  }
  const id = IDS[of][check.status];
  switch (check.status) {
    case 'secure':
      return finding(id, 'pass', `${subject} is signed and validates`, 'RFC 4035 §5', evidence);
    case 'insecure':
      return finding(id, 'info', `${subject} is not protected by DNSSEC (${check.reason}): answers can be forged, and DANE cannot be used`, 'RFC 7672 §2.2', evidence);
    case 'bogus':
      return finding(id, 'error', `${subject} fails DNSSEC validation (${check.reason}): validating resolvers answer SERVFAIL and mail is deferred`, 'RFC 4035 §5.5', evidence);
    default:
      return finding(id, 'warning', `${subject}: DNSSEC status cannot be decided (${check.reason})`, 'RFC 4033 §5', evidence);
  }
}
