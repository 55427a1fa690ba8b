import type { DataSourceStatus } from '../engine/data/data-status.js';
import type { Outcome } from '../engine/outcome.js';

/** The reasons of a download failure (download-failure.ts) that say this machine has no way out, whatever the source. */
const NO_NETWORK = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME', 'ENETUNREACH', 'EHOSTUNREACH', 'ENETDOWN', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);
const RESOLVE_FAILURES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME']);
/** Hosts named in the line; the others are counted. */
const HOSTS_NAMED = 3;

export interface UnreachableNetwork {
  failed: number;
  /** The hosts (or proxies) that could not be reached, in the order of the sources. */
  hosts: string[];
  /** Every failure was a name that did not resolve. */
  unresolved: boolean;
  /** Every failure was the proxy's: not there, or its name did not resolve. */
  proxy: boolean;
}

/**
 * The network as a whole could not be reached when a `data update` of two
 * sources or more got nothing, each failing for want of a way out: a name
 * that does not resolve, no route, a connection that never opened, a proxy
 * that is not there. Null otherwise: then each failure says its own cause.
 */
export function unreachableNetwork(outcomes: ReadonlyArray<Outcome<unknown>>): UnreachableNetwork | null {
  if (outcomes.length < 2) return null;
  const hosts = new Set<string>();
  let unresolved = true;
  let viaProxy = true;
  for (const outcome of outcomes) {
    if (outcome.ok) return null;
    const { reason, proxy, host, url } = outcome.error.details;
    const proxyDown = typeof proxy === 'string' && reason === 'ECONNREFUSED';
    if (typeof reason !== 'string' || !(NO_NETWORK.has(reason) || proxyDown)) return null;
    if (!RESOLVE_FAILURES.has(reason)) unresolved = false;
    if (typeof proxy !== 'string') viaProxy = false;
    if (typeof proxy === 'string') hosts.add(`the proxy ${hostOf(proxy)}`);
    else if (typeof host === 'string') hosts.add(host);
    else if (typeof url === 'string') hosts.add(hostOf(url));
  }
  return { failed: outcomes.length, hosts: [...hosts], unresolved, proxy: viaProxy };
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/**
 * The one line that says so: what could not be reached, the datasets kept
 * in place (`installed`: the status of the sources asked for), and what to
 * do. Without the `netintel: ` prefix.
 */
export function unreachableNetworkMessage(network: UnreachableNetwork, installed: readonly DataSourceStatus[]): string {
  const named = network.hosts.slice(0, HOSTS_NAMED).join(', ');
  const more = network.hosts.length - HOSTS_NAMED;
  const hosts = more > 0 ? `${named} and ${more} more host${more === 1 ? '' : 's'}` : named;
  const kept = installed.filter((row) => row.origin !== null);
  const groups = new Map<string, DataSourceStatus[]>();
  for (const row of kept) groups.set(row.origin!, [...(groups.get(row.origin!) ?? []), row]);
  // Per origin: the names, and the oldest date among them.
  const keptText = [...groups].map(([origin, rows]) => {
    const oldest = rows.map((row) => row.updated?.slice(0, 10)).filter((date) => date !== undefined).sort()[0];
    return `${rows.map((row) => row.name).join(', ')} (${origin === 'data-dir' ? 'downloaded' : origin}${oldest === undefined ? '' : `, as of ${oldest}`})`;
  });
  const missing = installed.length - kept.length;
  const state =
    kept.length === 0 ? 'Nothing was installed before: nothing changed' : `Kept in place: ${keptText.join('; ')}${missing > 0 ? `; ${missing} other${missing === 1 ? ' is' : 's are'} not installed` : ''}`;
  const fix = network.proxy
    ? 'Check HTTPS_PROXY or HTTP_PROXY, or that the proxy is running'
    : `${network.unresolved ? "Check the connection and the network's DNS" : 'Check the connection'} (behind a proxy set HTTPS_PROXY)`;
  return (
    `the network cannot be reached: none of the ${network.failed} sources could be downloaded (${network.unresolved ? 'cannot resolve' : 'cannot reach'} ${hosts}). ` +
    `${state}. ${fix}, then run "netintel data update" again`
  );
}
