import { NetintelError, toNetintelError } from '../../errors.js';
import type { Target } from '../bulk/read-targets.js';
import { looksLikeIpRange, parseIpRange, rangeAddresses, rangeSize, type IpRange } from '../address/ip-range.js';

/**
 * `ip` and `bulk` targets that are ranges (`192.0.2.0/28`,
 * `192.0.2.1-192.0.2.9`) expanded into one target per address, in address
 * order, each with the line of its range. A range larger than the limit, or
 * one that does not parse, stays one target: its lookup fails with
 * `rangeFailure`, so that line gives one error row and the run goes on.
 */

/** Addresses a range may expand to unless `--max-expand` says otherwise. */
export const DEFAULT_MAX_EXPAND = 256;

/** The highest `--max-expand`: a /8 of IPv4. */
export const MAX_EXPAND_LIMIT = 2 ** 24;

/** Targets per batch while a range is expanded: a large one streams instead of being held whole. */
const EXPANDED_BATCH = 4096;

/** True when the target is a range: tested first on the two characters a range must have (the common line has neither). */
export function isRangeTarget(text: string): boolean {
  return (text.includes('/') || text.includes('-')) && looksLikeIpRange(text);
}

/** The range of a target when it expands within `maxExpand` addresses, else null. */
export function expandable(text: string, maxExpand: number): IpRange | null {
  if (!isRangeTarget(text)) return null;
  try {
    const range = parseIpRange(text);
    return rangeSize(range) <= BigInt(maxExpand) ? range : null;
  } catch {
    return null;
  }
}

/**
 * The batches with every range target of at most `maxExpand` addresses
 * replaced by its addresses. A batch without such a target passes as it is.
 */
export async function* expandRangeTargets<T extends Target>(
  batches: AsyncIterable<readonly T[]> | Iterable<readonly T[]>,
  maxExpand: number,
): AsyncGenerator<T[]> {
  for await (const batch of batches) {
    if (!batch.some((target) => expandable(target.text, maxExpand) !== null)) {
      yield batch as T[];
      continue;
    }
    let out: T[] = [];
    for (const target of batch) {
      const range = expandable(target.text, maxExpand);
      if (range === null) {
        out.push(target);
        continue;
      }
      for (const address of rangeAddresses(range)) {
        out.push({ ...target, text: address });
        if (out.length >= EXPANDED_BATCH) {
          yield out;
          out = [];
        }
      }
    }
    if (out.length > 0) yield out;
  }
}

/**
 * Why a range target was not expanded: it does not parse (the parser's
 * message), or it holds more addresses than `maxExpand`.
 */
export function rangeFailure(text: string, maxExpand: number): NetintelError {
  let range: IpRange;
  try {
    range = parseIpRange(text);
  } catch (error) {
    return toNetintelError(error);
  }
  const size = rangeSize(range);
  return new NetintelError(
    'invalid_input',
    `range ${range.input} holds ${size} addresses, more than --max-expand ${maxExpand} (raise --max-expand up to ${MAX_EXPAND_LIMIT}, or list its blocks with netintel range ${range.input})`,
    { details: { input: range.input, addresses: size.toString(), max_expand: maxExpand } },
  );
}
