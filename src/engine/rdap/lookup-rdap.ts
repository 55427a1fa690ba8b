import { NetintelError, toNetintelError } from '../../errors.js';
import { isIpAddress, parseIpAddress, quoteInput } from '../address/ip-address.js';
import { addressText, parseIpRange } from '../address/ip-range.js';
import { isAsnText } from '../asn/lookup-asn.js';
import type { EngineContext } from '../context.js';
import { normaliseDomain } from '../dns/dns-name.js';
import { finding, type Finding } from '../findings.js';
import { failureJson } from '../mail/mail-errors.js';
import type { HttpsConnectOptions } from '../http/guarded-get.js';
import { asnServers, domainServers, loadBootstrap, networkServers } from './rdap-bootstrap.js';
import { fetchRdap, type RdapAnswer } from './rdap-fetch.js';
import { mergeParts, readAnswer, relatedLink, type RdapObject, type RdapParts, type RdapResult } from './rdap-record.js';

export interface RdapOptions {
  /** A domain expiring within this many days is a warning (`rdap_domain_expires_soon`). Default 30. */
  expiryDays?: number;
  /** How the HTTPS fetches connect (a test CA to trust); default the system's roots and each URL's port. */
  connect?: HttpsConnectOptions;
}

/** What to ask and where: the object, the path of RFC 9082 §3.1 under a base URL, the base URLs the bootstrap gives. */
interface RdapQuery {
  query: string;
  object: RdapObject;
  path: string;
  servers: string[];
}

/** Answers followed after the registry's: the registrar's record of a domain (RFC 9083 §4.2 `related`), one hop, as registries and registrars are two levels. */
const MAX_REFERRALS = 1;
const DEFAULT_EXPIRY_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Reads an RDAP target: an AS number (`AS64496`, `64496`), an address, a
 * CIDR block, or a domain name, and finds the servers that answer for it in
 * the bootstrap files (RFC 9224).
 *
 * @throws NetintelError `invalid_input` for text that is none of these,
 *   `not_found` when no bootstrap service covers it, `data_unavailable`
 *   when a bootstrap file cannot be read.
 */
export function rdapQuery(input: string, dataDir: string | null): RdapQuery {
  const text = input.trim();
  if (isAsnText(text)) {
    const asn = Number(text.replace(/^as/i, ''));
    return covered({ query: `AS${asn}`, object: 'autnum', path: `autnum/${asn}`, servers: asnServers(loadBootstrap('asn', dataDir), asn) });
  }
  if (text.includes('/')) {
    const range = parseIpRange(text);
    if (range.form !== 'cidr') throw new NetintelError('invalid_input', `${quoteInput(input)} is not a CIDR block: write one such as 192.0.2.0/24`, { details: { input } });
    const query = `${addressText(range.version, range.first)}/${range.prefix_length}`;
    const file = loadBootstrap(range.version === 4 ? 'ipv4' : 'ipv6', dataDir);
    return covered({ query, object: 'ip network', path: `ip/${query}`, servers: networkServers(file, range.version, range.first, range.last) });
  }
  if (isIpAddress(text)) {
    const address = parseIpAddress(text);
    const value = parseIpRange(`${address.text}/${address.version === 4 ? 32 : 128}`).first;
    const file = loadBootstrap(address.version === 4 ? 'ipv4' : 'ipv6', dataDir);
    return covered({ query: address.text, object: 'ip network', path: `ip/${address.text}`, servers: networkServers(file, address.version, value, value) });
  }
  const domain = normaliseDomain(text).ascii.toLowerCase().replace(/\.$/, '');
  if (!domain.includes('.')) {
    throw new NetintelError('invalid_input', `${quoteInput(input)} is not an IP address, CIDR block, AS number or domain name (a domain has at least two labels)`, { details: { input } });
  }
  return covered({ query: domain, object: 'domain', path: `domain/${domain}`, servers: domainServers(loadBootstrap('dns', dataDir), domain) });
}

function covered(query: RdapQuery): RdapQuery {
  if (query.servers.length === 0) {
    throw new NetintelError('not_found', `no RDAP server is known for ${query.query}: the bootstrap files have no HTTPS service covering it (run netintel data update to get IANA's current ones)`, {
      details: { query: query.query },
    });
  }
  return query;
}

