import type { FailOn } from '../cli/fail-on.js';
import type { BlacklistResult } from '../engine/blacklist/blacklist-result.js';
import type { FanOutLimits } from '../engine/fan-out.js';
import { isIpAddress } from '../engine/address/ip-address.js';
import { zoneEntryRecord } from '../engine/blacklist/zone-entry-record.js';
import type { Outcome } from '../engine/outcome.js';
import { NetintelError } from '../errors.js';
import { BLACKLIST_SCHEMA, BLACKLIST_ZONE_SCHEMA } from '../output/schemas/blacklist-schema.js';
import { defineOperation } from './operation.js';
import { oneRecordEach } from './outcomes.js';

interface BlacklistSettings {
  /** `--zones` as given, or null for the default set. */
  zones: string | null;
  /** `--list-zones`: print the zones a run would ask, and ask nothing. */
  listZones: boolean;
  fanOut: FanOutLimits;
  failOn: FailOn | undefined;
}

const USAGE = 'blacklist needs an IP address or a domain: give one or more, or pipe a list in';

/** `netintel blacklist`: IP addresses and domains against DNS blocklists, per zone, with an honest verdict. */
export const BLACKLIST = defineOperation<BlacklistSettings, BlacklistResult>()({
  name: 'blacklist',
  command: {
    declare(command, kit) {
      command
        .description('Check IP addresses and domains against DNS blocklists (DNSBLs): per-zone status, return codes and reasons, an honest verdict')
        .argument('[targets...]', 'IP addresses or domains; read from stdin when piped')
        .addOption(
          command.createOption(
            '--zones <list>',
            'zones to ask, comma-separated: registry names, "default", "all" (every live zone), or other zones as name:ip, name:ipv6, name:domain',
          ),
        )
        .addOption(command.createOption('--list-zones', 'print the zones a run would ask (with --zones: that selection) from the registry, and exit'));
      for (const option of kit.fanOutOptions(['max-mx', 'max-addresses'])) command.addOption(option);
      command.addHelpText('after', HELP).addOption(kit.failOnOption());
    },
    refuseRemote(flags, kit) {
      kit.refuseFanOut(flags, 'blacklist');
      if (flags.listZones) {
        throw new NetintelError('usage', '--list-zones lists this machine\'s zone registry, not the server\'s: run it without --server (or unset NETINTEL_SERVER)');
      }
    },
    settings: (flags, kit) => ({
      zones: (flags.zones as string | undefined) ?? null,
      listZones: flags.listZones === true,
      fanOut: kit.fanOut(flags),
      failOn: flags.failOn as FailOn | undefined,
    }),
    async run(run) {
      if (run.settings.listZones) {
        const { loadDnsblRegistry, selectZones } = await import('../engine/blacklist/dnsbl-registry.js');
        const registry = loadDnsblRegistry(run.options.dataDir);
        const selection = run.settings.zones === null ? { zones: [...registry.zones], dead: [] } : selectZones(registry, run.settings.zones);
        const rows = [...selection.zones, ...selection.dead].map((zone): Outcome<unknown> => ({ ok: true, query: zone.zone, value: zoneEntryRecord(zone) }));
        return run.emit([rows], { single: false, bulk: false, record: { columns: BLACKLIST_ZONE_SCHEMA } });
      }
      return run.lookupTargets({
        targets: run.args,
        none: { usage: USAGE },
        // Only whether a finding reaches --fail-on matters: the first that does is kept, not every finding of a bulk run.
        failOn: { level: run.settings.failOn, findings: (result) => result.findings, firstOnly: true },
        coverage: blacklistCoverage,
      });
    },
  },
  async lookup(ctx, settings) {
    // The blacklist engine (DNS sockets, the zone registry) loads only when this command runs.
    const { createBlacklistChecker } = await import('../engine/blacklist/check-blacklist.js');
    const checker = await createBlacklistChecker({ ...ctx, fanOut: settings.fanOut }, { zones: settings.zones });
    return Object.assign(oneRecordEach((target) => checker.check(target)), { close: () => checker.close() });
  },
  record: {
    columns: BLACKLIST_SCHEMA,
    json: { name: 'BlacklistResult', load: async () => ({ schema: (await import('./record-json-schemas.js')).BLACKLIST_RECORD }) },
    view: async () => (await import('../output/human/blacklist-view.js')).BLACKLIST_VIEW,
  },
  api: {
    method: 'GET',
    path: '/api/blacklist-check',
    feature: null,
    // The server's resolvers and registry answer, with --zones as `zones`.
    query: (target, settings) => ({ ...(target !== null && isIpAddress(target) ? { ip: target } : { domain: target ?? undefined }), zones: settings.zones ?? undefined }),
    subject: () => 'target',
    route: () => ({
      group: 'mail',
      network: true,
      operationId: 'getBlacklistCheck',
      summary: 'DNS blacklist (DNSBL) check of an address or a mail domain',
      description: 'Looks the address (or the mail servers of a domain) up in DNS blacklists.',
      querystring: {
        type: 'object',
        properties: {
          ip: { type: 'string', maxLength: 100, description: 'IPv4 or IPv6 address.' },
          domain: { type: 'string', maxLength: 255, description: 'Domain: the domain lists, and its mail servers\' addresses on the IP lists.' },
          zones: { type: 'string', maxLength: 1000, description: 'The zones to ask, as `netintel blacklist --zones` takes them (default: the default set).' },
        },
      },
      // Exactly one of the two.
      queryRules: { oneOf: [{ required: ['ip'] }, { required: ['domain'] }] },
      responseDescription: 'The blacklist record of `netintel blacklist`.',
      examples: [{ query: '?ip=192.0.2.1' }, { query: '?domain=example.com' }],
      handler: async (request, _reply, api) => {
        const query = request.query as { ip?: string; domain?: string; zones?: string };
        if ((query.ip === undefined) === (query.domain === undefined)) throw new NetintelError('usage', 'give exactly one of ip or domain');
        const { checkBlacklist } = await import('../engine/blacklist/check-blacklist.js');
        return checkBlacklist(api.ctx, (query.ip ?? query.domain)!, { zones: query.zones ?? null });
      },
    }),
  },
});

