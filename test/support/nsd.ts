/**
 * Debian's NSD as a test peer: its own config and zones in a temporary
 * directory, listening on a free loopback port in the foreground, stopped by
 * the test. Shared by the DNS interoperability tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PeerExited, startOnFreePort } from './peers.js';

export interface NsdZone {
  name: string;
  /** The zone file's text. */
  text: string;
}

export interface RunningNsd {
  port: number;
  dir: string;
  stop(): Promise<void>;
}

/**
 * Starts NSD serving `zones` and resolves once `isReady(port)` says it
 * answers (polled every 50 ms for up to 20 s: NSD loads signed zones slowly
 * on a machine busy with other tests). The port is free when chosen but
 * another process may take it before NSD binds it, so an NSD that exits is
 * started again on another port, three times at most. Throws with NSD's
 * output when it exits every time or never answers.
 */
export async function startNsd(nsdPath: string, zones: readonly NsdZone[], isReady: (port: number) => Promise<boolean>): Promise<RunningNsd> {
  return startOnFreePort((port) => startNsdOn(port, nsdPath, zones, isReady));
}

async function startNsdOn(port: number, nsdPath: string, zones: readonly NsdZone[], isReady: (port: number) => Promise<boolean>): Promise<RunningNsd> {
  const dir = await mkdtemp(join(tmpdir(), 'netintel-nsd-'));
  for (const zone of zones) await writeFile(join(dir, `${zone.name}.zone`), zone.text);
  await writeFile(
    join(dir, 'nsd.conf'),
    `server:
  ip-address: 127.0.0.1@${port}
  port: ${port}
  username: ""
  chroot: ""
  zonesdir: "${dir}"
  pidfile: "${join(dir, 'nsd.pid')}"
  database: ""
  xfrdfile: "${join(dir, 'xfrd.state')}"
  xfrdir: "${dir}"
  zonelistfile: "${join(dir, 'zone.list')}"
  logfile: "${join(dir, 'nsd.log')}"
  server-count: 1
  verbosity: 1
  # NSD limits responses per client network by default (response rate
  # limiting, 200 per second), which a test must not trip over.
  rrl-ratelimit: 0
remote-control:
  control-enable: no
${zones.map((zone) => `zone:\n  name: "${zone.name}"\n  zonefile: "${zone.name}.zone"\n`).join('')}`,
  );
  const child = spawn(nsdPath, ['-d', '-c', join(dir, 'nsd.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const running: RunningNsd = { port, dir, stop: () => stopNsd(child, dir) };
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) {
      const log = await readFile(join(dir, 'nsd.log'), 'utf8').catch(() => '');
      await running.stop();
      throw new PeerExited(`nsd exited with ${child.exitCode}:\n${output}\n${log}`);
    }
    if (await isReady(port).catch(() => false)) return running;
    if (Date.now() > deadline) {
      await running.stop();
      throw new Error(`nsd did not answer on port ${port} within 20 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function stopNsd(child: ChildProcess, dir: string): Promise<void> {
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  await rm(dir, { recursive: true, force: true });
}
