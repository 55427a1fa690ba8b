/**
 * Zone data for DNSBL tests served by the test DNS server
 * (test/support/dns-server.ts): the records a list publishes for the
 * subjects it lists, and its RFC 5782 test points.
 */
import type { ZoneRecord } from '../../support/dns-server.js';
import { createEngineContext, type EngineContext } from '../../../src/engine/context.js';
import { parseResolverAddress } from '../../../src/engine/dns/resolver-address.js';
import { parseIpAddress } from '../../../src/engine/address/ip-address.js';
import { reversedAddress } from '../../../src/engine/blacklist/dnsbl-answer.js';

/** What a list answers for one subject: A records, and an optional TXT reason. */
export interface Listing {
  a: string[];
  txt?: string;
}

/** The owner name of a subject in a zone: reversed octets or nibbles for addresses, the name for domains. */
export function listedName(subject: string, zone: string): string {
  if (/^[\d.]+$/.test(subject) || subject.includes(':')) return `${reversedAddress(parseIpAddress(subject))}.${zone}`;
  return `${subject}.${zone}`;
}

/**
 * The records of a zone: each listing, plus (unless `canaries: false`)
 * the listed test point (127.0.0.2 for IP lists, `test` for domain lists,
 * or the given name) answering `canaryCode`.
 */
export function zoneRecords(
  zone: string,
  listings: Record<string, Listing>,
  options: { kind?: 'ip' | 'domain'; canaries?: boolean; canaryName?: string; canaryCode?: string } = {},
): ZoneRecord[] {
  const records: ZoneRecord[] = [];
  const all: Record<string, Listing> = { ...listings };
  if (options.canaries !== false) {
    const point = options.canaryName ?? (options.kind === 'domain' ? 'test' : '127.0.0.2');
    all[point] ??= { a: [options.canaryCode ?? (options.kind === 'domain' ? '127.0.1.2' : '127.0.0.2')], txt: 'test point' };
  }
  for (const [subject, listing] of Object.entries(all)) {
    const name = listedName(subject, zone);
    for (const address of listing.a) records.push({ name, type: 'A', ttl: 60, data: address });
    if (listing.txt !== undefined) records.push({ name, type: 'TXT', ttl: 60, data: listing.txt });
  }
  return records;
}

/** An engine context asking only the given test server, with one deadline of `timeoutMs`. */
export function contextFor(address: string, timeoutMs = 1500, retries = 0): EngineContext {
  return createEngineContext({ resolvers: [parseResolverAddress(address)], timeoutMs, dnsRetries: retries });
}
