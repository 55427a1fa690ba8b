import { presentEvidence } from '../schemas/vpn-schema.js';
import { factList, headline, sections, type Fact } from './blocks.js';
import { reservedVerdict } from './ip-view.js';
import type { ViewContext } from './style.js';
import { yesNo, type HumanView } from './view.js';

interface VpnRecord {
  ip: string;
  is_vpn: boolean | null;
  is_proxy: boolean | null;
  is_tor: boolean | null;
  is_hosting: boolean | null;
  threat_level: string | null;
  threat_rule: string | null;
  provider: string | null;
  evidence: Parameters<typeof presentEvidence>[0][];
  reserved: string | null;
}

/** `threat: high (tor exit)`. */
function threatText(vpn: VpnRecord): string {
  const rule = vpn.threat_rule ? ` (${vpn.threat_rule.replaceAll('_', ' ')})` : '';
  return `threat: ${vpn.threat_level ?? 'unknown'}${rule}`;
}

function vpnBlock(ctx: ViewContext, value: unknown): string {
  const vpn = value as VpnRecord;
  if (vpn.reserved) return headline(ctx, vpn.ip, reservedVerdict(vpn.reserved), 'warn');
  const tone = vpn.threat_level === 'high' ? 'bad' : vpn.threat_level === 'medium' ? 'warn' : 'good';
  // A flag no signal could settle is unknown, not no.
  const flag = (set: boolean | null) => yesNo(set) ?? 'unknown';
  const facts: Fact[] = [
    ['vpn', flag(vpn.is_vpn)],
    ['proxy', flag(vpn.is_proxy)],
    ['tor', flag(vpn.is_tor)],
    ['hosting', flag(vpn.is_hosting)],
    ['provider', vpn.provider],
    ['evidence', vpn.evidence.length > 0 ? vpn.evidence.map(presentEvidence).join('\n') : 'no signal matched'],
  ];
  return sections(headline(ctx, vpn.ip, threatText(vpn), tone), factList(ctx, facts));
}

export const VPN_VIEW: HumanView = {
  block: vpnBlock,
  table: {
    columns: [
      { header: 'ip', priority: 0 },
      { header: 'threat', priority: 0 },
      { header: 'rule', priority: 2, wrap: true },
      { header: 'flags', priority: 1, wrap: true },
      { header: 'provider', priority: 3, wrap: true },
    ],
    cells: (value) => {
      const vpn = value as VpnRecord;
      if (vpn.reserved) return [vpn.ip, '', vpn.reserved, '', ''];
      const flags = [vpn.is_tor ? 'tor' : null, vpn.is_vpn ? 'vpn' : null, vpn.is_proxy ? 'proxy' : null, vpn.is_hosting ? 'hosting' : null].filter((item) => item !== null);
      return [vpn.ip, vpn.threat_level ?? '', vpn.threat_rule?.replaceAll('_', ' ') ?? '', flags.join(', '), vpn.provider ?? ''];
    },
    key: (value) => (value as VpnRecord).ip,
  },
};
