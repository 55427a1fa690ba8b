/**
 * Running the documentation's shell lines as a reader would: each line in
 * a bash of its own, in a scratch directory, with `netintel` on PATH (the
 * built CLI). The names the documents use resolve at a DNS server on
 * 127.0.0.1 (NETINTEL_RESOLVER): example.com and example.org with MX (on
 * 127.0.0.1), SPF and DMARC records, and the default blocklist zones,
 * one of which lists 192.0.2.99. The server passes DNSSEC records on as a
 * validating resolver's users see them, under a test root signed on the fly
 * (test/support/signed-root.ts, NETINTEL_TRUST_ANCHOR): the names are unsigned. Every netintel run loads test/support/loopback-only.cjs: a
 * connection to loopback's well-known ports (SMTP's 25 of those MX hosts)
 * goes to a port this process closed, and one that would leave the machine
 * is refused and said on stderr ("loopback-only: blocked").
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, cpSync, mkdirSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { BIN, REPO_ROOT, tempDir } from '../support/cli.js';
import { startDnsServer, type DnsTestServer, type ZoneRecord } from '../support/dns-server.js';
import { TEST_ROOT_ANCHOR_FILE, type ZoneKey } from '../support/signed-root.js';
import { LOOPBACK_ONLY_MODULE } from '../support/loopback-only.js';
import { closedPort, PeerExited } from '../support/peers.js';
import { zoneRecords } from '../engine/blacklist/dnsbl-fixtures.js';

export interface ReadmePeers {
  dns: DnsTestServer;
  /** A directory holding the `netintel` shim, for PATH. */
  bin: string;
  closedPort: number;
  close(): Promise<void>;
}

/** The DNS peer and the `netintel` shim the documents' lines run with; `records` adds to the zone, `signedZones` are signed with their own keys. */
export async function startReadmePeers(records: ZoneRecord[] = [], signedZones: ZoneKey[] = []): Promise<ReadmePeers> {
  const dns = await startDnsServer({
    records: [
      ...['example.com', 'example.org'].flatMap((domain) => [
        { name: domain, type: 'MX' as const, data: { preference: 10, exchange: `mx.${domain}` } },
        { name: `mx.${domain}`, type: 'A' as const, data: '127.0.0.1' },
        { name: domain, type: 'TXT' as const, data: ['v=spf1 mx -all'] },
        { name: `_dmarc.${domain}`, type: 'TXT' as const, data: ['v=DMARC1; p=reject; rua=mailto:dmarc@' + domain] },
      ]),
      { name: '1.0.0.127.in-addr.arpa', type: 'PTR', data: 'mx.example.com' },
      // The default blocklists, each answering its RFC 5782 test points; 192.0.2.99 listed on one.
      ...zoneRecords('zen.spamhaus.org', { '192.0.2.99': { a: ['127.0.0.2'], txt: 'listed for the recipe' } }),
      ...['bl.spamcop.net', 'psbl.surriel.com', 'bl.mailspike.net', 'dnsbl-1.uceprotect.net'].flatMap((zone) => zoneRecords(zone, {})),
      ...records,
    ],
    // A resolver that passes DNSSEC records on, under the test root (NETINTEL_TRUST_ANCHOR below): the names are unsigned.
    signedRoot: true,
    signedZones,
  });
  const shims = tempDir('netintel-readme-bin-');
  const shim = join(shims.path, 'netintel');
  writeFileSync(shim, `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(shim, 0o755);
  return {
    dns,
    bin: shims.path,
    closedPort: await closedPort(),
    async close() {
      await dns.close();
      shims.remove();
    },
  };
}

export interface Scratch {
  /** Where the lines run: holds a copy of examples/. */
  dir: string;
  env: Record<string, string>;
  remove(): void;
}

/** A scratch directory with a HOME of its own and a copy of examples/, and the environment of the lines. */
export function scratchFor(peers: ReadmePeers): Scratch {
  const scratch = tempDir('netintel-readme-');
  const home = join(scratch.path, 'home');
  mkdirSync(home);
  const dir = join(scratch.path, 'work');
  mkdirSync(join(dir, 'examples'), { recursive: true });
  copyFileSync(join(REPO_ROOT, 'examples', 'access.log'), join(dir, 'examples', 'access.log'));
  copyFileSync(join(REPO_ROOT, 'examples', 'late-message.eml'), join(dir, 'examples', 'late-message.eml'));
  cpSync(join(REPO_ROOT, 'examples', 'dmarc'), join(dir, 'examples', 'dmarc'), { recursive: true });
  const env = {
    PATH: `${peers.bin}:${process.env.PATH ?? ''}`,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    NETINTEL_RESOLVER: peers.dns.address,
    NETINTEL_RETRIES: '0',
    NETINTEL_TRUST_ANCHOR: TEST_ROOT_ANCHOR_FILE,
    NODE_OPTIONS: `--require ${LOOPBACK_ONLY_MODULE}`,
    NETINTEL_FUZZ_CHILD: '1',
    NETINTEL_TEST_CLOSED_PORT: String(peers.closedPort),
    NETINTEL_TEST_CLOSED_LOOPBACK_PORTS: 'well-known',
  };
  return { dir, env, remove: scratch.remove };
}

export interface LineResult {
  line: string;
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * One line in bash, asynchronously: the DNS server answers from this process
 * meanwhile. Its stdin is empty, as at a prompt where nothing is piped in:
 * a line reads only what it pipes or redirects itself.
 */
export function runLine(line: string, cwd: string, env: Record<string, string>): Promise<LineResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', line], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.on('error', reject);
    child.on('close', (code) => resolve({ line, code, stdout, stderr }));
  });
}

/** Resolves once something accepts connections on 127.0.0.1:port (10 s at most). */
export async function waitForPort(port: number, server?: ChildProcess): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    // A server that exited before it listened could not bind the port (another process took it in the
    // moment after it was found free): PeerExited, for the caller to start again on another port.
    if (server !== undefined && server.exitCode !== null) throw new PeerExited(`the server meant for port ${port} exited (${server.exitCode}) before it listened`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    await sleep(100);
  }
  throw new Error(`nothing listens on port ${port}`);
}

/** No line may crash, print a stack trace, or try to reach a host off this machine. */
export function problemsOf(result: LineResult): string[] {
  const problems: string[] = [];
  if (/internal error|\n\s+at /.test(result.stderr)) problems.push('crashed');
  if (result.stderr.includes('loopback-only: blocked')) problems.push('tried to leave the machine');
  return problems;
}
