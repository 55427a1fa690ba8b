/**
 * A hostile HTTPS peer for the engine's outward fetches (MTA-STS policy,
 * BIMI logo and certificate): a TLS server on 127.0.0.1 port 0 that reads
 * one request and then misbehaves on the wire as told, byte by byte, with
 * no HTTP library on its side. Next to it, a plain TCP server that answers
 * a TLS ClientHello with plain-text HTTP.
 *
 * The behaviour is the first path segment (`/drip-body/logo.svg`) or, for
 * the fixed MTA-STS path, the label after `mta-sts.` in the Host header
 * (`mta-sts.drip-body.test`). What is served (policy, logo, certificate)
 * follows the file name: `/.well-known/mta-sts.txt`, `*.svg`, `*.pem`.
 */
import net from 'node:net';
import tls from 'node:tls';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import type { ZoneRecord } from './dns-server.js';
import { createCertificateAuthority, issueCertificate } from './smtp-servers.js';

export const HOSTILE_BEHAVIOURS = [
  /** The good document, at once. */
  'good',
  /** The status line and headers, one byte per drip interval, never finished. */
  'drip-headers',
  /** Headers at once, then the body one byte per drip interval, never finished. */
  'drip-body',
  /** Headers at once, then body bytes as fast as the client takes them, for ever. */
  'endless-body',
  /** The good document padded to one byte over its kind's cap, at once, with Content-Length. */
  'over-cap',
  /** `Content-Encoding: gzip` over 16 MiB of spaces (about 16 KiB on the wire). */
  'gzip-bomb',
  /** A gzip body without Content-Encoding (SVGZ): 16 MiB of SVG once decompressed. */
  'svgz-bomb',
  /** 302 to https://private.hostile.test/..., which the zone points at 169.254.169.254. */
  'to-private',
  /** 302 from a to b and from b back to a. */
  'redirect-loop',
  /** 302 to the next hop, for ever. */
  'too-many-redirects',
  /** Each hop waits `slowHopMs` and then sends 302 to the next. */
  'slow-redirects',
  /** The good document labelled text/html. */
  'wrong-type',
  /** The good document with the Content-Encoding of the query (`?gzip`, `?deflate`, `?br`; another name is sent unencoded under that name). */
  'encoded',
  /** Content-Length 4096, 100 bytes of it, then a TCP reset. */
  'reset-mid-body',
] as const;

export type HostileBehaviour = (typeof HOSTILE_BEHAVIOURS)[number];
export type DocumentKind = 'policy' | 'logo' | 'certificate';

export interface HostileDocument {
  type: string;
  body: string | Buffer;
  /** The cap of the fetch that reads it, in octets (the over-cap document is one more). */
  cap: number;
}

export interface HostilePeerOptions {
  /** What a good answer holds, for each kind. */
  documents: Record<DocumentKind, HostileDocument>;
  /** Host names the certificate is for, besides 127.0.0.1 (the test CA signs it). */
  hostNames: string[];
  /** Interval of the drips, in milliseconds (default 100). */
  dripMs?: number;
  /** Wait of each slow redirect, in milliseconds (default 400). */
  slowHopMs?: number;
}

export interface HostilePeer {
  /** The TLS port. */
  port: number;
  /** The plain TCP port, which answers TLS with plain-text HTTP. */
  plainPort: number;
  /** The test CA's certificate, to trust. */
  ca: string;
  /** `host path` of every request read, in order. */
  requests: string[];
  /** Connections still open (a finished fetch leaves none). */
  openConnections(): number;
  close(): Promise<void>;
}

const KIND_BY_SUFFIX: Array<[RegExp, DocumentKind]> = [
  [/\/\.well-known\/mta-sts\.txt(\?.*)?$/, 'policy'],
  [/\.svgz?(\?.*)?$/, 'logo'],
  [/\.pem(\?.*)?$/, 'certificate'],
];

