/**
 * A message's journey from its Received fields (RFC 5321 §4.4): each MTA
 * prepends one, so the fields read bottom up are the hops oldest first. The
 * delay of a hop is its time less the time of the hop before it (the first
 * hop's: less the Date field, the sender's own clock); a hop stamped
 * earlier than the one before it is clock skew between the two hosts, shown
 * as such and never as a negative delay.
 */
import { finding, type Finding } from '../../findings.js';
import { readMailDate } from './mail-date.js';
import { readReceived, type ReceivedFields } from './received.js';

/** One hop: one Received field, read. */
export interface Hop extends ReceivedFields {
  /** 1 for the oldest hop (the bottom Received field). */
  hop: number;
  /** False when the field could not be read: `raw` is then all there is. */
  parsed: boolean;
  /** Seconds since the hop before (the first hop: since the Date field), null when a time is missing or the clocks disagree. */
  delay_seconds: number | null;
  /** Seconds this hop's time is behind the hop before it (clock skew between the two hosts), null when none. */
  clock_skew_seconds: number | null;
  /** The field's value as written, unfolded. */
  raw: string;
}

/** The journey: the hops oldest first, the total transit time and what stands out. */
export interface Journey {
  hops: Hop[];
  /** Seconds from the Date field (or the first hop's time) to the last hop's, null when not known or negative. */
  total_transit_seconds: number | null;
  findings: Finding[];
}

/** A hop delay at or over this is reported (five minutes: a message held in a queue, retried, or greylisted). */
export const LARGE_DELAY_SECONDS = 300;

/** The Received fields in message order (top first) and the Date field's value, read into the journey. */
export function journeyOf(receivedTopFirst: readonly string[], date: string | null): Journey {
  const sent = date === null ? null : readMailDate(date);
  let previous = sent === null ? null : Date.parse(sent);
  const hops: Hop[] = [];
  const findings: Finding[] = [];
  for (const [index, raw] of [...receivedTopFirst].reverse().entries()) {
    const { parsed, fields } = readReceived(raw);
    const hop: Hop = { hop: index + 1, parsed, ...fields, delay_seconds: null, clock_skew_seconds: null, raw };
    const time = fields.timestamp === null ? null : Date.parse(fields.timestamp);
    if (time !== null && previous !== null) {
      const seconds = Math.round((time - previous) / 1000);
      if (seconds >= 0) hop.delay_seconds = seconds;
      else hop.clock_skew_seconds = -seconds;
    }
    if (time !== null) previous = time;
    hops.push(hop);
    findings.push(...hopFindings(hop));
  }
  const times = hops.flatMap((hop) => (hop.timestamp === null ? [] : [Date.parse(hop.timestamp)]));
  const start = sent !== null ? Date.parse(sent) : times[0];
  const end = times[times.length - 1];
  const total = start === undefined || end === undefined || hops.length === 0 ? null : Math.round((end - start) / 1000);
  if (hops.length === 0) {
    findings.push(finding('headers_no_received', 'info', 'the message has no Received field: it was not relayed, or only its top header fields were given', 'RFC 5321 §4.4'));
  }
  return { hops, total_transit_seconds: total === null || total < 0 ? null : total, findings };
}

function hopFindings(hop: Hop): Finding[] {
  const found: Finding[] = [];
  if (!hop.parsed) {
    found.push(finding('headers_unparsed_received', 'warning', `hop ${hop.hop}: the Received field could not be read; it is shown as written`, 'RFC 5321 §4.4', { hop: hop.hop, raw: hop.raw }));
  }
  if (hop.delay_seconds !== null && hop.delay_seconds >= LARGE_DELAY_SECONDS) {
    found.push(
      finding('headers_delay_large', 'warning', `hop ${hop.hop}: ${durationText(hop.delay_seconds)} after the hop before${hop.by_host ? ` (at ${hop.by_host})` : ''}`, 'RFC 5321 §4.5.4.1', {
        hop: hop.hop,
        delay_seconds: hop.delay_seconds,
        by_host: hop.by_host,
      }),
    );
  }
  if (hop.clock_skew_seconds !== null) {
    found.push(
      finding('headers_clock_skew', 'info', `hop ${hop.hop}: stamped ${durationText(hop.clock_skew_seconds)} before the hop before it, so the two hosts' clocks disagree`, 'RFC 5322 §3.6.7', {
        hop: hop.hop,
        clock_skew_seconds: hop.clock_skew_seconds,
        by_host: hop.by_host,
      }),
    );
  }
  return found;
}

/** "45 s", "3 min 5 s", "2 h 10 min", "1 d 4 h". */
export function durationText(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min${seconds % 60 ? ` ${seconds % 60} s` : ''}`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h${Math.floor((seconds % 3600) / 60) ? ` ${Math.floor((seconds % 3600) / 60)} min` : ''}`;
  return `${Math.floor(seconds / 86400)} d${Math.floor((seconds % 86400) / 3600) ? ` ${Math.floor((seconds % 86400) / 3600)} h` : ''}`;
}
