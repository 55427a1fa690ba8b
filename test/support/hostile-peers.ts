/**
 * Peers that attack the client, all on loopback port 0, for the tests of
 * what one answer may make netintel do:
 *
 * - `startHostileDns()`: a DNS server (dns-server.ts) whose zone and
 *   scripts hold the attacks by name (HOSTILE_NAMES): 2,000 MX records in
 *   one answer, 4,000 addresses of one host, records for names nobody
 *   asked, malformed replies, referrals from a server that does not
 *   recurse, a spoofed garbage datagram before the real answer.
 * - `startCountingSmtp()`: an SMTP server that greets, answers EHLO and
 *   QUIT, and counts its connections; the other SMTP peers send a
 *   multi-line greeting with mixed codes, a greeting that never ends, or
 *   terminal escape sequences.
 * - `startPlainTcpPeer()`: answers a TLS ClientHello with plain octets.
 * - `startH2FloodPeer()`: a TLS server that speaks HTTP/2 and floods PING
 *   or SETTINGS frames.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { DecodedPacket } from 'dns-packet';
import { startDnsServer, type DnsTestServer, type ScriptedReply, type ZoneRecord } from './dns-server.js';
import { headerOnly, nameOver255, pointerLoop, pointerPastEnd, rdlengthPastEnd, referral, replyTo, truncatedRecord } from './hostile-dns.js';
import { ehloReply, startScriptedSmtpServer, type ScriptedSmtpServer, type TestCertificate } from './smtp-servers.js';

/** The names of the attacks the hostile DNS server answers. */
export const HOSTILE_NAMES = {
  /** 2,000 MX records (mx0 ... mx1999.many-mx.test, each A 127.0.0.1): one answer over TCP. */
  manyMx: 'many-mx.test',
  /** 4,000 A records, all 127.0.0.1. */
  manyAddresses: 'mx.many-a.test',
  /** A: the answer holds only `victim.example A 127.0.0.9`; AAAA: NOERROR, no records. */
  unrelated: 'mx.evil.test',
  /** A: a CNAME to a name whose A record follows, and a stray record for another name. */
  aliasWithStray: 'alias.evil.test',
  /** A: a compression pointer to itself. */
  pointerLoop: 'loop.bad.test',
  /** A: a compression pointer past the end. */
  pointerPastEnd: 'past.bad.test',
  /** A: a record cut off after its type and class. */
  truncatedRecord: 'cut.bad.test',
  /** A: an owner name of 321 octets. */
  nameOver255: 'long.bad.test',
  /** A: a TXT record whose rdata length runs 190 octets past the end. */
  rdlengthPastEnd: 'rdlen.bad.test',
  /** A: a header promising a question that is not there. */
  headerOnly: 'header.bad.test',
  /** A over TCP: a zero-length frame, nothing else. */
  zeroFrame: 'zero.bad.test',
  /** A over UDP: a garbage datagram with the query's id, then the real answer 50 ms later. */
  spoofedGarbage: 'spoof.bad.test',
  /** A over UDP: TC set and a record cut short; over TCP the zone's answer. */
  truncatedUdp: 'tc.bad.test',
  /** Every name under referral.test: a referral to its name servers, RA and AA clear. */
  referral: 'referral.test',
} as const;

/** The address of the only record of the unrelated-answer attack. */
export const VICTIM_ADDRESS = '127.0.0.9';

const MANY_MX = 2000;
const MANY_ADDRESSES = 4000;

function hostileZone(): ZoneRecord[] {
  const records: ZoneRecord[] = [];
  for (let i = 0; i < MANY_MX; i++) records.push({ name: `mx${i}.${HOSTILE_NAMES.manyMx}`, type: 'A', data: '127.0.0.1' });
  records.push({ name: 'target.evil.test', type: 'A', data: '192.0.2.7' });
  // The RFC 5782 test point of the blocklist `bl.hostile.test` the blacklist cases ask.
  records.push({ name: '2.0.0.127.bl.hostile.test', type: 'A', data: '127.0.0.2' });
  records.push({ name: 'spoof.bad.test', type: 'A', data: '192.0.2.8' });
  records.push({ name: 'tc.bad.test', type: 'A', data: '192.0.2.9' });
  return records;
}

/**
 * An answer of `count` records at the question name, compressed as a server
 * writes them (the owner a pointer to the question, offset 12), so that
 * thousands fit in one TCP message: `rdata(i)` gives each record's data,
 * which may end in a pointer to the question name too.
 */
function compressedAnswer(query: DecodedPacket, type: number, count: number, rdata: (index: number) => Buffer): Buffer {
  const records: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const data = rdata(i);
    const fixed = Buffer.from([0xc0, 12, type >> 8, type & 0xff, 0, 1, 0, 0, 0, 60, data.length >> 8, data.length & 0xff]);
    records.push(fixed, data);
  }
  const message = Buffer.concat([replyTo(query), ...records]);
  message.writeUInt16BE(count, 6);
  return message;
}

