/**
 * SMTP servers for tests, each on 127.0.0.1 port 0, and the certificates
 * they present.
 *
 * - `createCertificateAuthority()` / `issueCertificate()`: X.509 certificates
 *   built with node:crypto alone (DER written by hand, ECDSA P-256 keys), so
 *   a test can have a private CA, a certificate for any name, an expired or
 *   not-yet-valid one, or a self-signed one in a few milliseconds.
 * - `startSmtpTestServer(options)`: the smtp-server package (a real ESMTP
 *   implementation) with STARTTLS, AUTH PLAIN/LOGIN/CRAM-MD5, chosen
 *   extensions hidden, a refusing (554) greeting, a greeting delay, a
 *   recipient policy for relay tests.
 * - `startScriptedSmtpServer(script)`: a raw TCP server for what a correct
 *   server never does: never answer, close after EHLO, advertise STARTTLS
 *   and then fail the handshake, inject bytes after `220` to STARTTLS.
 *
 * Every server records what it received, so a test can prove that nothing
 * was sent (bad input) or that DATA never was.
 */
import { createHash, createPrivateKey, generateKeyPairSync, sign, X509Certificate, type KeyObject } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import { SMTPServer, type SMTPServerAuthentication, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';

// ---------------------------------------------------------------------------
// DER encoding (X.690), just what an X.509 v3 certificate needs.

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let value = length; value > 0; value >>= 8) bytes.unshift(value & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function der(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

const sequence = (...items: Buffer[]) => der(0x30, ...items);
const set = (...items: Buffer[]) => der(0x31, ...items);
const octetString = (value: Buffer) => der(0x04, value);
const bitString = (value: Buffer) => der(0x03, Buffer.from([0]), value);
const utf8 = (value: string) => der(0x0c, Buffer.from(value, 'utf8'));
const explicit = (n: number, value: Buffer) => der(0xa0 + n, value);

function integer(value: Buffer): Buffer {
  let bytes = value;
  while (bytes.length > 1 && bytes[0] === 0 && (bytes[1]! & 0x80) === 0) bytes = bytes.subarray(1);
  if ((bytes[0]! & 0x80) !== 0) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  return der(0x02, bytes);
}

function oid(text: string): Buffer {
  const parts = text.split('.').map(Number);
  const bytes = [parts[0]! * 40 + parts[1]!];
  for (const part of parts.slice(2)) {
    const chunk: number[] = [];
    let value = part;
    do {
      chunk.unshift(value & 0x7f);
      value = Math.floor(value / 128);
    } while (value > 0);
    for (let i = 0; i < chunk.length - 1; i++) chunk[i]! |= 0x80;
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
}

function time(date: Date): Buffer {
  const iso = date.toISOString();
  const compact = `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`;
  const year = date.getUTCFullYear();
  // RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050.
  return year >= 1950 && year < 2050 ? der(0x17, Buffer.from(compact.slice(2))) : der(0x18, Buffer.from(compact));
}

function name(commonName: string, organisation?: string): Buffer {
  const rdns = [set(sequence(oid('2.5.4.3'), utf8(commonName)))];
  if (organisation) rdns.unshift(set(sequence(oid('2.5.4.10'), utf8(organisation))));
  return sequence(...rdns);
}

function ipBytes(ip: string): Buffer {
  if (net.isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  const [head = '', tail = ''] = ip.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const left = groups(head);
  const right = ip.includes('::') ? groups(tail) : [];
  const all = [...left, ...Array(8 - left.length - right.length).fill(0), ...right];
  const bytes = Buffer.alloc(16);
  all.forEach((group, i) => bytes.writeUInt16BE(group, i * 2));
  return bytes;
}

const ECDSA_WITH_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));

export interface TestCertificate {
  /** PEM of the certificate. */
  cert: string;
  /** PEM (PKCS #8) of its private key. */
  key: string;
  /** The certificate's key, for signing certificates under it (a CA). */
  privateKey: KeyObject;
  subject: string;
  x509: X509Certificate;
}

export interface CertificateOptions {
  commonName: string;
  /** subjectAltName DNS names (default: the common name) and IP addresses. */
  dnsNames?: string[];
  ipAddresses?: string[];
  notBefore?: Date;
  notAfter?: Date;
  /** The issuer; self-signed when omitted. */
  issuer?: TestCertificate;
  /** A CA certificate (basicConstraints cA, keyCertSign). */
  ca?: boolean;
  organisation?: string;
  /** An RSA key of this many bits instead of P-256 (for weak-key tests); sign only with an EC issuer. */
  rsaBits?: number;
  /** Sign with SHA-1 instead of SHA-256 (for weak-signature tests). */
  sha1?: boolean;
}

const ECDSA_WITH_SHA1 = sequence(oid('1.2.840.10045.4.1'));

const DAY_MS = 86_400_000;

/** Builds and signs one X.509 v3 certificate with a fresh P-256 key (or RSA key of `rsaBits`). */
export function issueCertificate(options: CertificateOptions): TestCertificate {
  const { publicKey, privateKey } = options.rsaBits ? generateKeyPairSync('rsa', { modulusLength: options.rsaBits }) : generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const now = Date.now();
  const notBefore = options.notBefore ?? new Date(now - DAY_MS);
  const notAfter = options.notAfter ?? new Date(now + 365 * DAY_MS);
  const subject = name(options.commonName, options.organisation);
  const issuerDer = options.issuer ? issuerSubjectDer(options.issuer.x509) : subject;
  const signingKey = options.issuer ? options.issuer.privateKey : privateKey;

  const extensions: Buffer[] = [];
  if (options.ca) {
    extensions.push(sequence(oid('2.5.29.19'), der(0x01, Buffer.from([0xff])), octetString(sequence(der(0x01, Buffer.from([0xff]))))));
    // keyUsage: keyCertSign | cRLSign
    extensions.push(sequence(oid('2.5.29.15'), der(0x01, Buffer.from([0xff])), octetString(der(0x03, Buffer.from([0x01, 0x06])))));
  } else {
    const names = [
      ...(options.dnsNames ?? [options.commonName]).map((dns) => der(0x82, Buffer.from(dns))),
      ...(options.ipAddresses ?? []).map((ip) => der(0x87, ipBytes(ip))),
    ];
    extensions.push(sequence(oid('2.5.29.17'), octetString(sequence(...names))));
    extensions.push(sequence(oid('2.5.29.19'), octetString(sequence())));
    // extendedKeyUsage: serverAuth
    extensions.push(sequence(oid('2.5.29.37'), octetString(sequence(oid('1.3.6.1.5.5.7.3.1')))));
  }
  const serial = createHash('sha256').update(spki).digest().subarray(0, 16);
  serial[0]! &= 0x7f;
  const algorithm = options.sha1 ? ECDSA_WITH_SHA1 : ECDSA_WITH_SHA256;
  const tbs = sequence(
    explicit(0, integer(Buffer.from([2]))),
    integer(serial),
    algorithm,
    issuerDer,
    sequence(time(notBefore), time(notAfter)),
    subject,
    spki,
    explicit(3, sequence(...extensions)),
  );
  const signature = sign(options.sha1 ? 'sha1' : 'sha256', tbs, signingKey);
  const certificate = sequence(tbs, algorithm, bitString(signature));
  const cert = `-----BEGIN CERTIFICATE-----\n${certificate.toString('base64').replace(/.{1,64}/g, '$&\n')}-----END CERTIFICATE-----\n`;
  const key = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return { cert, key, privateKey: createPrivateKey(key), subject: `CN=${options.commonName}`, x509: new X509Certificate(cert) };
}

/** The subject Name of a certificate as DER, read from its TBSCertificate. */
function issuerSubjectDer(certificate: X509Certificate): Buffer {
  const raw = Buffer.from(certificate.raw);
  const elements = (buffer: Buffer) => {
    const out: Buffer[] = [];
    let offset = 0;
    while (offset < buffer.length) {
      const start = offset;
      offset += 1;
      let length = buffer[offset]!;
      offset += 1;
      if (length & 0x80) {
        const count = length & 0x7f;
        length = 0;
        for (let i = 0; i < count; i++) length = length * 256 + buffer[offset + i]!;
        offset += count;
      }
      out.push(buffer.subarray(start, offset + length));
      offset += length;
    }
    return out;
  };
  const contents = (element: Buffer) => {
    let offset = 1;
    const first = element[offset]!;
    offset += 1 + (first & 0x80 ? first & 0x7f : 0);
    return element.subarray(offset);
  };
  const [tbs] = elements(contents(raw));
  const fields = elements(contents(tbs!));
  // version [0], serial, signature algorithm, issuer, validity, subject
  return fields[5]!;
}

/** A CA certificate for signing test server certificates. */
export function createCertificateAuthority(commonName = 'netintel test CA'): TestCertificate {
  return issueCertificate({ commonName, ca: true, organisation: 'netintel tests', notAfter: new Date(Date.now() + 3650 * DAY_MS) });
}

/** Days from now as a Date (negative for the past). */
export function daysFromNow(days: number): Date {
  return new Date(Date.now() + days * DAY_MS);
}

// ---------------------------------------------------------------------------
// Servers

export interface SmtpTestServer {
  host: '127.0.0.1';
  port: number;
  /** Connections accepted so far. */
  connections(): number;
  /** Every command line the server received, in order (smtp-server hides AUTH payloads). */
  commands(): string[];
  /** True once any client sent DATA or BDAT. */
  dataSeen(): boolean;
  close(): Promise<void>;
}

export interface SmtpTestServerOptions {
  /** The host name the server greets with (default mx.example.test). */
  name?: string;
  /** Offer STARTTLS with this certificate (and `chain` after it); no STARTTLS when omitted. */
  certificate?: TestCertificate;
  chain?: TestCertificate[];
  /** TLS from the first byte (port 465 style) with `certificate`. */
  implicitTls?: boolean;
  /** Accepted credentials and the mechanisms offered (default PLAIN LOGIN). */
  auth?: { user: string; pass: string; methods?: string[]; beforeTls?: boolean };
  /** Wait this long before the greeting. */
  greetingDelayMs?: number;
  /** Refuse every connection with this greeting (default code 554). */
  refuse?: { code?: number; message: string };
  /** Extensions to leave out of EHLO. */
  hide?: Array<'PIPELINING' | '8BITMIME' | 'SMTPUTF8' | 'ENHANCEDSTATUSCODES' | 'DSN' | 'SIZE' | 'REQUIRETLS'>;
  /** Accept RCPT TO any domain without authentication (an open relay). */
  openRelay?: boolean;
  /** Domains the server takes mail for (default example.test). */
  localDomains?: string[];
  /** SIZE limit (default 10485760). */
  size?: number;
}

/** A real ESMTP server (smtp-server) on 127.0.0.1, port chosen by the system. */
export async function startSmtpTestServer(options: SmtpTestServerOptions = {}): Promise<SmtpTestServer> {
  let connections = 0;
  let dataSeen = false;
  const commands: string[] = [];
  const hide = new Set(options.hide ?? []);
  const localDomains = options.localDomains ?? ['example.test'];
  const logger = {
    trace: () => {},
    info: () => {},
    warn: () => {},
    error: () => {},
    fatal: () => {},
    debug: (data: { tnx?: string } | undefined, ...args: unknown[]) => {
      if (data?.tnx === 'command') commands.push(args.map(String).join(' ').replace(/^C:\s*/, ''));
    },
  };
  const serverOptions: SMTPServerOptions = {
    name: options.name ?? 'mx.example.test',
    disableReverseLookup: true,
    logger: logger as unknown as SMTPServerOptions['logger'],
    secure: options.implicitTls === true,
    ...(options.certificate
      ? { key: options.certificate.key, cert: options.certificate.cert + (options.chain ?? []).map((c) => c.cert).join('') }
      : { hideSTARTTLS: true }),
    // smtp-server offers LOGIN and PLAIN when given no methods: a server without auth disables the command.
    authMethods: options.auth ? (options.auth.methods ?? ['PLAIN', 'LOGIN']) : ['PLAIN'],
    disabledCommands: options.auth ? [] : ['AUTH'],
    authOptional: true,
    allowInsecureAuth: options.auth?.beforeTls === true,
    hidePIPELINING: hide.has('PIPELINING'),
    hide8BITMIME: hide.has('8BITMIME'),
    hideSMTPUTF8: hide.has('SMTPUTF8'),
    hideENHANCEDSTATUSCODES: hide.has('ENHANCEDSTATUSCODES'),
    hideDSN: hide.has('DSN'),
    hideREQUIRETLS: hide.has('REQUIRETLS'),
    size: hide.has('SIZE') ? 0 : (options.size ?? 10_485_760),
    onConnect(session, callback) {
      connections += 1;
      // smtp-server advertises AUTH before TLS (and refuses it there); hide it unless asked to offer it.
      if (options.auth && !options.auth.beforeTls && !options.implicitTls) session.disabledCommands = ['AUTH'];
      const answer = () => {
        if (!options.refuse) return callback();
        const error = Object.assign(new Error(options.refuse.message), { responseCode: options.refuse.code ?? 554 });
        return callback(error);
      };
      if (options.greetingDelayMs) setTimeout(answer, options.greetingDelayMs);
      else answer();
    },
    onSecure(_socket, session, callback) {
      if (options.auth) session.disabledCommands = [];
      callback();
    },
    onAuth(auth: SMTPServerAuthentication, _session: SMTPServerSession, callback) {
      const expected = options.auth;
      const ok =
        expected !== undefined &&
        auth.username === expected.user &&
        (auth.method === 'CRAM-MD5' ? auth.validatePassword(expected.pass) : auth.password === expected.pass);
      if (ok) return callback(null, { user: auth.username });
      return callback(Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 }));
    },
    onRcptTo(address, session, callback) {
      const domain = address.address.split('@').pop()!.toLowerCase();
      if (options.openRelay || session.user || localDomains.includes(domain)) return callback();
      return callback(Object.assign(new Error('Relay access denied'), { responseCode: 554 }));
    },
    onData(stream, _session, callback) {
      dataSeen = true;
      stream.resume();
      stream.on('end', () => callback());
    },
  };
  const server = new SMTPServer(serverOptions);
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const address = server.server.address() as net.AddressInfo;
  return {
    host: '127.0.0.1',
    port: address.port,
    connections: () => connections,
    commands: () => [...commands],
    dataSeen: () => dataSeen || commands.some((command) => /^(DATA|BDAT)\b/i.test(command)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** One accepted connection of a scripted server. */
export interface ScriptedConnection {
  socket: net.Socket;
  /** Writes one reply line (CRLF added). */
  send(line: string): void;
  /** The next line the client sent, or null once it closed. */
  readLine(timeoutMs?: number): Promise<string | null>;
  /** Starts server-side TLS on the connection; later lines travel inside it. */
  upgrade(certificate: TestCertificate): Promise<boolean>;
  /** Closes the connection. */
  close(): void;
}

export interface ScriptedSmtpServer {
  host: '127.0.0.1';
  port: number;
  connections(): number;
  /** Every line received from clients, in order. */
  received(): string[];
  close(): Promise<void>;
}

/**
 * A raw TCP server driven by `script` once per connection, for behaviour a
 * correct server never shows.
 */
export async function startScriptedSmtpServer(script: (connection: ScriptedConnection) => void | Promise<void>): Promise<ScriptedSmtpServer> {
  let connections = 0;
  const received: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffer = '';
    const lines: string[] = [];
    let waiting: ((line: string | null) => void) | null = null;
    let ended = false;
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('latin1');
      let index: number;
      while ((index = buffer.indexOf('\n')) !== -1) {
        const line = buffer.slice(0, index).replace(/\r$/, '');
        buffer = buffer.slice(index + 1);
        received.push(line);
        if (waiting) {
          const resolve = waiting;
          waiting = null;
          resolve(line);
        } else lines.push(line);
      }
    };
    socket.on('data', onData);
    socket.on('close', () => {
      ended = true;
      if (waiting) waiting(null);
    });
    let stream: net.Socket = socket;
    const connection: ScriptedConnection = {
      socket,
      send: (line) => {
        if (!stream.destroyed) stream.write(`${line}\r\n`);
      },
      upgrade: (certificate) => {
        socket.off('data', onData);
        buffer = '';
        const secure = new tls.TLSSocket(socket, { isServer: true, key: certificate.key, cert: certificate.cert });
        stream = secure;
        secure.on('data', onData);
        return new Promise((resolve) => {
          secure.once('secure', () => resolve(true));
          secure.once('error', () => resolve(false));
          secure.once('close', () => resolve(false));
        });
      },
      readLine: (timeoutMs = 10_000) => {
        const next = lines.shift();
        if (next !== undefined) return Promise.resolve(next);
        if (ended) return Promise.resolve(null);
        return new Promise((resolve) => {
          const timer = setTimeout(() => {
            waiting = null;
            resolve(null);
          }, timeoutMs);
          waiting = (line) => {
            clearTimeout(timer);
            resolve(line);
          };
        });
      },
      close: () => socket.destroy(),
    };
    Promise.resolve(script(connection)).catch(() => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  return {
    host: '127.0.0.1',
    port,
    connections: () => connections,
    received: () => [...received],
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The EHLO reply lines of a scripted server. */
export function ehloReply(name: string, keywords: string[]): string[] {
  const lines = [name, ...keywords];
  return lines.map((line, i) => `250${i === lines.length - 1 ? ' ' : '-'}${line}`);
}

/** A port on 127.0.0.1 nothing listens on (bound, then released): one helper for every test, in peers.ts. */
export { closedPort } from './peers.js';
