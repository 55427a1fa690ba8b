import { parseIpAddress } from '../address/ip-address.js';

/**
 * Well-known public recursive resolvers, by service address. Several DNS
 * lists (Spamhaus, URIBL, SURBL, Barracuda) refuse queries relayed by
 * them: Spamhaus answers 127.255.255.254 (or, through Google, NXDOMAIN),
 * URIBL and SURBL answer 127.0.0.1. A blacklist run through one of them
 * says so in its findings.
 */
const PUBLIC_RESOLVERS: ReadonlyArray<readonly [operator: string, addresses: readonly string[]]> = [
  ['Google Public DNS', ['8.8.8.8', '8.8.4.4', '2001:4860:4860::8888', '2001:4860:4860::8844']],
  ['Cloudflare 1.1.1.1', ['1.1.1.1', '1.0.0.1', '1.1.1.2', '1.0.0.2', '1.1.1.3', '1.0.0.3', '2606:4700:4700::1111', '2606:4700:4700::1001']],
  ['Quad9', ['9.9.9.9', '149.112.112.112', '9.9.9.10', '149.112.112.10', '9.9.9.11', '149.112.112.11', '2620:fe::fe', '2620:fe::9', '2620:fe::10', '2620:fe::11']],
  ['OpenDNS', ['208.67.222.222', '208.67.220.220', '208.67.222.123', '208.67.220.123', '2620:119:35::35', '2620:119:53::53']],
  ['AdGuard DNS', ['94.140.14.14', '94.140.15.15', '94.140.14.140', '94.140.14.141', '2a10:50c0::ad1:ff', '2a10:50c0::ad2:ff']],
  ['CleanBrowsing', ['185.228.168.9', '185.228.169.9', '185.228.168.168', '185.228.169.168']],
  ['Level 3 / Lumen', ['4.2.2.1', '4.2.2.2', '4.2.2.3', '4.2.2.4', '4.2.2.5', '4.2.2.6']],
  ['Yandex DNS', ['77.88.8.8', '77.88.8.1']],
];

let byAddress: Map<string, string> | undefined;

/**
 * The operator of a well-known public resolver at `host` (an IP address in
 * any text form), or null when the address is not one of them.
 */
export function publicResolverOperator(host: string): string | null {
  if (!byAddress) {
    byAddress = new Map();
    for (const [operator, addresses] of PUBLIC_RESOLVERS) {
      for (const address of addresses) byAddress.set(parseIpAddress(address).text, operator);
    }
  }
  try {
    return byAddress.get(parseIpAddress(host).text) ?? null;
  } catch {
    return null;
  }
}
