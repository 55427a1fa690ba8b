import { toNetintelError } from '../../errors.js';
import type { FailureLike } from '../check-failure.js';
import { failureJson } from '../mail/mail-errors.js';
import type { DnsRecordSet } from '../dns/query-records.js';
import { parseIpAddress, type IpAddress } from '../address/ip-address.js';
import type { BlacklistMx, BlacklistMxHost } from './blacklist-result.js';
import { capEvidence, capList, capMessage, DEFAULT_FAN_OUT, type FanOutLimits } from '../fan-out.js';
import { finding, type Finding } from '../findings.js';

/** Asks one question (under the check's deadline); rejects with a NetintelError. */
export type AskRecords = <T extends 'A' | 'AAAA' | 'MX' | 'TXT'>(name: string, type: T) => Promise<DnsRecordSet<T>>;

/** An address of the mail hosts and the hosts that have it, in MX order. */
export interface MailAddress {
  address: IpAddress;
  mx_hosts: string[];
}

/**
 * The mail hosts of a domain and their addresses: the MX records in
 * preference order, each host's A and AAAA records asked concurrently. No
 * MX records means the domain itself is the mail host (RFC 5321 §5.1); a
 * lone `.` MX means the domain takes no mail (RFC 7505). An address shared
 * by several hosts is listed once, naming every host. Failures are
 * recorded (and returned with their codes, for the verdict), never thrown.
 * The first `limits.maxMxHosts` hosts and `limits.maxAddresses` addresses
 * of each are kept; `limited` holds the findings of the caps that applied.
 */
export async function resolveMailHosts(
  domain: string,
  ask: AskRecords,
  limits: FanOutLimits = DEFAULT_FAN_OUT,
): Promise<{ mx: BlacklistMx; addresses: MailAddress[]; failures: FailureLike[]; limited: Finding[] }> {
  const limited: Finding[] = [];
  let hosts: Array<{ exchange: string; preference: number | null }>;
  let status: BlacklistMx['status'];
  try {
    const answer = await ask(domain, 'MX');
    if (answer.status === 'nxdomain') return { mx: { status: 'nxdomain', hosts: [], error: null }, addresses: [], failures: [], limited };
    const records = answer.records.filter((record) => record.exchange !== '.' && record.exchange !== '');
    if (answer.records.length > 0 && records.length === 0) return { mx: { status: 'null_mx', hosts: [], error: null }, addresses: [], failures: [], limited };
    if (records.length === 0) {
      status = 'implicit';
      hosts = [{ exchange: domain, preference: null }];
    } else {
      status = 'answer';
      const unique = new Map<string, number>();
      for (const record of records) {
        const exchange = record.exchange.toLowerCase();
        unique.set(exchange, Math.min(unique.get(exchange) ?? Infinity, record.preference));
      }
      const sorted = [...unique]
        .map(([exchange, preference]) => ({ exchange, preference }))
        .sort((a, b) => a.preference - b.preference || a.exchange.localeCompare(b.exchange));
      // The first hosts by preference are checked; the rest are counted (fan-out.ts).
      const capped = capList(sorted, limits.maxMxHosts, (total) =>
        finding('blacklist_mx_hosts_limited', 'warning', capMessage(total, limits.maxMxHosts, `MX hosts of ${domain}`, 'MX hosts per check'), null, capEvidence(total, limits.maxMxHosts, { domain })),
      );
      hosts = capped.kept;
      if (capped.finding) limited.push(capped.finding);
    }
  } catch (error) {
    const failure = toNetintelError(error);
    return { mx: { status: 'error', hosts: [], error: failureJson(failure) }, addresses: [], failures: [failure], limited };
  }

  const failures: FailureLike[] = [];
  const resolved = await Promise.all(hosts.map((host) => hostAddresses(host.exchange, host.preference, ask, failures, limits.maxAddresses, limited)));
  const addresses = new Map<string, MailAddress>();
  for (const host of resolved) {
    for (const text of host.addresses) {
      const address = parseIpAddress(text);
      const entry = addresses.get(address.text);
      if (entry) entry.mx_hosts.push(host.exchange);
      else addresses.set(address.text, { address, mx_hosts: [host.exchange] });
    }
  }
  return { mx: { status, hosts: resolved, error: null }, addresses: [...addresses.values()], failures, limited };
}

async function hostAddresses(exchange: string, preference: number | null, ask: AskRecords, failed: FailureLike[], maxAddresses: number, limited: Finding[]): Promise<BlacklistMxHost> {
  const [a, aaaa] = await Promise.allSettled([ask(exchange, 'A'), ask(exchange, 'AAAA')]);
  const capped = capList(
    [...(a.status === 'fulfilled' ? a.value.records : []), ...(aaaa.status === 'fulfilled' ? aaaa.value.records : [])],
    maxAddresses,
    (total) =>
      finding('blacklist_addresses_limited', 'warning', capMessage(total, maxAddresses, `addresses of the mail host ${exchange}`, 'addresses per host'), null, capEvidence(total, maxAddresses, { exchange })),
  );
  const addresses = capped.kept;
  if (capped.finding) limited.push(capped.finding);
  const rejected = [a, aaaa].filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
  const failures = rejected.map((outcome) => toNetintelError(outcome.reason));
  failed.push(...failures);
  if (failures.length > 0) {
    return { exchange, preference, status: 'error', addresses, error: { code: failures[0]!.code, message: failures.map((failure) => failure.message).join('; ') } };
  }
  if (addresses.length > 0) return { exchange, preference, status: 'resolved', addresses, error: null };
  const nxdomain = a.status === 'fulfilled' && a.value.status === 'nxdomain';
  return { exchange, preference, status: nxdomain ? 'nxdomain' : 'no_address', addresses, error: null };
}