/** MX 10 mx<i>.<question name>: the exchange's first label, then a pointer to the question name. */
function mxData(index: number): Buffer {
  const label = Buffer.from(`mx${index}`);
  return Buffer.concat([Buffer.from([0, 10, label.length]), label, Buffer.from([0xc0, 12])]);
}

/** Over UDP, TC and no records, as a server whose answer does not fit; over TCP, the whole compressed answer. */
function bigAnswer(query: DecodedPacket, transport: 'udp' | 'tcp', build: () => Buffer): ScriptedReply[] {
  if (transport === 'tcp') return [{ message: build() }];
  const truncated = replyTo(query);
  truncated.writeUInt16BE(truncated.readUInt16BE(2) | 0x0200, 2);
  return [{ message: truncated }];
}

/** A garbage datagram that carries the query's id and nothing a DNS message needs. */
function garbageWithId(query: DecodedPacket): Buffer {
  const garbage = Buffer.from('\0\0this is not DNS');
  garbage.writeUInt16BE(query.id ?? 0, 0);
  return garbage;
}

/** A TC reply whose one answer is cut after its name: valid up to the question, then short. */
function truncatedWithCutRecord(query: DecodedPacket): Buffer {
  const message = Buffer.concat([replyTo(query), Buffer.from([0xc0, 12, 0, 1])]);
  message.writeUInt16BE(message.readUInt16BE(2) | 0x0200, 2);
  message.writeUInt16BE(1, 6);
  return message;
}

function hostileScript(query: DecodedPacket, transport: 'udp' | 'tcp'): ScriptedReply[] | undefined {
  const question = query.questions?.[0];
  if (!question) return undefined;
  const name = question.name.toLowerCase();
  const one = (message: Buffer): ScriptedReply[] => [{ message }];
  if (name === HOSTILE_NAMES.referral || name.endsWith(`.${HOSTILE_NAMES.referral}`)) {
    return one(referral(query, HOSTILE_NAMES.referral, [`ns1.${HOSTILE_NAMES.referral}`, `ns2.${HOSTILE_NAMES.referral}`]));
  }
  if (name === HOSTILE_NAMES.unrelated) {
    return one(replyTo(query, question.type === 'A' ? { answers: [{ name: 'victim.example', type: 'A', ttl: 60, class: 'IN', data: VICTIM_ADDRESS }] } : {}));
  }
  if (name === HOSTILE_NAMES.aliasWithStray && question.type === 'A') {
    return one(
      replyTo(query, {
        answers: [
          { name: HOSTILE_NAMES.aliasWithStray, type: 'CNAME', ttl: 60, class: 'IN', data: 'target.evil.test' },
          { name: 'target.evil.test', type: 'A', ttl: 60, class: 'IN', data: '192.0.2.7' },
          { name: 'victim.example', type: 'A', ttl: 60, class: 'IN', data: VICTIM_ADDRESS },
        ],
      }),
    );
  }
  if (name === HOSTILE_NAMES.manyMx && question.type === 'MX') return bigAnswer(query, transport, () => compressedAnswer(query, 15, MANY_MX, mxData));
  if (name === HOSTILE_NAMES.manyAddresses && question.type === 'A') return bigAnswer(query, transport, () => compressedAnswer(query, 1, MANY_ADDRESSES, () => Buffer.from([127, 0, 0, 1])));
  if (question.type !== 'A') return undefined;
  switch (name) {
    case HOSTILE_NAMES.pointerLoop:
      return one(pointerLoop(query));
    case HOSTILE_NAMES.pointerPastEnd:
      return one(pointerPastEnd(query));
    case HOSTILE_NAMES.truncatedRecord:
      return one(truncatedRecord(query));
    case HOSTILE_NAMES.nameOver255:
      return one(nameOver255(query));
    case HOSTILE_NAMES.rdlengthPastEnd:
      return one(rdlengthPastEnd(query));
    case HOSTILE_NAMES.headerOnly:
      return one(headerOnly(query));
    case HOSTILE_NAMES.zeroFrame:
      return transport === 'tcp' ? one(Buffer.alloc(0)) : undefined;
    case HOSTILE_NAMES.spoofedGarbage:
      return transport === 'udp' ? [{ message: garbageWithId(query) }, { zone: true, afterMs: 50 }] : undefined;
    case HOSTILE_NAMES.truncatedUdp:
      return transport === 'udp' ? one(truncatedWithCutRecord(query)) : undefined;
    default:
      return undefined;
  }
}

/** The hostile DNS server: the zone and scripts of HOSTILE_NAMES, and any `extra` records. */
export function startHostileDns(extra: ZoneRecord[] = []): Promise<DnsTestServer> {
  return startDnsServer({ records: [...hostileZone(), ...extra], script: hostileScript });
}

