/**
 * DMARC policy discovery and Organizational Domains by the DNS Tree Walk of
 * RFC 9989 §4.10: no public-suffix list, the boundaries are the records
 * domains publish (psd=y for a public suffix, psd=n for an organization).
 *
 * Written here rather than taken from a library: mailauth has the walk from
 * its version 6 on, which needs Node 22.19, and netintel runs on Node 20.
 * test/interop/dmarc-mailauth.test.ts holds this module to mailauth 7 on
 * generated zones.
 */
import type { MailDns } from './mail-dns.js';
import { dnsNameProblem } from './mail-dns.js';
import { appliedDmarcPolicy, dmarcPolicyTags, isDmarcRecord, looksLikeDmarcRecord, parseDmarcTags, psdOf, type DmarcPolicy, type DmarcPolicyTags, type DmarcTags } from './dmarc-record.js';
import { NetintelError } from '../../errors.js';

/** A name's DMARC record met on a walk. */
export interface DmarcRecordAt {
  /** The domain (the record is at `_dmarc.<domain>`). */
  domain: string;
  record: string;
  tags: DmarcTags;
}

/** What `_dmarc.<domain>` holds. */
export interface DmarcRecordSet {
  /** The DMARC records: one is a record, more than one are all discarded (RFC 9989 §4.10). */
  records: string[];
  /** TXT strings that mention DMARC1 but do not start with v=DMARC1, which receivers ignore. */
  near: string[];
}

export interface DmarcDiscovery {
  /** The record that applies to mail from the domain, null when none does. */
  record: DmarcRecordAt | null;
  /** The Organizational Domain, null when the walk failed after the domain's own record. */
  organizationalDomain: string | null;
  /** Every `_dmarc` name asked, in order. */
  asked: string[];
  /** The record sets met, by domain (those with more than one record show why they were passed over). */
  sets: Map<string, DmarcRecordSet>;
  /** Why the walk stopped short (a failed lookup), when it did. */
  error: unknown;
}

/** The policy that applies to mail from a domain. */
export interface DmarcApplied extends DmarcDiscovery {
  /** True when the record is a parent's, not the domain's own. */
  inherited: boolean;
  /** The record's policy tags, null when the record gets no DMARC processing (or there is none). */
  policyTags: DmarcPolicyTags | null;
  /** The policy applied, null when there is none, or when it hangs on an existence lookup that failed. */
  policy: DmarcPolicy | null;
  /** The failure of that existence lookup (np against sp), when there was one. */
  existenceError: unknown;
}

/** A walk shortens a domain of eight labels or more straight to its last seven (RFC 9989 §4.10). */
const WALK_MAX_LABELS = 7;
/**
 * Each walk is at most eight queries but their number is not bounded by the
 * RFC: relaxed alignment walks for at most this many identifiers of one
 * message (mailauth's limit too); past it an identifier's alignment is unknown.
 */
const MAX_ALIGNMENT_WALKS = 10;

/**
 * The walks of one check or one message, over the DNS access of the check
 * (each `_dmarc` name is asked once), each identifier's Organizational
 * Domain worked out once.
 */
export class DmarcWalker {
  readonly #dns: MailDns;
  readonly #discoveries = new Map<string, Promise<DmarcDiscovery>>();
  readonly #organizational = new Map<string, Promise<string>>();

  constructor(dns: MailDns) {
    this.#dns = dns;
  }

