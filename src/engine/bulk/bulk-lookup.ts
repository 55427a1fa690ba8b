import type { EngineContext } from '../context.js';
import { isAsnText, lookupAsn } from '../asn/lookup-asn.js';
import { createAdaptiveIpLookup } from '../ip/ip-target-lookup.js';
import { DEFAULT_MAX_EXPAND, isRangeTarget, rangeFailure } from '../ip/ip-range-expand.js';
import type { Outcome } from '../outcome.js';
import { NetintelError, toNetintelError } from '../../errors.js';
import type { SourcedTarget } from './read-targets.js';

export type { SourcedTarget } from './read-targets.js';

/**
 * The lookup of one bulk line: an AS number or an IP address, answered from
 * the local datasets, as an outcome that names the line when it fails. The
 * main thread and the bulk worker threads use the same function, so a row
 * reads the same whichever thread made it. `inMemoryFromStart` skips the
 * positioned reads a short list starts with (a worker only runs for long
 * lists); `evidence: false` leaves out the security evidence of addresses
 * a list holds, for rows that do not show it (IpLookupOptions). A range
 * reaches the lookup only when it was not expanded (expandRangeTargets):
 * its row is the error that says why, against `maxExpand`.
 */
export function createBulkLookup(
  ctx: EngineContext,
  options: { inMemoryFromStart?: boolean; evidence?: boolean; maxExpand?: number } = {},
): (target: SourcedTarget) => Outcome<unknown> {
  const { maxExpand = DEFAULT_MAX_EXPAND, ...lookupOptions } = options;
  const lookupIp = createAdaptiveIpLookup(ctx, lookupOptions);
  return (target) => {
    try {
      if (isRangeTarget(target.text)) throw rangeFailure(target.text, maxExpand);
      const value = isAsnText(target.text) ? lookupAsn(ctx, target.text, 'memory') : lookupIp(target.text);
      return { ok: true, query: target.text, value };
    } catch (error) {
      return { ok: false, query: target.text, error: withLine(toNetintelError(error), target) };
    }
  };
}

/** The error with the input line (and file, when several were read) in its message and details. */
export function withLine(error: NetintelError, target: SourcedTarget): NetintelError {
  const where = target.source === null ? `line ${target.line}` : `${target.source} line ${target.line}`;
  const details = target.source === null ? { ...error.details, line: target.line } : { ...error.details, file: target.source, line: target.line };
  return new NetintelError(error.code, `${where}: ${error.message}`, { cause: error, details });
}
