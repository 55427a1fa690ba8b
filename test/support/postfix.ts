/**
 * Private Postfix instances (Debian package `postfix`) for the tests: each
 * runs from its own temporary configuration directory, with its own queue
 * and log, listening on 127.0.0.1 on a free port. Needs root (Postfix's
 * master starts as root and drops to the postfix user); a test reads
 * `POSTFIX_SKIP_REASON` and skips loudly when it is set.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { findExecutable, PeerExited, startOnFreePort } from './peers.js';

const run = promisify(execFile);

const POSTFIX = findExecutable('postfix');
const DAEMON_DIRECTORY = '/usr/lib/postfix/sbin';

/** Why Postfix cannot run here, or null when it can. */
export const POSTFIX_SKIP_REASON: string | null = !POSTFIX
  ? 'postfix not found on PATH or in /usr/sbin (Debian package postfix)'
  : !existsSync(join(DAEMON_DIRECTORY, 'smtpd'))
    ? `${DAEMON_DIRECTORY}/smtpd is missing (Debian package postfix)`
    : userInfo().uid !== 0
      ? 'Postfix has to be started as root'
      : null;

/** Every daemon an instance needs, none chrooted (the instance lives in a temporary directory). */
const MASTER_CF = `
pickup unix n - n 60 1 pickup
cleanup unix n - n - 0 cleanup
qmgr unix n - n 300 1 qmgr
tlsmgr unix - - n 1000? 1 tlsmgr
rewrite unix - - n - - trivial-rewrite
bounce unix - - n - 0 bounce
defer unix - - n - 0 bounce
trace unix - - n - 0 bounce
verify unix - - n - 1 verify
flush unix n - n 1000? 0 flush
proxymap unix - - n - - proxymap
proxywrite unix - - n - 1 proxymap
smtp unix - - n - - smtp
relay unix - - n - - smtp
showq unix n - n - - showq
error unix - - n - - error
retry unix - - n - - error
discard unix - - n - - discard
local unix - n n - - local
virtual unix - n n - - virtual
lmtp unix - - n - - lmtp
anvil unix - - n - 1 anvil
scache unix - - n - 1 scache
postlog unix-dgram n - n - 1 postlogd
`;

export interface PostfixOptions {
  /** myhostname: the name in the banner and in the Received lines the instance writes. */
  hostname: string;
  /** A certificate and key for STARTTLS (smtpd_tls_security_level = may); no STARTTLS without. */
  tls?: { cert: string; key: string };
  /** More main.cf lines, after the instance's own (a later line wins in Postfix). */
  mainCf?: readonly string[];
}

export interface PostfixInstance {
  readonly port: number;
  /** The instance's configuration directory. */
  readonly dir: string;
  /** The instance's log so far. */
  maillog(): Promise<string>;
  stop(): Promise<void>;
}

/** Resolves once something accepts TCP connections on 127.0.0.1:`port`. */
async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`Postfix did not listen on 127.0.0.1:${port} within ${timeoutMs} ms`);
}

/** Starts a Postfix instance; call only when POSTFIX_SKIP_REASON is null. */
export async function startPostfix(options: PostfixOptions): Promise<PostfixInstance> {
  if (POSTFIX_SKIP_REASON !== null || POSTFIX === null) throw new Error(`cannot start Postfix: ${POSTFIX_SKIP_REASON}`);
  const postfix = POSTFIX;
  return startOnFreePort((port) => startPostfixOn(postfix, port, options));
}

/**
 * One instance on `port`. `postfix start` waits for the master to set up
 * its listeners and fails when it could not; a port taken meanwhile by
 * another process is a PeerExited, for startOnFreePort to try another.
 */
export async function startPostfixOn(postfix: string, port: number, options: PostfixOptions): Promise<PostfixInstance> {
  const dir = await mkdtemp(join(tmpdir(), 'netintel-postfix-'));
  // The postfix user must reach its queue and data directories below this one.
  await chmod(dir, 0o755);
  await mkdir(join(dir, 'spool'));
  await mkdir(join(dir, 'data'));
  const { stdout: uid } = await run('id', ['-u', 'postfix']);
  await chown(join(dir, 'data'), Number(uid.trim()), 0);
  const tls = options.tls
    ? [`smtpd_tls_cert_file = ${dir}/cert.pem`, `smtpd_tls_key_file = ${dir}/key.pem`, 'smtpd_tls_security_level = may']
    : [];
  if (options.tls) {
    await writeFile(join(dir, 'cert.pem'), options.tls.cert);
    await writeFile(join(dir, 'key.pem'), options.tls.key, { mode: 0o600 });
  }
  const mainCf = [
    'compatibility_level = 3.6',
    `queue_directory = ${dir}/spool`,
    `data_directory = ${dir}/data`,
    'meta_directory = /etc/postfix',
    'command_directory = /usr/sbin',
    `daemon_directory = ${DAEMON_DIRECTORY}`,
    'shlib_directory = no',
    'mail_owner = postfix',
    'setgid_group = postdrop',
    'inet_interfaces = 127.0.0.1',
    'inet_protocols = ipv4',
    `myhostname = ${options.hostname}`,
    'alias_maps =',
    'alias_database =',
    'smtpd_banner = $myhostname ESMTP netintel-interop',
    ...tls,
    `maillog_file = ${dir}/maillog`,
    `maillog_file_prefixes = ${dir}`,
    'biff = no',
    ...(options.mainCf ?? []),
  ];
  await writeFile(join(dir, 'main.cf'), `${mainCf.join('\n')}\n`);
  await writeFile(join(dir, 'master.cf'), `127.0.0.1:${port} inet n - n - - smtpd\n${MASTER_CF.trimStart()}`);
  const maillog = () => readFile(join(dir, 'maillog'), 'utf8').catch(() => '');
  await run(postfix, ['-c', dir, 'start']).catch(async (error: Error) => {
    const log = await maillog();
    await rm(dir, { recursive: true, force: true });
    const failure = `postfix -c ${dir} start failed: ${error.message}\n${log}`;
    throw /Address already in use/.test(log) ? new PeerExited(failure) : new Error(failure);
  });
  await waitForPort(port, 10_000);
  return {
    port,
    dir,
    maillog,
    async stop() {
      await run(postfix, ['-c', dir, 'stop']).catch(() => run(postfix, ['-c', dir, 'abort']).catch(() => {}));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
