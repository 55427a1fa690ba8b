import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { CustomFetch } from 'openid-client';
import type { MailSenderOptions } from '../accounts/mail-sender.js';
import type { CommandRuntime } from '../cli/runtime.js';
import { NetintelError } from '../errors.js';
import type { Store } from '../store/open-store.js';
import { serveLogStream } from './serve-log.js';
import { SERVER_FAN_OUT } from '../engine/fan-out.js';

interface ServeFlags {
  host: string;
  port: number;
  db?: string;
  plans?: string;
  redisUrl?: string;
  allowPrivateTargets?: boolean;
  trustProxy?: string[];
  proxyHeader: 'x-forwarded-for' | 'forwarded';
  smtpPorts?: number[];
  maxMx?: number;
  maxAddresses?: number;
  maxSmtpConnections?: number;
  logLevel: string;
  headersTimeout?: number;
  requestTimeout?: number;
  keepAliveTimeout?: number;
  maxConnections?: number;
  shutdownGrace?: number;
  accounts: boolean;
  publicUrl?: string;
  smtpUrl?: string;
  mailFrom?: string;
  oidcConfig?: string;
}

/**
 * The connection settings of `serve`: flag, else environment variable, else
 * default (src/server/build-server.ts CONNECTION_DEFAULTS; the grace here).
 */
const CONNECTION_SETTINGS = {
  headersTimeout: { flag: '--headers-timeout', env: 'NETINTEL_HEADERS_TIMEOUT', max: 600_000 },
  requestTimeout: { flag: '--request-timeout', env: 'NETINTEL_REQUEST_TIMEOUT', max: 600_000 },
  keepAliveTimeout: { flag: '--keep-alive-timeout', env: 'NETINTEL_KEEP_ALIVE_TIMEOUT', max: 600_000 },
  maxConnections: { flag: '--max-connections', env: 'NETINTEL_MAX_CONNECTIONS', max: 1_000_000 },
  shutdownGrace: { flag: '--shutdown-grace', env: 'NETINTEL_SHUTDOWN_GRACE', max: 600_000 },
} as const;

/**
 * How long requests in flight get to finish after SIGTERM; then the ones
 * left are answered 503, the connections they opened (probes) are cut and
 * the process exits. Short: a probe can take many seconds, and an
 * orchestrator waiting on the process holds the rollout.
 */
const SHUTDOWN_GRACE_MS = 2_000;

/** PostgreSQL connections a server holds for its key checks (one query each, so a few serve many requests). */
const KEY_DB_CONNECTIONS = 10;

function whole(name: string, max: number, minimum = 1): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!/^\d{1,9}$/.test(value.trim()) || number < minimum || number > max) throw new InvalidArgumentError(`${name} must be a whole number from ${minimum} to ${max}, not ${JSON.stringify(value)}`);
    return number;
  };
}

/** A connection setting from its flag, else its variable (checked as the flag is), else undefined. */
function connectionSetting(key: keyof typeof CONNECTION_SETTINGS, flags: ServeFlags, env: Readonly<Record<string, string | undefined>>): number | undefined {
  const setting = CONNECTION_SETTINGS[key];
  if (flags[key] !== undefined) return flags[key];
  const text = env[setting.env];
  if (text === undefined || text === '') return undefined;
  try {
    return whole(setting.env, setting.max, key === 'shutdownGrace' ? 0 : 1)(text);
  } catch (error) {
    throw new NetintelError('usage', (error as Error).message, { details: { variable: setting.env } });
  }
}

function port(value: string): number {
  const number = Number(value);
  if (!/^\d{1,5}$/.test(value) || number > 65535) throw new InvalidArgumentError(`--port must be 0 to 65535, not ${JSON.stringify(value)}`);
  return number;
}

function portList(value: string, previous: number[] | undefined): number[] {
  return [...(previous ?? []), ...value.split(',').filter(Boolean).map((item) => {
    const number = port(item.trim());
    if (number === 0) throw new InvalidArgumentError('--smtp-ports: 0 is not a port');
    return number;
  })];
}

