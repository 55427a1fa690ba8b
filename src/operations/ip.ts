import type { IpInfoRecord } from '../engine/ip/ip-record.js';
import { IP_SCHEMA } from '../output/schemas/ip-schema.js';
import { lazyHandler } from './lazy-handler.js';
import { defineOperation, type Lookup } from './operation.js';
import { failed } from './outcomes.js';

interface IpSettings {
  /** The most addresses a range target expands to, one row each (`--max-expand`). */
  maxExpand: number;
}

/** The groups of the IP record that need a plan with `premium` (docs/api.md, Keys and the free tier: threat intelligence, ISP details). */
export const PREMIUM_GROUPS = ['network', 'security'] as const;

/** The media types GET /api/ipinfo answers in (`format`). */
export const IP_ANSWER_TYPES = {
  json: 'application/json; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
} as const;

/** `netintel ip`: where an address is and who runs it, from the local datasets. */
export const IP = defineOperation<IpSettings, IpInfoRecord>()({
  name: 'ip',
  command: {
    declare(command, kit) {
      command
        .description('location, network and security flags of IP addresses (host names: each of their addresses)')
        .argument('[targets...]', 'IPv4/IPv6 addresses, ranges (192.0.2.0/28, 192.0.2.1-192.0.2.9: one row per address) or host names; read from stdin when piped; your public IP when none')
        .addOption(kit.maxExpandOption())
        .addHelpText(
          'after',
          '\nExamples:\n  netintel ip 8.8.8.8\n  netintel ip 2001:4860:4860::8888 -f json\n  netintel ip example.com --fields location.city,network.asn\n  netintel ip 192.0.2.0/28 -f csv\n  cut -d" " -f1 access.log | netintel ip -f csv',
        );
    },
    settings: async (flags) => ({ maxExpand: (flags.maxExpand as number | undefined) ?? (await import('../engine/ip/ip-range-expand.js')).DEFAULT_MAX_EXPAND }),
    async run(run) {
      const { maxExpand } = run.settings;
      const [{ expandable, expandRangeTargets, isRangeTarget, rangeFailure }, { isHostNameTarget }] = await Promise.all([
        import('../engine/ip/ip-range-expand.js'),
        import('../engine/ip/ip-target-lookup.js'),
      ]);
      // One target that is neither a host name nor an expanded range has exactly one outcome: json prints it as an object.
      const only = run.args.length === 1 ? run.args[0]!.trim() : null;
      return run.lookupTargets({
        targets: run.args,
        none: 'caller',
        // Ranges within --max-expand arrive as their addresses; one left whole fails.
        expand: (targets) => expandRangeTargets(targets, maxExpand),
        refuse: (target) => (isRangeTarget(target) ? rangeFailure(target, maxExpand) : null),
        single: only !== null && !isHostNameTarget(only) && expandable(only, maxExpand) === null,
      });
    },
  },
  async lookup(ctx) {
    const { createAdaptiveIpLookup, ipTargetOutcomes } = await import('../engine/ip/ip-target-lookup.js');
    const lookup = createAdaptiveIpLookup(ctx);
    // The DNS engine loads only when a host name or the caller's IP is asked for.
    const dns = () => import('../engine/dns/host-addresses.js');
    const resolveHost = async (name: string) => (await dns()).resolveHostAddresses(ctx, name);
    const each: Lookup<IpInfoRecord> = (query) => ipTargetOutcomes(lookup, resolveHost, query);
    each.ownAddress = async () => (await dns()).lookupCallerIp(ctx).then((ip) => each(ip), (error: unknown) => [failed('me', error)]);
    return each;
  },
  record: {
    columns: IP_SCHEMA,
    json: { name: 'IpInfoRecord', bulkAnswer: 'IpBulkAnswer', load: async () => ({ schema: (await import('./record-json-schemas.js')).IP_RECORD }) },
    view: async () => (await import('../output/human/ip-view.js')).IP_VIEW,
  },
  api: {
    method: 'GET',
    path: '/api/ipinfo',
    feature: null,
    query: (ip) => ({ ip: ip ?? undefined }),
    expected: (remote) => remote.recordAnswer('IpInfoRecord', 'ip record'),
    record({ body, headers }, remote) {
      const record = body as Record<string, unknown>;
      const withheld = headers.get('x-netintel-withheld');
      if (withheld) remote.withheld(withheld);
      // Groups left out without the header: said all the same, or the record would print as whole.
      const missing = PREMIUM_GROUPS.filter((group) => record[group] === undefined);
      if (!withheld && missing.length > 0) remote.withheld(missing.join(','), false);
      // The schema lets POST /api/bulk's `fields` leave location out; GET /api/ipinfo always has it, and the views read it.
      if (record.location === undefined) throw remote.unfit('ip record', 'it has no location group');
      // A free-tier answer's extra member, taken off so the record prints as locally.
      delete record.note;
      return record as unknown as IpInfoRecord;
    },
    // The record of the address asked, not another's (a host name is asked by each of its addresses; the caller's own is whatever the server sees).
    subject: () => 'ip',
    hostNames: true,
    caller: (record) => record.ip,
    route: () => ({
      operationId: 'getIpInfo',
      summary: 'IP information record: location, network, security flags',
      description:
        'The IP information record of an IPv4 or IPv6 address, or of the caller when `ip` is omitted. ' +
        'Without a key (or on a plan without premium fields) only basic geolocation is returned: `network` and `security` ' +
        'are left out, the header X-Netintel-Withheld names them and a JSON answer carries a `note`.',
      querystring: {
        type: 'object',
        properties: {
          ip: { type: 'string', maxLength: 100, description: 'IPv4 or IPv6 address; the caller\'s address when omitted.' },
          format: { type: 'string', enum: ['json', 'xml', 'csv'], default: 'json', description: 'Answer format.' },
        },
      },
      produces: [IP_ANSWER_TYPES.json, IP_ANSWER_TYPES.xml, IP_ANSWER_TYPES.csv],
      responseDescription: 'The IP information record (json), or its XML or CSV form (the layout of `netintel ip -f xml|csv`).',
      examples: [{ query: '?ip=8.8.8.8' }, { query: '?ip=8.8.8.8&format=csv' }, { query: '' }],
      handler: lazyHandler(async () => (await import('./ip-answer.js')).ipinfoAnswer),
    }),
  },
});
