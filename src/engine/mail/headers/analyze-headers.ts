/**
 * `netintel headers`: a message's journey read from its header block (the
 * hops oldest first, their delays and total transit time), each public hop
 * address described by the engine's IP data, and, with the blacklist
 * option, its DNSBL listings; its authentication recomputed beside what
 * its Authentication-Results fields state.
 */
import type { EngineContext } from '../../context.js';
import type { Finding } from '../../findings.js';
import { displayedValues, fieldValue, fieldValues, readHeaderBlock } from './header-block.js';
import { journeyOf, type Hop } from './hops.js';
import { describeHopAddresses, type HopAddress } from './hop-addresses.js';
import { authenticate, type HeadersAuthentication } from './authentication.js';

/** The message's own header fields, decoded for display. */
export interface HeadersMessage {
  from: string | null;
  to: string | null;
  subject: string | null;
  date: string | null;
  message_id: string | null;
  /** The envelope sender the last MTA recorded (RFC 5321 §4.4), without angle brackets. */
  return_path: string | null;
}

/** One hop with what is known of its connecting address. */
export interface HeadersHop extends Hop {
  address: HopAddress | null;
}

/** The analysis of a message's header block. */
export interface HeadersReport {
  kind: 'headers';
  /** Where the message came from (the file name given, "stdin", or "request"). */
  source: string;
  message: HeadersMessage;
  /** SPF, DKIM and DMARC recomputed, and the message's own Authentication-Results. */
  authentication: HeadersAuthentication;
  hops: HeadersHop[];
  /** Seconds from the Date field (or the first hop) to the last hop, null when not known. */
  total_transit_seconds: number | null;
  findings: Finding[];
}

export interface AnalyzeHeadersOptions {
  /** Look each public hop address up in the DNS blocklists (the blacklist engine): true for its default zones, or the zones as `netintel blacklist --zones` takes them. */
  blacklist?: boolean | { zones: string };
}

/**
 * Reads and analyzes a message (a whole saved message, one mbox entry, or a
 * header block alone).
 *
 * @throws NetintelError `invalid_input` when the input is not a message or is over the reader's limits.
 */
export async function analyzeHeaders(ctx: EngineContext, message: Buffer, source: string, options: AnalyzeHeadersOptions = {}): Promise<HeadersReport> {
  const block = readHeaderBlock(message, source);
  const journey = journeyOf(fieldValues(block, 'received'), fieldValue(block, 'date'));
  const [addresses, auth, shown] = await Promise.all([
    describeHopAddresses(ctx, journey.hops, { blacklist: options.blacklist ?? false }),
    authenticate(ctx, message, block, journey.hops, source),
    displayedValues(block, ['from', 'to', 'subject']),
  ]);
  const hops: HeadersHop[] = journey.hops.map((hop, index) => ({ ...hop, address: addresses.described[index] ?? null }));
  const returnPath = fieldValue(block, 'return-path');
  return {
    kind: 'headers',
    source,
    message: {
      from: shown.from,
      to: shown.to,
      subject: shown.subject,
      date: fieldValue(block, 'date'),
      message_id: fieldValue(block, 'message-id'),
      return_path: returnPath === null ? null : returnPath.replace(/^<|>$/g, '').trim(),
    },
    authentication: auth.authentication,
    hops,
    total_transit_seconds: journey.total_transit_seconds,
    findings: [...auth.findings, ...journey.findings, ...addresses.findings],
  };
}
