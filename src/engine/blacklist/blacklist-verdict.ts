import { checkFailure, type FailureLike } from '../check-failure.js';
import { finding, type Finding } from '../findings.js';
import type { ResolverAddress } from '../dns/resolver-address.js';
import type { BlacklistMx, BlacklistSkippedZone, BlacklistVerdict, BlacklistZoneResult } from './blacklist-result.js';
import type { DnsblZone } from './dnsbl-registry.js';
import { publicResolverOperator } from './public-resolvers.js';

const UNCHECKED = new Set(['refused', 'timeout', 'error']);

/** True when the mail hosts of a domain could not all be resolved (their addresses are then unchecked). */
export function mxIncomplete(mx: BlacklistMx | null): boolean {
  return mx !== null && (mx.status === 'error' || mx.hosts.some((host) => host.status === 'error'));
}

/**
 * The overall verdict of a check: only real listings count as listed, and
 * zones that refused, timed out or failed are counted and named, never
 * taken as clean. A zone listed for one subject and unchecked for another
 * counts in both `listed_zones` and `unchecked_zones`. `failures` are the
 * errors of the rows that could not be checked and of the mail-host
 * lookups; they make the verdict's `failure`.
 */
export function blacklistVerdict(target: string, rows: readonly BlacklistZoneResult[], mx: BlacklistMx | null, failures: readonly FailureLike[] = []): BlacklistVerdict {
  const byZone = new Map<string, BlacklistZoneResult[]>();
  for (const row of rows) {
    const list = byZone.get(row.zone) ?? [];
    list.push(row);
    byZone.set(row.zone, list);
  }
  const listedZones: string[] = [];
  const uncheckedZones: Array<{ zone: string; why: string }> = [];
  let checkedZones = 0;
  for (const [zone, zoneRows] of byZone) {
    if (zoneRows.some((row) => row.status === 'listed')) listedZones.push(zone);
    const unchecked = zoneRows.filter((row) => UNCHECKED.has(row.status));
    if (unchecked.length > 0) uncheckedZones.push({ zone, why: [...new Set(unchecked.map((row) => row.status))].join('/') });
    else checkedZones += 1;
  }
  const listings = rows.filter((row) => row.status === 'listed').length;
  const zones = byZone.size;
  const hostsMissing = mxIncomplete(mx);
  const lists = (count: number) => `${count} ${count === 1 ? 'list' : 'lists'}`;
  const uncheckedText = uncheckedZones.map((item) => `${item.zone}: ${item.why}`).join(', ');
  const uncheckedPart = uncheckedZones.length > 0 ? [`${uncheckedZones.length} of ${zones} could not be checked (${uncheckedText})`] : [];
  const hostsPart = hostsMissing ? ['the mail hosts could not all be resolved, so some of their addresses were not checked'] : [];
  const withTail = (head: string) => [head, ...uncheckedPart, ...hostsPart].join('; ');

  const failure = uncheckedZones.length > 0 || hostsMissing ? checkFailure(failures) : null;
  let status: BlacklistVerdict['status'];
  let message: string;
  if (listings > 0) {
    status = 'listed';
    message = withTail(`${target} is listed on ${listedZones.length} of ${lists(zones)} (${listedZones.join(', ')})`);
  } else if (zones === 0 && failure !== null) {
    // Nothing was asked because the mail hosts could not be learnt: a check that could not run, not one with no list to ask.
    status = 'unknown';
    message =
      mx?.status === 'error'
        ? `${target} could not be checked: ${failure.reason}; its mail hosts could not be resolved, so no list was asked about their addresses`
        : `${target} could not be checked: ${failure.reason}; some of its mail hosts could not be resolved, and no list asked applies to the others' addresses`;
  } else if (zones === 0) {
    status = 'unknown';
    message = withTail(`no list could be asked about ${target}`);
  } else if (checkedZones === 0) {
    status = 'unknown';
    // Why in a few words first (DNS did not answer), as the e-mail test says it, then which lists; of one list, the why is all.
    const why = failure?.reason ?? null;
    const head = zones === 1 ? (why ?? 'the list asked did not answer') : [why, `none of the ${lists(zones)} answered`].filter((part) => part !== null).join('; ');
    message = [`${target} could not be checked: ${head} (${uncheckedText})`, ...hostsPart].join('; ');
  } else if (uncheckedZones.length > 0 || hostsMissing) {
    status = 'incomplete';
    message = withTail(`${target} is not listed on the ${lists(checkedZones)} that answered`);
  } else {
    status = 'clean';
    message = `${target} is not listed on any of the ${lists(zones)} checked`;
  }
  return { status, listed_zones: listedZones.length, listings, checked_zones: checkedZones, unchecked_zones: uncheckedZones.length, zones, message, failure };
}

