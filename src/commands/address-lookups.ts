import { lookupAsn, splitAsnBulk, type AsnResult } from '../engine/asn/lookup-asn.js';
import { addressOutcome, createAdaptiveIpLookup, isHostNameTarget } from '../engine/ip/ip-target-lookup.js';
import type { Outcome } from '../engine/outcome.js';
import { targetsFromArguments } from '../engine/bulk/read-targets.js';
import { toVpnResult, type VpnResult } from '../engine/security/check-vpn.js';
import { toNetintelError } from '../errors.js';
import { ASN_SCHEMA } from '../output/schemas/asn-schema.js';
import { IP_SCHEMA } from '../output/schemas/ip-schema.js';
import { VPN_SCHEMA } from '../output/schemas/vpn-schema.js';
import { emitOutcomes } from '../cli/emit.js';
import type { CommandRuntime } from '../cli/runtime.js';
import type { GlobalOptions } from '../cli/global-options.js';

/**
 * `ip`, `vpn` and `asn` over targets that the local datasets answer alone:
 * addresses and AS numbers on the command line, without a server to ask.
 * Each target has exactly one outcome, ready at once. The commands take
 * this path for such arguments; host names (DNS), lists on stdin and remote
 * mode take the commands' general one.
 */

/** True when every `ip` or `vpn` target is answered locally at once: there are some, and none is a host name. */
export function takesAddressTargets(targets: readonly string[]): boolean {
  return targets.length > 0 && targets.every((target) => !isHostNameTarget(target.trim()));
}

/** `netintel ip ADDRESS...`: the IP information record of each address. */
export async function printIpRecords(runtime: CommandRuntime, options: GlobalOptions, targets: readonly string[]): Promise<void> {
  const lookup = createAdaptiveIpLookup(runtime.context(options));
  const outcomes = targetsFromArguments(targets).map((target) => addressOutcome(lookup, target.text));
  runtime.progress.noteCoverage(outcomes);
  runtime.exitCode = await emitOutcomes(runtime.io, options, IP_SCHEMA, [outcomes], { single: targets.length === 1, bulk: false });
}

/** `netintel vpn ADDRESS...`: the security verdict of each address, with its evidence. */
export async function printVpnResults(runtime: CommandRuntime, options: GlobalOptions, targets: readonly string[]): Promise<void> {
  // The verdict needs no location: the city database stays closed.
  const lookup = createAdaptiveIpLookup(runtime.context(options), { location: false });
  const outcomes = targetsFromArguments(targets).map((target): Outcome<VpnResult> => {
    const outcome = addressOutcome(lookup, target.text);
    return outcome.ok ? { ok: true, query: outcome.query, value: toVpnResult(outcome.value) } : outcome;
  });
  runtime.progress.noteCoverage(outcomes);
  runtime.exitCode = await emitOutcomes(runtime.io, options, VPN_SCHEMA, [outcomes], { single: targets.length === 1, bulk: false });
}

/** `netintel asn TARGET...`: each AS by number, or the AS and route of each address; a comma-separated target is several. */
export async function printAsnResults(runtime: CommandRuntime, options: GlobalOptions, targets: readonly string[]): Promise<void> {
  const ctx = runtime.context(options);
  const queries = targets.flatMap(splitAsnBulk);
  const outcomes = queries.map((query): Outcome<AsnResult> => {
    try {
      return { ok: true, query, value: lookupAsn(ctx, query) };
    } catch (error) {
      return { ok: false, query, error: toNetintelError(error) };
    }
  });
  runtime.exitCode = await emitOutcomes(runtime.io, options, ASN_SCHEMA, [outcomes], { single: queries.length === 1, bulk: false });
}
