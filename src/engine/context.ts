/**
 * Everything the engine needs from the outside world comes through one
 * context object, so tests can hand it real local servers, a fixed clock or
 * a data directory of fixtures. The engine never reads `process` itself.
 */
export interface EngineContext {
  /** A user data directory whose files override the bundled datasets (null: bundled only). */
  dataDir: string | null;
  /** Deadline for one network lookup, in milliseconds. */
  timeoutMs: number;
  /** The clock; injected so that tests and rate limits can control time. */
  now(): Date;
  /** Diagnostics sink (verbose mode); the engine never prints. */
  debug(message: string): void;
}

export function createEngineContext(overrides: Partial<EngineContext> = {}): EngineContext {
  return {
    dataDir: null,
    timeoutMs: 5000,
    now: () => new Date(),
    debug: () => {},
    ...overrides,
  };
}