/** `netintel serve`: the HTTP API of SPEC.md over the local engine, until SIGTERM or SIGINT. */
export function registerServeCommand(program: Command, runtime: CommandRuntime): void {
  program
    .command('serve')
    .description('run the HTTP API (endpoints, keys, plans, rate limits; docs at /docs) until SIGTERM/SIGINT')
    .addOption(new Option('--host <address>', 'address to listen on').default('127.0.0.1'))
    .addOption(new Option('--port <n>', 'port to listen on (0: any free port)').argParser(port).default(8080))
    .addOption(new Option('--db <path>', 'key database: a SQLite file, or postgres://user:password@host:port/db shared by several servers (env: NETINTEL_DB; default $XDG_DATA_HOME/netintel/keys.db)'))
    .addOption(new Option('--plans <file>', 'plans file (default: the shipped data/plans.json)'))
    .addOption(new Option('--redis-url <url>', 'keep rate limits in Redis, shared by every server given the same URL (env: NETINTEL_REDIS_URL)'))
    .addOption(new Option('--allow-private-targets', 'let server-side probes reach private, loopback, link-local and metadata addresses'))
    .addOption(
      new Option('--trust-proxy <list>', 'proxies whose X-Forwarded-For (or Forwarded) names the caller: IPs, CIDRs, loopback, private, linklocal')
        .argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]),
    )
    .addOption(new Option('--proxy-header <name>', 'the header trusted proxies write').choices(['x-forwarded-for', 'forwarded']).default('x-forwarded-for'))
    .addOption(new Option('--smtp-ports <list>', 'ports SMTP probes may use (default 25,465,587,2525)').argParser(portList))
    .addOption(new Option('--max-mx <n>', `MX hosts of a domain one request looks up and checks; callers cannot raise it (default ${SERVER_FAN_OUT.maxMxHosts})`).argParser(whole('--max-mx', 1000)))
    .addOption(new Option('--max-addresses <n>', `addresses of one host a request uses; callers cannot raise it (default ${SERVER_FAN_OUT.maxAddresses})`).argParser(whole('--max-addresses', 1000)))
    .addOption(
      new Option('--max-smtp-connections <n>', `SMTP connections one check of a request opens; callers cannot raise it (default ${SERVER_FAN_OUT.maxSmtpConnections})`).argParser(whole('--max-smtp-connections', 1000)),
    )
    .addOption(new Option('--headers-timeout <ms>', 'time a client has to send the headers of a request, in ms (env: NETINTEL_HEADERS_TIMEOUT; default 10000)').argParser(whole('--headers-timeout', 600_000)))
    .addOption(new Option('--request-timeout <ms>', 'time a client has to send a whole request, body included, in ms (env: NETINTEL_REQUEST_TIMEOUT; default 15000)').argParser(whole('--request-timeout', 600_000)))
    .addOption(new Option('--keep-alive-timeout <ms>', 'how long an idle keep-alive connection stays open, in ms (env: NETINTEL_KEEP_ALIVE_TIMEOUT; default 5000)').argParser(whole('--keep-alive-timeout', 600_000)))
    .addOption(new Option('--max-connections <n>', 'connections held at once; more are closed at once (env: NETINTEL_MAX_CONNECTIONS; default 1024)').argParser(whole('--max-connections', 1_000_000)))
    .addOption(new Option('--shutdown-grace <ms>', 'time requests in flight get to finish after SIGTERM, in ms (env: NETINTEL_SHUTDOWN_GRACE; default 2000)').argParser(whole('--shutdown-grace', 600_000, 0)))
    .addOption(new Option('--no-accounts', 'serve the API only: no sign-up, log-in or dashboard pages'))
    .addOption(new Option('--public-url <url>', 'the address people reach this server at, for links in mail and the dashboard (env: NETINTEL_PUBLIC_URL; default the listening address); https makes session cookies Secure').argParser(publicUrl))
    .addOption(new Option('--smtp-url <url>', 'mail relay for verification and reset links: smtp[s]://user:password@host:port (env: NETINTEL_SMTP_URL; default: write each message to the outbox directory of the data dir)'))
    .addOption(new Option('--mail-from <address>', 'From address of that mail (env: NETINTEL_MAIL_FROM; default netintel <no-reply@HOST of the public URL>)'))
    .addOption(new Option('--oidc-config <file>', 'log in with Google, Microsoft or any OpenID Connect provider: a JSON file of providers, see docs/oidc.md (env: NETINTEL_OIDC_CONFIG)'))
    .addOption(new Option('--log-level <level>', 'log level (stderr: JSON lines, or one readable line each on a terminal)').choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'))
    .addHelpText(
      'after',
      [
        '',
        'Logs go to stderr: JSON lines, or on a terminal one readable line each (colour unless NO_COLOR).',
        'The address line goes to stdout. Accounts sign up at /signup and make their keys in /dashboard;',
        'operators make keys with `netintel keys create --plan pro` and manage accounts with `netintel accounts`.',
        'Examples:',
        '  netintel serve',
        '  netintel serve --host 0.0.0.0 --port 8080 --redis-url redis://127.0.0.1:6379 --trust-proxy 10.0.0.0/8',
        '  netintel serve --public-url https://api.example.com --smtp-url smtps://mailer:secret@smtp.example.com:465 --db postgres://netintel@db/netintel',
      ].join('\n'),
    )
    .action(async (flags: ServeFlags, command: Command) => {
      const options = runtime.options(command);
      const ctx = runtime.context(options);
      // Aborted when the grace after SIGTERM runs out: the engine's transports made for one request close on it.
      const shutdown = new AbortController();
      setMaxListeners(0, shutdown.signal);
      ctx.signal = shutdown.signal;
      const { io } = runtime;
      const [{ buildServer }, { installCrashNet }, { loadPlanTable }, { openConfiguredStore }, { packageRoot, defaultDataDir }, { createUsageRecorder }] = await Promise.all([
        import('../server/build-server.js'),
        import('../server/crash-net.js'),
        import('../keys/plans.js'),
        import('../store/open-store.js'),
        import('../engine/data/data-files.js'),
        import('../server/usage-recorder.js'),
      ]);
      const plans = loadPlanTable(flags.plans);
      // Read before anything is opened (the key database, Redis), so that a bad value leaves nothing to close.
      const connection = {
        headersTimeoutMs: connectionSetting('headersTimeout', flags, io.env),
        requestTimeoutMs: connectionSetting('requestTimeout', flags, io.env),
        keepAliveTimeoutMs: connectionSetting('keepAliveTimeout', flags, io.env),
        maxConnections: connectionSetting('maxConnections', flags, io.env),
      };
      const graceMs = connectionSetting('shutdownGrace', flags, io.env) ?? SHUTDOWN_GRACE_MS;
      const redisUrl = flags.redisUrl ?? (io.env.NETINTEL_REDIS_URL || undefined);
      // The database first: one that cannot be reached leaves nothing else open. It is the process's one
      // connection to it (keys, accounts, sessions, usage and the mail outbox share it).
      const store = await openConfiguredStore(flags.db, io.env, { connections: KEY_DB_CONNECTIONS });
      const { keys } = store;
      let limits: Awaited<ReturnType<typeof openLimits>>;
      try {
        limits = await openLimits(redisUrl);
      } catch (error) {
        await store.close();
        throw error;
      }
      let listeningUrl = '';
      let pages: Awaited<ReturnType<typeof openAccountPages>> | null = null;
      try {
        if (flags.accounts) {
          pages = await openAccountPages(flags, io.env, options.dataDir ?? defaultDataDir(io.env), store, {
            publicUrl: () => pages?.publicUrl ?? listeningUrl,
            onSent: (mail, delivery) =>
              app.log.info(
                delivery.via === 'outbox' ? { mail: mail.id, kind: mail.kind, outbox: delivery.path } : { mail: mail.id, kind: mail.kind, relay: delivery.relay, messageId: delivery.messageId },
                delivery.via === 'outbox' ? 'mail written to the outbox (no --smtp-url given)' : 'mail sent',
              ),
            onFailed: (mail, error, retryAt) =>
              app.log.error({ err: error, mail: mail.id, kind: mail.kind, attempts: mail.attempts, retryAt }, retryAt ? 'mail could not be sent; it will be tried again' : 'mail could not be sent; given up'),
            onError: (error) => app.log.error({ err: error }, 'the mail outbox could not be read'),
          });
        }
      } catch (error) {
        await limits.close();
        await store.close();
        throw error;
      }
      // Each key's usage goes to the key database in batches; a failed write is retried with the next.
      const usage = createUsageRecorder(keys, { onError: (error) => app.log.warn({ err: error }, 'usage not written to the key database') });
      const version = (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
      const app = buildServer({
        ctx,
        keys,
        plans,
        limits,
        usage,
        allowPrivateTargets: flags.allowPrivateTargets === true,
        trustProxy: flags.trustProxy ?? [],
        proxyHeader: flags.proxyHeader,
        smtpPorts: flags.smtpPorts,
        fanOut: {
          maxMxHosts: flags.maxMx ?? SERVER_FAN_OUT.maxMxHosts,
          maxAddresses: flags.maxAddresses ?? SERVER_FAN_OUT.maxAddresses,
          maxSmtpConnections: flags.maxSmtpConnections ?? SERVER_FAN_OUT.maxSmtpConnections,
        },
        logger: { level: flags.logLevel, stream: await serveLogStream(io) },
        version,
        ...connection,
        ...(pages ? { accountPages: { ...pages.deps, publicUrl: () => pages!.publicUrl ?? listeningUrl } } : {}),
      });
      // An error no handler caught is logged with its request and answered 500; the server keeps serving.
      const removeCrashNet = installCrashNet(app, process);
      // Listened for before listening: a signal that comes as the address is printed must not kill the process outright.
      const stopped = stopSignal();
      try {
        await app.listen({ host: flags.host, port: flags.port }).catch((error: unknown) => {
          throw listenFailure(error, flags.host, flags.port);
        });
        const address = app.server.address();
        const bound = typeof address === 'object' && address !== null ? address : { address: flags.host, port: flags.port };
        const host = bound.address.includes(':') ? `[${bound.address}]` : bound.address;
        // A wildcard address is not one to put in a link: localhost is, at least on this machine.
        listeningUrl = `http://${['0.0.0.0', '::'].includes(bound.address) ? 'localhost' : host}:${bound.port}`;
        if (pages && pages.publicUrl === undefined && ['0.0.0.0', '::'].includes(bound.address)) {
          app.log.warn('listening on every address without --public-url: links in mail point at localhost; give --public-url');
        }
        io.stdout.write(`listening on http://${host}:${bound.port}\n`);
        app.log.info(
          {
            url: `http://${host}:${bound.port}`,
            limits: limits.kind,
            keys: keys.location,
            plans: plans.source,
            accounts: pages ? { signUp: `${pages.publicUrl ?? listeningUrl}/signup`, mail: pages.mail, socialLogin: pages.social } : false,
            connections: {
              headersTimeoutMs: app.server.headersTimeout,
              requestTimeoutMs: app.server.requestTimeout,
              keepAliveTimeoutMs: app.server.keepAliveTimeout,
              maxConnections: app.server.maxConnections,
              shutdownGraceMs: graceMs,
            },
          },
          'listening',
        );
        await stopped;
        app.log.info({ graceMs }, 'shutting down: finishing requests in flight');
        // After the grace (or at a second signal): the requests left are
        // answered 503, the connections their probes opened are cut and the
        // engine's DNS sockets closed, so nothing waits out a probe's own
        // timeout; a moment later every connection still open is closed.
        let cut = false;
        const cutInFlight = () => {
          if (cut) return;
          cut = true;
          app.log.warn('shutting down: ending the requests still in flight');
          app.abortInFlight();
          shutdown.abort();
          void ctx.close();
          setTimeout(() => app.server.closeAllConnections(), 250).unref();
        };
        const grace = setTimeout(cutInFlight, graceMs);
        grace.unref();
        void stopSignal().then(cutInFlight);
        await app.close();
        clearTimeout(grace);
        // Work whose client went away while it ran (a probe of a request already cut) ends now too.
        app.abortInFlight();
        shutdown.abort();
        app.log.info('stopped');
      } finally {
        await app.close();
        await limits.close();
        await ctx.close();
        if (pages) await pages.close();
        await usage.close().catch((error: unknown) => app.log.warn({ err: error }, 'usage counted since the last write is lost: the key database did not take it'));
        await store.close();
        removeCrashNet();
      }
    });
}

/**
 * What the account pages need beyond the API's own parts: the account store
 * (in the key database), the mail sender (through an SMTP relay, else .eml
 * files in the outbox directory of the data dir) draining the outbox table,
 * the session key, and the public URL when one is given.
 */
async function openAccountPages(
  flags: ServeFlags,
  env: Readonly<Record<string, string | undefined>>,
  dataDir: string,
  store: Store,
  events: Pick<MailSenderOptions, 'onSent' | 'onFailed' | 'onError'> & { publicUrl: () => string },
) {
  const [{ createMailer, redactSmtpUrl, DEFAULT_TIMEOUT_MS }, { createMailSender }, { composeAccountMail }] = await Promise.all([
    import('../accounts/mailer.js'),
    import('../accounts/mail-sender.js'),
    import('../web/mail-messages.js'),
  ]);
  const given = flags.publicUrl ?? (env.NETINTEL_PUBLIC_URL ? publicUrl(env.NETINTEL_PUBLIC_URL) : undefined);
  const smtpUrl = flags.smtpUrl ?? (env.NETINTEL_SMTP_URL || undefined);
  const host = given ? new URL(given).hostname : 'localhost';
  const from = flags.mailFrom ?? (env.NETINTEL_MAIL_FROM || `netintel <no-reply@${host.includes('.') ? host : 'localhost'}>`);
  const outboxDir = join(dataDir, 'outbox');
  const oidcConfig = flags.oidcConfig ?? (env.NETINTEL_OIDC_CONFIG || undefined);
  // Read first: a mistake in the file stops the start before anything is opened.
  const social = oidcConfig ? await openSocialLogin(oidcConfig, env) : undefined;
  const mailer = createMailer({ from, ...(smtpUrl ? { smtpUrl } : { outboxDir }) });
  const sessionKey = await store.accounts.sessionKey();
  // A claimed message is this server's for longer than one attempt can take: the relay's timeouts, or a file write.
  const sender = createMailSender(store.outbox, mailer, { ...events, compose: composeAccountMail(store.accounts, events.publicUrl), leaseMs: smtpUrl ? 4 * DEFAULT_TIMEOUT_MS : 5_000 });
  // Messages queued before a restart go now.
  sender.wake();
  return {
    publicUrl: given,
    mail: smtpUrl ? { relay: redactSmtpUrl(smtpUrl), from } : { outbox: outboxDir, from },
    social: social ? social.providers().map((provider) => provider.id) : [],
    deps: { accounts: store.accounts, mail: sender, sessionKey, https: given?.startsWith('https:') === true, ...(social ? { social } : {}) },
    close: async () => {
      await sender.close();
      mailer.close();
    },
  };
}

/** The OpenID Connect providers of the file; their requests go through HTTPS_PROXY when one is set, as `data update`'s do. */
async function openSocialLogin(path: string, env: Readonly<Record<string, string | undefined>>) {
  const [{ loadOidcConfig }, { createOidcLogin }, { downloadNetwork }, undici] = await Promise.all([
    import('../web/oidc-config.js'),
    import('../web/oidc.js'),
    import('../cli/download-network.js'),
    import('undici'),
  ]);
  const providers = loadOidcConfig(path, env as NodeJS.ProcessEnv);
  const network = downloadNetwork(env);
  if (network.proxies.length === 0) return createOidcLogin(providers);
  // undici's Response is the one Node's fetch returns; only the type packages differ.
  const viaProxy: CustomFetch = (url, options) => undici.fetch(url, { ...(options as Parameters<typeof undici.fetch>[1]), dispatcher: network.dispatcher }) as unknown as Promise<Response>;
  return createOidcLogin(providers, { fetch: viaProxy });
}

/** An http(s) URL without path, query or fragment, given without its trailing slash. */
function publicUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(`--public-url must be a URL such as https://api.example.com, not ${JSON.stringify(value)}`);
  }
  // The pages link to each other by absolute path: they are served at the root of their host.
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '') {
    throw new InvalidArgumentError(`--public-url must be an http or https URL of a host, without user, path, query or fragment (such as https://api.example.com), not ${JSON.stringify(value)}`);
  }
  return url.origin;
}

