import { ipVersionOf } from '../address/ip-text.js';
import type { EngineContext } from '../context.js';
import { normaliseDomain, type DomainName } from '../dns/dns-name.js';
import { confirmReverseDns } from '../smtp/reverse-dns.js';
import { normaliseMailDomain } from './mail-domain.js';
import { finding, type Finding } from '../findings.js';
import { parseIpAddress } from '../address/ip-address.js';
import { unprobedBlockOf } from '../address/special-ranges.js';
import { createMailDns, type MailDns, type MailLookup } from './mail-dns.js';
import { failureJson, withContext, type FailureJson } from './mail-errors.js';
import { capEvidence, capList, capMessage, fanOutLimits, type FanOutLimits } from '../fan-out.js';

/** One address of a mail exchanger, with its reverse DNS. */
export interface MxAddress {
  address: string;
  family: 4 | 6;
  /** The special-purpose block it is in (private, loopback, documentation...), null for a public address. */
  reserved: string | null;
  /** PTR names of the address; null when the PTR lookup failed. */
  ptr: string[] | null;
  /** True when a PTR name resolves back to the address (forward-confirmed reverse DNS), null when it could not be told. */
  fcrdns: boolean | null;
}

/** One MX record and what its exchange resolves to. */
export interface MxHost {
  preference: number;
  /** The exchange, ASCII, no trailing dot; `.` for a null MX. */
  exchange: string;
  exchange_unicode: string;
  /** The canonical name when the exchange is an alias (CNAME), else null. */
  cname: string | null;
  /** True when the exchange is written as an IP address rather than a host name. */
  ip_literal: boolean;
  /** A and AAAA addresses, IPv4 first. */
  addresses: MxAddress[];
  /** Why some or all of the addresses could not be told (a lookup failed; `addresses` then holds the family that answered), else null. */
  error: { code: string; message: string } | null;
}

/**
 * `mx`: MX records published; `null_mx`: the domain accepts no mail (RFC 7505);
 * `implicit`: no MX, mail goes to the domain's own A/AAAA (RFC 5321 §5.1);
 * `no_mail`: neither MX nor addresses; `nxdomain`: the domain does not exist.
 */
export type MxStatus = 'mx' | 'null_mx' | 'implicit' | 'no_mail' | 'nxdomain';

/** The MX check of one domain (`netintel mx`, GET /api/email-tests?type=mx). */
export interface MxResult {
  kind: 'mx';
  domain: string;
  domain_unicode: string;
  status: MxStatus;
  /** MX records sorted by preference, then exchange. */
  records: MxHost[];
  /** The domain's own addresses when it has no MX (the implicit MX of RFC 5321 §5.1), else []. */
  implicit_addresses: string[];
  /** Lowest TTL of the MX records in seconds, null when there are none. */
  ttl_seconds: number | null;
  findings: Finding[];
  resolver: string;
}

export interface ResolveMxOptions {
  /** Share the DNS answers of a larger check (the e-mail report). */
  dns?: MailDns;
}


/**
 * The mail exchangers of `domain`: MX records by preference, each exchange
 * resolved to its addresses, each address's PTR names and whether they
 * confirm it (FCrDNS), with findings for null MX, the implicit MX fallback,
 * aliases, IP literals, exchanges without addresses, special-purpose
 * addresses and duplicates.
 *
 * @throws NetintelError `invalid_input` for a bad domain; `timeout`,
 *   `upstream`, `unreachable` when the MX lookup itself fails (a failure
 *   of a later lookup is recorded on the host and as a finding).
 */
