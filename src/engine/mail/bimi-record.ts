import type { Severity } from '../findings.js';

/** The draft BIMI is specified in; finding sections cite it. */
export const BIMI_DRAFT = 'draft-brand-indicators-for-message-identification-10';

/** The tags of a BIMI Assertion Record as written, null when absent (draft §4.3). */
export interface BimiTags {
  v: string | null;
  /** Location of the SVG Indicator; empty means declined. */
  l: string | null;
  /** Authority evidence location (the VMC or CMC); absent means empty. */
  a: string | null;
  /** Local-part selectors (`true` or `false`). */
  lps: string | null;
  /** Avatar preference (`brand` or `personal`). */
  avp: string | null;
}

/** One problem of a record, turned into a finding by the check. */
export interface BimiRecordProblem {
  id: string;
  severity: Severity;
  message: string;
  /** Section of the BIMI draft. */
  section: string;
  evidence: Record<string, unknown>;
}

/** A parsed BIMI Assertion Record. */
export interface BimiRecord {
  tags: BimiTags;
  /** The l= URL when it is a valid HTTPS URL, else null. */
  location: string | null;
  /** The a= URL when it is a valid HTTPS URL, else null. */
  authority: string | null;
  /** Both l= and a= empty: an explicit declination to publish (draft §4.3.1). */
  declined: boolean;
  problems: BimiRecordProblem[];
}

const KNOWN_TAGS = ['v', 'l', 'a', 'lps', 'avp'] as const;
/** Image types other than SVG: an l= ending in one of these is a permanent error (draft §4.3.2). */
const OTHER_IMAGE_SUFFIX = /\.(png|jpe?g|gif|webp|bmp|ico|tiff?|avif|heic)$/i;

/** True when a TXT record is a BIMI record: it starts with `v=BIMI1`, exactly (draft §4.3, §7.2 step 4). */
export function isBimiRecord(text: string): boolean {
  return /^v[ \t]*=[ \t]*BIMI1[ \t]*(;|$)/.test(text);
}

/**
 * Parses a BIMI Assertion Record (draft §4.3): DKIM-style tag=value pairs
 * separated by `;`, `v=BIMI1` first, `l=` required (empty: declined), `a=`
 * optional, `lps=` and `avp=` optional; unknown tags are ignored. Never
 * throws: every problem is listed.
 */
export function parseBimiRecord(text: string): BimiRecord {
  const tags: Record<string, string | null> = Object.fromEntries(KNOWN_TAGS.map((tag) => [tag, null]));
  const problems: BimiRecordProblem[] = [];
  const seen = new Set<string>();
  const parts = text.split(';');
  parts.forEach((raw, index) => {
    const part = raw.trim();
    if (part.length === 0) return;
    const eq = part.indexOf('=');
    if (eq <= 0) {
      problems.push({ id: 'bimi_syntax_error', severity: 'error', message: `"${part}" is not a tag=value pair`, section: '§4.3', evidence: { part } });
      return;
    }
    const tag = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(tag)) {
      problems.push({ id: 'bimi_syntax_error', severity: 'error', message: `"${tag}" is not a valid tag name`, section: '§4.3', evidence: { part } });
      return;
    }
    if (seen.has(tag)) {
      problems.push({ id: 'bimi_duplicate_tag', severity: 'error', message: `The tag "${tag}" appears more than once`, section: '§4.3', evidence: { tag } });
      return;
    }
    seen.add(tag);
    if (index === 0 && tag !== 'v') {
      problems.push({ id: 'bimi_version_not_first', severity: 'error', message: 'The record must start with v=BIMI1', section: '§4.3', evidence: { tag } });
    }
    // Tags are matched exactly: receivers must not fix capitalization (draft §4.3).
    if (!(KNOWN_TAGS as readonly string[]).includes(tag)) {
      problems.push({ id: 'bimi_unknown_tag', severity: 'info', message: `Unknown tag "${tag}" (ignored by receivers)`, section: '§4.3', evidence: { tag, value } });
      return;
    }
    tags[tag] = value;
  });

  const record: BimiRecord = { tags: tags as unknown as BimiTags, location: null, authority: null, declined: false, problems };
  if (tags.v !== 'BIMI1') {
    problems.push({ id: 'bimi_version_invalid', severity: 'error', message: `The version is ${tags.v === null ? 'missing' : `"${tags.v}"`}; it must be exactly BIMI1`, section: '§4.3', evidence: { v: tags.v } });
  }
  const l = tags.l ?? null;
  const a = tags.a ?? '';
  if (l === null) {
    problems.push({ id: 'bimi_location_missing', severity: 'error', message: 'The record has no l= tag (the logo location); it is required, empty to decline', section: '§4.3', evidence: {} });
  } else if (l === '' && a === '') {
    record.declined = true;
  } else if (l === '') {
    problems.push({
      id: 'bimi_location_empty',
      severity: 'warning',
      message: 'l= is empty but a= is not: receivers that do not read the certificate find no logo',
      section: '§4.3, §7.3',
      evidence: { a },
    });
  } else {
    const problem = httpsUrlProblem(l);
    if (problem !== null) {
      problems.push({ id: 'bimi_location_invalid', severity: 'error', message: `l=${l}: ${problem}`, section: '§4.3, §7.3', evidence: { l } });
    } else if (OTHER_IMAGE_SUFFIX.test(new URL(l).pathname)) {
      problems.push({ id: 'bimi_location_not_svg', severity: 'error', message: `l=${l} names another image type; only SVG is supported`, section: '§4.3.2', evidence: { l } });
    } else {
      record.location = l;
    }
  }
  if (a !== '') {
    const problem = httpsUrlProblem(a);
    if (problem !== null) problems.push({ id: 'bimi_authority_invalid', severity: 'error', message: `a=${a}: ${problem}`, section: '§4.3', evidence: { a } });
    else record.authority = a;
  }
  if (tags.lps !== null && tags.lps !== 'true' && tags.lps !== 'false') {
    problems.push({ id: 'bimi_lps_invalid', severity: 'warning', message: `lps=${tags.lps} is not true or false`, section: '§4.3', evidence: { lps: tags.lps } });
  }
  if (tags.avp !== null && tags.avp !== 'brand' && tags.avp !== 'personal') {
    problems.push({ id: 'bimi_avp_invalid', severity: 'warning', message: `avp=${tags.avp} is not brand or personal; receivers ignore it`, section: '§4.3', evidence: { avp: tags.avp } });
  }
  return record;
}

/** Why a tag value is not one HTTPS URL with a host name (draft §4.3), or null when it is. */
export function httpsUrlProblem(value: string): string | null {
  if (value.includes(',')) return 'holds a comma: one URL only (commas inside it must be percent-encoded)';
  if (/\s/.test(value)) return 'holds white space';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:') return `uses ${url.protocol.replace(/:$/, '')}; only HTTPS is allowed`;
  const host = url.hostname;
  if (host.length === 0 || host.startsWith('[') || /^[\d.]+$/.test(host) || !host.includes('.')) return 'must name a fully qualified domain, not an address';
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password';
  return null;
}