/** An SMTP server that greets, lists a few extensions, says goodbye to QUIT, and counts its connections. */
export function startCountingSmtp(): Promise<ScriptedSmtpServer> {
  return startScriptedSmtpServer(async (connection) => {
    connection.send('220 mx.hostile.test ESMTP');
    for (;;) {
      const line = await connection.readLine(5000);
      if (line === null) return;
      if (/^(EHLO|HELO)/i.test(line)) for (const reply of ehloReply('mx.hostile.test', ['SIZE 1000000', '8BITMIME'])) connection.send(reply);
      else if (/^QUIT/i.test(line)) {
        connection.send('221 bye');
        connection.close();
        return;
      } else connection.send('502 not here');
    }
  });
}

/** A greeting whose lines carry 220, then 250, then 554 (RFC 5321 §4.2.1: one reply, one code). */
export function startMixedCodeSmtp(): Promise<ScriptedSmtpServer> {
  return startScriptedSmtpServer(async (connection) => {
    connection.send('220-mx.hostile.test ESMTP');
    connection.send('250-SIZE 1000000');
    connection.send('554 no service');
    await connection.readLine(5000);
    connection.close();
  });
}

/** A greeting of continuation lines that never ends (one line a millisecond, until the client leaves). */
export function startEndlessBannerSmtp(): Promise<ScriptedSmtpServer> {
  return startScriptedSmtpServer(async (connection) => {
    for (let i = 0; !connection.socket.destroyed && i < 100_000; i++) {
      connection.send(`220-mx.hostile.test line ${i}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  });
}

/** A greeting that carries terminal escape sequences (colour, title, clear screen) and a bidi override. */
export const ESCAPE_BANNER = '220 mx.hostile.test \u001b[31mred\u001b]0;owned\u0007\u001b[2J \u202eevil';

export function startEscapeBannerSmtp(): Promise<ScriptedSmtpServer> {
  return startScriptedSmtpServer(async (connection) => {
    connection.send(ESCAPE_BANNER);
    for (;;) {
      const line = await connection.readLine(5000);
      if (line === null) return;
      if (/^(EHLO|HELO)/i.test(line)) for (const reply of ehloReply('mx.hostile.test', ['SIZE 1000000'])) connection.send(reply);
      else {
        connection.send('221 bye');
        connection.close();
        return;
      }
    }
  });
}

export interface CountingPeer {
  port: number;
  connections(): number;
  close(): Promise<void>;
}

function listen(server: net.Server, sockets: Set<net.Socket>): Promise<CountingPeer> {
  let connections = 0;
  server.on('connection', (socket: net.Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        port: (server.address() as net.AddressInfo).port,
        connections: () => connections,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      }),
    ),
  );
}

/** A plain TCP server (a DNS server over TCP, say) that answers whatever comes with a framed DNS-looking message, never TLS. */
export function startPlainTcpPeer(): Promise<CountingPeer> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    socket.once('data', () => socket.write(Buffer.from('\u0000\u0011plain DNS, no TLS')));
  });
  return listen(server, sockets);
}

/** One HTTP/2 frame (RFC 9113 §4.1). */
function h2Frame(type: number, flags: number, stream: number, payload: Buffer): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(stream, 5);
  return Buffer.concat([header, payload]);
}

/**
 * A TLS server that says h2 by ALPN and then floods the connection with
 * PING frames or with SETTINGS frames (each asks for an acknowledgement),
 * for as long as the connection lasts: as fast as the client reads, or
 * `perSecond` frames a second (slow enough for HTTP/2's own flood
 * detection to let it through).
 */
export function startH2FloodPeer(frames: 'ping' | 'settings', certificate: TestCertificate, perSecond?: number): Promise<CountingPeer & { framesSent(): number }> {
  const sockets = new Set<net.Socket>();
  let sent = 0;
  const frame = (i: number): Buffer => (frames === 'ping' ? h2Frame(6, 0, 0, Buffer.alloc(8, i & 0xff)) : h2Frame(4, 0, 0, Buffer.from([0, 3, 0, 0, 0, 100])));
  const server = tls.createServer({ key: certificate.key, cert: certificate.cert, ALPNProtocols: ['h2'] }, (socket) => {
    socket.on('error', () => {});
    socket.on('data', () => {});
    socket.write(h2Frame(4, 0, 0, Buffer.alloc(0)));
    if (perSecond !== undefined) {
      // A tenth of the rate every 100 ms.
      const timer = setInterval(() => {
        if (socket.destroyed) return clearInterval(timer);
        const batch = Array.from({ length: Math.max(1, Math.round(perSecond / 10)) }, (_, i) => frame(sent + i));
        sent += batch.length;
        socket.write(Buffer.concat(batch));
      }, 100);
      socket.on('close', () => clearInterval(timer));
      return;
    }
    const burst = (): void => {
      if (socket.destroyed) return;
      const batch: Buffer[] = [];
      for (let i = 0; i < 500; i++) batch.push(frame(i));
      sent += batch.length;
      if (socket.write(Buffer.concat(batch))) setImmediate(burst);
      else socket.once('drain', burst);
    };
    burst();
  });
  server.on('tlsClientError', () => {});
  return listen(server, sockets).then((peer) => {
    // TLS servers report their connections as 'secureConnection'; 'connection' counts the TCP ones, which is what is wanted.
    return { ...peer, framesSent: () => sent };
  });
}
