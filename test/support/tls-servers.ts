/**
 * TLS servers for `netintel tls` tests, each on 127.0.0.1 port 0:
 * - `startTlsServer`: node:tls with a chosen certificate, chain, versions and
 *   a stapled OCSP response;
 * - `startStarttlsPeer`: scripted peers speaking enough IMAP, POP3, FTP,
 *   XMPP, LDAP and PostgreSQL to reach the handshake (or refuse it);
 * - `startOpensslServer`: OpenSSL's `s_server` (for protocol versions Node's
 *   server side will not speak), or null without an `openssl` binary.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import { findExecutable } from './peers.js';
import type { TestCertificate } from './smtp-servers.js';

export interface TlsTestServer {
  port: number;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

export interface TlsServerOptions {
  certificate: TestCertificate;
  /** Certificates sent after the server's own (intermediates). */
  chain?: TestCertificate[];
  minVersion?: tls.SecureVersion;
  maxVersion?: tls.SecureVersion;
  /** Staple these bytes as the OCSP response. */
  staple?: Buffer;
  /** OpenSSL security level 0, so that the server presents a weak key or signature at all. */
  seclevel0?: boolean;
}

function secureContextOptions(options: TlsServerOptions): tls.TlsOptions {
  return {
    key: options.certificate.key,
    cert: [options.certificate.cert, ...(options.chain ?? []).map((each) => each.cert)].join(''),
    ...(options.minVersion ? { minVersion: options.minVersion } : {}),
    ...(options.maxVersion ? { maxVersion: options.maxVersion } : {}),
    ...(options.seclevel0 ? { ciphers: 'DEFAULT@SECLEVEL=0' } : {}),
  };
}

