/**
 * The vocabulary of security verdicts: the signals a source can give, the
 * flag each one sets, and the evidence item that explains a verdict.
 */

/**
 * What a matching source says about an address.
 *
 * - `tor_exit_list`: a Tor exit list holds the address (is_tor)
 * - `proxy_list`: an open proxy list holds the address (is_proxy)
 * - `vpn_range`: a VPN CIDR list holds the address (is_vpn)
 * - `vpn_asn`: the announcing AS is a VPN operator's (is_vpn)
 * - `cloud_range`: a cloud provider's published ranges hold the address (is_hosting)
 * - `datacenter_range`: a datacenter/hosting CIDR list holds the address (is_hosting)
 * - `hosting_asn`: the announcing AS is a hosting, cloud or CDN operator's (is_hosting)
 */
export type SignalName = 'tor_exit_list' | 'proxy_list' | 'vpn_range' | 'vpn_asn' | 'cloud_range' | 'datacenter_range' | 'hosting_asn';

export const SIGNAL_NAMES: readonly SignalName[] = [
  'tor_exit_list',
  'proxy_list',
  'vpn_range',
  'vpn_asn',
  'cloud_range',
  'datacenter_range',
  'hosting_asn',
];

/** The security flags of the IP record, by their API names (docs/api.md, The IP record). */
export type SecurityFlag = 'is_tor' | 'is_proxy' | 'is_vpn' | 'is_hosting';

/** The flag each signal sets. */
export const SIGNAL_FLAG: Readonly<Record<SignalName, SecurityFlag>> = {
  tor_exit_list: 'is_tor',
  proxy_list: 'is_proxy',
  vpn_range: 'is_vpn',
  vpn_asn: 'is_vpn',
  cloud_range: 'is_hosting',
  datacenter_range: 'is_hosting',
  hosting_asn: 'is_hosting',
};

/** Signals an address list gives (a feed must be installed for them to speak). */
export const ADDRESS_SIGNALS: readonly SignalName[] = ['tor_exit_list', 'proxy_list', 'vpn_range', 'cloud_range', 'datacenter_range'];

/** Signals the announcing AS gives (the embedded curated list always speaks for them). */
export const ASN_SIGNALS: readonly SignalName[] = ['vpn_asn', 'hosting_asn'];

/**
 * Which signals a verdict heard: `consulted` were checked (whether or not
 * they fired); `missing` could not be, because no installed feed gives them
 * (`netintel data update` installs them). An address no AS announces has no
 * AS signals to check: they are in neither list.
 */
export interface SignalCoverage {
  consulted: readonly SignalName[];
  missing: readonly SignalName[];
}

/** The coverage of a verdict that consulted nothing (a special-purpose address). */
export const NO_COVERAGE: SignalCoverage = Object.freeze({ consulted: Object.freeze([]), missing: Object.freeze([]) });

export function isSignalName(value: unknown): value is SignalName {
  return typeof value === 'string' && (SIGNAL_NAMES as readonly string[]).includes(value);
}

/** One signal that fired for an address: why a flag is true. */
export interface SecurityEvidence {
  signal: SignalName;
  /** The dataset that matched (a source name of `netintel data status`). */
  source: string;
  /** What matched: a CIDR (`185.220.100.0/22`), an address, `ip:port`, a range `a-b`, or an AS (`AS9009`). */
  matched: string;
  /** The operator the source names for the entry (VPN service, cloud, hosting company), or null. */
  provider: string | null;
  /** The dataset's date (ISO 8601), or null when unknown. */
  updated: string | null;
}

/**
 * Ordering of evidence in a verdict: the flag that weighs most first (Tor,
 * proxy, VPN, hosting), address matches before AS matches.
 */
export const SIGNAL_ORDER: Readonly<Record<SignalName, number>> = {
  tor_exit_list: 0,
  proxy_list: 1,
  vpn_range: 2,
  vpn_asn: 3,
  cloud_range: 4,
  datacenter_range: 5,
  hosting_asn: 6,
};
