// Peers the API bench starts for netintel serve, each on a free loopback port
// in the bench's temporary directory: a DNS responder (for /api/email-tests),
// a redis-server and a PostgreSQL cluster (for the fleet mode). The
// PostgreSQL part follows test/support/postgres.ts: a cluster made by initdb,
// run as the `postgres` (or `nobody`) user when the bench runs as root.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './paths.js';

export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

export function have(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).status === 0;
}

/**
 * A DNS responder for the mail checks: every name has an MX, an SPF
 * record and a DMARC policy, its mail host an address; anything else is an
 * empty answer. A child process (dns-packet over UDP), so that it does not
 * share the bench's event loop.
 */
const RESPONDER = `
const dgram = require('node:dgram');
const dnsPacket = require(process.argv[1]);
const socket = dgram.createSocket('udp4');
socket.on('message', (message, peer) => {
  let query;
  try { query = dnsPacket.decode(message); } catch { return; }
  const question = query.questions[0];
  if (!question) return;
  const name = question.name.toLowerCase();
  const answers = [];
  if (question.type === 'MX' && !name.startsWith('_')) answers.push({ type: 'MX', name: question.name, ttl: 300, data: { preference: 10, exchange: 'mx.' + name } });
  if (question.type === 'TXT' && name.startsWith('_dmarc.')) answers.push({ type: 'TXT', name: question.name, ttl: 300, data: 'v=DMARC1; p=reject' });
  else if (question.type === 'TXT' && !name.startsWith('_')) answers.push({ type: 'TXT', name: question.name, ttl: 300, data: 'v=spf1 mx -all' });
  if (question.type === 'A' && name.startsWith('mx.')) answers.push({ type: 'A', name: question.name, ttl: 300, data: '192.0.2.25' });
  socket.send(dnsPacket.encode({ type: 'response', id: query.id, flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE, questions: query.questions, answers }), peer.port, peer.address);
});
socket.bind(Number(process.argv[2]), '127.0.0.1', () => {
  // Bursts of queries from 64 connections at once: a small receive buffer would drop some.
  try { socket.setRecvBufferSize(4 << 20); } catch {}
  process.stdout.write('ready\\n');
});
`;

export async function startDnsResponder() {
  const port = await freePort();
  const dnsPacketPath = createRequire(join(ROOT, 'package.json')).resolve('dns-packet');
  const child = spawn(process.execPath, ['-e', RESPONDER, dnsPacketPath, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve, reject) => {
    child.stdout.once('data', resolve);
    child.once('exit', (code) => reject(new Error(`the DNS responder exited with ${code}`)));
  });
  return { address: `127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}

/** redis-server on a free loopback port, without persistence, its files in `dir`. */
export async function startRedis(dir) {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${output}`)));
  });
  return { url: `redis://127.0.0.1:${port}`, stop: () => child.kill('SIGTERM') };
}

/** initdb and postgres from PATH, else from the newest /usr/lib/postgresql/N/bin, or null. */
export function findPostgres() {
  if (have('initdb') && have('postgres')) return { initdb: 'initdb', postgres: 'postgres' };
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  for (const version of readdirSync(root).filter((name) => /^\d+$/.test(name)).sort((a, b) => Number(b) - Number(a))) {
    const bin = join(root, version, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'postgres'))) return { initdb: join(bin, 'initdb'), postgres: join(bin, 'postgres') };
  }
  return null;
}

/** The user the cluster runs as: none (this process's own) unless this process is root. */
function clusterUser() {
  if (userInfo().uid !== 0) return null;
  const passwd = readFileSync('/etc/passwd', 'utf8').split('\n');
  for (const name of ['postgres', 'nobody']) {
    const line = passwd.find((entry) => entry.startsWith(`${name}:`));
    if (line) {
      const [, , uid, gid] = line.split(':');
      return { name, uid: Number(uid), gid: Number(gid) };
    }
  }
  throw new Error('running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as');
}

const asUser = (user, argv) => (user === null ? [argv[0], argv.slice(1)] : ['runuser', ['-u', user.name, '--', ...argv]]);

/**
 * A PostgreSQL cluster in a temporary directory of its own (its user must
 * reach it) on a free loopback port, trust authentication, fsync off;
 * `url` is its postgres database.
 */
export async function startPostgres(programs) {
  const user = clusterUser();
  const home = mkdtempSync(join(tmpdir(), 'netintel-bench-pg-'));
  if (user !== null) chownSync(home, user.uid, user.gid);
  const data = join(home, 'data');
  const env = { ...process.env, LANG: 'C', LC_ALL: 'C' };
  const [initdb, initdbArgs] = asUser(user, [programs.initdb, '-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync']);
  execFileSync(initdb, initdbArgs, { env, stdio: 'ignore' });
  const port = await freePort();
  const [postgres, postgresArgs] = asUser(user, [programs.postgres, '-D', data, '-k', home, '-p', String(port), '-h', '127.0.0.1', '-c', 'fsync=off', '-c', 'max_connections=200']);
  const child = spawn(postgres, postgresArgs, { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr.on('data', (chunk) => (log += chunk));
  await new Promise((resolve, reject) => {
    const deadline = Date.now() + 30_000;
    const look = () => {
      if (log.includes('ready to accept connections')) return resolve();
      if (child.exitCode !== null || Date.now() > deadline) return reject(new Error(`PostgreSQL did not start: ${log}`));
      setTimeout(look, 100);
    };
    look();
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: async () => {
      // SIGINT to the postmaster itself (runuser may not pass signals on): fast shutdown.
      try {
        const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
        if (pid > 0) process.kill(pid, 'SIGINT');
      } catch {
        // already stopped
      }
      if (child.exitCode === null) await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
      rmSync(home, { recursive: true, force: true });
    },
  };
}
