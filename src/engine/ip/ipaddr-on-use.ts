import type ipaddrModule from 'ipaddr.js';
import { createRequire } from 'node:module';

type IpAddrModule = typeof ipaddrModule;
let loaded: IpAddrModule | undefined;

/**
 * ipaddr.js, loaded on first use. Only IPv6 text needs it on the lookup
 * path (IPv4 is read by hand), and initialising the package is about
 * 0.25 ms of a one-off IPv4 lookup. In the CommonJS bundle `require` is the
 * bundle's own: esbuild inlines the package and initialises it at this
 * call. Unbundled ES modules (the compiled tree, tests) have no `require`
 * and take the package through createRequire.
 */
export function ipaddr(): IpAddrModule {
  return (loaded ??= typeof require === 'function' ? (require('ipaddr.js') as IpAddrModule) : (createRequire(import.meta.url)('ipaddr.js') as IpAddrModule));
}