/** The URL of `path` under a base URL (RFC 9224 §3: base URLs end with a slash; one is added when missing). */
export function rdapUrl(base: string, path: string): string {
  return `${base.endsWith('/') ? base : `${base}/`}${path}`;
}

/**
 * The registration of an address, network, AS number or domain from RDAP
 * (RFC 9082, RFC 9083): the bootstrap file's server (RFC 9224), then for a
 * domain the registrar's record its `related` link names. A referral that
 * fails leaves the registry's record, with an `unknown` finding saying what
 * was not read.
 *
 * @throws NetintelError as {@link rdapQuery}, and as fetchRdap for the
 *   registry's answer (`not_found` for its 404).
 */
export async function lookupRdap(ctx: EngineContext, input: string, options: RdapOptions = {}): Promise<RdapResult> {
  const query = rdapQuery(input, ctx.dataDir);
  const registry = await registryAnswer(ctx, query, options.connect);
  const mismatch = answerMismatch(registry.json, query);
  if (mismatch !== null) throw new NetintelError('upstream', `the RDAP server at ${new URL(registry.url).host} ${mismatch}`, { details: { url: registry.url } });
  const sources = [{ url: registry.url, cached: registry.cached }];
  let parts = readAnswer(registry.json);
  const findings: Finding[] = [];
  if (query.object === 'domain') {
    const referral = await followReferral(ctx, registry, query, options.connect);
    if (referral.answer !== null) {
      sources.push({ url: referral.answer.url, cached: referral.answer.cached });
      parts = mergeParts(parts, readAnswer(referral.answer.json));
    }
    if (referral.failure !== null) findings.push(referral.failure);
  }
  const daysUntilExpiry = query.object === 'domain' && parts.expires !== null ? daysUntil(Date.parse(parts.expires), ctx.now()) : null;
  const result: RdapResult = { kind: 'rdap', target: query.query, object: query.object, ...parts, days_until_expiry: daysUntilExpiry, sources, findings };
  findings.push(...rdapFindings(result, options.expiryDays ?? DEFAULT_EXPIRY_DAYS));
  return result;
}

/** Failures of one server that another server of the same service may not share. */
const TRY_NEXT_SERVER = new Set(['unreachable', 'timeout', 'tls']);

/**
 * The registry's answer from the first of the service's servers that
 * answers (RFC 9224 §3 lists several base URLs of one service in no order
 * of preference): one that cannot be reached is passed over; an answer,
 * a 404 included, is final.
 */
async function registryAnswer(ctx: EngineContext, query: RdapQuery, connect: HttpsConnectOptions | undefined): Promise<RdapAnswer> {
  let failure: unknown;
  for (const server of query.servers) {
    try {
      return await fetchRdap(ctx, rdapUrl(server, query.path), connect);
    } catch (error) {
      failure = error;
      if (!(error instanceof NetintelError) || !TRY_NEXT_SERVER.has(error.code)) throw error;
    }
  }
  throw failure;
}

/** Whole days left until `at`; once passed, minus the whole days since (at least 1), so a negative count always means expired. */
export function daysUntil(at: number, now: Date): number {
  const left = at - now.getTime();
  return left >= 0 ? Math.floor(left / DAY_MS) : -Math.max(1, Math.floor(-left / DAY_MS));
}

async function followReferral(
  ctx: EngineContext,
  registry: RdapAnswer,
  query: RdapQuery,
  connect: HttpsConnectOptions | undefined,
): Promise<{ answer: RdapAnswer | null; failure: Finding | null }> {
  let link = relatedLink(registry.json);
  let answer: RdapAnswer | null = null;
  for (let hop = 0; hop < MAX_REFERRALS && link !== null; hop++) {
    let href: string;
    try {
      href = new URL(link, registry.url).href;
    } catch {
      return { answer, failure: referralFailure(link, new NetintelError('upstream', `the registry's related link ${quoteInput(link)} is not a URL`)) };
    }
    if (href === registry.url || href === answer?.url) break;
    if (!href.startsWith('https://')) {
      return { answer, failure: referralFailure(href, new NetintelError('upstream', `the registrar's RDAP link ${href} is not HTTPS; it was not followed`)) };
    }
    let next: RdapAnswer;
    try {
      next = await fetchRdap(ctx, href, connect);
    } catch (error) {
      return { answer, failure: referralFailure(href, toNetintelError(error)) };
    }
    const mismatch = answerMismatch(next.json, query);
    if (mismatch !== null) return { answer, failure: referralFailure(href, new NetintelError('upstream', `the registrar's server ${mismatch}`)) };
    answer = next;
    link = relatedLink(answer.json);
  }
  return { answer, failure: null };
}

