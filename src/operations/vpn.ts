import type { IpInfoRecord } from '../engine/ip/ip-record.js';
import type { VpnResult } from '../engine/security/check-vpn.js';
import { VPN_SCHEMA } from '../output/schemas/vpn-schema.js';
import { defineOperation, type Lookup, type Outcomes } from './operation.js';
import { failed } from './outcomes.js';

/** `netintel vpn`: the security verdict of addresses, with the evidence for each. */
export const VPN = defineOperation<Record<string, never>, VpnResult>()({
  name: 'vpn',
  defaults: {},
  command: {
    declare(command) {
      command
        .description('VPN, proxy, Tor and hosting flags of IP addresses, the threat level, and the evidence for each')
        .argument('[targets...]', 'IPv4/IPv6 addresses or host names; read from stdin when piped; your public IP when none')
        .addHelpText(
          'after',
          [
            '',
            'threat_level: high for a Tor exit or an open proxy, medium for a VPN, low otherwise (hosting included);',
            'threat_rule names the row that fired. Feeds come from `netintel data update`; without them only the',
            'curated ASN list speaks (is_hosting, is_vpn), is_tor / is_proxy are null (unknown), and a verdict',
            'that would be low is threat_level unknown (rule signals_missing); coverage.missing lists the signals not consulted.',
            'Examples:',
            '  netintel vpn 185.220.101.1',
            '  netintel vpn 8.8.8.8 -f json',
            '  cut -d" " -f1 access.log | netintel vpn -f csv',
          ].join('\n'),
        );
    },
    settings: () => ({}),
    async run(run) {
      const { isHostNameTarget } = await import('../engine/ip/ip-target-lookup.js');
      return run.lookupTargets({
        targets: run.args,
        none: 'caller',
        single: run.args.length === 1 && !isHostNameTarget(run.args[0]!.trim()),
      });
    },
  },
  async lookup(ctx) {
    const [{ createAdaptiveIpLookup, ipTargetOutcomes }, { toVpnResult }] = await Promise.all([import('../engine/ip/ip-target-lookup.js'), import('../engine/security/check-vpn.js')]);
    // The verdict needs no location: the city database stays closed.
    const lookup = createAdaptiveIpLookup(ctx, { location: false });
    const dns = () => import('../engine/dns/host-addresses.js');
    const resolveHost = async (name: string) => (await dns()).resolveHostAddresses(ctx, name);
    const toVpn = (outcomes: Outcomes<IpInfoRecord>): Outcomes<VpnResult> =>
      outcomes.map((outcome) => (outcome.ok ? { ok: true, query: outcome.query, value: toVpnResult(outcome.value) } : outcome));
    const each: Lookup<VpnResult> = (query) => {
      const outcomes = ipTargetOutcomes(lookup, resolveHost, query);
      return Array.isArray(outcomes) ? toVpn(outcomes) : outcomes.then(toVpn);
    };
    each.ownAddress = async () => (await dns()).lookupCallerIp(ctx).then((ip) => each(ip), (error: unknown) => [failed('me', error)]);
    return each;
  },
  record: {
    columns: VPN_SCHEMA,
    json: { name: 'VpnResult', load: async () => ({ schema: (await import('./record-json-schemas.js')).VPN_RECORD }) },
    view: async () => (await import('../output/human/vpn-view.js')).VPN_VIEW,
  },
  api: {
    method: 'GET',
    path: '/api/vpn-check',
    feature: 'premium',
    query: (ip) => ({ ip: ip ?? undefined }),
    subject: () => 'ip',
    hostNames: true,
    caller: (record) => record.ip,
    route: () => ({
      network: true,
      operationId: 'getVpnCheck',
      summary: 'VPN, proxy, Tor and hosting detection for an address',
      description:
        'The security verdict of an address with the evidence behind it; needs a key with premium fields (threat intelligence). ' +
        'Without `ip`, the caller\'s own address (as GET /api/ipinfo).',
      querystring: {
        type: 'object',
        properties: { ip: { type: 'string', maxLength: 100, description: 'IPv4 or IPv6 address; default the caller\'s.' } },
      },
      responseDescription: 'The VPN check record of `netintel vpn`.',
      examples: [{ query: '?ip=198.51.100.7' }],
      handler: async (request, _reply, api) => {
        const { checkVpn } = await import('../engine/security/check-vpn.js');
        return checkVpn(api.ctx, (request.query as { ip?: string }).ip ?? request.netintel.client, api.dataMode);
      },
    }),
  },
});