export interface FindingsInput {
  target: string;
  target_type: 'ip' | 'domain';
  rows: readonly BlacklistZoneResult[];
  skipped: readonly BlacklistSkippedZone[];
  mx: BlacklistMx | null;
  /** The zones of the run (to name those refusing public resolvers). */
  zones: readonly DnsblZone[];
  resolvers: readonly ResolverAddress[];
  /** What a special-purpose target address is (RFC 6890 registries), or null. */
  specialPurpose: string | null;
  verdict: BlacklistVerdict;
}

/**
 * The findings of a check: one per real listing (the zone's listing
 * severity), one per zone that could not be checked (`unknown`: nothing is
 * known there; saying why and what to do), a public resolver in use with lists that refuse them,
 * dead zones named and not queried, mail-host problems, and a `pass` when
 * the target is clean.
 */
export function blacklistFindings(input: FindingsInput): Finding[] {
  const findings: Finding[] = [];
  const zoneByName = new Map(input.zones.map((zone) => [zone.zone, zone]));

  for (const row of input.rows.filter((item) => item.status === 'listed')) {
    const zone = zoneByName.get(row.zone);
    const codes = row.return_codes.map((code) => (code.meaning ? `${code.address} (${code.meaning})` : code.address)).join(', ');
    const via = row.mx_hosts.length > 0 ? `, the address of MX ${row.mx_hosts.join(', ')},` : '';
    findings.push(
      finding(
        'blacklist_listed',
        zone?.listingSeverity ?? 'error',
        `${row.subject}${via} is listed on ${row.zone}${row.name ? ` (${row.name})` : ''}: ${codes}` +
          (row.reason ? `; reason: ${row.reason}` : '') +
          (row.delist_url ? `; removal: ${row.delist_url}` : ''),
        row.list_kind === 'ip' ? 'RFC 5782 §2.1' : 'RFC 5782 §3',
        { zone: row.zone, subject: row.subject, mx_hosts: row.mx_hosts, query: row.query, return_codes: row.return_codes, reason: row.reason, delist_url: row.delist_url },
      ),
    );
  }

  const resolverLabels = input.resolvers.map((resolver) => resolver.label);
  const publicResolvers = input.resolvers
    .map((resolver) => ({ label: resolver.label, operator: publicResolverOperator(resolver.host) }))
    .filter((item): item is { label: string; operator: string } => item.operator !== null);

  const unchecked = new Map<string, BlacklistZoneResult[]>();
  for (const row of input.rows.filter((item) => UNCHECKED.has(item.status))) {
    unchecked.set(row.zone, [...(unchecked.get(row.zone) ?? []), row]);
  }
  for (const [zoneName, rows] of unchecked) {
    const zone = zoneByName.get(zoneName);
    const first = rows[0]!;
    const subjects = rows.map((row) => row.subject);
    const refused = rows.find((row) => row.status === 'refused');
    if (refused) {
      const advice = zone?.refusesPublicResolvers
        ? ` ${zoneName} refuses queries relayed by public resolvers and high-volume resolvers: ask through a resolver of your own (--resolver)` +
          (publicResolvers.length > 0 ? `; ${publicResolvers.map((item) => `${item.label} is ${item.operator}`).join(', ')}` : '')
        : '';
      findings.push(
        finding(
          'blacklist_zone_refused',
          'unknown',
          `${zoneName} refused to answer through ${resolverLabels.join(', ')}, so ${subjects.join(', ')} could not be checked there: ${refused.detail ?? 'refused'}.${advice}`,
          null,
          { zone: zoneName, status: 'refused', subjects, detail: refused.detail, return_codes: refused.return_codes, resolvers: resolverLabels },
        ),
      );
      continue;
    }
    const reason = first.status === 'timeout' ? 'did not answer before the deadline' : 'could not be used';
    findings.push(
      finding(
        'blacklist_zone_unchecked',
        'unknown',
        `${zoneName} ${reason}, so ${subjects.join(', ')} could not be checked there: ${first.detail ?? first.status}`,
        first.canary === 'failed' ? 'RFC 5782 §5' : null,
        { zone: zoneName, status: first.status, subjects, detail: first.detail, canary: first.canary, resolvers: resolverLabels },
      ),
    );
  }

  const refusing = input.zones.filter((zone) => zone.refusesPublicResolvers).map((zone) => zone.zone);
  if (publicResolvers.length > 0 && refusing.length > 0) {
    findings.push(
      finding(
        'blacklist_public_resolver',
        'warning',
        `${publicResolvers.map((item) => `${item.label} is ${item.operator}`).join(', ')}, a public resolver: ${refusing.join(', ')} ` +
          'refuse queries relayed by public resolvers (a refusal code, or NXDOMAIN that would read as "not listed"). ' +
          'netintel checks each zone\'s test points and reports such zones as refused or failed, never as clean; ' +
          'to check them, use a resolver of your own (a local unbound or your ISP\'s) with --resolver',
        null,
        { resolvers: publicResolvers, zones: refusing },
      ),
    );
  }

  for (const skip of input.skipped.filter((item) => item.reason === 'dead')) {
    findings.push(finding('blacklist_zone_dead', 'warning', `${skip.zone} was not queried: ${skip.detail}`, 'RFC 6471 §3.4', { zone: skip.zone, detail: skip.detail }));
  }
  const noIpv6 = input.skipped.filter((item) => item.reason === 'ipv6_unsupported');
  if (noIpv6.length > 0) {
    const zones = [...new Set(noIpv6.map((item) => item.zone))];
    const subjects = [...new Set(noIpv6.map((item) => item.subject ?? ''))];
    findings.push(
      finding(
        'blacklist_ipv6_unsupported',
        'info',
        `${subjects.join(', ')} ${subjects.length === 1 ? 'was' : 'were'} not asked of ${zones.join(', ')}: ${zones.length === 1 ? 'that list has' : 'those lists have'} no IPv6 data`,
        'RFC 5782 §2.4',
        { zones, subjects },
      ),
    );
  }
  const notApplicable = input.skipped.filter((item) => item.reason === 'not_applicable');
  if (notApplicable.length > 0) {
    const zones = [...new Set(notApplicable.map((item) => item.zone))];
    findings.push(
      finding('blacklist_domain_lists_skipped', 'info', `${zones.join(', ')} ${zones.length === 1 ? 'lists' : 'list'} domain names, not addresses: not asked about ${input.target}`, 'RFC 5782 §3', { zones }),
    );
  }

  if (input.mx) findings.push(...mxFindings(input.target, input.mx));
  if (input.specialPurpose !== null) {
    findings.push(
      finding('blacklist_special_address', 'info', `${input.target} is ${input.specialPurpose}: public lists do not list such addresses`, 'RFC 6890', {
        address: input.target,
        purpose: input.specialPurpose,
      }),
    );
  }
  if (input.verdict.status === 'clean') findings.push(finding('blacklist_clean', 'pass', input.verdict.message, null, { zones: input.verdict.zones }));
  // No list applies (an IPv6 address and IPv4-only lists); not when the lookups before the lists failed (their findings say so).
  if (input.verdict.zones === 0 && input.verdict.failure === null) {
    findings.push(finding('blacklist_no_zones', 'warning', input.verdict.message, null, { skipped: input.skipped.length }));
  }
  return findings;
}