export async function startHostilePeer(options: HostilePeerOptions): Promise<HostilePeer> {
  const dripMs = options.dripMs ?? 100;
  const slowHopMs = options.slowHopMs ?? 400;
  const authority = createCertificateAuthority('hostile peer test CA');
  const certificate = issueCertificate({ commonName: options.hostNames[0]!, dnsNames: options.hostNames, ipAddresses: ['127.0.0.1'], issuer: authority });
  const requests: string[] = [];
  const sockets = new Set<net.Socket>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run();
    }, ms);
    timers.add(timer);
  };
  const gzipBomb = gzipSync(Buffer.alloc(16 * 2 ** 20, ' '));
  const svgzBombs = new Map<DocumentKind, Buffer>();

  const serve = (raw: net.Socket, socket: tls.TLSSocket, head: string) => {
    const [requestLine = '', ...headerLines] = head.split('\r\n');
    const path = requestLine.split(' ')[1] ?? '/';
    const host = (headerLines.find((line) => /^host:/i.test(line)) ?? '').replace(/^host:\s*/i, '').replace(/:\d+$/, '');
    requests.push(`${host} ${path}`);
    const kind = KIND_BY_SUFFIX.find(([pattern]) => pattern.test(path))?.[1] ?? 'logo';
    const document = options.documents[kind];
    const segment = path.split('/')[1] ?? '';
    const behaviour: HostileBehaviour =
      (HOSTILE_BEHAVIOURS as readonly string[]).find((name) => name === segment || host === `mta-sts.${name}.test`) as HostileBehaviour | undefined ?? 'good';
    const file = path.slice(path.lastIndexOf('/') + 1).replace(/\?.*$/, '');
    const send = (status: string, headers: Record<string, string | number>, body: Buffer | string = '') => {
      const bytes = Buffer.from(body);
      const lines = Object.entries({ ...headers, 'content-length': bytes.length, connection: 'close' }).map(([name, value]) => `${name}: ${value}`);
      socket.end(Buffer.concat([Buffer.from(`HTTP/1.1 ${status}\r\n${lines.join('\r\n')}\r\n\r\n`), bytes]));
    };
    const redirect = (location: string) => send('302 Found', { location });
    const drip = (bytes: Buffer) => {
      let offset = 0;
      const next = () => {
        if (socket.destroyed || socket.writableEnded) return;
        socket.write(bytes.subarray(offset % bytes.length, (offset % bytes.length) + 1));
        offset += 1;
        later(dripMs, next);
      };
      next();
    };
    switch (behaviour) {
      case 'good':
        return send('200 OK', { 'content-type': document.type }, document.body);
      case 'drip-headers':
        return drip(Buffer.from(`HTTP/1.1 200 OK\r\ncontent-type: ${document.type}\r\n${'x-padding: drip\r\n'.repeat(4096)}`));
      case 'drip-body':
        socket.write(`HTTP/1.1 200 OK\r\ncontent-type: ${document.type}\r\ncontent-length: ${document.cap}\r\n\r\n`);
        return drip(Buffer.from(document.body));
      case 'endless-body': {
        socket.write(`HTTP/1.1 200 OK\r\ncontent-type: ${document.type}\r\n\r\n`);
        const chunk = Buffer.alloc(16 * 1024, '\n');
        const pump = () => {
          while (!socket.destroyed && socket.write(chunk));
          if (!socket.destroyed) socket.once('drain', pump);
        };
        return pump();
      }
      case 'over-cap': {
        const body = Buffer.from(document.body);
        return send('200 OK', { 'content-type': document.type }, Buffer.concat([body, Buffer.alloc(document.cap + 1 - body.length, '\n')]));
      }
      case 'gzip-bomb':
        return send('200 OK', { 'content-type': document.type, 'content-encoding': 'gzip' }, gzipBomb);
      case 'svgz-bomb': {
        if (!svgzBombs.has(kind)) svgzBombs.set(kind, gzipSync(Buffer.concat([Buffer.from(document.body), Buffer.alloc(16 * 2 ** 20, ' ')])));
        return send('200 OK', { 'content-type': document.type }, svgzBombs.get(kind)!);
      }
      case 'encoded': {
        const coding = path.slice(path.indexOf('?') + 1);
        const encode = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync }[coding] ?? ((body: Buffer) => body);
        return send('200 OK', { 'content-type': document.type, 'content-encoding': coding }, encode(Buffer.from(document.body)));
      }
      case 'to-private':
        return redirect(`https://private.hostile.test/${file}`);
      case 'redirect-loop':
        return redirect(path.includes('/a/') ? `/redirect-loop/b/${file}` : `/redirect-loop/a/${file}`);
      case 'too-many-redirects':
      case 'slow-redirects': {
        const hop = Number(/\/hop(\d+)\//.exec(path)?.[1] ?? '0');
        const location = `/${behaviour}/hop${hop + 1}/${file}`;
        if (behaviour === 'too-many-redirects') return redirect(location);
        return later(slowHopMs, () => redirect(location));
      }
      case 'wrong-type':
        return send('200 OK', { 'content-type': 'text/html; charset=utf-8' }, document.body);
      case 'reset-mid-body':
        socket.write(`HTTP/1.1 200 OK\r\ncontent-type: ${document.type}\r\ncontent-length: 4096\r\n\r\n`);
        socket.write(Buffer.from(document.body).subarray(0, 100));
        // Time for the bytes to leave, then RST instead of FIN.
        return later(50, () => raw.resetAndDestroy());
    }
  };

  const server = net.createServer((raw) => {
    sockets.add(raw);
    raw.on('close', () => sockets.delete(raw));
    raw.on('error', () => {});
    const socket = new tls.TLSSocket(raw, { isServer: true, secureContext: tls.createSecureContext({ key: certificate.key, cert: certificate.cert }) });
    socket.on('error', () => {});
    let head = '';
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      socket.off('data', onData);
      serve(raw, socket, head.slice(0, end));
    };
    socket.on('data', onData);
  });
  const plain = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n'));
  });
  const listen = (what: net.Server) => new Promise<number>((resolve) => what.listen(0, '127.0.0.1', () => resolve((what.address() as net.AddressInfo).port)));
  const [port, plainPort] = await Promise.all([listen(server), listen(plain)]);
  return {
    port,
    plainPort,
    ca: authority.cert,
    requests,
    openConnections: () => sockets.size,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      for (const socket of sockets) socket.destroy();
      await Promise.all([server, plain].map((what) => new Promise<void>((resolve) => what.close(() => resolve()))));
    },
  };
}

