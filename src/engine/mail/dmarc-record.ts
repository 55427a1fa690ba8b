/**
 * The DMARC policy record (RFC 9989 §4.7, which obsoletes RFC 7489): which
 * TXT strings are records, their tags, and the policy tags a receiver
 * applies them with.
 */

export type DmarcPolicy = 'none' | 'quarantine' | 'reject';

/** The tags of a DMARC record as written, null when absent. pct, rf and ri are RFC 7489's, gone from RFC 9989. */
export interface DmarcTags {
  v: string | null;
  p: string | null;
  sp: string | null;
  np: string | null;
  psd: string | null;
  t: string | null;
  pct: string | null;
  rua: string | null;
  ruf: string | null;
  adkim: string | null;
  aspf: string | null;
  fo: string | null;
  rf: string | null;
  ri: string | null;
}

export const DMARC_TAG_NAMES = ['v', 'p', 'sp', 'np', 'psd', 't', 'pct', 'rua', 'ruf', 'adkim', 'aspf', 'fo', 'rf', 'ri'] as const;
export const DMARC_POLICIES: readonly string[] = ['none', 'quarantine', 'reject'];

/**
 * A TXT string that is a DMARC record: `v=DMARC1` first, the value exact;
 * the tag name and the space around `=` as the ABNF allows (RFC 9989 §4.7).
 */
export function isDmarcRecord(text: string): boolean {
  return /^[vV][ \t]*=[ \t]*DMARC1[ \t]*(;|$)/.test(text);
}

/** A TXT string that mentions DMARC1 without being a record, which receivers ignore. */
export function looksLikeDmarcRecord(text: string): boolean {
  return !isDmarcRecord(text) && /v\s*=\s*dmarc1/i.test(text);
}

export interface DmarcTagProblem {
  id: string;
  severity: 'error' | 'warning' | 'info';
  message: string;
  evidence: Record<string, unknown>;
}

export function emptyDmarcTags(): DmarcTags {
  return Object.fromEntries(DMARC_TAG_NAMES.map((tag) => [tag, null])) as unknown as DmarcTags;
}

/** The tags of a record (names lower-cased, the first of a repeated tag kept) and what is wrong with its syntax. */
export function parseDmarcTags(record: string): { tags: DmarcTags; problems: DmarcTagProblem[] } {
  const tags = emptyDmarcTags() as unknown as Record<string, string | null>;
  const problems: DmarcTagProblem[] = [];
  const seen = new Set<string>();
  const parts = record.split(';').map((part) => part.trim());
  parts.forEach((part, index) => {
    if (part.length === 0) return;
    const eq = part.indexOf('=');
    if (eq <= 0) {
      problems.push({ id: 'dmarc_syntax_error', severity: 'error', message: `"${part}" is not a tag=value pair`, evidence: { part } });
      return;
    }
    const tag = part.slice(0, eq).trim().toLowerCase();
    const value = part.slice(eq + 1).trim();
    if (seen.has(tag)) {
      problems.push({ id: 'dmarc_duplicate_tag', severity: 'error', message: `The tag "${tag}" appears more than once`, evidence: { tag } });
      return;
    }
    seen.add(tag);
    if (!(DMARC_TAG_NAMES as readonly string[]).includes(tag)) {
      problems.push({ id: 'dmarc_unknown_tag', severity: 'warning', message: `Unknown tag "${tag}" (ignored by receivers)`, evidence: { tag, value } });
      return;
    }
    if (tag === 'p' && index !== 1) {
      // RFC 9989 lets the tags after v come in any order; RFC 7489's grammar put p second.
      problems.push({ id: 'dmarc_policy_not_second', severity: 'info', message: 'The p tag does not follow v=DMARC1: RFC 9989 allows it, receivers that follow RFC 7489 may not', evidence: { position: index + 1 } });
    }
    tags[tag] = value;
  });
  return { tags: tags as unknown as DmarcTags, problems };
}

/** The psd tag of a record, lower case, or null. */
export function psdOf(tags: DmarcTags): 'y' | 'n' | 'u' | null {
  const value = tags.psd?.toLowerCase() ?? null;
  return value === 'y' || value === 'n' || value === 'u' ? value : null;
}

// A reporting URI (RFC 9989 §4.8): a scheme, ":", then URI characters, an obsolete "!size" suffix allowed.
const REPORTING_URI = /^[a-z][a-z0-9+.-]*:(?:[a-z0-9\-._~:/?#[\]@$&'()*+;=]|%[0-9a-f]{2})*$/i;

/** True when rua lists at least one syntactically valid reporting URI. */
export function hasReportingUri(tags: DmarcTags): boolean {
  return (tags.rua ?? '').split(',').some((uri) => REPORTING_URI.test(uri.trim().replace(/![0-9]+[kmgt]?$/i, '')));
}

/** The policy tags a record is applied with. */
export interface DmarcPolicyTags {
  p: DmarcPolicy;
  sp: DmarcPolicy | null;
  np: DmarcPolicy | null;
}

/**
 * RFC 9989 §4.10.1 (as RFC 7489 §6.6.3 before it): a record without a valid
 * p, or with an invalid sp or np, is applied as p=none when its rua holds a
 * valid reporting URI, and not at all (null) otherwise.
 */
export function dmarcPolicyTags(tags: DmarcTags): DmarcPolicyTags | null {
  const policy = (value: string | null) => (value === null ? null : value.toLowerCase());
  const [p, sp, np] = [policy(tags.p), policy(tags.sp), policy(tags.np)];
  const validOrAbsent = (value: string | null) => value === null || DMARC_POLICIES.includes(value);
  if (p !== null && DMARC_POLICIES.includes(p) && validOrAbsent(sp) && validOrAbsent(np)) {
    return { p: p as DmarcPolicy, sp: sp as DmarcPolicy | null, np: np as DmarcPolicy | null };
  }
  return hasReportingUri(tags) ? { p: 'none', sp: null, np: null } : null;
}

/** t=y: the record is in testing mode (RFC 9989 §4.7), its policy applied one level lower. */
export function inTestingMode(tags: DmarcTags): boolean {
  return tags.t?.toLowerCase() === 'y';
}

const ONE_LEVEL_DOWN: Record<DmarcPolicy, DmarcPolicy> = { reject: 'quarantine', quarantine: 'none', none: 'none' };

/**
 * The policy for mail from a domain (RFC 9989 §4.10.1, §4.7): p when the
 * record is the domain's own; for a record found above it, np when the
 * domain does not exist, else sp, each falling back to p; with t=y, one
 * level below.
 */
export function appliedDmarcPolicy(tags: DmarcTags, policyTags: DmarcPolicyTags, inherited: boolean, domainExists: boolean): DmarcPolicy {
  let policy = policyTags.p;
  if (inherited) policy = (!domainExists && policyTags.np) || policyTags.sp || policyTags.p;
  return inTestingMode(tags) ? ONE_LEVEL_DOWN[policy] : policy;
}
