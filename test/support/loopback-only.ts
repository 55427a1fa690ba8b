/** Typed access to loopback-only.cjs (one implementation, also loaded into child processes with --require). */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export interface LoopbackOnly {
  /** Destinations off loopback redirected so far (`tcp host:port`): traffic that would have left the machine. */
  redirected: string[];
  /** Loopback destinations sent to the closed port because their port was named (`loopbackPorts`), and destinations sent to a stand-in. */
  diverted: string[];
  /** Every destination asked for, loopback or not, in order (before any redirection). */
  destinations: Array<{ protocol: 'tcp' | 'udp'; host: string; port: number; /** UDP: the local port it was sent from, when bound. */ from?: number }>;
  restore(): void;
}

export interface LoopbackOnlyOptions {
  /** A loopback port the test opened and closed (peers.ts, closedPort): where diverted traffic goes. */
  closedPort: number;
  onRedirect?: (entry: string) => void;
  /** Loopback ports whose connections go to `closedPort` too. */
  loopbackPorts?: number[];
  /** Leave destinations off loopback alone: only `loopbackPorts` are diverted. */
  keepOthers?: boolean;
  /** Destinations (`host:port`, `9.9.9.9:53`) sent to the loopback port of a test peer standing in for them. */
  standIns?: Record<string, number>;
}

/** The module's path, for `NODE_OPTIONS=--require` in a child process (with NETINTEL_TEST_CLOSED_PORT, and NETINTEL_FUZZ_CHILD=1 or NETINTEL_TEST_CLOSED_LOOPBACK_PORTS; NETINTEL_TEST_STAND_INS for stand-ins). */
export const LOOPBACK_ONLY_MODULE = fileURLToPath(new URL('./loopback-only.cjs', import.meta.url));

export const { loopbackOnly, WELL_KNOWN_PORTS } = createRequire(import.meta.url)(LOOPBACK_ONLY_MODULE) as {
  loopbackOnly: (options: LoopbackOnlyOptions) => LoopbackOnly;
  /** Loopback ports 1 to 1023, 2525 and 5353: where a service of the machine may listen, never a test peer. */
  WELL_KNOWN_PORTS: number[];
};
