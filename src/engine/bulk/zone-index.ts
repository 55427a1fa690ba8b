import { parseIpv6Text } from '../address/ip-text.js';

/**
 * A list line that is an IPv6 address with a zone index (`fe80::1%eth0`, as
 * `netintel grep -o` prints it from a log) without its zone; any other text
 * as it is. A zone names a link of the host that wrote the address (RFC 4007
 * §11), not part of the address, and the lookups take none
 * (parseIpAddress): the line is looked up as the address, as `netintel
 * summarize` looks up the addresses it finds.
 */
export function withoutZoneIndex(text: string): string {
  const zone = text.indexOf('%');
  if (zone === -1 || parseIpv6Text(text) === null) return text;
  return text.slice(0, zone);
}
