import type { EngineContext } from '../engine/context.js';
import type { LocalEngine } from './engine.js';
import type { Lookup, Operation } from './operation.js';

/**
 * The engine over an engine context: each operation's own engine call. The
 * lookups a run made are closed with the engine.
 */
export function createLocalEngine(ctx: EngineContext): LocalEngine {
  const opened: Array<Lookup<unknown>> = [];
  return {
    async lookup<S, R>(operation: Operation<S, R>, settings: S): Promise<Lookup<R>> {
      const made = await operation.lookup(ctx, settings);
      if (made.close) opened.push(made as Lookup<unknown>);
      return made;
    },
    hostAddresses: async (name) => (await import('../engine/dns/host-addresses.js')).resolveHostAddresses(ctx, name),
    close: async () => {
      await Promise.all(opened.splice(0).map((made) => made.close!()));
    },
  };
}