export async function resolveMx(ctx: EngineContext, domain: string, options: ResolveMxOptions = {}): Promise<MxResult> {
  const name = normaliseMailDomain(domain);
  const dns = options.dns ?? createMailDns(ctx);
  let mx: MailLookup<'MX'>;
  try {
    mx = await dns.lookup(name.ascii, 'MX');
  } catch (error) {
    throw withContext(error, `the MX lookup of ${name.ascii} failed`);
  }
  const findings: Finding[] = [];
  const make = (status: MxStatus, records: MxHost[], implicitAddresses: string[]): MxResult => ({
    kind: 'mx',
    domain: name.ascii,
    domain_unicode: name.unicode,
    status,
    records,
    implicit_addresses: implicitAddresses,
    ttl_seconds: mx.ttl_seconds,
    findings,
    resolver: mx.resolver,
  });

  if (mx.status === 'nxdomain') {
    findings.push(finding('mx_domain_not_found', 'error', `${name.ascii} does not exist (NXDOMAIN): mail to it bounces`, 'RFC 5321 §5.1', { domain: name.ascii }));
    return make('nxdomain', [], []);
  }

  const limits = fanOutLimits(ctx);
  if (mx.records.length === 0) {
    const addresses = await implicitMx(dns, name, limits, findings);
    return addresses.length > 0 ? make('implicit', [], addresses) : make('no_mail', [], []);
  }

  const published = [...mx.records].sort((a, b) => a.preference - b.preference || a.exchange.localeCompare(b.exchange));
  // The first hosts by preference are looked up; the others are counted, not resolved (fan-out.ts).
  const exchanges = [...new Set(published.filter((record) => !isNullExchange(record.exchange)).map((record) => record.exchange.toLowerCase()))];
  const hostCap = capList(exchanges, limits.maxMxHosts, (total) =>
    finding('mx_hosts_limited', 'warning', capMessage(total, limits.maxMxHosts, `MX hosts of ${name.ascii}`, 'MX hosts per check'), null, capEvidence(total, limits.maxMxHosts, { domain: name.ascii })),
  );
  const kept = new Set(hostCap.kept);
  const sorted = hostCap.finding === null ? published : published.filter((record) => isNullExchange(record.exchange) || kept.has(record.exchange.toLowerCase()));
  const nullMx = judgeNullMx(name, sorted, findings);
  if (nullMx) return make('null_mx', [nullMx], []);
  findings.push(...duplicateExchanges(name, published, kept));

  const { hosts, findings: hostFindings } = await resolveHosts(dns, sorted, limits.maxAddresses);
  findings.push(...hostFindings);
  findings.unshift(
    finding('mx_records_found', 'pass', `${name.ascii} has ${published.length} MX record${published.length > 1 ? 's' : ''}`, 'RFC 5321 §5.1', {
      exchanges: sorted.map((record) => record.exchange),
    }),
    ...(hostCap.finding ? [hostCap.finding] : []),
  );
  return make('mx', hosts, []);
}

type MxRecord = MailLookup<'MX'>['records'][number];

/** The A and AAAA lookups of a name: the sets that answered (A first), and why the others failed. */
async function bothFamilies(dns: MailDns, name: string): Promise<{ answered: Array<MailLookup<'A' | 'AAAA'>>; failed: unknown[] }> {
  const families = await Promise.allSettled([dns.lookup(name, 'A'), dns.lookup(name, 'AAAA')]);
  return {
    answered: families.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : [])),
    failed: families.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as unknown] : [])),
  };
}

function isNullExchange(exchange: string): boolean {
  return exchange === '.' || exchange === '';
}

/**
 * No MX records: the domain's own addresses are its implicit MX (RFC 5321
 * §5.1), capped at the addresses per host; none means it takes no mail.
 */