/**
 * How far a blacklist check could run: nothing (no zone, nor the mail
 * hosts, could be checked: the verdict is `unknown` with a failure), in part
 * (`incomplete`, or `listed` with zones left unchecked), or in full. A
 * verdict of `unknown` without a failure asked no zone at all (none
 * applies to the target): that is an answer, not a failure.
 */
function blacklistCoverage(result: BlacklistResult): { checked: 'all' | 'some' | 'none'; failure: { code: string } | null } {
  const failure = result.verdict.failure ?? null;
  return { checked: failure === null ? 'all' : result.verdict.status === 'unknown' ? 'none' : 'some', failure };
}

const HELP = [
  '',
  'An IP address is asked of the IP lists (IPv6 only of lists with IPv6 data); a domain is asked of the',
  'domain lists, and the addresses of its MX hosts of the IP lists, each row naming its MX host.',
  'Each zone must pass its RFC 5782 test points (127.0.0.2 listed, 127.0.0.1 not) before its answer counts.',
  'Per zone: listed | clean | refused | timeout | error. Refusal codes (Spamhaus 127.255.255.x, URIBL/SURBL',
  '127.0.0.1) are never read as listed or clean, dead lists are never asked. Listed and clean are answers',
  '(exit 0; --fail-on error exits 10 on a listing). A zone that refused, timed out or failed is "unknown":',
  'when no zone answered the run exits with the failure\'s code (4 timeout, 5 refused or unreachable), when',
  'some did not it exits 7; these codes come before --fail-on\'s 10.',
  'Every zone is asked at once; --timeout is the deadline of the whole check of one target.',
  'A domain\'s first --max-mx MX hosts by preference are checked, --max-addresses addresses of each; a cap',
  'that left some out is a warning finding.',
  'Public resolvers (8.8.8.8, 1.1.1.1, 9.9.9.9...) are refused by Spamhaus, URIBL and SURBL: use your own.',
  'Examples:',
  '  netintel blacklist 192.0.2.1',
  '  netintel blacklist example.com -f json',
  '  netintel blacklist 2001:db8::25 --zones zen.spamhaus.org,bl.spamcop.net',
  '  netintel blacklist 192.0.2.1 --zones default,bl.example.net:ip --resolver 127.0.0.1',
  '  netintel blacklist --list-zones --zones all',
  '  netintel blacklist -f csv --fields verdict < mail-servers.txt',
].join('\n');
