/**
 * The threat_level rule: a fixed table from the flags to a level, first
 * matching row wins. Every verdict names the row that fired (`threat_rule`),
 * so a level can always be traced to the evidence behind its flag.
 *
 * | threat_level | threat_rule       | fires when                                                    |
 * |--------------|-------------------|---------------------------------------------------------------|
 * | high         | `tor_exit`        | is_tor: a Tor exit list holds the address                     |
 * | high         | `open_proxy`      | is_proxy: an open proxy list holds the address                |
 * | medium       | `vpn`             | is_vpn: a VPN range or a VPN operator's AS                    |
 * | unknown      | `signals_missing` | no Tor exit or open proxy list was consulted (is_tor or is_proxy null) |
 * | low          | `hosting`         | is_hosting only: cloud, datacenter or hosting AS              |
 * | low          | `no_signal`       | no signal fired, and at least one source was consulted        |
 * | null         | null              | nothing was consulted (special-purpose address, no data)      |
 *
 * `unknown` keeps a verdict that could not see the high-risk signals from
 * reading as a clean `low`: the address may be a Tor exit or an open proxy
 * that no installed list could name.
 */

export type ThreatLevel = 'low' | 'medium' | 'high' | 'unknown';

export type ThreatRule = 'tor_exit' | 'open_proxy' | 'vpn' | 'signals_missing' | 'hosting' | 'no_signal';

export const THREAT_LEVELS: readonly ThreatLevel[] = ['low', 'medium', 'high', 'unknown'];

/** The rows of the rule, in the order they are tried. */
export const THREAT_RULES: ReadonlyArray<{ rule: ThreatRule; level: ThreatLevel; when: string }> = [
  { rule: 'tor_exit', level: 'high', when: 'is_tor: a Tor exit list holds the address' },
  { rule: 'open_proxy', level: 'high', when: 'is_proxy: an open proxy list holds the address' },
  { rule: 'vpn', level: 'medium', when: "is_vpn: a VPN range holds the address or a VPN operator's AS announces it" },
  { rule: 'signals_missing', level: 'unknown', when: 'no Tor exit or open proxy list was consulted (is_tor or is_proxy null): run netintel data update' },
  { rule: 'hosting', level: 'low', when: 'is_hosting only: a cloud or datacenter range, or a hosting/cloud/CDN AS' },
  { rule: 'no_signal', level: 'low', when: 'no signal fired, and at least one source was consulted' },
];

/** The flags the rule reads: true (a signal fired), false (consulted, nothing fired), null (not consulted). */
export interface ThreatFlags {
  is_vpn: boolean | null;
  is_proxy: boolean | null;
  is_tor: boolean | null;
  is_hosting: boolean | null;
}

/** The level and the row that fired; both null when every flag is null (nothing was consulted). */
export function threatVerdict(flags: ThreatFlags): { level: ThreatLevel | null; rule: ThreatRule | null } {
  if (flags.is_tor === true) return { level: 'high', rule: 'tor_exit' };
  if (flags.is_proxy === true) return { level: 'high', rule: 'open_proxy' };
  if (flags.is_vpn === true) return { level: 'medium', rule: 'vpn' };
  if (flags.is_tor === null && flags.is_proxy === null && flags.is_vpn === null && flags.is_hosting === null) {
    return { level: null, rule: null };
  }
  if (flags.is_tor === null || flags.is_proxy === null) return { level: 'unknown', rule: 'signals_missing' };
  if (flags.is_hosting === true) return { level: 'low', rule: 'hosting' };
  return { level: 'low', rule: 'no_signal' };
}