function listen(server: net.Server, count: () => number): Promise<TlsTestServer> {
  const sockets = new Set<net.Socket>();
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      resolve({
        port: (server.address() as net.AddressInfo).port,
        connections: count,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/** TLS from the first byte (HTTPS style). */
export function startTlsServer(options: TlsServerOptions): Promise<TlsTestServer> {
  let connections = 0;
  const server = tls.createServer(secureContextOptions(options), (socket) => {
    socket.on('error', () => {});
    socket.end();
  });
  server.on('connection', () => (connections += 1));
  server.on('tlsClientError', () => {});
  if (options.staple) {
    const staple = options.staple;
    server.on('OCSPRequest', (_certificate: Buffer, _issuer: Buffer, callback: (error: Error | null, response: Buffer) => void) => callback(null, staple));
  }
  return listen(server, () => connections);
}

export type StarttlsPeerProtocol = 'imap' | 'pop3' | 'ftp' | 'xmpp' | 'ldap' | 'postgres';

export interface StarttlsPeerOptions extends TlsServerOptions {
  /** Refuse the upgrade as the protocol does (NO, -ERR, 534, <failure/>, resultCode 2, N). */
  refuse?: boolean;
}

/** What each protocol's server says before and at the upgrade: data to send, and the client's bytes that trigger the next step. */
async function serverPreamble(protocol: StarttlsPeerProtocol, socket: net.Socket, refuse: boolean): Promise<boolean> {
  let received = Buffer.alloc(0);
  const waitFor = (test: (bytes: Buffer) => boolean) =>
    new Promise<boolean>((resolve) => {
      const check = () => {
        if (test(received)) {
          socket.off('data', onData);
          resolve(true);
        }
      };
      const onData = (chunk: Buffer) => {
        received = Buffer.concat([received, chunk]);
        check();
      };
      socket.on('data', onData);
      socket.once('close', () => resolve(false));
      check();
    });
  const text = () => received.toString('latin1');
  switch (protocol) {
    case 'imap':
      socket.write('* OK [CAPABILITY IMAP4rev1 STARTTLS] test server ready\r\n');
      if (!(await waitFor(() => /STARTTLS\r\n/.test(text())))) return false;
      socket.write(refuse ? 'a NO STARTTLS not available\r\n' : '* CAPABILITY IMAP4rev1\r\na OK Begin TLS negotiation now\r\n');
      return !refuse;
    case 'pop3':
      socket.write('+OK test POP3 server ready\r\n');
      if (!(await waitFor(() => /STLS\r\n/.test(text())))) return false;
      socket.write(refuse ? '-ERR not available\r\n' : '+OK Begin TLS negotiation\r\n');
      return !refuse;
    case 'ftp':
      socket.write('220-test FTP server\r\n220 ready\r\n');
      if (!(await waitFor(() => /AUTH TLS\r\n/.test(text())))) return false;
      socket.write(refuse ? '534 TLS not available\r\n' : '234 AUTH TLS successful\r\n');
      return !refuse;
    case 'xmpp':
      if (!(await waitFor(() => text().includes('<stream:stream')))) return false;
      socket.write(
        "<?xml version='1.0'?><stream:stream from='example.test' id='t1' version='1.0' xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>" +
          "<stream:features><starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required/></starttls></stream:features>",
      );
      if (!(await waitFor(() => text().includes('<starttls')))) return false;
      socket.write(refuse ? "<failure xmlns='urn:ietf:params:xml:ns:xmpp-tls'/></stream:stream>" : "<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>");
      return !refuse;
    case 'ldap': {
      if (!(await waitFor((bytes) => bytes.length >= 2 && bytes.length >= bytes[1]! + 2))) return false;
      // ExtendedResponse, message 1: resultCode (0 success, 2 protocolError), matchedDN "", diagnosticMessage "".
      socket.write(Buffer.from([0x30, 0x0c, 0x02, 0x01, 0x01, 0x78, 0x07, 0x0a, 0x01, refuse ? 0x02 : 0x00, 0x04, 0x00, 0x04, 0x00]));
      return !refuse;
    }
    case 'postgres':
      if (!(await waitFor((bytes) => bytes.length >= 8))) return false;
      socket.write(refuse ? 'N' : 'S');
      return !refuse;
  }
}

/** A scripted server of `protocol` that upgrades to TLS with `options.certificate` after its preamble. */
export function startStarttlsPeer(protocol: StarttlsPeerProtocol, options: StarttlsPeerOptions): Promise<TlsTestServer> {
  let connections = 0;
  const context = tls.createSecureContext(secureContextOptions(options));
  const server = net.createServer((socket) => {
    connections += 1;
    socket.on('error', () => {});
    void serverPreamble(protocol, socket, options.refuse === true).then((upgrade) => {
      if (!upgrade) {
        socket.end();
        return;
      }
      const secure = new tls.TLSSocket(socket, { isServer: true, secureContext: context });
      secure.on('error', () => {});
      secure.on('secure', () => secure.end());
    });
  });
  return listen(server, () => connections);
}

export interface OpensslServer {
  port: number;
  close(): void;
}

/** `openssl` on PATH, or null (the tests that need it skip, saying so). */
export const OPENSSL = findExecutable('openssl');

/**
 * OpenSSL's s_server with `certificate`, given extra arguments (`-tls1`, a
 * cipher list), serving connections until closed.
 */
export async function startOpensslServer(certificate: TestCertificate, args: readonly string[]): Promise<OpensslServer> {
  const dir = mkdtempSync(join(tmpdir(), 'netintel-s-server-'));
  writeFileSync(join(dir, 'cert.pem'), certificate.cert);
  writeFileSync(join(dir, 'key.pem'), certificate.key);
  const child: ChildProcess = spawn(OPENSSL!, ['s_server', '-accept', '127.0.0.1:0', '-cert', join(dir, 'cert.pem'), '-key', join(dir, 'key.pem'), ...args], {
    // s_server ends at the end of its stdin: it stays open until close().
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let output = '';
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /ACCEPT .*:(\d+)/.exec(output);
      if (match) resolve(Number(match[1]));
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`openssl s_server exited (${code}): ${output}`)));
    // A server that never says where it listens is not left running.
    setTimeout(() => {
      child.kill();
      reject(new Error(`openssl s_server did not say where it listens within 5 s: ${output}`));
    }, 5_000).unref();
  });
  return {
    port,
    close: () => {
      child.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
