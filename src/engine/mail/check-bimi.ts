import type { EngineContext } from '../context.js';
import { byteSizeText } from '../../byte-size.js';
import { gunzipWithin } from '../http/content-coding.js';
import { guardedGet, HTTPS_FETCH_KINDS, redirectsOf, type HttpsConnectOptions, type HttpsDocument, type HttpsFetchKind } from '../http/guarded-get.js';
import { reportStage } from '../stage.js';
import { normaliseMailDomain } from './mail-domain.js';
import { finding, leavesPartUnchecked, type Finding } from '../findings.js';
import { NetintelError } from '../../errors.js';
import { createMailDns, dnsNameProblem, type MailDns } from './mail-dns.js';
import { failureJson, failureText, isUnansweredLookup, withContext, type FailureJson } from './mail-errors.js';
import { checkDmarc, type DmarcPolicy, type DmarcResult } from './check-dmarc.js';
import { inTestingMode } from './dmarc-record.js';
import { isBimiRecord, parseBimiRecord, type BimiTags } from './bimi-record.js';
import { BIMI_CITE, checkSvgIndicator, type SvgFacts } from './bimi-svg.js';
import { readMarkCertificate, type MarkCertificate } from './bimi-certificate.js';

/**
 * `none`: no record; `declined`: an explicit declination (l= and a= empty);
 * `fail`: a record with an error finding (record, DMARC prerequisites,
 * logo, certificate); `unknown`: a record without one, a part of whose check
 * could not run for want of DNS answers (its DMARC prerequisites, the host of
 * its logo or certificate); `pass`: a record with neither.
 */
export type BimiStatus = 'none' | 'declined' | 'fail' | 'unknown' | 'pass';

/** The DMARC prerequisites of BIMI (draft §7.1), read from the DMARC checks. */
export interface BimiDmarcPrerequisites {
  /** True when every prerequisite holds; null when DMARC could not be looked up. */
  met: boolean | null;
  /** Where the DMARC record of the domain is (`_dmarc.<domain>` or a parent's). */
  location: string | null;
  /** The policy that applies to mail from the domain. */
  policy: DmarcPolicy | null;
  percent: number | null;
  /** The organisational domain's own p= and sp= (the same record when the domain is the organisational domain). */
  organisational_policy: string | null;
  subdomain_policy: string | null;
  error: FailureJson | null;
}

/** The SVG Indicator as fetched and checked. */
export interface BimiLogo {
  url: string;
  /** The URL that answered (after redirects); null when the fetch failed. */
  final_url: string | null;
  /** Each URL redirected to, in order, also when the fetch then failed. */
  redirects: string[];
  content_type: string | null;
  /** Octets of the logo as read, after any Content-Encoding is undone (the cap when `truncated`). */
  octets: number | null;
  truncated: boolean;
  /** True when the body was gzip (SVGZ). */
  compressed: boolean;
  svg: SvgFacts | null;
  error: FailureJson | null;
}

/** The Mark Certificate (a=) as fetched and read; no chain validation. */
export interface BimiCertificate {
  url: string;
  octets: number | null;
  certificate: MarkCertificate | null;
  error: FailureJson | null;
}

/** The BIMI check of one domain and selector. */
export interface BimiResult {
  kind: 'bimi';
  domain: string;
  domain_unicode: string;
  selector: string;
  status: BimiStatus;
  /** The organisational domain: the DMARC policy domain above the domain, or the domain itself. */
  organisational_domain: string;
  /** Where the record used was found (`<selector>._bimi.<domain>` or the organisational domain's). */
  location: string | null;
  /** True when the record is the organisational domain's (draft §7.2 step 6). */
  inherited: boolean;
  record: string | null;
  /** Every BIMI record at the location (more than one means none applies). */
  records: string[];
  tags: BimiTags | null;
  dmarc: BimiDmarcPrerequisites;
  logo: BimiLogo | null;
  certificate: BimiCertificate | null;
  findings: Finding[];
}

/** How the BIMI fetches connect (port, trusted CAs); tests point them at a local HTTPS server. */
export type BimiFetchOptions = HttpsConnectOptions;

export interface CheckBimiOptions {
  /** The BIMI selector (draft §4.4); default `default`. */
  selector?: string;
  dns?: MailDns;
  fetch?: BimiFetchOptions;
}

/** The draft's recommended largest Indicator (§7.6); reading stops beyond it. */
export const MAX_SVG_OCTETS = HTTPS_FETCH_KINDS.bimiLogo.maxOctets;
/** The most an SVGZ logo may hold once decompressed: four times the cap on what is read. */
export const MAX_SVGZ_OCTETS = 4 * MAX_SVG_OCTETS;
const MAX_CERTIFICATE_OCTETS = HTTPS_FETCH_KINDS.bimiCertificate.maxOctets;
const cite = (section: string) => `${BIMI_CITE} ${section}`;

