/**
 * The words a human view labels a field with, from its snake_case path:
 * `mta_sts.policy_error.message` is "MTA-STS policy error message". Record
 * keys are for programs; a human view never shows one raw (docs/api.md,
 * Record keys).
 */

/** Words written in capitals (and the pairs written as one hyphenated word). */
const ACRONYMS: Readonly<Record<string, string>> = {
  dns: 'DNS',
  mx: 'MX',
  spf: 'SPF',
  dkim: 'DKIM',
  dmarc: 'DMARC',
  bimi: 'BIMI',
  tls: 'TLS',
  ttl: 'TTL',
  ip: 'IP',
  as: 'AS',
  asn: 'ASN',
  dnssec: 'DNSSEC',
  url: 'URL',
  id: 'ID',
  ptr: 'PTR',
  smtp: 'SMTP',
  cidr: 'CIDR',
  api: 'API',
  isp: 'ISP',
  vpn: 'VPN',
  ipv4: 'IPv4',
  ipv6: 'IPv6',
  utf8: 'UTF8',
  sha256: 'SHA-256',
  dane: 'DANE',
  tlsa: 'TLSA',
  ehlo: 'EHLO',
  svg: 'SVG',
};

const PAIRS: Readonly<Record<string, string>> = {
  'mta sts': 'MTA-STS',
  'tls rpt': 'TLS-RPT',
};

/** The label of a field: a label its column declares, else words from its dot path. */
export function fieldLabel(path: string, declared?: Readonly<Record<string, string>>): string {
  const own = declared?.[path];
  if (own !== undefined) return own;
  const words = path.split(/[._]+/).filter((word) => word !== '');
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const pair = PAIRS[`${words[i]} ${words[i + 1]}`];
    if (pair !== undefined) {
      out.push(pair);
      i++;
      continue;
    }
    out.push(ACRONYMS[words[i]!] ?? words[i]!);
  }
  // Repeated words read once: `dane.tlsa.dnssec.status`, not a stutter of the path's nesting.
  const unique = out.filter((word, index) => index === 0 || word.toLowerCase() !== out[index - 1]!.toLowerCase());
  const first = unique[0] ?? '';
  return [first.charAt(0).toUpperCase() + first.slice(1), ...unique.slice(1)].join(' ');
}
