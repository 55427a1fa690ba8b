/**
 * Debian's Unbound as a second reference validator: its own config in a
 * temporary directory, listening on a free loopback port in the foreground,
 * forwarding every question to one authoritative server (NSD in the tests)
 * and validating from the trust anchor it is given. Its verdict on a
 * question is read as a stub reads it (RFC 4035 §3.2.3, §5.5): AD set is
 * secure, SERVFAIL is bogus, an answer without AD is insecure.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import dgram from 'node:dgram';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import packet, { type RecordType } from 'dns-packet';
import { PeerExited, startOnFreePort } from './peers.js';

export interface RunningUnbound {
  port: number;
  /** Unbound's verdict on one question; `indeterminate` when it gave no answer at all. */
  verdict(name: string, type: string): Promise<UnboundVerdict>;
  stop(): Promise<void>;
}

export interface UnboundVerdict {
  status: 'secure' | 'insecure' | 'bogus' | 'indeterminate';
  rcode: string;
}

export interface UnboundOptions {
  /** The authoritative server every question is forwarded to, `127.0.0.1@<port>` form is built from it. */
  upstreamPort: number;
  /** Trust anchors in zone-file form (DS or DNSKEY), as unbound's trust-anchor-file reads them. */
  trustAnchor: string;
}

/**
 * Starts Unbound and resolves once it answers a question for the root.
 * Throws with its log when it never answers (polled every 50 ms for up to
 * 5 s) or exits on every port it is given (startOnFreePort).
 */
export async function startUnbound(unboundPath: string, options: UnboundOptions): Promise<RunningUnbound> {
  return startOnFreePort((port) => startUnboundOn(port, unboundPath, options));
}

async function startUnboundOn(port: number, unboundPath: string, options: UnboundOptions): Promise<RunningUnbound> {
  const dir = await mkdtemp(join(tmpdir(), 'netintel-unbound-'));
  await writeFile(join(dir, 'anchor.key'), options.trustAnchor);
  await writeFile(
    join(dir, 'unbound.conf'),
    `server:
  interface: 127.0.0.1
  port: ${port}
  do-ip6: no
  do-daemonize: no
  username: ""
  chroot: ""
  directory: "${dir}"
  pidfile: "${join(dir, 'unbound.pid')}"
  logfile: "${join(dir, 'unbound.log')}"
  use-syslog: no
  num-threads: 1
  so-reuseport: no
  verbosity: 1
  val-log-level: 2
  access-control: 127.0.0.0/8 allow
  # Queries to 127.0.0.1 are refused by default; NSD lives there.
  do-not-query-localhost: no
  module-config: "validator iterator"
  trust-anchor-file: "${join(dir, 'anchor.key')}"
  # Each question is judged on its own answer: no answers synthesised from
  # cached NSEC records (RFC 8198), no prefetching, no stale answers.
  aggressive-nsec: no
  prefetch: no
  serve-expired: no
  qname-minimisation: no
  harden-referral-path: no
  trust-anchor-signaling: no
  root-key-sentinel: no
  # test. is one of the special-use names (RFC 6761 §6.2) Unbound answers NXDOMAIN for by itself.
  local-zone: "test." nodefault
remote-control:
  control-enable: no
forward-zone:
  name: "."
  forward-addr: 127.0.0.1@${options.upstreamPort}
`,
  );
  const child = spawn(unboundPath, ['-d', '-c', join(dir, 'unbound.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  const pending = new Map<number, (response: packet.Packet) => void>();
  socket.on('message', (message) => {
    let response: packet.Packet;
    try {
      response = packet.decode(message);
    } catch {
      return;
    }
    const settle = pending.get(response.id ?? -1);
    if (settle) {
      pending.delete(response.id!);
      settle(response);
    }
  });
  let nextId = 0;
  const ask = (name: string, type: string, waitMs: number): Promise<packet.Packet | null> => {
    const id = (nextId = (nextId % 0xffff) + 1);
    const query = packet.encode({
      id,
      type: 'query',
      flags: packet.RECURSION_DESIRED,
      questions: [{ name, type: type as RecordType, class: 'IN' }],
      additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 4096, flags: packet.DNSSEC_OK } as packet.Answer],
    });
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        resolve(null);
      }, waitMs);
      pending.set(id, (response) => {
        clearTimeout(timer);
        resolve(response);
      });
      socket.send(query, port, '127.0.0.1');
    });
  };
  const stop = async (): Promise<void> => {
    socket.close();
    await stopChild(child);
    await rm(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 5000;
  for (;;) {
    if (child.exitCode !== null) {
      const log = await readFile(join(dir, 'unbound.log'), 'utf8').catch(() => '');
      await stop();
      throw new PeerExited(`unbound exited with ${child.exitCode}:\n${output}\n${log}`);
    }
    if ((await ask('.', 'SOA', 200)) !== null) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`unbound did not answer on port ${port} within 5 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    port,
    stop,
    async verdict(name, type) {
      // Unbound answers from its own work; a lost datagram on loopback is retried, never judged.
      for (let attempt = 0; attempt < 3; attempt++) {
        const response = await ask(name, type, 5000);
        if (response === null) continue;
        const rcode = response.rcode ?? 'NOERROR';
        if (rcode === 'SERVFAIL') return { status: 'bogus', rcode };
        const ad = ((response.flags ?? 0) & packet.AUTHENTIC_DATA) !== 0;
        return { status: ad ? 'secure' : 'insecure', rcode };
      }
      return { status: 'indeterminate', rcode: 'none' };
    },
  };
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2000))]);
  if (child.exitCode === null) child.kill('SIGKILL');
}
