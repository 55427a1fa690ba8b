import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { CustomFetch } from 'openid-client';
import type { CommandRuntime } from '../cli/runtime.js';
import { NetintelError } from '../errors.js';
import type { AccountPagesSettings } from '../server/open-account-pages.js';
import { integerIn } from '../cli/integer-option.js';
import { serveLogStream } from './serve-log.js';
import { SERVER_FAN_OUT } from '../engine/fan-out.js';
import { resolveSetting, type Environment, type SettingSources } from '../setting-sources.js';
import { KEY_DATABASE_SETTING, keyDbPath } from '../store/database-location.js';

export interface ServeFlags {
  host: string;
  port: number;
  db?: string;
  plans?: string;
  redisUrl?: string;
  allowPrivateTargets?: boolean;
  trustProxy?: string[];
  proxyHeader: 'x-forwarded-for' | 'forwarded';
  smtpPorts?: number[];
  tlsPorts?: number[];
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
  metricsPort?: number;
  metricsHost?: string;
}

/**
 * The numeric settings of `serve`: flag, else environment variable, else
 * default (src/server/build-server.ts CONNECTION_DEFAULTS; the grace
 * src/server/lifecycle.ts SHUTDOWN_GRACE_MS; no metrics without a port).
 */
const CONNECTION_SETTINGS = {
  headersTimeout: { flag: '--headers-timeout', env: 'NETINTEL_HEADERS_TIMEOUT', min: 1, max: 600_000 },
  requestTimeout: { flag: '--request-timeout', env: 'NETINTEL_REQUEST_TIMEOUT', min: 1, max: 600_000 },
  keepAliveTimeout: { flag: '--keep-alive-timeout', env: 'NETINTEL_KEEP_ALIVE_TIMEOUT', min: 1, max: 600_000 },
  maxConnections: { flag: '--max-connections', env: 'NETINTEL_MAX_CONNECTIONS', min: 1, max: 1_000_000 },
  shutdownGrace: { flag: '--shutdown-grace', env: 'NETINTEL_SHUTDOWN_GRACE', min: 0, max: 600_000 },
  metricsPort: { flag: '--metrics-port', env: 'NETINTEL_METRICS_PORT', min: 0, max: 65_535 },
} as const satisfies Record<string, SettingSources & { min: number; max: number }>;

/** The other settings of `serve` a variable may give: flag, else environment variable, else default. */
const SERVE_SETTINGS = {
  redisUrl: { flag: '--redis-url', env: 'NETINTEL_REDIS_URL' },
  publicUrl: { flag: '--public-url', env: 'NETINTEL_PUBLIC_URL' },
  smtpUrl: { flag: '--smtp-url', env: 'NETINTEL_SMTP_URL' },
  mailFrom: { flag: '--mail-from', env: 'NETINTEL_MAIL_FROM' },
  oidcConfig: { flag: '--oidc-config', env: 'NETINTEL_OIDC_CONFIG' },
  metricsHost: { flag: '--metrics-host', env: 'NETINTEL_METRICS_HOST' },
} as const satisfies Record<string, SettingSources>;


/** A connection setting from its flag, else its variable (checked as the flag is), else undefined. */
function connectionSetting(key: keyof typeof CONNECTION_SETTINGS, flags: ServeFlags, env: Environment): number | undefined {
  const setting = CONNECTION_SETTINGS[key];
  return resolveSetting(setting, { flag: flags[key], env }, (text, variable) => {
    try {
      return integerIn(variable, setting.min, setting.max)(String(text));
    } catch (error) {
      throw new NetintelError('usage', (error as Error).message, { details: { variable } });
    }
  })?.value;
}

/** A text setting of `serve` from its flag (an empty one included), else its variable (an empty one counts as unset), else undefined. */
function textSetting(key: keyof typeof SERVE_SETTINGS, flags: ServeFlags, env: Environment, parse?: (text: string) => string): string | undefined {
  return resolveSetting(SERVE_SETTINGS[key], { flag: flags[key], env }, parse && ((text) => parse(String(text))))?.value;
}

/** The option of a connection setting: its flag, checked as its variable is, and the variable named in its help. */
function connectionOption(key: keyof typeof CONNECTION_SETTINGS, value: string, description: string, fallback: string): Option {
  const setting = CONNECTION_SETTINGS[key];
  return new Option(`${setting.flag} ${value}`, `${description} (env: ${setting.env}; ${fallback})`).argParser(integerIn(setting.flag, setting.min, setting.max));
}

const port = integerIn('--port', 0, 65535);

/** The parser of a port list flag (`--smtp-ports`, `--tls-ports`): repeatable, comma-separated, 0 refused. */
function portListOf(flag: string): (value: string, previous: number[] | undefined) => number[] {
  return (value, previous) => [...(previous ?? []), ...value.split(',').filter(Boolean).map((item) => {
    const number = port(item.trim());
    if (number === 0) throw new InvalidArgumentError(`${flag}: 0 is not a port`);
    return number;
  })];
}