async function implicitMx(dns: MailDns, name: DomainName, limits: FanOutLimits, findings: Finding[]): Promise<string[]> {
  const { answered, failed } = await bothFamilies(dns, name.ascii);
  // Nothing learnt (a family failed, the other has no address): whether mail has anywhere to go is unknown.
  if (failed.length > 0 && answered.every((set) => set.records.length === 0)) {
    throw withContext(failed[0], `${name.ascii} has no MX records, and the A/AAAA lookup for the implicit MX failed`);
  }
  if (failed.length > 0) {
    // One family answered: the implicit MX is checked with its addresses, the other family is a part that could not run.
    const error = failureJson(failed[0]);
    findings.push(
      finding('mx_lookup_failed', 'unknown', `Could not resolve all the addresses of ${name.ascii} for its implicit MX: ${error.code} (${error.message}); those addresses are unknown, not absent`, 'RFC 5321 §5.1', {
        exchange: name.ascii,
        error,
      }),
    );
  }
  const { kept: addresses, finding: capped } = capList(
    answered.flatMap((set) => set.records),
    limits.maxAddresses,
    (total) => finding('mx_addresses_limited', 'warning', capMessage(total, limits.maxAddresses, `addresses of ${name.ascii}`, 'addresses per host'), null, capEvidence(total, limits.maxAddresses, { exchange: name.ascii })),
  );
  if (addresses.length > 0) {
    findings.push(
      finding(
        'mx_missing_implicit',
        'warning',
        `${name.ascii} has no MX records: senders fall back to its own address${addresses.length > 1 ? 'es' : ''} (${addresses.join(', ')}) as an implicit MX; publish MX records, or a null MX if it takes no mail`,
        'RFC 5321 §5.1',
        { addresses },
      ),
    );
    if (capped) findings.push(capped);
    return addresses;
  }
  findings.push(
    finding('mx_missing', 'warning', `${name.ascii} has no MX records and no addresses: mail to it cannot be delivered; publish a null MX ("0 .") if that is intended`, 'RFC 5321 §5.1, RFC 7505', {
      domain: name.ascii,
    }),
  );
  return [];
}

/** The null MX host when it is the only record (RFC 7505 §3); a finding when one stands next to others. */
function judgeNullMx(name: DomainName, sorted: readonly MxRecord[], findings: Finding[]): MxHost | null {
  const nulls = sorted.filter((record) => isNullExchange(record.exchange));
  if (nulls.length === 0) return null;
  if (sorted.length === 1) {
    const record = nulls[0]!;
    findings.push(finding('mx_null', 'info', `${name.ascii} publishes a null MX: it accepts no mail, on purpose`, 'RFC 7505 §3', { preference: record.preference }));
    if (record.preference !== 0) {
      findings.push(finding('mx_null_preference', 'warning', `The null MX of ${name.ascii} has preference ${record.preference}; RFC 7505 asks for 0`, 'RFC 7505 §3', { preference: record.preference }));
    }
    return nullHost(record.preference);
  }
  findings.push(
    finding('mx_null_mixed', 'error', `${name.ascii} publishes a null MX next to other MX records; a null MX must be the only one, so senders may treat the domain as taking no mail`, 'RFC 7505 §3', {
      exchanges: sorted.map((record) => record.exchange),
    }),
  );
  return null;
}

