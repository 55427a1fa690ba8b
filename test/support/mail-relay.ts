/**
 * Messages with a real journey, for the tests of `netintel headers`: a
 * message submitted here travels through two real Postfix instances with a
 * forwarding service between them, and is taken back as the last hop
 * delivered it, so every Received line in it was written by the MTA that
 * relayed it:
 *
 *   submit -> Postfix mx1.origin.test -> forwarder fwd.lists.test -> Postfix mx2.dest.test -> sink
 *
 * The sink delivers as a final receiver does, writing the envelope sender
 * as Return-Path at the top.
 *
 * Both Postfix instances offer STARTTLS and write the TLS details into their
 * Received lines (smtpd_tls_received_header). The forwarder is what a
 * mailing list or a forwarding service is to ARC (RFC 8617 §1): it
 * authenticates the message as it arrives (mailauth, against the tests' DNS
 * server), adds its Authentication-Results and an ARC set, then its own
 * Received line, and sends the message on, optionally after a delay.
 * Needs Postfix (POSTFIX_SKIP_REASON in ./postfix.ts).
 */
import { randomBytes } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { authenticate } from 'mailauth';
import nodemailer from 'nodemailer';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import type net from 'node:net';
import { startPostfix, type PostfixInstance } from './postfix.js';
import { createCertificateAuthority, issueCertificate } from './smtp-servers.js';

export interface MailRelayOptions {
  /** The DNS server (`127.0.0.1:<port>`) the forwarder authenticates against: SPF, DKIM and DMARC records of the senders. */
  dns: string;
  /** The forwarder's ARC sealing key: its public half is published at `<selector>._domainkey.<signingDomain>`. */
  arcSeal: { signingDomain: string; selector: string; privateKey: string };
  /** How long the forwarder holds each message before sending it on (default 0). */
  forwarderDelayMs?: number;
}

export interface MailRelayChain {
  /** Submits `message` to the first hop and resolves with the message as the last hop delivered it. */
  relay(message: Buffer, envelope: { from: string; to: string }): Promise<Buffer>;
  close(): Promise<void>;
}

export const FIRST_HOP = 'mx1.origin.test';
export const FORWARDER = 'fwd.lists.test';
export const LAST_HOP = 'mx2.dest.test';

/** An SMTP server that takes every message for any recipient and hands its raw octets to `onMessage`. */
async function startSmtpReceiver(
  name: string,
  tls: { cert: string; key: string },
  onMessage: (raw: Buffer, session: SMTPServerSession) => Promise<void> | void,
): Promise<{ port: number; close(): Promise<void> }> {
  const options: SMTPServerOptions = {
    name,
    key: tls.key,
    cert: tls.cert,
    disableReverseLookup: true,
    disabledCommands: ['AUTH'],
    authOptional: true,
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        Promise.resolve(onMessage(Buffer.concat(chunks), session)).then(
          () => callback(),
          (error: Error) => callback(error),
        );
      });
    },
  };
  const server = new SMTPServer(options);
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as net.AddressInfo).port;
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Sends `raw` as it is to 127.0.0.1:`port`, with STARTTLS when offered (the test CA is not checked). */
async function sendRaw(port: number, raw: Buffer, envelope: { from: string; to: string }, name: string): Promise<void> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, secure: false, name, tls: { rejectUnauthorized: false } });
  try {
    await transport.sendMail({ envelope, raw });
  } finally {
    transport.close();
  }
}

/** The Received line a forwarder writes (RFC 5321 §4.4), its timestamp in RFC 5322 §3.3 form. */
function receivedLine(session: SMTPServerSession, by: string): string {
  const helo = session.hostNameAppearsAs || session.remoteAddress;
  const protocol = session.secure ? 'ESMTPS' : 'ESMTP';
  const id = randomBytes(6).toString('hex').toUpperCase();
  const recipient = session.envelope.rcptTo[0]?.address;
  const date = new Date().toUTCString().replace('GMT', '+0000');
  return `Received: from ${helo} (localhost [${session.remoteAddress}])\r\n\tby ${by} with ${protocol} id ${id}${recipient ? `\r\n\tfor <${recipient}>` : ''}; ${date}\r\n`;
}

