/**
 * DNS over HTTPS and DNS over TLS servers for tests, on 127.0.0.1 port 0,
 * forwarding every query over TCP to a DNS server (test/support/dns-server.ts
 * or NSD), with a certificate from a test CA. Modes make them misbehave:
 * garbage bodies, HTTP errors, another content type, silence.
 */
import http2 from 'node:http2';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { createCertificateAuthority, issueCertificate, type TestCertificate } from '../../support/smtp-servers.js';

export interface TestPki {
  ca: TestCertificate;
  /** Valid for 127.0.0.1 (an IP SAN) and dns.example.test. */
  server: TestCertificate;
  /** Valid for other.example.test only. */
  wrongName: TestCertificate;
}

export function createTestPki(): TestPki {
  const ca = createCertificateAuthority('netintel DoH test CA');
  return {
    ca,
    server: issueCertificate({ commonName: 'dns.example.test', dnsNames: ['dns.example.test'], ipAddresses: ['127.0.0.1'], issuer: ca }),
    wrongName: issueCertificate({ commonName: 'other.example.test', dnsNames: ['other.example.test'], issuer: ca }),
  };
}

/** What a server does with a query. */
/** What a server does with a query; `close-on-second` (DoT): closes a connection when its second query comes, unanswered. */
export type EncryptedServerMode = 'forward' | 'garbage' | 'html' | 'status-500' | 'silent' | 'close-on-second';

export interface EncryptedDnsServer {
  port: number;
  /** Requests seen: HTTP method and protocol version (`2.0`, `1.1`), or `tls` for DoT. */
  requests: Array<{ method: string; httpVersion: string; path: string }>;
  /** TLS connections accepted. */
  connections(): number;
  mode: EncryptedServerMode;
  /** Closes the open connections, as a server closing idle ones does. */
  dropConnections(): void;
  close(): Promise<void>;
}

export interface EncryptedServerOptions {
  /** The DNS server (TCP) queries are forwarded to. */
  upstream: { host: string; port: number };
  certificate: TestCertificate;
  mode?: EncryptedServerMode;
}

/** Forwards one DNS message over TCP (so that no answer is cut to a UDP size) and gives the reply. */
function forward(upstream: { host: string; port: number }, message: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: upstream.host, port: upstream.port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('upstream timeout'));
    }, 3000);
    let received = Buffer.alloc(0);
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length >= 2 && received.length >= 2 + received.readUInt16BE(0)) {
        clearTimeout(timer);
        socket.destroy();
        resolve(received.subarray(2, 2 + received.readUInt16BE(0)));
      }
    });
    const frame = Buffer.alloc(2 + message.length);
    frame.writeUInt16BE(message.length, 0);
    message.copy(frame, 2);
    socket.write(frame);
  });
}

/**
 * What both servers keep: their connections, counted and held so that a
 * test can drop them all, and the listening on 127.0.0.1 port 0.
 */
function bookkeeping(options: EncryptedServerOptions): { state: EncryptedDnsServer; track: (socket: net.Socket) => void; listen: (server: tls.Server) => Promise<void> } {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  const state: EncryptedDnsServer = {
    port: 0,
    requests: [],
    connections: () => connections,
    mode: options.mode ?? 'forward',
    dropConnections: () => sockets.forEach((socket) => socket.destroy()),
    close: async () => {},
  };
  const track = (socket: net.Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const listen = async (server: tls.Server) => {
    server.on('tlsClientError', () => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    state.port = (server.address() as net.AddressInfo).port;
    state.close = () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      });
  };
  return { state, track, listen };
}

/**
 * A DoH server (RFC 8484): `http2: true` offers h2 and http/1.1 by ALPN
 * (node:http2 with allowHTTP1), `http2: false` only HTTP/1.1 (node:https).
 */
export async function startDohServer(options: EncryptedServerOptions & { http2: boolean; path?: string }): Promise<EncryptedDnsServer> {
  const path = options.path ?? '/dns-query';
  const { state, track, listen } = bookkeeping(options);

  async function handle(request: IncomingMessage | http2.Http2ServerRequest, response: ServerResponse | http2.Http2ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'https://localhost');
    state.requests.push({ method: request.method ?? '', httpVersion: request.httpVersion, path: url.pathname });
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    if (state.mode === 'silent') return;
    if (state.mode === 'status-500') {
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.end('broken');
      return;
    }
    if (state.mode === 'html') {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html>not here</html>');
      return;
    }
    if (state.mode === 'garbage') {
      response.writeHead(200, { 'content-type': 'application/dns-message' });
      response.end(Buffer.from('this is not a DNS message at all'));
      return;
    }
    let query: Buffer | null = null;
    if (url.pathname !== path) query = null;
    else if (request.method === 'GET' && url.searchParams.has('dns')) query = Buffer.from(url.searchParams.get('dns')!, 'base64url');
    else if (request.method === 'POST' && request.headers['content-type'] === 'application/dns-message') query = Buffer.concat(chunks);
    if (query === null) {
      response.writeHead(400, { 'content-type': 'text/plain' });
      response.end('bad request');
      return;
    }
    const reply = await forward(options.upstream, query);
    response.writeHead(200, { 'content-type': 'application/dns-message', 'content-length': String(reply.length) });
    response.end(reply);
  }

  const tlsSettings = { key: options.certificate.key, cert: options.certificate.cert };
  const onRequest = (request: IncomingMessage | http2.Http2ServerRequest, response: ServerResponse | http2.Http2ServerResponse) => {
    handle(request, response).catch(() => response.destroy?.());
  };
  const server = options.http2
    ? http2.createSecureServer({ ...tlsSettings, allowHTTP1: true }, onRequest)
    : https.createServer({ ...tlsSettings, ALPNProtocols: ['http/1.1'] }, onRequest);
  server.on('secureConnection', track);
  await listen(server);
  return state;
}

/** A DoT server (RFC 7858): TLS, two-octet length before each message. */
export async function startDotServer(options: EncryptedServerOptions): Promise<EncryptedDnsServer> {
  const { state, track, listen } = bookkeeping(options);
  const server = tls.createServer({ key: options.certificate.key, cert: options.certificate.cert }, (socket) => {
    track(socket);
    socket.on('error', () => socket.destroy());
    let buffered = Buffer.alloc(0);
    let queriesOnConnection = 0;
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const message = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
        buffered = buffered.subarray(2 + message.length);
        state.requests.push({ method: 'query', httpVersion: 'tls', path: '' });
        if (state.mode === 'silent') continue;
        if (state.mode === 'close-on-second' && ++queriesOnConnection >= 2) {
          socket.destroy();
          return;
        }
        const reply = state.mode === 'garbage' ? Promise.resolve(Buffer.from('garbage, not DNS')) : forward(options.upstream, Buffer.from(message));
        void reply.then((bytes) => {
          const frame = Buffer.alloc(2 + bytes.length);
          frame.writeUInt16BE(bytes.length, 0);
          bytes.copy(frame, 2);
          if (!socket.destroyed) socket.write(frame);
        });
      }
    });
  });
  await listen(server);
  return state;
}
