/**
 * The proxy settings of `data update`, read from the environment given (never
 * process.env): which variable wins, `host:port` without a scheme, and any
 * value either a usable http(s) proxy URL or a usage error, never a crash.
 * A download that goes silent gives the timeout line.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { downloadNetwork, proxySettings } from '../../src/cli/download-network.js';
import { fetchSource } from '../../src/engine/data/fetch-source.js';
import { NetintelError } from '../../src/errors.js';
import { tempDir } from '../support/cli.js';

const scratch = tempDir('netintel-download-network-');
afterAll(() => scratch.remove());

describe('proxySettings', () => {
  it('takes the lower-case name over the upper-case one, and HTTP_PROXY for https when HTTPS_PROXY is unset', () => {
    expect(proxySettings({ https_proxy: 'http://a:1', HTTPS_PROXY: 'http://b:2', NO_PROXY: 'x', no_proxy: 'y' })).toEqual({
      httpProxy: null,
      httpsProxy: 'http://a:1/',
      noProxy: 'y',
    });
    expect(proxySettings({ HTTP_PROXY: 'proxy.example:3128' })).toEqual({ httpProxy: 'http://proxy.example:3128/', httpsProxy: 'http://proxy.example:3128/', noProxy: '' });
    expect(proxySettings({ HTTPS_PROXY: '  ', http_proxy: '' })).toEqual({ httpProxy: null, httpsProxy: null, noProxy: '' });
  });

  it('refuses a SOCKS proxy, which undici cannot speak, as a usage error', () => {
    expect(() => proxySettings({ HTTPS_PROXY: 'socks5://127.0.0.1:1080' })).toThrow(/^HTTPS_PROXY names a socks5 proxy, which netintel cannot use/);
  });

  it('gives an http(s) URL or a usage error for any value', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.webUrl(), fc.constantFrom('[::1]:8080', 'http://u:p@h:1', 'https://', '::', 'http://[')), (value) => {
        try {
          const settings = proxySettings({ HTTPS_PROXY: value });
          if (settings.httpsProxy !== null) expect(new URL(settings.httpsProxy).protocol).toMatch(/^https?:$/);
          else expect(value.trim()).toBe('');
        } catch (error) {
          expect(error).toBeInstanceOf(NetintelError);
          expect((error as NetintelError).code).toBe('usage');
        }
      }),
    );
  });

  it('builds a dispatcher that names the proxies it uses once each', async () => {
    const network = downloadNetwork({ HTTP_PROXY: 'http://127.0.0.1:3128', HTTPS_PROXY: 'http://127.0.0.1:3128' });
    expect(network.proxies).toEqual(['http://127.0.0.1:3128/']);
    await network.dispatcher.close();
  });
});

describe('a download that goes silent', () => {
  it('gives the timeout line', async () => {
    const sockets = new Set<Socket>();
    const server: Server = createServer(() => {}); // accepts the request and never answers
    server.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/feed`;
    const network = downloadNetwork({});
    try {
      const failure = await fetchSource(url, join(scratch.path, 'silent'), { etag: null, lastModified: null }, {
        idleTimeoutMs: 200,
        maxBytes: 1024,
        userAgent: 'test',
        force: false,
        network,
      }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(NetintelError);
      expect((failure as NetintelError).code).toBe('timeout');
      expect((failure as NetintelError).message).toBe(`${url}: no data for 200 ms (check the network or the proxy settings; a longer --timeout waits longer)`);
    } finally {
      await network.dispatcher.close();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