  /**
   * Policy discovery (RFC 9989 §4.10.1): the domain's own record; else the
   * record of its Organizational Domain; else that of the public suffix
   * domain (psd=y) above it. Worked out once per domain.
   *
   * @throws the lookup's NetintelError when a failed lookup leaves the
   *   policy unknown (after the domain's own record was found, a failure
   *   only leaves the Organizational Domain unknown).
   */
  discover(domain: string): Promise<DmarcDiscovery> {
    let pending = this.#discoveries.get(domain);
    if (!pending) {
      pending = this.#walk(domain).then((walk) => {
        const own = walk.found[0]?.domain === domain ? walk.found[0] : null;
        if (walk.error !== null && own === null) throw walk.error;
        const organizationalDomain = walk.error === null ? selectOrganizationalDomain(domain, walk.found) : null;
        const record = own ?? (organizationalDomain === null ? null : organizationalRecord(organizationalDomain, walk.found));
        return { record, organizationalDomain, asked: walk.asked, sets: walk.sets, error: walk.error };
      });
      pending.catch(() => {});
      this.#discoveries.set(domain, pending);
    }
    return pending;
  }

  /**
   * The policy for mail from `domain`: the discovered record's policy tags,
   * p, sp or np as RFC 9989 §4.10.1 says (np only when the domain does not
   * exist, so its existence is asked when np would change the answer), t=y
   * one level below.
   *
   * @throws as {@link DmarcWalker.discover}.
   */
  async applied(domain: string): Promise<DmarcApplied> {
    const discovery = await this.discover(domain);
    const inherited = discovery.record !== null && discovery.record.domain !== domain;
    const policyTags = discovery.record === null ? null : dmarcPolicyTags(discovery.record.tags);
    const base = { ...discovery, inherited, policyTags, policy: null, existenceError: null };
    if (discovery.record === null || policyTags === null) return base;
    let exists = true;
    if (inherited && policyTags.np !== null && policyTags.np !== (policyTags.sp ?? policyTags.p)) {
      try {
        exists = await domainExists(this.#dns, domain);
      } catch (error) {
        return { ...base, existenceError: error };
      }
    }
    return { ...base, policy: appliedDmarcPolicy(discovery.record.tags, policyTags, inherited, exists) };
  }

  /**
   * Whether an authenticated identifier aligns with the author domain
   * (ASCII, lower case; RFC 9989 §3.2.10): the same domain (strict), or the
   * same Organizational Domain (relaxed).
   *
   * @throws the walk's NetintelError when the answer hangs on a walk that
   *   failed, or on one past the limit of walks.
   */
  async aligns(author: string, identifier: string, strict: boolean): Promise<boolean> {
    const id = identifier.toLowerCase().replace(/\.$/, '');
    if (id === author) return true;
    if (strict || id === '') return false;
    const { organizationalDomain: organizational, error } = await this.discover(author).catch((failure: unknown) => ({ organizationalDomain: null, error: failure }));
    if (organizational === null) {
      // Without the author's Organizational Domain only names with no common parent are known not to align.
      if (id.split('.').pop() !== author.split('.').pop()) return false;
      throw error;
    }
    // An Organizational Domain is the name itself or a parent of it.
    if (id !== organizational && !id.endsWith(`.${organizational}`)) return false;
    if (!this.#organizational.has(id) && this.#organizational.size >= MAX_ALIGNMENT_WALKS) {
      throw new NetintelError('upstream', `the alignment of ${id} was not checked: at most ${MAX_ALIGNMENT_WALKS} DNS tree walks are made for one message`);
    }
    return (await this.organizationalDomain(id)) === organizational;
  }

  /**
   * The Organizational Domain of a domain (RFC 9989 §4.10.2), for relaxed
   * alignment.
   *
   * @throws the lookup's NetintelError when the walk could not finish.
   */
  organizationalDomain(domain: string): Promise<string> {
    let pending = this.#organizational.get(domain);
    if (!pending) {
      pending = this.#walk(domain).then((walk) => {
        if (walk.error !== null) throw walk.error;
        return selectOrganizationalDomain(domain, walk.found);
      });
      pending.catch(() => {});
      this.#organizational.set(domain, pending);
    }
    return pending;
  }

  /** The DMARC records at `_dmarc.<domain>` (the check's DNS access asks each name once); a failed lookup rejects, never "no record". */
  async #recordSet(domain: string): Promise<DmarcRecordSet> {
    const lookup = await this.#dns.lookup(`_dmarc.${domain}`, 'TXT');
    const texts = lookup.records.map((record) => record.text);
    return { records: texts.filter(isDmarcRecord), near: texts.filter(looksLikeDmarcRecord) };
  }

  /**
   * The DNS Tree Walk (RFC 9989 §4.10) from `domain` up to its top label,
   * stopping at a record with psd=y or psd=n: at most eight queries. A
   * failed lookup ends the walk, returned beside the records found before it.
   */
  async #walk(domain: string): Promise<{ found: DmarcRecordAt[]; asked: string[]; sets: Map<string, DmarcRecordSet>; error: unknown }> {
    const found: DmarcRecordAt[] = [];
    const asked: string[] = [];
    const sets = new Map<string, DmarcRecordSet>();
    let labels = domain.split('.');
    while (labels.length > 0) {
      const name = labels.join('.');
      if (dnsNameProblem(`_dmarc.${name}`) === null) {
        asked.push(`_dmarc.${name}`);
        let set: DmarcRecordSet;
        try {
          set = await this.#recordSet(name);
        } catch (error) {
          return { found, asked, sets, error };
        }
        sets.set(name, set);
        if (set.records.length === 1) {
          const record = set.records[0]!;
          const { tags } = parseDmarcTags(record);
          found.push({ domain: name, record, tags });
          const psd = psdOf(tags);
          if (psd === 'y' || psd === 'n') break;
        }
      }
      labels = labels.length > WALK_MAX_LABELS ? labels.slice(-WALK_MAX_LABELS) : labels.slice(1);
    }
    return { found, asked, sets, error: null };
  }
}

/**
 * RFC 9989 §4.10.2: the domain of a psd=n record; the name one label below
 * a psd=y record (other than the domain's own); else the record found with
 * the fewest labels; else the domain itself.
 */
function selectOrganizationalDomain(domain: string, found: readonly DmarcRecordAt[]): string {
  for (const entry of found) {
    const psd = psdOf(entry.tags);
    if (psd === 'n') return entry.domain;
    if (psd === 'y' && entry.domain !== domain) return domain.split('.').slice(-(entry.domain.split('.').length + 1)).join('.');
  }
  return found.length > 0 ? found[found.length - 1]!.domain : domain;
}

/** The record of the Organizational Domain, else the public suffix domain's (a walk stops at psd=y, so it is the last found). */
function organizationalRecord(organizationalDomain: string, found: readonly DmarcRecordAt[]): DmarcRecordAt | null {
  const last = found[found.length - 1];
  return found.find((entry) => entry.domain === organizationalDomain) ?? (last !== undefined && psdOf(last.tags) === 'y' ? last : null);
}

/** Whether a name exists (RFC 9989 A.4): anything but NXDOMAIN, and an NXDOMAIN for a CNAME's target is the target's. */
async function domainExists(dns: MailDns, domain: string): Promise<boolean> {
  const lookup = await dns.lookup(domain, 'A');
  return lookup.status !== 'nxdomain' || lookup.answers.some((answer) => answer.type === 'CNAME' && answer.name.toLowerCase() === domain);
}
