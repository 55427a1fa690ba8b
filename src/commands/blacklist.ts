import { Option, type Command } from 'commander';
import { flattenBatches, mapOrdered } from '../engine/bulk/map-ordered.js';
import { readTargetBatches, targetsFromArguments } from '../engine/bulk/read-targets.js';
import type { BlacklistResult } from '../engine/blacklist/blacklist-result.js';
import { hasFindingAtOrAbove, type Finding } from '../engine/findings.js';
import type { Outcome } from '../engine/outcome.js';
import { NetintelError, toNetintelError } from '../errors.js';
import { BLACKLIST_SCHEMA, BLACKLIST_ZONE_SCHEMA } from '../output/schemas/blacklist-schema.js';
import { emitOutcomes } from '../cli/emit.js';
import { stdinBringsList } from '../cli/io.js';
import { addFailOnOption, exitCodeWithFindings, type FailOn } from '../cli/fail-on.js';
import type { GlobalOptions } from '../cli/global-options.js';
import type { CommandRuntime } from '../cli/runtime.js';
import { coverageOf } from '../cli/check-coverage.js';
import type { RecordCoverage } from '../cli/exit-codes.js';
import { regularFileSize } from '../cli/progress.js';
import { isIpAddress } from '../engine/ip/ip-address.js';
import { addFanOutOptions, fanOutOf, refuseRemoteFanOut, type FanOutFlags } from '../cli/fan-out-options.js';

interface BlacklistFlags extends FanOutFlags {
  zones?: string;
  listZones?: boolean;
  failOn?: FailOn;
}

export function registerBlacklistCommand(program: Command, runtime: CommandRuntime): void {
  const command = program
    .command('blacklist')
    .description('Check IP addresses and domains against DNS blocklists (DNSBLs): per-zone status, return codes and reasons, an honest verdict')
    .argument('[targets...]', 'IP addresses or domains; read from stdin when piped')
    .addOption(
      new Option(
        '--zones <list>',
        'zones to ask, comma-separated: registry names, "default", "all" (every live zone), or other zones as name:ip, name:ipv6, name:domain',
      ),
    )
    .addOption(new Option('--list-zones', 'print the zones a run would ask (with --zones: that selection) from the registry, and exit'));
  addFanOutOptions(command, ['max-mx', 'max-addresses'])
    .addHelpText(
      'after',
      [
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
      ].join('\n'),
    );
  addFailOnOption(command);
  command.action(async (targets: string[], flags: BlacklistFlags, cmd: Command) => {
    const options = runtime.options(cmd);
    const ctx = runtime.context(options);
    const { io } = runtime;
    if (options.remote) {
      refuseRemoteFanOut(flags, 'blacklist');
      await runRemote(runtime, options, targets, flags);
      return;
    }
    ctx.fanOut = fanOutOf(flags);
    // The blacklist engine (DNS sockets, the zone registry) loads only when this command runs.
    const engine = await import('../engine/blacklist/check-blacklist.js');

    if (flags.listZones) {
      const { loadDnsblRegistry, selectZones } = await import('../engine/blacklist/dnsbl-registry.js');
      const registry = loadDnsblRegistry(ctx.dataDir);
      const selection = flags.zones === undefined ? { zones: [...registry.zones], dead: [] } : selectZones(registry, flags.zones);
      const rows = [...selection.zones, ...selection.dead].map((zone): Outcome<unknown> => ({ ok: true, query: zone.zone, value: zone }));
      runtime.exitCode = await emitOutcomes(io, options, BLACKLIST_ZONE_SCHEMA, [rows], { single: false, bulk: false });
      return;
    }

    if (targets.length === 0 && !stdinBringsList(io)) {
      // Without this, a bare `netintel blacklist` at a terminal would sit waiting for typed input.
      throw new NetintelError('usage', 'blacklist needs an IP address or a domain: give one or more, or pipe a list in');
    }
    const checker = await engine.createBlacklistChecker(ctx, { zones: flags.zones ?? null });
    try {
      await runChecks(runtime, options, targets, flags.failOn, (query) => checker.check(query), options.concurrency);
    } finally {
      await checker.close();
    }
  });
}

