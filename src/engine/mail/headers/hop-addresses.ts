/**
 * What is known of each hop's connecting address: a special-purpose one
 * (private, loopback, documentation...) is said as such and not looked up;
 * a public one is described by the same engine functions `netintel ip`
 * uses (country, AS and organisation, hosting/VPN/Tor flags) and, when
 * asked, checked against the DNS blocklists by the blacklist engine.
 */
import { parseIpAddress } from '../../address/ip-address.js';
import { specialPurposeOf } from '../../address/special-ranges.js';
import type { EngineContext } from '../../context.js';
import { finding, type Finding } from '../../findings.js';
import { NetintelError, toNetintelError } from '../../../errors.js';
import type { Hop } from './hops.js';

/** A hop's connecting address, described. */
export interface HopAddress {
  ip: string;
  /** `public`, or `special` (private, loopback, shared, documentation...: `special_purpose` says which). */
  scope: 'public' | 'special';
  /** The special-purpose block, citing its RFC (`private (RFC 1918)`), null for a public address. */
  special_purpose: string | null;
  country_code: string | null;
  country: string | null;
  asn: number | null;
  organization: string | null;
  is_hosting: boolean | null;
  is_vpn: boolean | null;
  is_tor: boolean | null;
  /** Why the address could not be described (datasets missing), null when it was or is special. */
  lookup_error: string | null;
  /** The DNSBL check (with the blacklist option), null when not asked or not public. */
  blacklist: HopBlacklist | null;
}

/** The blocklist verdict of one address. */
export interface HopBlacklist {
  /** As `netintel blacklist` says: listed, clean, incomplete (some lists unanswered) or unknown. */
  status: 'listed' | 'clean' | 'incomplete' | 'unknown';
  /** The zones that list the address. */
  listed_zones: string[];
  /** Zones asked. */
  zones: number;
}

/**
 * Distinct public addresses asked of the blocklists, at most, the newest
 * hops first: a real message passes a handful of public hosts, and each
 * address costs a query per zone. The newest are the ones the receiving
 * side wrote; the oldest can be forged by the sender.
 */
export const MAX_BLACKLISTED_ADDRESSES = 16;

/** Each hop's address described (null for a hop without one), and what stands out. */
export async function describeHopAddresses(ctx: EngineContext, hops: readonly Hop[], options: { blacklist: boolean | { zones: string } }): Promise<{ described: Array<HopAddress | null>; findings: Finding[] }> {
  const findings: Finding[] = [];
  const described = await Promise.all(hops.map((hop) => (hop.from_ip === null ? null : describeAddress(ctx, hop.from_ip))));
  if (options.blacklist !== false) {
    const every = [...new Set(described.flatMap((address) => (address !== null && address.scope === 'public' ? [address.ip] : [])).reverse())];
    const publicOnes = every.slice(0, MAX_BLACKLISTED_ADDRESSES);
    if (every.length > publicOnes.length) {
      findings.push(
        finding('headers_blacklist_limit', 'info', `${every.length} public hop addresses: the ${MAX_BLACKLISTED_ADDRESSES} of the newest hops were asked of the blocklists, the rest were not`, null, {
          addresses: every.length,
          asked: MAX_BLACKLISTED_ADDRESSES,
        }),
      );
    }
    if (publicOnes.length > 0) {
      const { createBlacklistChecker } = await import('../../blacklist/check-blacklist.js');
      const checker = await createBlacklistChecker(ctx, options.blacklist === true ? {} : { zones: options.blacklist.zones });
      try {
        const verdicts = new Map(await Promise.all(publicOnes.map(async (ip) => [ip, await checkOne(checker.check.bind(checker), ip)] as const)));
        for (const [index, address] of described.entries()) {
          if (address === null || address.scope !== 'public') continue;
          address.blacklist = verdicts.get(address.ip) ?? null;
          if (address.blacklist?.status === 'listed') {
            findings.push(
              finding('headers_hop_listed', 'warning', `hop ${index + 1}: ${address.ip} is listed by ${address.blacklist.listed_zones.join(', ')}`, 'RFC 5782 §2.1', {
                hop: index + 1,
                ip: address.ip,
                zones: address.blacklist.listed_zones,
              }),
            );
          }
        }
        // Lists that did not answer leave an address unchecked, never clean (as `netintel blacklist` says).
        const unchecked = [...verdicts].filter(([, verdict]) => isBlacklistUnchecked(verdict)).map(([ip]) => ip);
        if (unchecked.length > 0) {
          findings.push(
            finding('headers_blacklist_unknown', 'unknown', `${unchecked.length === 1 ? '1 hop address' : `${unchecked.length} hop addresses`} could not be checked against every blocklist: some lists did not answer`, 'RFC 5782 §2.1', {
              addresses: unchecked,
            }),
          );
        }
      } finally {
        await checker.close();
      }
    }
  }
  return { described, findings };
}

/** True when lists that did not answer left the address's verdict open (incomplete or unknown). */
function isBlacklistUnchecked(verdict: HopBlacklist | null): boolean {
  return verdict?.status === 'incomplete' || verdict?.status === 'unknown';
}

async function checkOne(check: (target: string) => Promise<import('../../blacklist/blacklist-result.js').BlacklistResult>, ip: string): Promise<HopBlacklist> {
  try {
    const result = await check(ip);
    const listed = [...new Set(result.zones.filter((row) => row.status === 'listed').map((row) => row.zone))];
    return { status: result.verdict.status, listed_zones: listed, zones: result.verdict.zones };
  } catch {
    return { status: 'unknown', listed_zones: [], zones: 0 };
  }
}

async function describeAddress(ctx: EngineContext, ip: string): Promise<HopAddress> {
  const address = parseIpAddress(ip);
  const special = specialPurposeOf(address);
  const base: HopAddress = {
    ip: address.text,
    scope: special === null ? 'public' : 'special',
    special_purpose: special,
    country_code: null,
    country: null,
    asn: null,
    organization: null,
    is_hosting: null,
    is_vpn: null,
    is_tor: null,
    lookup_error: null,
    blacklist: null,
  };
  if (special !== null) return base;
  try {
    const { lookupIp } = await import('../../ip/lookup-ip.js');
    const record = lookupIp(ctx, address.text);
    return {
      ...base,
      country_code: record.location.country_code,
      country: record.location.country,
      asn: record.network.asn,
      organization: record.network.organization ?? record.network.isp,
      is_hosting: record.security.is_hosting,
      is_vpn: record.security.is_vpn,
      is_tor: record.security.is_tor,
    };
  } catch (error) {
    const failure = error instanceof NetintelError ? error : toNetintelError(error);
    return { ...base, lookup_error: failure.message };
  }
}
