/** Typed access to loopback-only.cjs (one implementation, also loaded into child processes with --require). */
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export interface LoopbackOnly {
  /** Destinations redirected so far (`tcp host:port`). */
  redirected: string[];
  /** Every destination asked for, loopback or not, in order (before any redirection). */
  destinations: Array<{ protocol: 'tcp' | 'udp'; host: string; port: number; /** UDP: the local port it was sent from, when bound. */ from?: number }>;
  restore(): void;
}

/** The module's path, for `NODE_OPTIONS=--require` in a child process (with NETINTEL_FUZZ_CHILD=1). */
export const LOOPBACK_ONLY_MODULE = fileURLToPath(new URL('./loopback-only.cjs', import.meta.url));

export const { loopbackOnly } = createRequire(import.meta.url)(LOOPBACK_ONLY_MODULE) as { loopbackOnly: () => LoopbackOnly };