/** `netintel serve`: the HTTP API of docs/api.md over the local engine, until SIGTERM or SIGINT. */
export function registerServeCommand(program: Command, runtime: CommandRuntime): void {
  program
    .command('serve')
    .description('run the HTTP API (endpoints, keys, plans, rate limits; docs at /docs) until SIGTERM/SIGINT')
    .addOption(new Option('--host <address>', 'address to listen on').default('127.0.0.1'))
    .addOption(new Option('--port <n>', 'port to listen on (0: any free port)').argParser(port).default(8080))
    .addOption(new Option(`${KEY_DATABASE_SETTING.flag} <path>`, `key database: a SQLite file, or postgres://user:password@host:port/db shared by several servers (env: ${KEY_DATABASE_SETTING.env}; default $XDG_DATA_HOME/netintel/keys.db)`))
    .addOption(new Option('--plans <file>', 'plans file (default: the shipped data/plans.json)'))
    .addOption(new Option(`${SERVE_SETTINGS.redisUrl.flag} <url>`, `keep rate limits in Redis, shared by every server given the same URL (env: ${SERVE_SETTINGS.redisUrl.env})`))
    .addOption(new Option('--allow-private-targets', 'let server-side probes reach private, loopback, link-local and metadata addresses'))
    .addOption(
      new Option('--trust-proxy <list>', 'proxies whose X-Forwarded-For (or Forwarded) names the caller: IPs, CIDRs, loopback, private, linklocal')
        .argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]),
    )
    .addOption(new Option('--proxy-header <name>', 'the header trusted proxies write').choices(['x-forwarded-for', 'forwarded']).default('x-forwarded-for'))
    .addOption(new Option('--smtp-ports <list>', 'ports SMTP probes may use (default 25,465,587,2525)').argParser(portListOf('--smtp-ports')))
    .addOption(new Option('--tls-ports <list>', 'ports TLS checks may use (default 21,25,110,143,389,443,465,587,636,853,990,993,995,2525,5222,5223,5269,5432,8443)').argParser(portListOf('--tls-ports')))
    .addOption(new Option('--max-mx <n>', `MX hosts of a domain one request looks up and checks; callers cannot raise it (default ${SERVER_FAN_OUT.maxMxHosts})`).argParser(integerIn('--max-mx', 1, 1000)))
    .addOption(new Option('--max-addresses <n>', `addresses of one host a request uses; callers cannot raise it (default ${SERVER_FAN_OUT.maxAddresses})`).argParser(integerIn('--max-addresses', 1, 1000)))
    .addOption(
      new Option('--max-smtp-connections <n>', `SMTP connections one check of a request opens; callers cannot raise it (default ${SERVER_FAN_OUT.maxSmtpConnections})`).argParser(integerIn('--max-smtp-connections', 1, 1000)),
    )
    .addOption(connectionOption('headersTimeout', '<ms>', 'time a client has to send the headers of a request, in ms', 'default 10000'))
    .addOption(connectionOption('requestTimeout', '<ms>', 'time a client has to send a whole request, body included, in ms', 'default 15000'))
    .addOption(connectionOption('keepAliveTimeout', '<ms>', 'how long an idle keep-alive connection stays open, in ms', 'default 5000'))
    .addOption(connectionOption('maxConnections', '<n>', 'connections held at once; more are closed at once', 'default 1024'))
    .addOption(connectionOption('shutdownGrace', '<ms>', 'time requests in flight get to finish after SIGTERM, in ms', 'default 2000'))
    .addOption(new Option('--no-accounts', 'serve the API only: no sign-up, log-in or dashboard pages'))
    .addOption(new Option(`${SERVE_SETTINGS.publicUrl.flag} <url>`, `the address people reach this server at, for links in mail and the dashboard (env: ${SERVE_SETTINGS.publicUrl.env}; default the listening address); https makes session cookies Secure`).argParser(publicUrl))
    .addOption(new Option(`${SERVE_SETTINGS.smtpUrl.flag} <url>`, `mail relay for verification and reset links: smtp[s]://user:password@host:port (env: ${SERVE_SETTINGS.smtpUrl.env}; default: write each message to the outbox directory of the data dir)`))
    .addOption(new Option(`${SERVE_SETTINGS.mailFrom.flag} <address>`, `From address of that mail (env: ${SERVE_SETTINGS.mailFrom.env}; default netintel <no-reply@HOST of the public URL>)`))
    .addOption(new Option(`${SERVE_SETTINGS.oidcConfig.flag} <file>`, `log in with Google, Microsoft or any OpenID Connect provider: a JSON file of providers, see docs/oidc.md (env: ${SERVE_SETTINGS.oidcConfig.env})`))
    .addOption(connectionOption('metricsPort', '<n>', 'serve Prometheus metrics at /metrics on this port, apart from the API (0: any free port)', 'default: no metrics'))
    .addOption(new Option(`${SERVE_SETTINGS.metricsHost.flag} <address>`, `address the metrics listen on; they name routes, plans and resolvers, so keep them private (env: ${SERVE_SETTINGS.metricsHost.env}; default 127.0.0.1)`))
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
        '  netintel serve --metrics-port 9464   # Prometheus metrics at http://127.0.0.1:9464/metrics',
        '  netintel serve --public-url https://api.example.com --smtp-url smtps://mailer:secret@smtp.example.com:465 --db postgres://netintel@db/netintel',
      ].join('\n'),
    )
    .action(async (flags: ServeFlags, command: Command) => {
      const options = runtime.options(command);
      // The API's checks validate DNSSEC from the IANA root KSKs for every caller; the trust anchor setting is the CLI's own.
      if (options.trustAnchor?.onCommandLine) throw new NetintelError('usage', 'netintel serve validates DNSSEC from the IANA root KSKs: --trust-anchor applies to the runs of the CLI, not to the server');
      const ctx = runtime.context(options);
      const { io } = runtime;
      const [{ runServer }, { loadPlanTable }, { packageRoot, defaultDataDir }] = await Promise.all([
        import('../server/lifecycle.js'),
        import('../keys/plans.js'),
        import('../engine/data/data-files.js'),
      ]);
      const plans = loadPlanTable(flags.plans);
      // Read before anything is opened (the key database, Redis), so that a bad value leaves nothing to close.
      const { connection, graceMs, db, redisUrl, metrics } = serverSettings(flags, io.env);
      const version = (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
      await runServer(
        {
          host: flags.host,
          port: flags.port,
          db,
          redisUrl,
          graceMs,
          metrics,
          accounts: flags.accounts ? accountPagesSettings(flags, io.env, options.dataDir ?? defaultDataDir(io.env)) : false,
          server: {
            ctx,
            plans,
            allowPrivateTargets: flags.allowPrivateTargets === true,
            trustProxy: flags.trustProxy ?? [],
            proxyHeader: flags.proxyHeader,
            smtpPorts: flags.smtpPorts,
            tlsPorts: flags.tlsPorts,
            fanOut: {
              maxMxHosts: flags.maxMx ?? SERVER_FAN_OUT.maxMxHosts,
              maxAddresses: flags.maxAddresses ?? SERVER_FAN_OUT.maxAddresses,
              maxSmtpConnections: flags.maxSmtpConnections ?? SERVER_FAN_OUT.maxSmtpConnections,
            },
            logger: { level: flags.logLevel, stream: await serveLogStream(io) },
            version,
            ...connection,
          },
        },
        { stdout: io.stdout, processEvents: process },
      );
    });
}