/** Remote mode: GET /api/blacklist-check per target, with --zones as `zones`; the server's resolvers and registry answer. */
async function runRemote(runtime: CommandRuntime, options: GlobalOptions, targets: string[], flags: BlacklistFlags): Promise<void> {
  if (flags.listZones) {
    throw new NetintelError('usage', '--list-zones lists this machine\'s zone registry, not the server\'s: run it without --server (or unset NETINTEL_SERVER)');
  }
  if (targets.length === 0 && !stdinBringsList(runtime.io)) {
    throw new NetintelError('usage', 'blacklist needs an IP address or a domain: give one or more, or pipe a list in');
  }
  const remote = (await import('../cli/remote-mode.js')).openRemoteEngine(options, runtime.io, runtime.progress);
  const check = async (query: string): Promise<BlacklistResult> => {
    const target = isIpAddress(query) ? { ip: query } : { domain: query };
    return (await remote.client.get('/api/blacklist-check', { ...target, zones: flags.zones })).body as BlacklistResult;
  };
  await runChecks(runtime, options, targets, flags.failOn, check, remote.concurrency);
}

/** Checks the targets (arguments, or stdin in bulk) in order, prints them, and sets the exit code (10 under --fail-on). */
async function runChecks(
  runtime: CommandRuntime,
  options: GlobalOptions,
  targets: string[],
  failOn: FailOn | undefined,
  check: (query: string) => Promise<BlacklistResult>,
  concurrency: number,
): Promise<void> {
  const { io } = runtime;
  // Only whether a finding reaches --fail-on matters; keep the first that does, not every finding of a bulk run.
  const tripped: Finding[] = [];
  const lookup = (query: string) => checkOutcome(check, query, failOn, tripped);
  let runExitCode: number;
  if (targets.length === 0) {
    const batches = readTargetBatches(runtime.progress.input(io.stdin, () => regularFileSize(0)));
    const outcomes = runtime.progress.track(flattenBatches(mapOrdered(batches, (target) => lookup(target.text), concurrency)), true);
    runExitCode = await emitOutcomes(io, options, BLACKLIST_SCHEMA, outcomes, { single: false, bulk: true, coverage: blacklistCoverage });
  } else {
    const outcomes = flattenBatches(mapOrdered([targetsFromArguments(targets)], (target) => lookup(target.text), concurrency));
    runExitCode = await emitOutcomes(io, options, BLACKLIST_SCHEMA, outcomes, { single: targets.length === 1, bulk: false, coverage: blacklistCoverage });
  }
  runtime.exitCode = exitCodeWithFindings(runExitCode, failOn, tripped);
}

async function checkOutcome(
  check: (query: string) => Promise<BlacklistResult>,
  query: string,
  failOn: FailOn | undefined,
  tripped: Finding[],
): Promise<Array<Outcome<BlacklistResult>>> {
  try {
    const value = await check(query);
    if (failOn !== undefined && tripped.length === 0 && hasFindingAtOrAbove(value.findings, failOn)) {
      tripped.push(...value.findings.filter((item) => hasFindingAtOrAbove([item], failOn)));
    }
    return [{ ok: true, query, value }];
  } catch (error) {
    return [{ ok: false, query, error: toNetintelError(error) }];
  }
}

/**
 * How far a blacklist check could run: nothing (no zone, nor the mail
 * hosts, could be checked: the verdict is `unknown` with a failure), in part
 * (`incomplete`, or `listed` with zones left unchecked), or in full. A
 * verdict of `unknown` without a failure asked no zone at all (none
 * applies to the target): that is an answer, not a failure.
 */
function blacklistCoverage(record: unknown): RecordCoverage {
  const { verdict } = record as BlacklistResult;
  const failure = verdict.failure ?? null;
  return coverageOf({ checked: failure === null ? 'all' : verdict.status === 'unknown' ? 'none' : 'some', failure });
}
