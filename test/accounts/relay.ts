/**
 * A mail relay for the mailer tests: smtp-server on 127.0.0.1 port 0 with
 * STARTTLS, or TLS from the first byte (a certificate for 127.0.0.1 from a private CA) and mandatory
 * AUTH, keeping every message it accepts as raw bytes.
 *
 * `{ plain: true }` gives the relay of a local network instead: no TLS and
 * no AUTH offered, every message accepted (what `--smtp-url
 * smtp://host:port` without a user talks to).
 */
import type net from 'node:net';
import { SMTPServer, type SMTPServerAuthentication } from 'smtp-server';

import type { TestCertificate } from '../support/smtp-servers.js';

export interface ReceivedMail {
  from: string;
  to: string[];
  /** Whether MAIL FROM carried SMTPUTF8 (RFC 6531). */
  smtp_utf8: boolean;
  raw: Buffer;
  /** True when the message came over TLS (after STARTTLS). */
  secure: boolean;
  user: string | undefined;
}

export interface TestRelay {
  port: number;
  received: ReceivedMail[];
  authAttempts: () => number;
  close(): Promise<void>;
}

export type TestRelayOptions = ({ certificate: TestCertificate; user: string; pass: string; implicitTls?: boolean } | { plain: true }) & {
  /** Leave SMTPUTF8 out of the EHLO answer, as a relay without RFC 6531 does. */
  withoutSmtpUtf8?: boolean;
};

export async function startTestRelay(options: TestRelayOptions): Promise<TestRelay> {
  const received: ReceivedMail[] = [];
  let authAttempts = 0;
  const security =
    'plain' in options
      ? // Neither STARTTLS nor AUTH advertised: a client that would upgrade opportunistically stays in plain text (RFC 3207 §4).
        { secure: false, authOptional: true, disabledCommands: ['STARTTLS', 'AUTH'] }
      : { secure: options.implicitTls === true, key: options.certificate.key, cert: options.certificate.cert, authMethods: ['PLAIN', 'LOGIN'], authOptional: false };
  const server = new SMTPServer({
    name: 'relay.example.test',
    disableReverseLookup: true,
    logger: false,
    hideSMTPUTF8: options.withoutSmtpUtf8 === true,
    ...security,
    onAuth(auth: SMTPServerAuthentication, _session, callback) {
      authAttempts += 1;
      if (!('plain' in options) && auth.username === options.user && auth.password === options.pass) return callback(null, { user: auth.username });
      return callback(Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          smtp_utf8: (session.envelope.mailFrom !== false && (session.envelope.mailFrom.args as Record<string, unknown> | false) !== false && (session.envelope.mailFrom.args as Record<string, unknown>).SMTPUTF8 === true),
          raw: Buffer.concat(chunks),
          secure: session.secure,
          user: typeof session.user === 'string' ? session.user : undefined,
        });
        callback();
      });
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as net.AddressInfo).port;
  return {
    port,
    received,
    authAttempts: () => authAttempts,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