/**
 * Checks BIMI for `domain` (draft-brand-indicators-for-message-identification-10):
 * the Assertion Record at `<selector>._bimi.<domain>`, else at the
 * organisational domain (§7.2); its tags (§4.3); the DMARC prerequisites on
 * the domain and its organisational domain (§7.1: p=quarantine or reject,
 * pct=100, no sp=none), from checkDmarc; the SVG Indicator fetched over
 * HTTPS through the context's connect guard and checked against SVG Tiny
 * PS basics (§7.5, §7.6); the Mark Certificate at a= fetched and its first
 * certificate read (no chain validation).
 *
 * @throws NetintelError `invalid_input` for a bad domain or selector;
 *   `timeout`, `upstream`, `unreachable` when the `_bimi` lookup fails (never
 *   read as "no record"). DMARC, logo and certificate failures are findings.
 */
export async function checkBimi(ctx: EngineContext, domain: string, options: CheckBimiOptions = {}): Promise<BimiResult> {
  const name = normaliseMailDomain(domain);
  const selector = normaliseSelector(options.selector ?? 'default');
  const dns = options.dns ?? createMailDns(ctx);
  const findings: Finding[] = [];

  const prerequisites = await dmarcPrerequisites(ctx, dns, name.ascii, findings);
  const organisationalDomain = prerequisites.organisational_domain;
  const result: BimiResult = {
    kind: 'bimi',
    domain: name.ascii,
    domain_unicode: name.unicode,
    selector,
    status: 'none',
    organisational_domain: organisationalDomain,
    location: null,
    inherited: false,
    record: null,
    records: [],
    tags: null,
    dmarc: prerequisites.summary,
    logo: null,
    certificate: null,
    findings,
  };

  const candidates = organisationalDomain === name.ascii ? [name.ascii] : [name.ascii, organisationalDomain];
  const asked: string[] = [];
  for (const candidate of candidates) {
    const location = `${selector}._bimi.${candidate}`;
    const problem = dnsNameProblem(location);
    if (problem !== null) throw new NetintelError('invalid_input', `${location} is not a valid DNS name: ${problem}`, { details: { name: location } });
    asked.push(location);
    let texts: string[];
    try {
      texts = (await dns.lookup(location, 'TXT')).records.map((record) => record.text);
    } catch (error) {
      throw withContext(error, `the BIMI lookup of ${location} failed`);
    }
    const records = texts.filter(isBimiRecord);
    for (const text of texts.filter((item) => !records.includes(item) && /v\s*=\s*bimi1/i.test(item))) {
      findings.push(finding('bimi_version_not_first', 'error', `A TXT record at ${location} mentions BIMI1 but does not start with "v=BIMI1", so receivers discard it: "${text}"`, cite('§4.3, §7.2'), { location, record: text }));
    }
    if (records.length > 0) {
      result.location = location;
      result.inherited = candidate !== name.ascii;
      result.records = records;
      break;
    }
  }

  if (result.location === null) {
    findings.push(
      finding('bimi_no_record', 'info', `No BIMI record at ${asked.join(' nor at ')}: receivers show no brand logo for ${name.ascii}`, cite('§7.2'), { asked }),
    );
    return finish(result);
  }
  if (result.records.length > 1) {
    findings.push(
      finding('bimi_multiple_records', 'error', `${result.location} holds ${result.records.length} BIMI records; with more than one, receivers use none`, cite('§7.2'), { records: result.records }),
    );
    return finish(result);
  }
  const text = result.records[0]!;
  result.record = text;
  findings.push(finding('bimi_record_found', 'pass', `BIMI record found at ${result.location}`, cite('§4.3'), { location: result.location, record: text }));
  if (result.inherited) {
    findings.push(
      finding('bimi_record_inherited', 'info', `${name.ascii} has no BIMI record of its own for selector ${selector}; the organisational domain's record at ${result.location} applies`, cite('§7.2'), {
        location: result.location,
      }),
    );
  }
  const parsed = parseBimiRecord(text);
  result.tags = parsed.tags;
  for (const problem of parsed.problems) findings.push(finding(problem.id, problem.severity, problem.message, cite(problem.section), { record: text, ...problem.evidence }));
  if (parsed.declined) {
    result.status = 'declined';
    findings.push(finding('bimi_declined', 'info', `The record declines BIMI (l= and a= empty): receivers show no logo for mail using selector ${selector}`, cite('§4.3.1'), { record: text }));
    return result;
  }

  const [logo, certificate] = await Promise.all([
    parsed.location === null ? null : fetchLogo(ctx, dns, parsed.location, options.fetch ?? {}, findings),
    parsed.authority === null ? null : fetchCertificate(ctx, dns, parsed.authority, options.fetch ?? {}, findings),
  ]);
  result.logo = logo;
  result.certificate = certificate;
  if (parsed.authority === null && parsed.problems.every((problem) => problem.id !== 'bimi_authority_invalid')) {
    findings.push(
      finding('bimi_no_certificate', 'info', 'The record has no a= (Mark Certificate): several large mailbox providers show logos only with a VMC or CMC', cite('§4.3, §7.4'), {}),
    );
  }
  return finish(result);
}

