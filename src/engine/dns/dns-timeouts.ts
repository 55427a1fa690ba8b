import { channel } from 'node:diagnostics_channel';
import type { DnsTransportKind } from './dns-result.js';

/** What is published on {@link DNS_TIMEOUTS} for each attempt that timed out. */
export interface DnsTimeoutEvent {
  /** The resolver's label (its address, or its DoH/DoT URL). */
  resolver: string;
  transport: DnsTransportKind;
}

/**
 * Every DNS attempt that got no usable answer in time, for whoever listens
 * (the server's metrics): a diagnostics channel, so that the engine knows
 * nothing of its listeners and pays nothing while there are none.
 */
export const DNS_TIMEOUTS = channel('netintel.dns.timeout');
