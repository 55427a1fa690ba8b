import type { EngineContext } from '../context.js';
import { lookupIp } from '../ip/lookup-ip.js';

/** What netintel knows of a report's source address: its network, place, reverse DNS, and the mail provider it belongs to. */
export interface DmarcSource {
  organization: string | null;
  asn: number | null;
  country_code: string | null;
  /** The first PTR name, or null (see `ptr_status`). */
  ptr: string | null;
  /** answer, nodata, nxdomain; `unknown` when the lookup failed (never "no name"); `skipped` with reverse DNS off or past the run's cap. */
  ptr_status: 'answer' | 'nodata' | 'nxdomain' | 'unknown' | 'skipped';
  /** The mail provider whose network the AS data names (Google, Microsoft, ...), or null. */
  known_sender: string | null;
}

/**
 * Mail providers by the organisation the AS data gives their networks: a
 * source in one of them is a provider's server sending for its customers
 * (the domain's own, or anyone else's).
 */
const KNOWN_SENDERS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bgoogle\b/i, 'Google'],
  [/\bmicrosoft\b/i, 'Microsoft'],
  [/\bamazon\b/i, 'Amazon'],
  [/\bsendgrid\b|\btwilio\b/i, 'SendGrid'],
  [/\bmailgun\b|\bsinch\b/i, 'Mailgun'],
  [/\bmailchimp\b|\brocket science group\b|\bintuit\b/i, 'Mailchimp'],
  [/\bsparkpost\b|\bmessagebird\b/i, 'SparkPost'],
  [/\bproofpoint\b/i, 'Proofpoint'],
  [/\bmimecast\b/i, 'Mimecast'],
  [/\bzoho\b/i, 'Zoho'],
  [/\byahoo\b|\boath\b/i, 'Yahoo'],
  [/\bsalesforce\b|\bexacttarget\b/i, 'Salesforce'],
  [/\bhubspot\b/i, 'HubSpot'],
  [/\bfastmail\b/i, 'Fastmail'],
  [/\bpostmark\b|\bactivecampaign\b/i, 'Postmark'],
  [/\bbrevo\b|\bsendinblue\b/i, 'Brevo'],
];

export function knownSender(organization: string | null): string | null {
  if (organization === null) return null;
  return KNOWN_SENDERS.find(([pattern]) => pattern.test(organization))?.[1] ?? null;
}

/**
 * The enrichment of source addresses, once per distinct address (so memory
 * grows with the sources, not the reports): the IP datasets, then the PTR
 * name when reverse DNS is on.
 */
export function createSourceEnrichment(ctx: EngineContext, options: { reverseDns: boolean; maxReverseLookups?: number }): (address: string) => Promise<DmarcSource> {
  const known = new Map<string, Promise<DmarcSource>>();
  const cap = options.maxReverseLookups ?? Number.POSITIVE_INFINITY;
  const resolver = { failuresInARow: 0 };
  return (address) => {
    let source = known.get(address);
    if (source === undefined) {
      source = enrich(ctx, address, options.reverseDns && known.size < cap ? resolver : null);
      known.set(address, source);
    }
    return source;
  };
}

/** Reverse lookups that time out or fail one after another before the run stops asking (the rest are `unknown` at once). */
const FAILURES_BEFORE_GIVING_UP = 64;

async function enrich(ctx: EngineContext, address: string, resolver: { failuresInARow: number } | null): Promise<DmarcSource> {
  let organization: string | null = null;
  let asn: number | null = null;
  let countryCode: string | null = null;
  try {
    const record = lookupIp(ctx, address, 'pread', { evidence: false });
    organization = record.network.organization ?? record.network.isp;
    asn = record.network.asn;
    countryCode = record.location.country_code;
  } catch {
    // Not an address (a report may hold anything) or no dataset: the row stays unenriched, never wrong.
  }
  const ptr = resolver === null ? { ptr: null, ptr_status: 'skipped' as const } : await reverseName(ctx, address, resolver);
  return { organization, asn, country_code: countryCode, ...ptr, known_sender: knownSender(organization) };
}

/**
 * The first PTR name of an address. When the resolvers stop answering, a
 * mailbox of thousands of sources would wait out every lookup's deadline:
 * after FAILURES_BEFORE_GIVING_UP failures in a row the run asks no more.
 */
async function reverseName(ctx: EngineContext, address: string, resolver: { failuresInARow: number }): Promise<Pick<DmarcSource, 'ptr' | 'ptr_status'>> {
  if (resolver.failuresInARow >= FAILURES_BEFORE_GIVING_UP) return { ptr: null, ptr_status: 'unknown' };
  const { lookupPtr } = await import('../dns/reverse-names.js');
  try {
    const result = await lookupPtr(ctx, address);
    resolver.failuresInARow = 0;
    return { ptr: result.names[0]?.name ?? null, ptr_status: result.status };
  } catch (error) {
    if ((error as { code?: string }).code !== 'invalid_input') resolver.failuresInARow += 1;
    return { ptr: null, ptr_status: 'unknown' };
  }
}