/** The selector as a DNS name part (draft §4.4: sub-domain *("." sub-domain)), lower case. */
export function normaliseSelector(selector: string): string {
  const value = selector.trim().toLowerCase().replace(/\.$/, '');
  if (!/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/.test(value)) {
    throw new NetintelError('invalid_input', `${JSON.stringify(selector.slice(0, 80))} is not a BIMI selector: give DNS labels of letters, digits and hyphens, such as default or brand2`, {
      details: { selector },
    });
  }
  return value;
}

function finish(result: BimiResult): BimiResult {
  if (result.status !== 'declined' && result.location !== null) {
    result.status = result.findings.some((item) => item.severity === 'error') ? 'fail' : leavesPartUnchecked(result.findings) ? 'unknown' : 'pass';
  }
  return result;
}

/** The DMARC records that apply, the organisational domain, and the prerequisite findings (draft §7.1 steps 7 to 9). */
async function dmarcPrerequisites(
  ctx: EngineContext,
  dns: MailDns,
  domain: string,
  findings: Finding[],
): Promise<{ organisational_domain: string; summary: BimiDmarcPrerequisites }> {
  const summary: BimiDmarcPrerequisites = { met: null, location: null, policy: null, percent: null, organisational_policy: null, subdomain_policy: null, error: null };
  let own: DmarcResult;
  let organisational: DmarcResult | null = null;
  try {
    own = await checkDmarc(ctx, domain, { dns });
    // A domain with its own record may still sit under an Organizational
    // Domain with one (RFC 9989 §4.10.2, found by the same tree walk).
    const organizationalDomain = own.organizational_domain;
    if (own.record !== null && organizationalDomain !== null && organizationalDomain !== domain && organizationalDomain !== own.policy_domain) {
      const parent = await checkDmarc(ctx, organizationalDomain, { dns });
      if (parent.record !== null && parent.policy_domain === organizationalDomain) organisational = parent;
    }
  } catch (error) {
    summary.error = failureJson(error);
    // Not a verdict: the lookups failed (docs/exit-codes.md: checks that could not run are unknown).
    findings.push(finding('bimi_dmarc_unavailable', 'unknown', `The DMARC prerequisites of BIMI could not be checked: ${failureText(error)}`, cite('§7.1'), { error: summary.error }));
    return { organisational_domain: domain, summary };
  }
  summary.location = own.location;
  summary.policy = own.policy;
  summary.percent = own.percent;
  const organisationalRecord = organisational ?? (own.record === null ? null : own);
  const organisationalDomain = organisationalRecord?.policy_domain ?? domain;
  if (own.record === null) {
    summary.met = false;
    findings.push(
      finding('bimi_dmarc_missing', 'error', `${domain} has no DMARC policy${own.records.length > 1 ? ' that applies (several records)' : ''}; BIMI needs p=quarantine or p=reject`, cite('§7.1'), {
        asked: `_dmarc.${domain}`,
      }),
    );
    return { organisational_domain: organisationalDomain, summary };
  }
  summary.organisational_policy = organisationalRecord!.tags.p?.toLowerCase() ?? null;
  summary.subdomain_policy = organisationalRecord!.tags.sp?.toLowerCase() ?? own.tags.sp?.toLowerCase() ?? null;

  const problems: Finding[] = [];
  if (own.policy !== 'quarantine' && own.policy !== 'reject') {
    problems.push(
      finding('bimi_dmarc_not_enforced', 'error', `The DMARC policy for ${domain} is ${own.policy ?? 'not valid'}; BIMI needs quarantine or reject`, cite('§7.1'), {
        location: own.location,
        policy: own.policy,
      }),
    );
  }
  // An inherited record's applied policy is its sp=; the organisational domain's own p= must be strong too.
  const separateOrganisation = organisational !== null || own.inherited;
  if (separateOrganisation && summary.organisational_policy !== 'quarantine' && summary.organisational_policy !== 'reject') {
    problems.push(
      finding('bimi_dmarc_not_enforced', 'error', `The DMARC policy of the organisational domain ${organisationalDomain} is p=${summary.organisational_policy ?? '(none given)'}; BIMI needs quarantine or reject`, cite('§7.1'), {
        location: organisationalRecord!.location,
        policy: summary.organisational_policy,
      }),
    );
  }
  for (const record of uniqueRecords(own, organisational)) {
    if (record.tags.sp?.toLowerCase() === 'none') {
      problems.push(finding('bimi_dmarc_subdomain_none', 'error', `${record.location} has sp=none; BIMI is not processed while any subdomain policy is none`, cite('§7.1'), { location: record.location, sp: record.tags.sp }));
    }
    const percent = record.tags.pct === null ? 100 : Number(record.tags.pct);
    if (percent !== 100) {
      problems.push(finding('bimi_dmarc_pct', 'error', `${record.location} has pct=${record.tags.pct}; BIMI needs the policy on all mail (pct=100 or no pct)`, cite('§1, §7.1'), { location: record.location, pct: record.tags.pct }));
    }
    // RFC 9989's testing mode took the place of pct below 100: a policy being tried out is not yet enforced (mailauth skips BIMI for it too).
    if (inTestingMode(record.tags)) {
      problems.push(finding('bimi_dmarc_testing', 'error', `${record.location} has t=y: the DMARC policy is in testing mode, and BIMI needs it enforced`, cite('§1, §7.1'), { location: record.location, t: record.tags.t }));
    }
  }
  findings.push(...problems);
  summary.met = problems.length === 0;
  if (summary.met) {
    findings.push(
      finding('bimi_dmarc_enforced', 'pass', `DMARC meets the BIMI prerequisites: ${own.policy} on all mail${separateOrganisation ? `, and ${summary.organisational_policy} on ${organisationalDomain}` : ''}`, cite('§7.1'), {
        location: own.location,
        policy: own.policy,
      }),
    );
  }
  return { organisational_domain: organisationalDomain, summary };
}

