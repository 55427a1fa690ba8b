import type { IpInfoRecord } from '../../engine/ip/ip-record.js';
import { factList, headline, sections, type Fact } from './blocks.js';
import type { ViewContext } from './style.js';
import type { HumanView } from './view.js';
import { rpkiText } from './rpki-text.js';

/** `private (RFC 1918)` as `private address (RFC 1918), not routed on the internet`. */
export function reservedVerdict(reserved: string): string {
  const match = /^(.*?) \(([^()]*)\)$/.exec(reserved);
  const [name, reference] = match ? [match[1]!, ` (${match[2]})`] : [reserved, ''];
  return `${name} address${reference}, not routed on the internet`;
}

/** `Mountain View, California, US`: the place names known, most precise first. */
export function placeText(location: IpInfoRecord['location'] | null | undefined): string | null {
  if (!location) return null;
  const parts = [location.city, location.region, location.country_code ?? location.country].filter((part): part is string => part !== null && part !== '');
  return parts.length > 0 ? [...new Set(parts)].join(', ') : null;
}

/** `AS15169 Google LLC`. */
export function ownerText(network: IpInfoRecord['network'] | null | undefined): string | null {
  if (!network) return null;
  const parts = [network.asn === null ? null : `AS${network.asn}`, network.organization ?? network.isp].filter((part) => part !== null);
  return parts.length > 0 ? parts.join(' ') : null;
}

/** The flags that are set, as words: `hosting, vpn`. */
export function securityFlags(security: Partial<IpInfoRecord['security']> | null | undefined): string | null {
  if (!security) return null;
  const flags = [
    security.is_tor ? 'tor' : null,
    security.is_vpn ? 'vpn' : null,
    security.is_proxy ? 'proxy' : null,
    security.is_hosting ? 'hosting' : null,
  ].filter((flag) => flag !== null);
  return flags.length > 0 ? flags.join(', ') : null;
}

function ipBlock(ctx: ViewContext, value: unknown): string {
  const ip = value as IpInfoRecord;
  if (ip.reserved) return headline(ctx, ip.ip, reservedVerdict(ip.reserved), 'warn');
  const threat = ip.security?.threat_level;
  const risky = threat === 'high' || threat === 'medium' ? `threat ${threat}` : null;
  // A plan without the premium fields gets no network or security group (docs/api.md, Keys and the free tier).
  const network: Partial<IpInfoRecord['network']> = ip.network ?? {};
  // An origin the route's ROAs do not authorise is a hijack or a misconfiguration: said in the headline.
  const rpkiInvalid = network.rpki?.status === 'invalid' ? 'RPKI invalid' : null;
  const where = [placeText(ip.location), ownerText(ip.network), risky, rpkiInvalid].filter((part) => part !== null).join(' · ');
  const { location, security } = ip;
  const coordinates = location.latitude !== null && location.longitude !== null ? `${location.latitude}, ${location.longitude}` : null;
  const facts: Fact[] = [
    ['country', location.country === null ? null : `${location.country}${location.country_code ? ` (${location.country_code})` : ''}`],
    ['region', location.region === null ? null : `${location.region}${location.region_code ? ` (${location.region_code})` : ''}`],
    ['city', location.city],
    ['postal code', location.zip],
    ['coordinates', coordinates],
    ['time zone', location.timezone],
    ['AS', network.asn == null ? null : `AS${network.asn}`],
    ['organization', network.organization ?? null],
    ['ISP', network.isp !== network.organization ? (network.isp ?? null) : null],
    ['domain', network.domain ?? null],
    ['RPKI', rpkiText(network.rpki)],
    ['flags', securityFlags(security)],
    ['threat', threat && threat !== 'low' ? threat : null],
  ];
  return sections(headline(ctx, ip.ip, where === '' ? 'no location or network known' : where, threat === 'high' || rpkiInvalid ? 'bad' : threat === 'medium' ? 'warn' : 'plain'), factList(ctx, facts));
}

export const IP_VIEW: HumanView = {
  block: ipBlock,
  table: {
    columns: [
      // The flags are the verdict: they outlast the location, the organization and the AS number.
      { header: 'ip', priority: 0 },
      { header: 'location', priority: 2, wrap: true },
      { header: 'AS', priority: 4 },
      { header: 'organization', priority: 3, wrap: true },
      { header: 'flags', priority: 1, wrap: true },
    ],
    cells: (value) => {
      const ip = value as IpInfoRecord;
      if (ip.reserved) return [ip.ip, ip.reserved, '', '', ''];
      const flags = [securityFlags(ip.security), ip.network?.rpki?.status === 'invalid' ? 'RPKI invalid' : null].filter((flag) => flag !== null).join(', ');
      return [ip.ip, placeText(ip.location) ?? '', ip.network?.asn == null ? '' : `AS${ip.network.asn}`, ip.network?.organization ?? '', flags];
    },
    key: (value) => (value as IpInfoRecord).ip,
  },
};