/** Postfix relaying everything it is given to 127.0.0.1:`next`, trusting loopback clients. */
function startRelayingPostfix(hostname: string, next: number, tls: { cert: string; key: string }): Promise<PostfixInstance> {
  return startPostfix({
    hostname,
    tls,
    mainCf: [
      'mydestination =',
      'relay_domains =',
      'local_recipient_maps =',
      'mynetworks = 127.0.0.0/8',
      'smtpd_relay_restrictions = permit_mynetworks, reject',
      `relayhost = [127.0.0.1]:${next}`,
      'smtp_tls_security_level = may',
      'smtpd_tls_received_header = yes',
    ],
  });
}

/** Starts the sink, the last Postfix, the forwarder and the first Postfix, in that order (each sends to the one before). */
export async function startMailRelayChain(options: MailRelayOptions): Promise<MailRelayChain> {
  const ca = createCertificateAuthority('netintel relay test CA');
  const certificate = (name: string) => issueCertificate({ commonName: name, issuer: ca });
  const resolver = new Resolver();
  resolver.setServers([options.dns]);
  const resolve = (name: string, type: string) => resolver.resolve(name, type as 'TXT');

  const waiting: Array<(raw: Buffer) => void> = [];
  const delivered: Buffer[] = [];
  const stops: Array<() => Promise<void>> = [];
  try {
    const sink = await startSmtpReceiver('sink.dest.test', certificate('sink.dest.test'), (received, session) => {
      // The final delivery writes the envelope sender as Return-Path (RFC 5321 §4.4).
      const from = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address;
      const raw = Buffer.concat([Buffer.from(`Return-Path: <${from}>\r\n`), received]);
      const waiter = waiting.shift();
      if (waiter) waiter(raw);
      else delivered.push(raw);
    });
    stops.push(sink.close);
    const last = await startRelayingPostfix(LAST_HOP, sink.port, certificate(LAST_HOP));
    stops.push(last.stop);
    const forwarder = await startSmtpReceiver(FORWARDER, certificate(FORWARDER), async (raw, session) => {
      const from = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address;
      const { headers } = await authenticate(raw, {
        ip: session.remoteAddress,
        helo: session.hostNameAppearsAs,
        sender: from,
        mta: FORWARDER,
        resolver: resolve,
        seal: options.arcSeal,
      });
      const forwarded = Buffer.concat([Buffer.from(receivedLine(session, FORWARDER)), Buffer.from(headers), raw]);
      const to = session.envelope.rcptTo[0]!.address;
      // Sent on after the answer to DATA, as a queueing forwarder does.
      setTimeout(() => void sendRaw(last.port, forwarded, { from, to }, FORWARDER), options.forwarderDelayMs ?? 0);
    });
    stops.push(forwarder.close);
    const first = await startRelayingPostfix(FIRST_HOP, forwarder.port, certificate(FIRST_HOP));
    stops.push(first.stop);
    return {
      async relay(message, envelope) {
        const arrived = new Promise<Buffer>((resolveArrival, rejectArrival) => {
          const early = delivered.shift();
          if (early) return resolveArrival(early);
          const timer = setTimeout(async () => {
            rejectArrival(new Error(`the message did not arrive within 30 s\n${FIRST_HOP}:\n${await first.maillog()}\n${LAST_HOP}:\n${await last.maillog()}`));
          }, 30_000);
          waiting.push((raw) => {
            clearTimeout(timer);
            resolveArrival(raw);
          });
        });
        await sendRaw(first.port, message, envelope, 'submit.origin.test');
        return arrived;
      },
      async close() {
        for (const stop of stops.reverse()) await stop().catch(() => {});
      },
    };
  } catch (error) {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    throw error;
  }
}