/** The server's settings that flags or variables give: the connection limits, the shutdown grace, the key database, Redis. */
export function serverSettings(flags: ServeFlags, env: Environment) {
  return {
    connection: {
      headersTimeoutMs: connectionSetting('headersTimeout', flags, env),
      requestTimeoutMs: connectionSetting('requestTimeout', flags, env),
      keepAliveTimeoutMs: connectionSetting('keepAliveTimeout', flags, env),
      maxConnections: connectionSetting('maxConnections', flags, env),
    },
    graceMs: connectionSetting('shutdownGrace', flags, env),
    db: keyDbPath(flags.db, env),
    redisUrl: textSetting('redisUrl', flags, env),
    metrics: metricsSettings(flags, env),
  };
}

/** Where the metrics listen: only when a port is given (flag or variable), on 127.0.0.1 unless a host is given too. */
function metricsSettings(flags: ServeFlags, env: Environment): { host: string; port: number } | undefined {
  const port = connectionSetting('metricsPort', flags, env);
  const host = textSetting('metricsHost', flags, env);
  if (port === undefined) {
    if (host !== undefined) throw new NetintelError('usage', '--metrics-host needs --metrics-port: give the port the metrics listen on');
    return undefined;
  }
  return { host: host ?? '127.0.0.1', port };
}

/**
 * The account pages' settings from the flags and variables: the public URL
 * when given, the mail relay (else .eml files in the outbox directory of
 * the data dir), the From address (by default at the public URL's host),
 * and the social log-in when an OpenID Connect file is given.
 */
export function accountPagesSettings(flags: ServeFlags, env: Environment, dataDir: string): AccountPagesSettings {
  const given = textSetting('publicUrl', flags, env, publicUrl);
  const host = given ? new URL(given).hostname : 'localhost';
  const oidcConfig = textSetting('oidcConfig', flags, env);
  return {
    publicUrl: given,
    smtpUrl: textSetting('smtpUrl', flags, env),
    outboxDir: join(dataDir, 'outbox'),
    from: textSetting('mailFrom', flags, env) ?? `netintel <no-reply@${host.includes('.') ? host : 'localhost'}>`,
    openSocialLogin: oidcConfig ? () => openSocialLogin(oidcConfig, env) : undefined,
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
