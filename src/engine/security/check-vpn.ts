import type { EngineContext } from '../context.js';
import type { AccessMode } from '../ip/ip-databases.js';
import type { IpInfoRecord, IpRecordMeta } from '../ip/ip-record.js';
import { lookupIp } from '../ip/lookup-ip.js';
import type { SecurityEvidence, SignalCoverage } from './signals.js';
import type { ThreatLevel, ThreatRule } from './threat-rule.js';

/**
 * The answer of `netintel vpn` (GET /api/vpn-check): the IP record's security
 * verdict on its own, with the evidence that explains it.
 */
export interface VpnResult {
  kind: 'vpn';
  ip: string;
  is_vpn: boolean | null;
  is_proxy: boolean | null;
  is_tor: boolean | null;
  is_hosting: boolean | null;
  threat_level: ThreatLevel | null;
  /** The row of the threat_level rule that fired (see threat-rule.ts). */
  threat_rule: ThreatRule | null;
  /** The VPN or hosting operator, when a source names it. */
  provider: string | null;
  /** Every signal that fired: what matched, in which dataset, of which date. */
  evidence: readonly SecurityEvidence[];
  /** The signals consulted, and those no installed feed gives. */
  coverage: SignalCoverage;
  /** The special-purpose block of the address (then nothing is consulted and the flags are null). */
  reserved: string | null;
  meta: IpRecordMeta;
}

/** The VPN record of an IP record (shares its evidence). */
export function toVpnResult(record: IpInfoRecord): VpnResult {
  const security = record.security;
  return {
    kind: 'vpn',
    ip: record.ip,
    is_vpn: security.is_vpn,
    is_proxy: security.is_proxy,
    is_tor: security.is_tor,
    is_hosting: security.is_hosting,
    threat_level: security.threat_level,
    threat_rule: security.threat_rule,
    provider: security.provider,
    evidence: security.evidence,
    coverage: security.coverage,
    reserved: record.reserved,
    meta: record.meta,
  };
}

/**
 * Checks one address (any valid text form) against the security signals.
 *
 * @throws NetintelError `invalid_input` for text that is not an IP address;
 *   `data_unavailable` when a dataset is missing or corrupt.
 */
export function checkVpn(ctx: EngineContext, input: string, mode: AccessMode = 'pread'): VpnResult {
  return toVpnResult(lookupIp(ctx, input, mode, { location: false }));
}