function uniqueRecords(own: DmarcResult, organisational: DmarcResult | null): DmarcResult[] {
  return organisational === null || organisational.location === own.location ? [own] : [own, organisational];
}

/** Fetches the logo or the certificate through the engine's guarded GET, naming the wait for the spinner. */
function fetchBimiDocument(ctx: EngineContext, dns: MailDns, connect: BimiFetchOptions, url: string, kind: HttpsFetchKind, stage: string): Promise<HttpsDocument> {
  reportStage(ctx, 'https', url, stage);
  return guardedGet(ctx, { ...kind, url, connect, dns });
}

async function fetchLogo(ctx: EngineContext, dns: MailDns, url: string, options: BimiFetchOptions, findings: Finding[]): Promise<BimiLogo> {
  const logo: BimiLogo = { url, final_url: null, redirects: [], content_type: null, octets: null, truncated: false, compressed: false, svg: null, error: null };
  let fetched: HttpsDocument;
  try {
    fetched = await fetchBimiDocument(ctx, dns, options, url, HTTPS_FETCH_KINDS.bimiLogo, 'BIMI logo');
  } catch (error) {
    logo.redirects = redirectsOf(error);
    logo.error = failureJson(error);
    findings.push(finding('bimi_svg_unavailable', isUnansweredLookup(error) ? 'unknown' : 'error', `The BIMI logo at ${url} could not be fetched: ${failureText(error)}`, cite('§7.5'), { url, error: logo.error }));
    return logo;
  }
  logo.final_url = fetched.final_url;
  logo.redirects = fetched.redirects;
  logo.content_type = fetched.contentType;
  logo.octets = fetched.truncated ? MAX_SVG_OCTETS : fetched.body.length;
  logo.truncated = fetched.truncated;
  if (fetched.truncated) {
    findings.push(
      finding('bimi_svg_too_large', 'error', `The BIMI logo is larger than the ${byteSizeText(MAX_SVG_OCTETS)} limit, the most receivers are advised to accept`, cite('§7.6, §8.3'), {
        url,
        limit: MAX_SVG_OCTETS,
      }),
    );
    return logo;
  }
  let body = fetched.body;
  if (body[0] === 0x1f && body[1] === 0x8b) {
    logo.compressed = true;
    let unzipped: ReturnType<typeof gunzipWithin>;
    try {
      unzipped = gunzipWithin(body, MAX_SVGZ_OCTETS, 'the BIMI logo (SVGZ)');
    } catch (error) {
      findings.push(finding('bimi_svg_not_xml', 'error', (error as Error).message, cite('§4.3.2, §7.6'), { url }));
      return logo;
    }
    if (unzipped.over) {
      // zlib stopped at the cap: a few KiB of gzip can stand for gigabytes.
      findings.push(
        finding('bimi_svg_too_large', 'error', `The BIMI logo is gzip (SVGZ) that decompresses to more than the ${byteSizeText(MAX_SVGZ_OCTETS)} limit`, cite('§7.6, §8.3'), {
          url,
          limit: MAX_SVGZ_OCTETS,
          compressed: true,
        }),
      );
      return logo;
    }
    body = unzipped.body;
  }
  if (!/^image\/svg\+xml\s*(;|$)/i.test(fetched.contentType ?? '')) {
    findings.push(
      finding('bimi_svg_content_type', 'warning', `The BIMI logo is served as ${fetched.contentType ?? 'no Content-Type'}; it should be image/svg+xml`, cite('§4.3.2'), {
        url,
        content_type: fetched.contentType,
      }),
    );
  }
  const checked = checkSvgIndicator(body.toString('utf8'));
  logo.svg = checked.facts;
  for (const problem of checked.problems) findings.push(finding(problem.id, problem.severity, problem.message, problem.rfc, { url, ...problem.evidence }));
  if (checked.problems.every((problem) => problem.severity !== 'error')) {
    findings.push(
      finding('bimi_svg_valid', 'pass', `The BIMI logo (${logo.octets} octets) meets the SVG Tiny PS basics checked: "${checked.facts.title ?? ''}"`, cite('§7.6'), { url, octets: logo.octets }),
    );
  }
  return logo;
}

