/**
 * `netintel data update` behind a proxy and offline, run as the built
 * program: an HTTPS feed server with a test CA, and an HTTP forward proxy
 * (CONNECT) in front of it, both on 127.0.0.1. The update goes through the
 * proxy named by HTTPS_PROXY (or https_proxy), NO_PROXY sends it direct, and
 * each failure (proxy asking for credentials, proxy down, a name that does
 * not resolve, a refused port, an untrusted certificate, an HTTP status)
 * is one line on stderr with its exit code.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnCli, tempDir } from '../support/cli.js';
import { closedPort, createCertificateAuthority, issueCertificate } from '../support/smtp-servers.js';
import { startFeedServer, type FeedServer } from '../engine/data/feed-server.js';

const TOR_LIST = `${Array.from({ length: 150 }, (_, i) => `185.220.${100 + (i >> 8)}.${i & 255}`).join('\n')}\n`;

interface ForwardProxy {
  url: string;
  /** The CONNECT targets asked for, in order. */
  connects: string[];
  /** The Proxy-Authorization header of each CONNECT. */
  authorizations: Array<string | undefined>;
  close(): Promise<void>;
}

/** An HTTP proxy that tunnels CONNECT to loopback targets; with `credentials`, others get 407. */
async function startForwardProxy(credentials?: string): Promise<ForwardProxy> {
  const connects: string[] = [];
  const authorizations: Array<string | undefined> = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((_request, response) => response.writeHead(405).end());
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('connect', (request, client: Socket, head: Buffer) => {
    connects.push(request.url ?? '');
    authorizations.push(request.headers['proxy-authorization']);
    if (credentials !== undefined && request.headers['proxy-authorization'] !== `Basic ${Buffer.from(credentials).toString('base64')}`) {
      client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const [host, port] = (request.url ?? '').split(/:(?=\d+$)/);
    if (host !== '127.0.0.1') {
      client.end('HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connects,
    authorizations,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const scratch = tempDir('netintel-data-network-');
const caFile = join(scratch.path, 'ca.pem');
let feeds: FeedServer;
let proxy: ForwardProxy;
let authProxy: ForwardProxy;
beforeAll(async () => {
  const ca = createCertificateAuthority();
  const leaf = issueCertificate({ commonName: '127.0.0.1', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], issuer: ca });
  writeFileSync(caFile, ca.cert);
  feeds = await startFeedServer({ tls: { cert: leaf.cert, key: leaf.key } });
  feeds.set('/tor', { body: TOR_LIST, etag: '"tor-1"' });
  feeds.set('/down', { status: 503 });
  proxy = await startForwardProxy();
  authProxy = await startForwardProxy('feeds:s3cret');
});
afterAll(async () => {
  await Promise.all([feeds.close(), proxy.close(), authProxy.close()]);
  scratch.remove();
});

let dirs = 0;
function dataDir(): string {
  const dir = join(scratch.path, `data-${++dirs}`);
  mkdirSync(dir);
  return dir;
}

function update(url: string, env: Record<string, string>) {
  return spawnCli(['data', 'update', 'tor-exit', '--feed', `tor-exit=${url}`, '--data-dir', dataDir(), '-q', '-f', 'json'], {
    env: { NODE_EXTRA_CA_CERTS: caFile, ...env },
  });
}

/** The lines on stderr: exactly one, the failure. */
function onlyLine(stderr: string): string {
  const lines = stderr.split('\n').filter((line) => line !== '');
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe('data update through an HTTP proxy', () => {
  it('tunnels the https download through HTTPS_PROXY (the proxy sees the CONNECT)', async () => {
    const before = proxy.connects.length;
    const result = await update(feeds.url('/tor'), { HTTPS_PROXY: proxy.url });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject([{ source: 'tor-exit', status: 'updated', entries: 150 }]);
    expect(proxy.connects.slice(before)).toEqual([new URL(feeds.url('/')).host]);
  });

  it('reads the lower-case https_proxy too, and HTTP_PROXY when HTTPS_PROXY is unset', async () => {
    for (const env of [{ https_proxy: proxy.url }, { HTTP_PROXY: proxy.url }]) {
      const before = proxy.connects.length;
      const result = await update(feeds.url('/tor'), env);
      expect(result.code, result.stderr).toBe(0);
      expect(proxy.connects.length).toBe(before + 1);
    }
  });

  it('goes direct for a host NO_PROXY names', async () => {
    const before = proxy.connects.length;
    const requests = feeds.requests.length;
    const result = await update(feeds.url('/tor'), { HTTPS_PROXY: proxy.url, NO_PROXY: 'example.test,127.0.0.1' });
    expect(result.code, result.stderr).toBe(0);
    expect(proxy.connects.length).toBe(before);
    expect(feeds.requests.length).toBe(requests + 1);
  });

  it('gives one line for a proxy that asks for credentials (407), and passes the credentials of the proxy URL', async () => {
    const refused = await update(feeds.url('/tor'), { HTTPS_PROXY: authProxy.url });
    expect(refused.code).toBe(5);
    expect(onlyLine(refused.stderr)).toBe(
      `netintel: tor-exit: the proxy ${new URL(authProxy.url).host} requires authentication (HTTP 407) (put the user and password in the proxy URL: HTTPS_PROXY=http://USER:PASSWORD@HOST:PORT)`,
    );
    const withCredentials = authProxy.url.replace('http://', 'http://feeds:s3cret@');
    const accepted = await update(feeds.url('/tor'), { HTTPS_PROXY: withCredentials });
    expect(accepted.code, accepted.stderr).toBe(0);
    expect(authProxy.authorizations.at(-1)).toBe(`Basic ${Buffer.from('feeds:s3cret').toString('base64')}`);
  });

  it('gives one line for a proxy that refuses the tunnel (403), and leaves the name to the proxy', async () => {
    const result = await update('https://feeds.netintel.invalid/tor', { HTTPS_PROXY: proxy.url });
    expect(result.code).toBe(5);
    expect(proxy.connects.at(-1)).toBe('feeds.netintel.invalid:443');
    expect(onlyLine(result.stderr)).toBe(
      `netintel: tor-exit: the proxy ${new URL(proxy.url).host} refused the tunnel to feeds.netintel.invalid (HTTP 403) (ask its operator to allow the host, or set NO_PROXY for it)`,
    );
  });

  it('gives one line for a proxy that is not there', async () => {
    const port = await closedPort();
    const result = await update(feeds.url('/tor'), { HTTPS_PROXY: `http://127.0.0.1:${port}` });
    expect(result.code).toBe(5);
    expect(onlyLine(result.stderr)).toBe(`netintel: tor-exit: the proxy 127.0.0.1:${port} refused the connection (check HTTPS_PROXY or HTTP_PROXY, or that the proxy is running)`);
  });

  it('refuses a proxy variable that is not a URL, as a usage error', async () => {
    const result = await update(feeds.url('/tor'), { HTTPS_PROXY: 'http://[not a host' });
    expect(result.code).toBe(2);
    expect(onlyLine(result.stderr)).toBe('netintel: HTTPS_PROXY is not a proxy URL: "http://[not a host" (give http://HOST:PORT)');
  });
});

describe('data update with no network at all: one line for every source', () => {
  it('says once that the network cannot be reached, through a proxy that is not there, and keeps the datasets in place', async () => {
    const port = await closedPort();
    const dir = dataDir();
    // Every source of the registry, each through the dead proxy: a machine that has no way out.
    const result = await spawnCli(['data', 'update', '--data-dir', dir], { env: { HTTPS_PROXY: `http://127.0.0.1:${port}`, COLUMNS: '80' } });
    expect(result.code).toBe(5);
    expect(result.stdout).toBe('');
    expect(result.stderr.match(/^netintel: /gm)).toHaveLength(1);
    // Wrapped to COLUMNS, the lines it wraps into indented by two spaces.
    const oneLine = result.stderr.replace(/\n {2}/g, ' ');
    expect(oneLine).toMatch(/^netintel: the network cannot be reached: none of the \d+ sources could be downloaded \(cannot reach the proxy 127\.0\.0\.1:\d+\)\./);
    expect(oneLine).toContain('Check HTTPS_PROXY or HTTP_PROXY, or that the proxy is running');
    expect(oneLine).toContain('Kept in place: dbip-city-ipv4, dbip-city-ipv6, asn-ipv4, asn-ipv6, rdap-dns, rdap-ipv4, rdap-ipv6, rdap-asn (bundled, as of ');
    expect(oneLine).toContain('then run "netintel data update" again');
    for (const line of result.stderr.trimEnd().split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    // Nothing changed: the bundled data still answers.
    const status = await spawnCli(['data', 'status', 'dbip-city-ipv4', '--data-dir', dir, '-f', 'json', '-q']);
    expect(JSON.parse(status.stdout)).toMatchObject({ name: 'dbip-city-ipv4', origin: 'bundled' });
  });

  it('says it once for names that do not resolve (RFC 6761 .invalid), each source still a record with -f json', async () => {
    const feeds = ['tor-exit', 'open-proxies'].flatMap((name) => ['--feed', `${name}=https://${name}.netintel.invalid/list`]);
    const result = await spawnCli(['data', 'update', 'tor-exit', 'open-proxies', ...feeds, '--data-dir', dataDir(), '-f', 'json']);
    expect(result.code).toBe(5);
    expect(onlyLine(result.stderr)).toBe(
      'netintel: the network cannot be reached: none of the 2 sources could be downloaded (cannot resolve tor-exit.netintel.invalid, open-proxies.netintel.invalid). ' +
        "Nothing was installed before: nothing changed. Check the connection and the network's DNS (behind a proxy set HTTPS_PROXY), then run \"netintel data update\" again",
    );
    expect((JSON.parse(result.stdout) as Array<{ query: string; error: { code: string } }>).map((row) => [row.query, row.error.code])).toEqual([
      ['tor-exit', 'unreachable'],
      ['open-proxies', 'unreachable'],
    ]);
  });
});

describe('data update offline: one line per cause', () => {
  it('a name that does not resolve (RFC 6761 .invalid)', async () => {
    const result = await update('https://feeds.netintel.invalid/tor', {});
    expect(result.code).toBe(5);
    expect(onlyLine(result.stderr)).toBe(
      "netintel: tor-exit: cannot resolve feeds.netintel.invalid (check the name in the URL and the network's DNS; behind a proxy set HTTPS_PROXY or HTTP_PROXY)",
    );
  });

  it('a port that refuses the connection', async () => {
    const port = await closedPort();
    const url = `https://127.0.0.1:${port}/tor`;
    const result = await update(url, {});
    expect(result.code).toBe(5);
    expect(onlyLine(result.stderr)).toBe(`netintel: tor-exit: 127.0.0.1:${port} refused the connection to ${url} (check the URL's host and port, or that the server is up)`);
  });

  it('a port fetch will not connect to', async () => {
    const result = await update('http://127.0.0.1:6000/tor', {});
    expect(result.code).toBe(5);
    expect(onlyLine(result.stderr)).toBe('netintel: tor-exit: http://127.0.0.1:6000/tor: fetch never connects to port 6000 (a port the Fetch standard blocks; serve the file on another port)');
  });

  it('a certificate this machine does not trust (no NODE_EXTRA_CA_CERTS)', async () => {
    const result = await spawnCli(['data', 'update', 'tor-exit', '--feed', `tor-exit=${feeds.url('/tor')}`, '--data-dir', dataDir(), '-q']);
    expect(result.code).toBe(5);
    expect(onlyLine(result.stderr)).toMatch(
      /^netintel: tor-exit: the certificate of 127\.0\.0\.1:\d+ is not trusted: (UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY) \(for a private CA give its certificate in NODE_EXTRA_CA_CERTS=FILE\)$/,
    );
  });

  it('an HTTP status, through the proxy as well as direct', async () => {
    for (const env of [{}, { HTTPS_PROXY: proxy.url }]) {
      const result = await update(feeds.url('/down'), env);
      expect(result.code).toBe(5);
      expect(onlyLine(result.stderr)).toBe(`netintel: tor-exit: ${feeds.url('/down')}: HTTP 503 Service Unavailable (the server could not answer; try again later)`);
      const missing = await update(feeds.url('/missing'), env);
      expect(missing.code).toBe(3);
      expect(onlyLine(missing.stderr)).toBe(`netintel: tor-exit: ${feeds.url('/missing')}: HTTP 404 Not Found (check the URL, or give another with --feed NAME=URL)`);
    }
  });
});
