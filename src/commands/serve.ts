import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { CommandRuntime } from '../cli/runtime.js';

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
  logLevel: string;
}

/** How long in-flight requests get to finish after SIGTERM before their connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;

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
    .description('run the HTTP API (SPEC.md endpoints, keys, plans, rate limits) until SIGTERM/SIGINT')
    .addOption(new Option('--host <address>', 'address to listen on').default('127.0.0.1'))
    .addOption(new Option('--port <n>', 'port to listen on (0: any free port)').argParser(port).default(8080))
    .addOption(new Option('--db <path>', 'key database (env: NETINTEL_DB; default $XDG_DATA_HOME/netintel/keys.db)'))
    .addOption(new Option('--plans <file>', 'plans file (default: the shipped data/plans.json)'))
    .addOption(new Option('--redis-url <url>', 'keep rate limits in Redis, shared by every server given the same URL (env: NETINTEL_REDIS_URL)'))
    .addOption(new Option('--allow-private-targets', 'let server-side probes reach private, loopback, link-local and metadata addresses'))
    .addOption(
      new Option('--trust-proxy <list>', 'proxies whose X-Forwarded-For (or Forwarded) names the caller: IPs, CIDRs, loopback, private, linklocal')
        .argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]),
    )
    .addOption(new Option('--proxy-header <name>', 'the header trusted proxies write').choices(['x-forwarded-for', 'forwarded']).default('x-forwarded-for'))
    .addOption(new Option('--smtp-ports <list>', 'ports SMTP probes may use (default 25,465,587,2525)').argParser(portList))
    .addOption(new Option('--log-level <level>', 'structured log level (JSON lines on stderr)').choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']).default('info'))
    .addHelpText(
      'after',
      [
        '',
        'Logs are JSON lines on stderr; the address line goes to stdout. Keys: `netintel keys create --plan pro`.',
        'Examples:',
        '  netintel serve',
        '  netintel serve --host 0.0.0.0 --port 8080 --redis-url redis://127.0.0.1:6379 --trust-proxy 10.0.0.0/8',
      ].join('\n'),
    )
    .action(async (flags: ServeFlags, command: Command) => {
      const options = runtime.options(command);
      const ctx = runtime.context(options);
      const { io } = runtime;
      const [{ buildServer }, { loadPlanTable }, { openSqliteKeyStore }, { keyDbPath }, { packageRoot }] = await Promise.all([
        import('../server/build-server.js'),
        import('../keys/plans.js'),
        import('../keys/sqlite-key-store.js'),
        import('../keys/key-db-path.js'),
        import('../engine/data/data-files.js'),
      ]);
      const plans = loadPlanTable(flags.plans);
      const redisUrl = flags.redisUrl ?? (io.env.NETINTEL_REDIS_URL || undefined);
      const limits = redisUrl
        ? await (await import('../server/limits/redis-limit-store.js')).createRedisLimitStore(redisUrl)
        : (await import('../server/limits/memory-limit-store.js')).createMemoryLimitStore();
      const keys = openSqliteKeyStore(keyDbPath(flags.db, io.env));
      const version = (JSON.parse(readFileSync(join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
      (await import('../server/settle-heap.js')).settleHeap();
      const app = buildServer({
        ctx,
        keys,
        plans,
        limits,
        allowPrivateTargets: flags.allowPrivateTargets === true,
        trustProxy: flags.trustProxy ?? [],
        proxyHeader: flags.proxyHeader,
        smtpPorts: flags.smtpPorts,
        logger: { level: flags.logLevel, stream: io.stderr },
        version,
      });
      try {
        await app.listen({ host: flags.host, port: flags.port });
        const address = app.server.address();
        const bound = typeof address === 'object' && address !== null ? address : { address: flags.host, port: flags.port };
        const host = bound.address.includes(':') ? `[${bound.address}]` : bound.address;
        io.stdout.write(`listening on http://${host}:${bound.port}\n`);
        app.log.info({ url: `http://${host}:${bound.port}`, limits: limits.kind, plans: plans.source }, 'listening');
        await stopSignal();
        app.log.info('shutting down: finishing requests in flight');
        const force = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
        force.unref();
        await app.close();
        clearTimeout(force);
        app.log.info('stopped');
      } finally {
        await app.close();
        await limits.close();
        keys.close();
      }
    });
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