async function fetchCertificate(ctx: EngineContext, dns: MailDns, url: string, options: BimiFetchOptions, findings: Finding[]): Promise<BimiCertificate> {
  const result: BimiCertificate = { url, octets: null, certificate: null, error: null };
  let fetched: HttpsDocument;
  try {
    fetched = await fetchBimiDocument(ctx, dns, options, url, HTTPS_FETCH_KINDS.bimiCertificate, 'BIMI certificate');
  } catch (error) {
    result.error = failureJson(error);
    findings.push(
      finding('bimi_certificate_unavailable', isUnansweredLookup(error) ? 'unknown' : 'error', `The Mark Certificate at ${url} could not be fetched: ${failureText(error)}`, cite('§4.3, §7.4'), { url, error: result.error }),
    );
    return result;
  }
  result.octets = fetched.truncated ? MAX_CERTIFICATE_OCTETS : fetched.body.length;
  const certificate = fetched.truncated ? null : readMarkCertificate(fetched.body.toString('latin1'));
  if (certificate === null) {
    findings.push(
      finding('bimi_certificate_invalid', 'error', `The file at ${url} ${fetched.truncated ? `is larger than the ${byteSizeText(MAX_CERTIFICATE_OCTETS)} limit` : 'holds no PEM certificate that can be read'}`, cite('§4.3, §7.4'), {
        url,
        octets: result.octets,
      }),
    );
    return result;
  }
  result.certificate = certificate;
  const now = ctx.now();
  findings.push(
    finding(
      'bimi_certificate_found',
      'info',
      `Mark Certificate read (${certificate.certificates} in the file): ${certificate.subject}, issued by ${certificate.issuer}; its chain and signature are not validated`,
      cite('§7.4'),
      { url, subject: certificate.subject, issuer: certificate.issuer, valid_from: certificate.valid_from, valid_to: certificate.valid_to },
    ),
  );
  if (new Date(certificate.valid_to) < now) {
    findings.push(finding('bimi_certificate_expired', 'error', `The Mark Certificate expired on ${certificate.valid_to.slice(0, 10)}`, cite('§7.4'), { valid_to: certificate.valid_to }));
  } else if (new Date(certificate.valid_from) > now) {
    findings.push(finding('bimi_certificate_not_yet_valid', 'error', `The Mark Certificate is valid only from ${certificate.valid_from.slice(0, 10)}`, cite('§7.4'), { valid_from: certificate.valid_from }));
  }
  if (!certificate.logotype) {
    findings.push(
      finding('bimi_certificate_no_logotype', 'warning', 'The first certificate has no logotype extension (1.3.6.1.5.5.7.1.12, RFC 3709): it is not a Mark Certificate carrying the logo', cite('§7.4'), {
        extensions: certificate.extensions,
      }),
    );
  }
  return result;
}
