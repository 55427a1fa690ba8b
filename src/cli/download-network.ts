/**
 * The route of `netintel data update`'s downloads, from the environment the
 * way curl and most tools read it: HTTPS_PROXY for https URLs, HTTP_PROXY
 * for http URLs (HTTPS_PROXY falls back to it), NO_PROXY for the hosts that
 * go direct; the lower-case names win over the upper-case ones. undici's
 * EnvHttpProxyAgent does the routing (CONNECT tunnels, NO_PROXY matching);
 * it gets every value from here, so it never reads process.env itself.
 */
import { EnvHttpProxyAgent } from 'undici';
import type { DownloadNetwork } from '../engine/data/fetch-source.js';
import { NetintelError } from '../errors.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface ProxySettings {
  httpProxy: string | null;
  httpsProxy: string | null;
  noProxy: string;
}

export function proxySettings(env: Env): ProxySettings {
  const pick = (name: string) => nonEmpty(env[name.toLowerCase()]) ?? nonEmpty(env[name.toUpperCase()]);
  const httpProxy = proxyUrl('HTTP_PROXY', pick('http_proxy'));
  return {
    httpProxy,
    httpsProxy: proxyUrl('HTTPS_PROXY', pick('https_proxy')) ?? httpProxy,
    noProxy: pick('no_proxy') ?? '',
  };
}

export function downloadNetwork(env: Env): DownloadNetwork {
  const settings = proxySettings(env);
  const dispatcher = withoutExperimentalWarning(
    () =>
      new EnvHttpProxyAgent({
        // '' (not undefined): undici would read process.env for a missing value.
        httpProxy: settings.httpProxy ?? '',
        httpsProxy: settings.httpsProxy ?? '',
        noProxy: settings.noProxy,
      }),
  );
  const proxies = [...new Set([settings.httpProxy, settings.httpsProxy].filter((value): value is string => value !== null))];
  return { dispatcher, proxies };
}

function nonEmpty(value: string | undefined): string | null {
  return value === undefined || value.trim() === '' ? null : value.trim();
}

/** A proxy URL; `host:port` without a scheme means http://host:port, as curl takes it. */
function proxyUrl(name: string, value: string | null): string | null {
  if (value === null) return null;
  const text = /^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new NetintelError('usage', `${name} is not a proxy URL: ${JSON.stringify(value)} (give http://HOST:PORT)`, { details: { variable: name } });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new NetintelError('usage', `${name} names a ${url.protocol.slice(0, -1)} proxy, which netintel cannot use (give an http:// or https:// proxy URL)`, {
      details: { variable: name },
    });
  }
  return url.href;
}

/**
 * undici 6 reports EnvHttpProxyAgent as experimental once per process on
 * stderr; the class is the maintained proxy routing of Node's own fetch, and
 * the CLI's stderr carries only netintel's lines.
 */
function withoutExperimentalWarning<T>(build: () => T): T {
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const options = rest[0] as { code?: string } | undefined;
    if (typeof options === 'object' && options?.code === 'UNDICI-EHPA') return;
    (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return build();
  } finally {
    process.emitWarning = emitWarning;
  }
}