function mxFindings(domain: string, mx: BlacklistMx): Finding[] {
  const out: Finding[] = [];
  if (mx.status === 'error') {
    out.push(finding('blacklist_mx_unresolved', 'unknown', `the MX records of ${domain} could not be read, so its mail hosts were not checked: ${mx.error?.message ?? 'no answer'}`, null, { domain, error: mx.error }));
  } else if (mx.status === 'nxdomain') {
    out.push(finding('blacklist_domain_nxdomain', 'warning', `${domain} does not exist (NXDOMAIN): it has no mail hosts to check; the domain lists were still asked`, null, { domain }));
  } else if (mx.status === 'null_mx') {
    out.push(finding('blacklist_null_mx', 'info', `${domain} publishes a null MX: it accepts no mail, so there are no mail hosts to check`, 'RFC 7505 §3', { domain }));
  } else if (mx.status === 'implicit') {
    out.push(
      finding('blacklist_implicit_mx', 'info', `${domain} has no MX records: its own addresses (the implicit MX) were checked against the IP lists`, 'RFC 5321 §5.1', {
        domain,
        addresses: mx.hosts.flatMap((host) => host.addresses),
      }),
    );
  }
  for (const host of mx.hosts) {
    if (host.status === 'error') {
      out.push(
        finding('blacklist_mx_host_unresolved', 'unknown', `the addresses of mail host ${host.exchange} could not all be read: ${host.error?.message ?? 'no answer'}`, null, {
          exchange: host.exchange,
          error: host.error,
        }),
      );
    } else if (host.status !== 'resolved') {
      const why = host.status === 'nxdomain' ? 'does not exist (NXDOMAIN)' : 'has no A or AAAA records';
      out.push(finding('blacklist_mx_host_without_address', 'warning', `mail host ${host.exchange} ${why}: mail to ${domain} cannot use it`, 'RFC 5321 §5.1', { exchange: host.exchange }));
    }
  }
  return out;
}
