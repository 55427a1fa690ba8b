import { Option, type Command } from 'commander';
import { integerIn } from '../cli/integer-option.js';
import { flattenBatches, mapOrdered } from '../engine/bulk/map-ordered.js';
import { readTargetBatches, targetsFromArguments } from '../engine/bulk/read-targets.js';
import { createAdaptiveIpLookup, ipTargetOutcomes, isHostNameTarget } from '../engine/ip/ip-target-lookup.js';
import { DEFAULT_MAX_EXPAND, expandable, expandRangeTargets, isRangeTarget, MAX_EXPAND_LIMIT, rangeFailure } from '../engine/ip/ip-range-expand.js';
import { toNetintelError } from '../errors.js';
import { IP_SCHEMA } from '../output/schemas/ip-schema.js';
import { emitOutcomes } from '../cli/emit.js';
import { stdinBringsList } from '../cli/io.js';
import type { CommandRuntime } from '../cli/runtime.js';
import { regularFileSize } from '../cli/progress.js';
import { printIpRecords, takesAddressTargets } from './address-lookups.js';

export function registerIpCommand(program: Command, runtime: CommandRuntime): void {
  program
    .command('ip')
    .description('location, network and security flags of IP addresses (host names: each of their addresses)')
    .argument('[targets...]', 'IPv4/IPv6 addresses, ranges (192.0.2.0/28, 192.0.2.1-192.0.2.9: one row per address) or host names; read from stdin when piped; your public IP when none')
    .addOption(maxExpandOption())
    .addHelpText(
      'after',
      '\nExamples:\n  netintel ip 8.8.8.8\n  netintel ip 2001:4860:4860::8888 -f json\n  netintel ip example.com --fields location.city,network.asn\n  netintel ip 192.0.2.0/28 -f csv\n  cut -d" " -f1 access.log | netintel ip -f csv',
    )
    .action(async (targets: string[], flags: { maxExpand?: number }, command: Command) => {
      const options = runtime.options(command);
      const maxExpand = flags.maxExpand ?? DEFAULT_MAX_EXPAND;
      const hasRange = targets.some((target) => isRangeTarget(target.trim()));
      if (!options.remote && !hasRange && takesAddressTargets(targets)) return printIpRecords(runtime, options, targets);
      const ctx = runtime.context(options);
      const { io } = runtime;
      const lookup = createAdaptiveIpLookup(ctx);
      // The DNS engine loads only when a host name or the caller's IP is asked for.
      const dns = () => import('../engine/dns/host-addresses.js');
      const resolveHost = async (name: string) => (await dns()).resolveHostAddresses(ctx, name);
      // Remote mode (--server): the same outcomes, asked of a netintel server.
      const remote = options.remote ? (await import('../cli/remote-mode.js')).openRemoteEngine(options, io, runtime.progress) : null;
      const lookupOne = remote ? (query: string) => remote.ipTargetOutcomes(query) : (query: string) => ipTargetOutcomes(lookup, resolveHost, query);
      // Ranges within --max-expand arrive as their addresses (expandRangeTargets); one left whole fails here.
      const expand = (query: string) => (isRangeTarget(query) ? [{ ok: false as const, query, error: rangeFailure(query, maxExpand) }] : lookupOne(query));

      if (targets.length === 0 && stdinBringsList(io)) {
        const batches = readTargetBatches(runtime.progress.input(io.stdin, () => regularFileSize(0)));
        const outcomes = runtime.progress.track(flattenBatches(mapOrdered(expandRangeTargets(batches, maxExpand), (target) => expand(target.text), options.concurrency)), true);
        runtime.exitCode = await emitOutcomes(io, options, IP_SCHEMA, outcomes, { single: false, bulk: true });
        return;
      }
      if (targets.length === 0) {
        const outcome = remote ? [await remote.callerIpOutcome()] : await (await dns()).lookupCallerIp(ctx).then(
          (ip) => expand(ip),
          (error: unknown) => [{ ok: false as const, query: 'me', error: toNetintelError(error) }],
        );
        runtime.progress.noteCoverage(outcome);
        runtime.exitCode = await emitOutcomes(io, options, IP_SCHEMA, [outcome], { single: true, bulk: false });
        return;
      }
      // One target that is neither a host name nor an expanded range has exactly one outcome: json prints it as an object.
      const only = targets.length === 1 ? targets[0]!.trim() : null;
      const single = only !== null && !isHostNameTarget(only) && expandable(only, maxExpand) === null;
      const outcomes = runtime.progress.track(
        flattenBatches(mapOrdered(expandRangeTargets([targetsFromArguments(targets)], maxExpand), (target) => expand(target.text), options.concurrency)),
        false,
      );
      runtime.exitCode = await emitOutcomes(io, options, IP_SCHEMA, outcomes, { single, bulk: false });
    });
}

/** `--max-expand <n>` of `ip` and `bulk`: how many addresses a range target may expand to. */
export function maxExpandOption(): Option {
  return new Option('--max-expand <n>', `most addresses a range expands to, one row each; a larger range is one error (default: ${DEFAULT_MAX_EXPAND}, at most ${MAX_EXPAND_LIMIT})`).argParser(integerIn('--max-expand', 1, MAX_EXPAND_LIMIT));
}

