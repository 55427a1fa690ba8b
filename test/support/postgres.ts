/**
 * A real PostgreSQL for tests (Debian's postgresql package): a new cluster
 * in a temporary directory, listening on a free loopback port, with
 * password (SCRAM) authentication over TCP so that a wrong password is
 * refused. initdb refuses to run as root: as root the cluster belongs to
 * the `postgres` system user if there is one, else to `nobody`, and every
 * server program runs as that user through runuser.
 *
 * `findPostgres()` is null when PostgreSQL is not installed: the tests that
 * need it skip and say so.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { findExecutable, PeerExited, startOnFreePort } from './peers.js';

const run = promisify(execFile);

export interface PostgresPrograms {
  initdb: string;
  postgres: string;
}

/** initdb and postgres from PATH, else from the newest /usr/lib/postgresql/N/bin (where Debian puts them), or null. */
export function findPostgres(): PostgresPrograms | null {
  const initdb = findExecutable('initdb');
  const postgres = findExecutable('postgres');
  if (initdb && postgres) return { initdb, postgres };
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = join(root, version, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'postgres'))) return { initdb: join(bin, 'initdb'), postgres: join(bin, 'postgres') };
  }
  return null;
}

export interface PostgresTestServer {
  port: number;
  /** The superuser's password (user `postgres`). */
  password: string;
  /** A URL of a database of this server, with the superuser and its password. */
  url(database: string, password?: string): string;
  /** Makes an empty database and returns its URL. */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

/** The user the cluster runs as: none (this process's own) unless this process is root. */
function clusterUser(): { name: string; uid: number; gid: number } | null {
  if (userInfo().uid !== 0) return null;
  for (const name of ['postgres', 'nobody']) {
    try {
      const line = readFileSync('/etc/passwd', 'utf8')
        .split('\n')
        .find((entry) => entry.startsWith(`${name}:`));
      if (line) {
        const [, , uid, gid] = line.split(':');
        return { name, uid: Number(uid), gid: Number(gid) };
      }
    } catch {
      break;
    }
  }
  throw new Error('running as root, and neither a postgres nor a nobody user exists to run PostgreSQL as');
}

/** argv run as the cluster's user. */
function asUser(user: { name: string } | null, argv: string[]): [string, string[]] {
  return user === null ? [argv[0]!, argv.slice(1)] : ['runuser', ['-u', user.name, '--', ...argv]];
}

export async function startPostgresServer(programs: PostgresPrograms): Promise<PostgresTestServer> {
  const user = clusterUser();
  const dir = mkdtempSync(join(tmpdir(), 'netintel-pg-'));
  const data = join(dir, 'data');
  const password = `pw-${Math.random().toString(36).slice(2, 12)}`;
  const passwordFile = join(dir, 'password');
  writeFileSync(passwordFile, `${password}\n`);
  if (user !== null) {
    chownSync(dir, user.uid, user.gid);
    chownSync(passwordFile, user.uid, user.gid);
  }
  const environment = { ...process.env, LANG: 'C', LC_ALL: 'C' };
  const [initdb, initdbArgs] = asUser(user, [
    programs.initdb, '-D', data, '-U', 'postgres', '--pwfile', passwordFile, '--auth-local=trust', '--auth-host=scram-sha-256', '-E', 'UTF8', '--locale=C', '--no-sync',
  ]);
  await run(initdb, initdbArgs, { env: environment });
  const launch = async (port: number) => {
    const [postgres, postgresArgs] = asUser(user, [programs.postgres, '-D', data, '-k', dir, '-p', String(port), '-h', '127.0.0.1', '-c', 'fsync=off']);
    const child: ChildProcess = spawn(postgres, postgresArgs, { env: environment, stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const url = (database: string, pass = password) => `postgres://postgres:${encodeURIComponent(pass)}@127.0.0.1:${port}/${database}`;
    const halt = async () => {
      // SIGINT to the postmaster itself (runuser may not pass signals on): fast shutdown, sessions ended.
      try {
        const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
        if (pid > 0) process.kill(pid, 'SIGINT');
      } catch {
        // Already stopped: its pid file is gone.
      }
      if (child.exitCode === null) await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
    };

    // Ready once a connection is accepted.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const client = new pg.Client({ connectionString: url('postgres') });
      try {
        await client.connect();
        await client.end();
        return { port, url, halt };
      } catch (error) {
        await client.end().catch(() => {});
        if (child.exitCode !== null) throw new PeerExited(`PostgreSQL exited: ${(error as Error).message}\n${log}`);
        if (Date.now() > deadline) {
          await halt().catch(() => {});
          throw new Error(`PostgreSQL did not start: ${(error as Error).message}\n${log}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  };
  const { port, url, halt } = await startOnFreePort(launch).catch((error: unknown) => {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  const stop = async () => {
    await halt();
    rmSync(dir, { recursive: true, force: true });
  };

  return {
    port,
    password,
    url,
    async createDatabase(name) {
      const client = new pg.Client({ connectionString: url('postgres') });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    stop,
  };
}