/**
 * Why the server could not listen, as the flag to change: a port in use or
 * one the system keeps for privileged processes (`--port`), an address
 * this machine does not have or cannot resolve (`--host`). These are
 * `usage` errors (exit 2) with the way out; anything else is passed on.
 */
function listenFailure(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  const details = { host, port, errno: code };
  switch (code) {
    case 'EADDRINUSE':
      return new NetintelError('usage', `port ${port} is in use (${where}): choose another with --port (0 takes any free port)`, { details, cause: error });
    case 'EACCES':
      return new NetintelError('usage', `port ${port} needs privileges this process does not have (${where}): choose one above 1023 with --port`, { details, cause: error });
    case 'EADDRNOTAVAIL':
      return new NetintelError('usage', `${host} is not an address of this machine: choose another with --host (127.0.0.1, or 0.0.0.0 for every address)`, { details, cause: error });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new NetintelError('usage', `--host ${host} cannot be resolved: give an address of this machine (127.0.0.1, or 0.0.0.0 for every address)`, { details, cause: error });
    default:
      return error;
  }
}

/** The limit store: Redis, shared by every server given the URL, else this process's memory. */
async function openLimits(redisUrl: string | undefined) {
  return redisUrl
    ? (await import('../server/limits/redis-limit-store.js')).createRedisLimitStore(redisUrl)
    : (await import('../server/limits/memory-limit-store.js')).createMemoryLimitStore();
}

/** Resolves on the first SIGTERM or SIGINT. */
function stopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      resolve(signal);
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
}