const OBJECT_NAMES: Record<RdapObject, string> = { domain: 'a domain', 'ip network': 'an IP network', autnum: 'an AS number' };

/**
 * Why an answer is not the record asked for, or null: it must be of the
 * object class asked (RFC 9083 §4.7: every object carries its
 * `objectClassName`) and, for a domain, name the domain asked in its
 * `ldhName` when it gives one; an AS number must fall in the autnum's range.
 * Another object's record would be shown, expiry and all, as this one's.
 */
function answerMismatch(json: Record<string, unknown>, query: RdapQuery): string | null {
  const kind = json.objectClassName;
  if (kind !== query.object) return `answered with ${typeof kind === 'string' ? `an ${JSON.stringify(kind.slice(0, 40))} object` : 'no objectClassName'}, not ${OBJECT_NAMES[query.object]}`;
  if (query.object === 'domain' && typeof json.ldhName === 'string') {
    const named = json.ldhName.toLowerCase().replace(/\.$/, '');
    if (named !== query.query) return `answered about ${JSON.stringify(json.ldhName.slice(0, 100))}, not ${JSON.stringify(query.query)}`;
  }
  if (query.object === 'autnum') {
    const asn = Number(query.query.slice(2));
    const { startAutnum: first, endAutnum: last } = json;
    if ((typeof first === 'number' && asn < first) || (typeof last === 'number' && asn > last)) return `answered about AS${String(first)} to AS${String(last)}, not ${query.query}`;
  }
  return null;
}

function referralFailure(url: string, error: NetintelError): Finding {
  return finding(
    'rdap_referral_failed',
    'unknown',
    `the registrar's record could not be read (${error.message}); what follows is the registry's alone`,
    'RFC 9083 §4.2',
    { url, error: failureJson(error) },
  );
}

/** The findings of a record: the expiry of a domain (or that it could not be checked), a missing abuse contact, withheld fields. */
export function rdapFindings(record: Omit<RdapResult, 'findings'>, expiryDays: number): Finding[] {
  const findings: Finding[] = [];
  const days = record.days_until_expiry;
  if (days !== null && record.expires !== null) {
    if (days < 0) {
      findings.push(finding('rdap_domain_expired', 'error', `${record.target} expired on ${record.expires.slice(0, 10)}, ${-days} day${days === -1 ? '' : 's'} ago`, 'RFC 9083 §4.5', { expires: record.expires, days_until_expiry: days }));
    } else if (days <= expiryDays) {
      findings.push(
        finding('rdap_domain_expires_soon', 'warning', `${record.target} expires on ${record.expires.slice(0, 10)}, in ${days} day${days === 1 ? '' : 's'} (within ${expiryDays})`, 'RFC 9083 §4.5', {
          expires: record.expires,
          days_until_expiry: days,
          expiry_days: expiryDays,
        }),
      );
    }
  } else if (record.object === 'domain') {
    // Without it --fail-on would pass a domain whose expiry no one checked.
    findings.push(finding('rdap_expiry_unknown', 'unknown', 'the registry gives no expiration date; expiry was not checked', 'RFC 9083 §4.5', null));
  }
  if (record.abuse.email === null && record.abuse.phone === null) {
    const withheld = record.redacted.some((name) => name.startsWith('abuse.'));
    findings.push(
      finding('rdap_no_abuse_contact', 'info', withheld ? 'the abuse contact is withheld (redacted)' : 'the registration names no abuse contact with an e-mail address or phone number', 'RFC 9083 §10.2.4', null),
    );
  }
  if (record.redacted.length > 0) {
    findings.push(finding('rdap_redacted', 'info', `the registry withheld ${record.redacted.length} field${record.redacted.length === 1 ? '' : 's'}: ${record.redacted.join(', ')}`, 'RFC 9537', { redacted: record.redacted }));
  }
  return findings;
}
