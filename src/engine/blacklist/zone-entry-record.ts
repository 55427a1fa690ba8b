import type { DnsblZone } from './dnsbl-registry.js';

/**
 * A zone registry entry as `blacklist --list-zones` prints it. The registry
 * file keeps its own field names; the record's keys are snake_case as every
 * record's (docs/api.md, Record keys).
 */
export interface DnsblZoneRecord {
  zone: string;
  name: string | null;
  kind: DnsblZone['kind'];
  ipv6: boolean;
  status: DnsblZone['status'];
  dead_since: string | null;
  subzones: boolean;
  default: boolean;
  listing_severity: DnsblZone['listingSeverity'];
  codes: Readonly<Record<string, string>>;
  bitmask: Readonly<Record<string, string>> | null;
  refusal_codes: Readonly<Record<string, string>>;
  canaries: { listed: string; not_listed: string };
  refuses_public_resolvers: boolean;
  usage: string | null;
  info_url: string | null;
  delist_url: string | null;
  sources: readonly string[];
  note: string | null;
  registered: boolean;
}

export function zoneEntryRecord(zone: DnsblZone): DnsblZoneRecord {
  return {
    zone: zone.zone,
    name: zone.name,
    kind: zone.kind,
    ipv6: zone.ipv6,
    status: zone.status,
    dead_since: zone.deadSince,
    subzones: zone.subzones,
    default: zone.default,
    listing_severity: zone.listingSeverity,
    codes: zone.codes,
    bitmask: zone.bitmask,
    refusal_codes: zone.refusalCodes,
    canaries: { listed: zone.canaries.listed, not_listed: zone.canaries.notListed },
    refuses_public_resolvers: zone.refusesPublicResolvers,
    usage: zone.usage,
    info_url: zone.infoUrl,
    delist_url: zone.delistUrl,
    sources: zone.sources,
    note: zone.note,
    registered: zone.registered,
  };
}