/** The host of every BIMI document (logo and certificate) the peer serves. */
export const HOSTILE_LOGO_HOST = 'logo.hostile.test';
/** Where `to-private` redirects: a name the zone points at the metadata address 169.254.169.254. */
export const HOSTILE_PRIVATE_HOST = 'private.hostile.test';

/** The host names the peer's certificate must carry for {@link hostileZone}. */
export function hostileHostNames(): string[] {
  return [HOSTILE_LOGO_HOST, HOSTILE_PRIVATE_HOST, ...HOSTILE_BEHAVIOURS.map((name) => `mta-sts.${name}.test`)];
}

/**
 * One domain per behaviour, `<behaviour>.test`: an MTA-STS record whose
 * policy host is the peer, DMARC p=reject, and a BIMI record whose logo
 * and certificate are the behaviour's paths on the peer.
 */
export function hostileZone(): ZoneRecord[] {
  const records: ZoneRecord[] = [
    { name: HOSTILE_LOGO_HOST, type: 'A', data: '127.0.0.1' },
    { name: HOSTILE_PRIVATE_HOST, type: 'A', data: '169.254.169.254' },
  ];
  for (const name of HOSTILE_BEHAVIOURS) {
    const domain = `${name}.test`;
    records.push(
      { name: `_mta-sts.${domain}`, type: 'TXT', data: 'v=STSv1; id=1' },
      { name: `mta-sts.${domain}`, type: 'A', data: '127.0.0.1' },
      { name: `_dmarc.${domain}`, type: 'TXT', data: 'v=DMARC1; p=reject' },
      {
        name: `default._bimi.${domain}`,
        type: 'TXT',
        data: `v=BIMI1; l=https://${HOSTILE_LOGO_HOST}/${name}/logo.svg; a=https://${HOSTILE_LOGO_HOST}/${name}/vmc.pem`,
      },
    );
  }
  return records;
}