/** An exchange listed in more than one MX record (of those looked up). */
function duplicateExchanges(name: DomainName, published: readonly MxRecord[], kept: ReadonlySet<string>): Finding[] {
  const seen = new Map<string, number>();
  for (const record of published) {
    if (!kept.has(record.exchange.toLowerCase())) continue;
    const key = record.exchange.toLowerCase();
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  const findings: Finding[] = [];
  for (const [exchange, count] of seen) {
    if (count > 1 && !isNullExchange(exchange)) {
      findings.push(finding('mx_duplicate_exchange', 'warning', `${exchange} is listed in ${count} MX records of ${name.ascii}`, 'RFC 5321 §5.1', { exchange, count }));
    }
  }
  return findings;
}

/** Each record's exchange resolved once, with the findings of each distinct exchange in preference order. */
async function resolveHosts(dns: MailDns, sorted: readonly MxRecord[], maxAddresses: number): Promise<{ hosts: MxHost[]; findings: Finding[] }> {
  const resolved = new Map<string, Promise<ResolvedHost>>();
  const hosts = await Promise.all(
    sorted.map(async (record): Promise<MxHost> => {
      if (isNullExchange(record.exchange)) return nullHost(record.preference);
      const key = record.exchange.toLowerCase();
      let pending = resolved.get(key);
      if (!pending) {
        pending = resolveHost(dns, record.exchange, maxAddresses);
        resolved.set(key, pending);
      }
      const host = await pending;
      return { preference: record.preference, ...host.host };
    }),
  );
  const findings: Finding[] = [];
  const reported = new Set<string>();
  for (const host of hosts) {
    const key = host.exchange.toLowerCase();
    if (reported.has(key) || isNullExchange(host.exchange)) continue;
    reported.add(key);
    findings.push(...(await resolved.get(key)!).findings);
  }
  return { hosts, findings };
}

interface ResolvedHost {
  host: Omit<MxHost, 'preference'>;
  findings: Finding[];
}

function nullHost(preference: number): MxHost {
  return { preference, exchange: '.', exchange_unicode: '.', cname: null, ip_literal: false, addresses: [], error: null };
}

async function resolveHost(dns: MailDns, exchange: string, maxAddresses: number): Promise<ResolvedHost> {
  const findings: Finding[] = [];
  const bare = exchange.replace(/^\[|\]$/g, '');
  let unicode = exchange;
  try {
    unicode = normaliseDomain(exchange).unicode;
  } catch {
    // Shown as published.
  }
  const host: Omit<MxHost, 'preference'> = { exchange, exchange_unicode: unicode, cname: null, ip_literal: false, addresses: [], error: null };
  if (ipVersionOf(bare) !== 0) {
    host.ip_literal = true;
    findings.push(
      finding('mx_ip_literal', 'error', `The MX exchange "${exchange}" is an IP address; an MX must name a host, and senders look "${exchange}" up as a name`, 'RFC 5321 §5.1, RFC 1035 §3.3.9', {
        exchange,
      }),
    );
    return { host, findings };
  }
  const { answered, failed } = await bothFamilies(dns, exchange);
  if (failed.length > 0) {
    host.error = failureJson(failed[0]);
    // Nothing learnt (a family failed, the other has no address): the host's addresses are unknown.
    if (answered.every((set) => set.records.length === 0)) {
      findings.push(
        finding('mx_lookup_failed', 'unknown', `Could not resolve the MX host ${exchange}: ${host.error.code} (${host.error.message}); its addresses are unknown, not absent`, 'RFC 5321 §5.1', {
          exchange,
          error: host.error,
        }),
      );
      return { host, findings };
    }
    // One family answered: the host is checked with its addresses, the other family is a part that could not run.
    findings.push(
      finding('mx_lookup_failed', 'unknown', `Could not resolve all the addresses of the MX host ${exchange}: ${host.error.code} (${host.error.message}); those addresses are unknown, not absent`, 'RFC 5321 §5.1', {
        exchange,
        error: host.error,
      }),
    );
  }
  const alias = answered.flatMap((set) => set.answers).find((answer) => answer.type === 'CNAME' && answer.name.toLowerCase() === exchange.toLowerCase());
  if (alias) {
    host.cname = String(alias.data);
    findings.push(
      finding('mx_cname', 'warning', `The MX host ${exchange} is an alias (CNAME to ${host.cname}); an MX must name the host itself, and some senders refuse aliases`, 'RFC 2181 §10.3, RFC 5321 §5.1', {
        exchange,
        cname: host.cname,
      }),
    );
  }
  const capped = capList(answered.flatMap((set) => set.records), maxAddresses, (total) =>
    finding('mx_addresses_limited', 'warning', capMessage(total, maxAddresses, `addresses of the MX host ${exchange}`, 'addresses per host'), null, capEvidence(total, maxAddresses, { exchange })),
  );
  const addresses = capped.kept;
  if (addresses.length === 0) {
    // Both families answered (a failed one returned above).
    const status = answered[0]!.status;
    const why = status === 'nxdomain' ? 'does not exist (NXDOMAIN)' : 'has no A or AAAA records';
    findings.push(finding('mx_no_address', 'error', `The MX host ${exchange} ${why}: mail cannot be delivered to it`, 'RFC 5321 §5.1', { exchange, status }));
    return { host, findings };
  }
  if (capped.finding) findings.push(capped.finding);
  const described = await Promise.all(addresses.map((address) => describeAddress(dns, address)));
  host.addresses = described.map(({ address }) => address);
  for (const { address: item, ptrError, forwardError } of described) {
    if (item.reserved !== null) {
      findings.push(
        finding('mx_reserved_address', 'error', `The MX host ${exchange} resolves to ${item.address}, a ${item.reserved} address that other networks cannot reach`, 'RFC 6890', {
          exchange,
          address: item.address,
          block: item.reserved,
        }),
      );
    }
    if (item.ptr === null) {
      // A part of the check that could not run (docs/exit-codes.md), not a fault of the host.
      findings.push(
        finding('mx_ptr_lookup_failed', 'unknown', `The PTR lookup of ${item.address} (${exchange}) failed, so its reverse DNS is unknown, not absent`, 'RFC 1912 §2.1', {
          exchange,
          address: item.address,
          error: ptrError,
        }),
      );
    } else if (item.ptr.length === 0) {
      findings.push(
        finding('mx_no_ptr', 'warning', `${item.address} (${exchange}) has no PTR record; many receivers reject mail from addresses without reverse DNS`, 'RFC 1912 §2.1', {
          exchange,
          address: item.address,
        }),
      );
    } else if (item.fcrdns === null && forwardError !== null) {
      // A part of the check that could not run: neither a confirmation nor a mismatch.
      findings.push(
        finding(
          'mx_fcrdns_lookup_failed',
          'unknown',
          `The forward lookup of the reverse DNS of ${item.address} (${exchange}), ${item.ptr.join(', ')}, failed, so whether it resolves back is unknown`,
          'RFC 8601 §3',
          { exchange, address: item.address, ptr: item.ptr, error: forwardError },
        ),
      );
    } else if (item.fcrdns === false) {
      findings.push(
        finding(
          'mx_fcrdns_mismatch',
          'warning',
          `The reverse DNS of ${item.address} (${exchange}) is ${item.ptr.join(', ')}, which does not resolve back to ${item.address} (no forward-confirmed reverse DNS)`,
          'RFC 8601 §3, RFC 1912 §2.1',
          { exchange, address: item.address, ptr: item.ptr },
        ),
      );
    } else if (item.fcrdns === true) {
      findings.push(finding('mx_fcrdns', 'pass', `${item.address} (${exchange}) has forward-confirmed reverse DNS (${item.ptr.join(', ')})`, 'RFC 8601 §3', { exchange, address: item.address, ptr: item.ptr }));
    }
  }
  return { host, findings };
}

/**
 * An address of an MX host with its reverse DNS; `ptrError` says why the
 * PTR lookup failed, `forwardError` why a forward lookup of a PTR name
 * failed when no name confirmed the address (FCrDNS unknown, null).
 */
async function describeAddress(dns: MailDns, address: string): Promise<{ address: MxAddress; ptrError: FailureJson | null; forwardError: FailureJson | null }> {
  const parsed = parseIpAddress(address);
  const family = parsed.version;
  // Globally reachable anycast services (PCP, TURN, the 6to4 relays) and ORCHIDs are no mail host either.
  const reserved = unprobedBlockOf(parsed);
  try {
    const { names, confirmed, forwardError } = await confirmReverseDns((name, type) => dns.lookup(name, type), address);
    return { address: { address, family, reserved, ptr: names, fcrdns: confirmed }, ptrError: null, forwardError };
  } catch (error) {
    return { address: { address, family, reserved, ptr: null, fcrdns: null }, ptrError: failureJson(error), forwardError: null };
  }
}
