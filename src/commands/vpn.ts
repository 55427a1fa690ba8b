import type { Command } from 'commander';
import type { Outcome } from '../engine/outcome.js';
import type { IpInfoRecord } from '../engine/ip/ip-record.js';
import type { VpnResult } from '../engine/security/check-vpn.js';
import { toNetintelError } from '../errors.js';
import { VPN_SCHEMA } from '../output/schemas/vpn-schema.js';
import { emitOutcomes } from '../cli/emit.js';
import { stdinBringsList } from '../cli/io.js';
import type { CommandRuntime } from '../cli/runtime.js';
import { regularFileSize } from '../cli/progress.js';
import { printVpnResults, takesAddressTargets } from './address-lookups.js';

export function registerVpnCommand(program: Command, runtime: CommandRuntime): void {
  program
    .command('vpn')
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
    )
    .action(async (targets: string[], _flags: unknown, command: Command) => {
      const options = runtime.options(command);
      if (!options.remote && takesAddressTargets(targets)) return printVpnResults(runtime, options, targets);
      const ctx = runtime.context(options);
      const { io } = runtime;
      // The engine loads here, not at start-up: other commands never pay for it.
      const [{ createAdaptiveIpLookup, ipTargetOutcomes, isHostNameTarget }, { toVpnResult }, { flattenBatches, mapOrdered }, { readTargetBatches, targetsFromArguments }] =
        await Promise.all([
          import('../engine/ip/ip-target-lookup.js'),
          import('../engine/security/check-vpn.js'),
          import('../engine/bulk/map-ordered.js'),
          import('../engine/bulk/read-targets.js'),
        ]);
      // The verdict needs no location: the city database stays closed.
      const lookup = createAdaptiveIpLookup(ctx, { location: false });
      const dns = () => import('../engine/dns/host-addresses.js');
      const resolveHost = async (name: string) => (await dns()).resolveHostAddresses(ctx, name);
      const toVpn = (outcomes: Array<Outcome<IpInfoRecord>>): Array<Outcome<VpnResult>> =>
        outcomes.map((outcome) => (outcome.ok ? { ok: true, query: outcome.query, value: toVpnResult(outcome.value) } : outcome));
      // Remote mode (--server): GET /api/vpn-check per address; host names are resolved by the server.
      const remote = options.remote ? (await import('../cli/remote-mode.js')).openRemoteEngine(options, io, runtime.progress) : null;
      const vpnCheck = async (ip: string | undefined) => (await remote!.client.get('/api/vpn-check', { ip })).body as VpnResult;
      const expand = (query: string): Array<Outcome<VpnResult>> | Promise<Array<Outcome<VpnResult>>> => {
        if (remote) return remote.hostTargetOutcomes(query, vpnCheck);
        const outcomes = ipTargetOutcomes(lookup, resolveHost, query);
        return Array.isArray(outcomes) ? toVpn(outcomes) : outcomes.then(toVpn);
      };
      const limit = remote ? remote.concurrency : options.concurrency;

      if (targets.length === 0 && stdinBringsList(io)) {
        const batches = readTargetBatches(runtime.progress.input(io.stdin, () => regularFileSize(0)));
        const outcomes = runtime.progress.track(flattenBatches(mapOrdered(batches, (target) => expand(target.text), limit)), true);
        runtime.exitCode = await emitOutcomes(io, options, VPN_SCHEMA, outcomes, { single: false, bulk: true });
        return;
      }
      if (remote && targets.length === 0) {
        // The caller's address as the server sees it, as `netintel ip` asks it.
        const outcome = await remote.recordOutcome<VpnResult>('/api/vpn-check', {}, 'me');
        runtime.exitCode = await emitOutcomes(io, options, VPN_SCHEMA, [[outcome.ok ? { ...outcome, query: outcome.value.ip } : outcome]], { single: true, bulk: false });
        return;
      }
      if (targets.length === 0) {
        const outcome = await (await dns()).lookupCallerIp(ctx).then(
          (ip) => expand(ip),
          (error: unknown) => [{ ok: false as const, query: 'me', error: toNetintelError(error) }],
        );
        runtime.progress.noteCoverage(outcome);
        runtime.exitCode = await emitOutcomes(io, options, VPN_SCHEMA, [outcome], { single: true, bulk: false });
        return;
      }
      const single = targets.length === 1 && !isHostNameTarget(targets[0]!.trim());
      const outcomes = runtime.progress.track(flattenBatches(mapOrdered([targetsFromArguments(targets)], (target) => expand(target.text), limit)), false);
      runtime.exitCode = await emitOutcomes(io, options, VPN_SCHEMA, outcomes, { single, bulk: false });
    });
}
