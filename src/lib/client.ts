import { createEngineContext, type EngineContext } from '../engine/context.js';
import { parseResolverAddress } from '../engine/dns/resolver-address.js';
import { NetintelError } from '../errors.js';

/** How a {@link Netintel} client looks things up. Every field is optional. */
export interface NetintelOptions {
  /** A directory whose datasets override the bundled ones (`netintel data update` writes one). Default: bundled only. */
  dataDir?: string;
  /** DNS resolvers to ask, in order: `1.1.1.1`, `9.9.9.9:53`, `[2001:db8::53]:5353`. Default: the system's (resolv.conf). */
  resolvers?: readonly string[];
  /** Deadline of one network lookup in milliseconds (default 5000). */
  timeoutMs?: number;
  /** Further rounds over the resolvers after a failed first one (default 2). */
  retries?: number;
}

/**
 * A configured netintel: pass it to the lookup functions. It holds the DNS
 * sockets it opened; `close()` (or `await using`) releases them.
 */
export interface Netintel {
  /** The options it was made with, resolved (resolvers as `host:port` labels, null for the system's). */
  readonly options: Readonly<{ dataDir: string | null; resolvers: readonly string[] | null; timeoutMs: number; retries: number }>;
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const contexts = new WeakMap<Netintel, EngineContext>();

function wholeNumber(name: string, value: number | undefined, least: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < least) {
    throw new NetintelError('usage', `invalid ${name} ${JSON.stringify(value)}: expected a whole number of at least ${least}`, {
      details: { option: name },
    });
  }
  return value;
}

/**
 * Makes a client from the options.
 *
 * @throws NetintelError `invalid_input` for a resolver that is not an IP
 *   address with an optional port, `usage` for a bad timeout or retry count.
 */
export function createNetintel(options: NetintelOptions = {}): Netintel {
  const resolvers = options.resolvers === undefined ? null : options.resolvers.map((text) => parseResolverAddress(text));
  if (resolvers !== null && resolvers.length === 0) {
    throw new NetintelError('usage', 'invalid resolvers []: name at least one, or leave the option out for the system resolvers');
  }
  const timeoutMs = wholeNumber('timeoutMs', options.timeoutMs, 1);
  const retries = wholeNumber('retries', options.retries, 0);
  const ctx = createEngineContext({
    dataDir: options.dataDir ?? null,
    resolvers,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
    ...(retries === undefined ? {} : { dnsRetries: retries }),
  });
  const client: Netintel = {
    options: Object.freeze({
      dataDir: ctx.dataDir,
      resolvers: resolvers === null ? null : Object.freeze(resolvers.map((resolver) => resolver.label)),
      timeoutMs: ctx.timeoutMs,
      retries: ctx.dnsRetries,
    }),
    close: () => ctx.close(),
    [Symbol.asyncDispose]: () => ctx.close(),
  };
  contexts.set(client, ctx);
  return client;
}

/** The engine context behind a client. */
export function contextOf(client: Netintel): EngineContext {
  const ctx = contexts.get(client);
  if (ctx === undefined) throw new NetintelError('usage', 'not a netintel client: make one with createNetintel(options)');
  return ctx;
}
