/**
 * flag > environment (NETINTEL_*) > config file > default, for every option
 * that has a variable or a config key:
 *
 * - read in-process off the options a command receives (src/app/program.ts);
 * - the options of single commands (serve, keys, accounts, smtp) as those
 *   commands resolve them;
 * - the built CLI as a process, for options whose effect shows (the format,
 *   the resolver that answered).
 *
 * An empty variable counts as unset everywhere; every variable a command's
 * help names is among those checked here.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { COMMAND_NAMES } from '../../src/app/main.js';
import { runProgram, type CommandRegistration } from '../../src/app/program.js';
import { configFilePath } from '../../src/cli/config-file.js';
import { SETTINGS, type GlobalOptions } from '../../src/cli/global-options.js';
import { debugRequested } from '../../src/cli/run-guard.js';
import { accountPagesSettings, serverSettings, type ServeFlags } from '../../src/commands/serve.js';
import { defaultDataDir } from '../../src/engine/data/data-files.js';
import { credentialsGiven, credentialsOf } from '../../src/operations/smtp-flags.js';
import { keyDbPath } from '../../src/store/database-location.js';
import { isolatedEnv, runCli, runEntry, spawnCli, tempDir, writeConfigFile } from '../support/cli.js';
import { netintelErrorOf } from '../support/netintel-error.js';
import { startDnsServer, type DnsTestServer } from '../support/dns-server.js';

const scratch = tempDir();
afterAll(() => scratch.remove());

interface Row {
  /** The config key (SETTINGS' key). */
  key: keyof typeof SETTINGS;
  flag: string[];
  env: string | null;
  config: unknown;
  read: (options: GlobalOptions) => unknown;
  /** What `read` gives for the flag's, the variable's and the config file's value, and with none. */
  expect: { flag: unknown; env: unknown; config: unknown; default: unknown };
  /** Flags every run of this row needs (api-key: a server). */
  base?: string[];
}

const ROWS: Row[] = [
  { key: 'format', flag: ['-f', 'csv'], env: 'ndjson', config: 'xml', read: (o) => o.format, expect: { flag: 'csv', env: 'ndjson', config: 'xml', default: 'table' } },
  { key: 'fields', flag: ['--fields', 'flag.f'], env: 'env.f', config: 'config.f', read: (o) => o.fields, expect: { flag: ['flag.f'], env: ['env.f'], config: ['config.f'], default: null } },
  { key: 'data-dir', flag: ['--data-dir', '/flag'], env: '/env', config: '/config', read: (o) => o.dataDir, expect: { flag: '/flag', env: '/env', config: '/config', default: 'DEFAULT_DATA_DIR' } },
  { key: 'timeout', flag: ['-t', '1111'], env: '2222', config: 3333, read: (o) => o.timeoutMs, expect: { flag: 1111, env: 2222, config: 3333, default: 5000 } },
  { key: 'concurrency', flag: ['--concurrency', '11'], env: '22', config: 33, read: (o) => o.concurrency, expect: { flag: 11, env: 22, config: 33, default: 64 } },
  {
    key: 'resolver',
    flag: ['--resolver', '127.0.0.1:1'],
    env: '127.0.0.2:2,127.0.0.4:4',
    config: ['127.0.0.3:3'],
    read: (o) => o.resolvers,
    expect: { flag: ['127.0.0.1:1'], env: ['127.0.0.2:2', '127.0.0.4:4'], config: ['127.0.0.3:3'], default: null },
  },
  {
    key: 'resolver-ca',
    flag: ['--resolver-ca', '/flag.pem'],
    env: '/env.pem',
    config: '/config.pem',
    read: (o) => o.resolverCa,
    expect: { flag: '/flag.pem', env: '/env.pem', config: '/config.pem', default: null },
  },
  {
    key: 'trust-anchor',
    flag: ['--trust-anchor', '/flag.key'],
    env: '/env.key',
    config: '/config.key',
    read: (o) => o.trustAnchor?.file ?? null,
    expect: { flag: '/flag.key', env: '/env.key', config: '/config.key', default: null },
  },
  { key: 'retries', flag: ['--retries', '0'], env: '4', config: 6, read: (o) => o.dnsRetries, expect: { flag: 0, env: 4, config: 6, default: 2 } },
  {
    key: 'server',
    flag: ['--server', 'http://flag.test'],
    env: 'http://env.test',
    config: 'http://config.test',
    read: (o) => o.remote?.server ?? null,
    expect: { flag: 'http://flag.test', env: 'http://env.test', config: 'http://config.test', default: null },
  },
  {
    key: 'api-key',
    base: ['--server', 'http://s.test'],
    flag: ['--api-key', 'flag-key'],
    env: 'env-key',
    config: 'config-key',
    read: (o) => o.remote?.apiKey ?? null,
    expect: { flag: 'flag-key', env: 'env-key', config: 'config-key', default: null },
  },
  // Switches: the flag can only turn them on, so the lower sources say "off" where a higher one says "on" and back.
  { key: 'tcp', flag: ['--tcp'], env: '0', config: true, read: (o) => o.dnsTcp, expect: { flag: true, env: false, config: true, default: false } },
  { key: 'quiet', flag: ['-q'], env: 'false', config: true, read: (o) => o.quiet, expect: { flag: true, env: false, config: true, default: false } },
  { key: 'verbose', flag: ['-v'], env: '0', config: true, read: (o) => o.verbose, expect: { flag: true, env: false, config: true, default: false } },
  { key: 'header', flag: ['--no-header'], env: null, config: true, read: (o) => o.header, expect: { flag: false, env: null, config: true, default: true } },
];

/** The environment of a run: the variable and a config file holding the key, as `sources` says. */
function environment(row: Row, sources: { env: boolean; config: boolean }, name: string): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  const variable = (SETTINGS[row.key] as { env?: string }).env;
  if (sources.env && variable !== undefined && row.env !== null) env[variable] = row.env;
  if (sources.config) env.XDG_CONFIG_HOME = writeConfigFile(join(scratch.path, `${row.key}-${name}`), { [row.key]: row.config });
  return env;
}

/** The options a command of the commander path receives for these arguments and environment. */
async function commanderOptions(argv: string[], env: Record<string, string | undefined>): Promise<GlobalOptions> {
  let seen: GlobalOptions | undefined;
  // `dns` has a remote mode, so --server applies to it.
  const probe: CommandRegistration = (program, runtime) => {
    program
      .command('dns')
      .argument('[targets...]')
      .action((_targets: string[], _flags: unknown, command: Command) => {
        seen = runtime.options(command);
      });
  };
  const result = await runEntry((args, io) => runProgram(args, io, [probe]), argv, { env });
  if (seen === undefined) throw new Error(`no options seen: exit ${result.code}: ${result.stderr}`);
  return seen;
}

const LEVELS = [
  { name: 'flag', sources: { flag: true, env: true, config: true } },
  { name: 'env', sources: { flag: false, env: true, config: true } },
  { name: 'config', sources: { flag: false, env: false, config: true } },
  { name: 'default', sources: { flag: false, env: false, config: false } },
] as const;

function expected(row: Row, level: (typeof LEVELS)[number]['name'], env: Record<string, string | undefined>): unknown {
  // header has no variable: with the env level asked for, the config file still decides.
  const value = row.expect[level] === null && level === 'env' && row.env === null ? row.expect.config : row.expect[level];
  return value === 'DEFAULT_DATA_DIR' ? defaultDataDir(isolatedEnv(env)) : value;
}

describe('flag > environment > config file > default', () => {
  it('covers every setting', () => {
    expect(ROWS.map((row) => row.key).sort()).toEqual(Object.keys(SETTINGS).sort());
  });

  for (const row of ROWS) {
    for (const level of LEVELS) {
      it(`${row.key}: the ${level.name} decides when it is the highest source given`, async () => {
        const env = environment(row, level.sources, `commander-${level.name}`);
        const argv = ['dns', ...(row.base ?? []), ...(level.sources.flag ? row.flag : [])];
        expect(row.read(await commanderOptions(argv, env))).toEqual(expected(row, level.name, env));
      });
    }
  }

  for (const row of ROWS.filter((each) => each.env !== null)) {
    it(`${row.key}: an empty variable counts as unset, and the config file decides`, async () => {
      const variable = (SETTINGS[row.key] as { env?: string }).env!;
      const env = { ...environment(row, { env: false, config: true }, 'empty-env'), [variable]: '' };
      expect(row.read(await commanderOptions(['dns', ...(row.base ?? [])], env))).toEqual(expected(row, 'config', env));
    });
  }

  it('--trust-anchor says where it came from: only the command line asks a run to validate (dns --dnssec)', async () => {
    const config = writeConfigFile(join(scratch.path, 'anchor'), { 'trust-anchor': '/config.key' });
    expect((await commanderOptions(['dns', 'x', '--trust-anchor', '/flag.key'], { NETINTEL_TRUST_ANCHOR: '/env.key' })).trustAnchor).toEqual({ file: '/flag.key', from: '--trust-anchor', onCommandLine: true });
    expect((await commanderOptions(['dns', 'x'], { NETINTEL_TRUST_ANCHOR: '/env.key', XDG_CONFIG_HOME: config })).trustAnchor).toEqual({ file: '/env.key', from: 'NETINTEL_TRUST_ANCHOR', onCommandLine: false });
    expect((await commanderOptions(['dns', 'x'], { XDG_CONFIG_HOME: config })).trustAnchor).toEqual({ file: '/config.key', from: 'the config file\'s "trust-anchor"', onCommandLine: false });
  });

  it('--resolver given twice keeps both, in order, and neither the variable\'s nor the config file\'s', async () => {
    const env = { NETINTEL_RESOLVER: '127.0.0.9:9', XDG_CONFIG_HOME: writeConfigFile(join(scratch.path, 'twice'), { resolver: '127.0.0.8:8' }) };
    const options = await commanderOptions(['dns', '--resolver', '127.0.0.1:1', '--resolver', '127.0.0.2:2,127.0.0.3:3'], env);
    expect(options.resolvers).toEqual(['127.0.0.1:1', '127.0.0.2:2', '127.0.0.3:3']);
  });
});

describe('precedence in the built CLI', () => {
  let flagServer: DnsTestServer;
  let envServer: DnsTestServer;
  let configServer: DnsTestServer;
  beforeAll(async () => {
    const answering = (address: string) => startDnsServer({ records: [{ name: 'who.test', type: 'A', data: address }] });
    [flagServer, envServer, configServer] = await Promise.all([answering('192.0.2.1'), answering('192.0.2.2'), answering('192.0.2.3')]);
  });
  afterAll(async () => {
    await Promise.all([flagServer?.close(), envServer?.close(), configServer?.close()]);
  });

  const formatOf = (stdout: string) =>
    stdout.startsWith('query,') ? 'csv' : stdout.startsWith('<?xml') ? 'xml' : stdout.startsWith('{"') ? 'ndjson' : stdout.startsWith('{') || stdout.startsWith('[') ? 'json' : 'table';

  for (const argv of [
    ['asn', 'AS13335'],
    ['asn', 'AS13335', '-t', '2000'],
    ['data', 'status'],
  ]) {
    it(`takes the format from the flag over NETINTEL_FORMAT over the config file: netintel ${argv.join(' ')}`, async () => {
      const config = writeConfigFile(join(scratch.path, `spawn-format-${argv.join('-')}`), { format: 'xml' });
      const cases = [
        { extra: ['-f', 'csv'], env: { NETINTEL_FORMAT: 'ndjson', XDG_CONFIG_HOME: config }, format: 'csv' },
        { extra: [], env: { NETINTEL_FORMAT: 'ndjson', XDG_CONFIG_HOME: config }, format: 'ndjson' },
        { extra: [], env: { XDG_CONFIG_HOME: config }, format: 'xml' },
      ];
      for (const testCase of cases) {
        const args = [...argv, ...testCase.extra];
        const result = await spawnCli(args, { stdout: 'pipe', env: testCase.env });
        expect(result.code, result.stderr).toBe(0);
        expect(formatOf(result.stdout)).toBe(testCase.format);
      }
    });
  }

  for (const argv of [
    ['ip', 'who.test', '-f', 'json'],
    ['dns', 'who.test', '-f', 'json'],
  ]) {
    it(`asks the --resolver of the flag, else NETINTEL_RESOLVER's, else the config file's: netintel ${argv[0]}`, async () => {
      const env = { NETINTEL_RESOLVER: envServer.address, XDG_CONFIG_HOME: writeConfigFile(join(scratch.path, `spawn-resolver-${argv[0]}`), { resolver: configServer.address }) };
      const answers = async (extra: string[], runEnv: Record<string, string>) => {
        const args = [...argv, ...extra];
        const result = await spawnCli(args, { stdout: 'pipe', env: runEnv });
        expect(result.code, result.stderr).toBe(0);
        return result.stdout;
      };
      expect(await answers(['--resolver', flagServer.address], env)).toContain('192.0.2.1');
      expect(await answers([], env)).toContain('192.0.2.2');
      expect(await answers([], { XDG_CONFIG_HOME: env.XDG_CONFIG_HOME })).toContain('192.0.2.3');
    });
  }
});

/** The flags of `serve` as commander gives them with none of the optional ones. */
const SERVE_FLAGS: ServeFlags = { host: '127.0.0.1', port: 0, proxyHeader: 'x-forwarded-for', logLevel: 'info', accounts: true };

/** The variables checked below besides the global options' (SETTINGS). */
const COMMAND_VARIABLES = [
  'NETINTEL_DEBUG',
  'NETINTEL_DB',
  'NETINTEL_REDIS_URL',
  'NETINTEL_HEADERS_TIMEOUT',
  'NETINTEL_REQUEST_TIMEOUT',
  'NETINTEL_KEEP_ALIVE_TIMEOUT',
  'NETINTEL_MAX_CONNECTIONS',
  'NETINTEL_SHUTDOWN_GRACE',
  'NETINTEL_PUBLIC_URL',
  'NETINTEL_SMTP_URL',
  'NETINTEL_MAIL_FROM',
  'NETINTEL_OIDC_CONFIG',
  'NETINTEL_METRICS_PORT',
  'NETINTEL_METRICS_HOST',
  'NETINTEL_SMTP_USER',
  'NETINTEL_SMTP_PASS',
];

describe('the options of single commands: flag > environment > default', () => {
  it('names in the help of every command and subcommand no variable that is not checked here', async () => {
    const named = new Set<string>();
    const helpOf = async (path: string[]) => {
      const run = await runCli([...path, '--help'], { env: { COLUMNS: '1000' } });
      expect(run.code, run.stderr).toBe(0);
      for (const match of run.stdout.matchAll(/\(env: (NETINTEL_\w+)/g)) named.add(match[1]!);
      return run.stdout;
    };
    for (const name of COMMAND_NAMES) {
      const help = await helpOf([name]);
      const subcommands = (help.split('\nCommands:\n')[1]?.split('\n\n')[0] ?? '').split('\n').map((line) => /^ {2}([a-z][\w-]*)/.exec(line)?.[1]);
      for (const sub of subcommands) if (sub !== undefined && sub !== 'help') await helpOf([name, sub]);
    }
    const checked = new Set([...Object.values(SETTINGS).flatMap((setting) => ('env' in setting ? [setting.env] : [])), ...COMMAND_VARIABLES]);
    expect([...named].filter((variable) => !checked.has(variable))).toEqual([]);
    expect(named).toContain('NETINTEL_OIDC_CONFIG');
    expect(named).toContain('NETINTEL_SMTP_PASS');
  });

  it('serve, keys and accounts: --db, else NETINTEL_DB, else keys.db in the XDG data dir; an empty flag or variable counts as unset', () => {
    const base = { XDG_DATA_HOME: '/xdg' };
    expect(keyDbPath('/flag.db', { ...base, NETINTEL_DB: '/env.db' })).toBe('/flag.db');
    expect(keyDbPath(undefined, { ...base, NETINTEL_DB: '/env.db' })).toBe('/env.db');
    expect(keyDbPath('', { ...base, NETINTEL_DB: '/env.db' })).toBe('/env.db');
    expect(keyDbPath(undefined, { ...base, NETINTEL_DB: '' })).toBe('/xdg/netintel/keys.db');
    expect(serverSettings({ ...SERVE_FLAGS, db: '/flag.db' }, { ...base, NETINTEL_DB: '/env.db' }).db).toBe('/flag.db');
    expect(serverSettings(SERVE_FLAGS, { ...base, NETINTEL_DB: '/env.db' }).db).toBe('/env.db');
  });

  it('serve: the connection settings and the shutdown grace, the variable checked as the flag is', () => {
    const cases = [
      { flag: 'headersTimeout', variable: 'NETINTEL_HEADERS_TIMEOUT', read: (s: ReturnType<typeof serverSettings>) => s.connection.headersTimeoutMs },
      { flag: 'requestTimeout', variable: 'NETINTEL_REQUEST_TIMEOUT', read: (s: ReturnType<typeof serverSettings>) => s.connection.requestTimeoutMs },
      { flag: 'keepAliveTimeout', variable: 'NETINTEL_KEEP_ALIVE_TIMEOUT', read: (s: ReturnType<typeof serverSettings>) => s.connection.keepAliveTimeoutMs },
      { flag: 'maxConnections', variable: 'NETINTEL_MAX_CONNECTIONS', read: (s: ReturnType<typeof serverSettings>) => s.connection.maxConnections },
      { flag: 'shutdownGrace', variable: 'NETINTEL_SHUTDOWN_GRACE', read: (s: ReturnType<typeof serverSettings>) => s.graceMs },
    ] as const;
    for (const { flag, variable, read } of cases) {
      expect(read(serverSettings({ ...SERVE_FLAGS, [flag]: 1111 }, { [variable]: '2222' })), variable).toBe(1111);
      expect(read(serverSettings(SERVE_FLAGS, { [variable]: '2222' })), variable).toBe(2222);
      expect(read(serverSettings(SERVE_FLAGS, { [variable]: '' })), variable).toBeUndefined();
      expect(read(serverSettings(SERVE_FLAGS, {})), variable).toBeUndefined();
      const error = netintelErrorOf(() => serverSettings(SERVE_FLAGS, { [variable]: 'soon' }));
      expect(error.code).toBe('usage');
      expect(error.message).toMatch(new RegExp(`^${variable} must be an integer from [01] to \\d+, not "soon"$`));
      expect(error.details).toEqual({ variable });
    }
    expect(serverSettings(SERVE_FLAGS, { NETINTEL_SHUTDOWN_GRACE: '0' }).graceMs).toBe(0);
  });

  it('serve: --metrics-port and --metrics-host, else their variables; the host alone is a usage error', () => {
    expect(serverSettings(SERVE_FLAGS, {}).metrics).toBeUndefined();
    expect(serverSettings({ ...SERVE_FLAGS, metricsPort: 9464 }, { NETINTEL_METRICS_PORT: '9000' }).metrics).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(serverSettings(SERVE_FLAGS, { NETINTEL_METRICS_PORT: '9000', NETINTEL_METRICS_HOST: '10.0.0.5' }).metrics).toEqual({ host: '10.0.0.5', port: 9000 });
    expect(serverSettings({ ...SERVE_FLAGS, metricsHost: '127.0.0.2' }, { NETINTEL_METRICS_PORT: '9000', NETINTEL_METRICS_HOST: '10.0.0.5' }).metrics).toEqual({ host: '127.0.0.2', port: 9000 });
    expect(serverSettings(SERVE_FLAGS, { NETINTEL_METRICS_PORT: '' }).metrics).toBeUndefined();
    expect(netintelErrorOf(() => serverSettings(SERVE_FLAGS, { NETINTEL_METRICS_PORT: 'soon' })).message).toBe('NETINTEL_METRICS_PORT must be an integer from 0 to 65535, not "soon"');
    expect(netintelErrorOf(() => serverSettings(SERVE_FLAGS, { NETINTEL_METRICS_HOST: '10.0.0.5' })).message).toMatch(/^--metrics-host needs --metrics-port/);
  });

  it('serve: --redis-url, else NETINTEL_REDIS_URL', () => {
    expect(serverSettings({ ...SERVE_FLAGS, redisUrl: 'redis://flag' }, { NETINTEL_REDIS_URL: 'redis://env' }).redisUrl).toBe('redis://flag');
    expect(serverSettings(SERVE_FLAGS, { NETINTEL_REDIS_URL: 'redis://env' }).redisUrl).toBe('redis://env');
    expect(serverSettings(SERVE_FLAGS, { NETINTEL_REDIS_URL: '' }).redisUrl).toBeUndefined();
  });

  it('serve: the account pages\' public URL, mail relay and From address', () => {
    const env = { NETINTEL_PUBLIC_URL: 'https://env.example/', NETINTEL_SMTP_URL: 'smtp://env.example:25', NETINTEL_MAIL_FROM: 'env <env@example.com>' };
    const flags = { ...SERVE_FLAGS, publicUrl: 'https://flag.example', smtpUrl: 'smtp://flag.example:25', mailFrom: 'flag <flag@example.com>' };
    expect(accountPagesSettings(flags, env, '/data')).toMatchObject({ publicUrl: 'https://flag.example', smtpUrl: 'smtp://flag.example:25', from: 'flag <flag@example.com>' });
    // The variable's URL is checked and written as the flag's is.
    expect(accountPagesSettings(SERVE_FLAGS, env, '/data')).toMatchObject({ publicUrl: 'https://env.example', smtpUrl: 'smtp://env.example:25', from: 'env <env@example.com>' });
    const empty = { NETINTEL_PUBLIC_URL: '', NETINTEL_SMTP_URL: '', NETINTEL_MAIL_FROM: '' };
    expect(accountPagesSettings(SERVE_FLAGS, empty, '/data')).toMatchObject({ publicUrl: undefined, smtpUrl: undefined, from: 'netintel <no-reply@localhost>' });
    expect(accountPagesSettings(SERVE_FLAGS, { NETINTEL_PUBLIC_URL: 'https://api.example.com' }, '/data').from).toBe('netintel <no-reply@api.example.com>');
    expect(() => accountPagesSettings(SERVE_FLAGS, { NETINTEL_PUBLIC_URL: 'not a url' }, '/data')).toThrow(/^--public-url must be a URL such as https:\/\/api\.example\.com/);
  });

  it('serve: --oidc-config, else NETINTEL_OIDC_CONFIG, names the providers file read', async () => {
    const flagFile = join(scratch.path, 'flag-oidc.json');
    const envFile = join(scratch.path, 'env-oidc.json');
    writeFileSync(flagFile, '{');
    writeFileSync(envFile, '{');
    const fileRead = async (flags: ServeFlags, env: Record<string, string>) => {
      const open = accountPagesSettings(flags, env, '/data').openSocialLogin;
      if (open === undefined) return null;
      const message = await open().then(
        () => 'opened',
        (error: Error) => error.message,
      );
      return [flagFile, envFile].find((file) => message.includes(file)) ?? message;
    };
    expect(await fileRead({ ...SERVE_FLAGS, oidcConfig: flagFile }, { NETINTEL_OIDC_CONFIG: envFile })).toBe(flagFile);
    expect(await fileRead(SERVE_FLAGS, { NETINTEL_OIDC_CONFIG: envFile })).toBe(envFile);
    expect(await fileRead(SERVE_FLAGS, { NETINTEL_OIDC_CONFIG: '' })).toBeNull();
    expect(await fileRead(SERVE_FLAGS, {})).toBeNull();
  });

  it('smtp: --auth-user and --auth-pass, else NETINTEL_SMTP_USER and NETINTEL_SMTP_PASS', () => {
    const env = { NETINTEL_SMTP_USER: 'env-user', NETINTEL_SMTP_PASS: 'env-pass' };
    expect(credentialsOf({ authUser: 'flag-user', authPass: 'flag-pass' }, env)).toEqual({ user: 'flag-user', pass: 'flag-pass' });
    expect(credentialsOf({ authUser: 'flag-user' }, env)).toEqual({ user: 'flag-user', pass: 'env-pass' });
    expect(credentialsOf({}, env)).toEqual({ user: 'env-user', pass: 'env-pass' });
    expect(credentialsOf({}, { NETINTEL_SMTP_USER: '', NETINTEL_SMTP_PASS: '' })).toEqual({ user: undefined, pass: undefined });
    expect(credentialsGiven({}, env)).toBe(true);
    expect(credentialsGiven({ authUser: 'flag-user' }, { NETINTEL_SMTP_PASS: '' })).toBe(false);
  });

  it('--debug, or NETINTEL_DEBUG set to anything but 0 or false (a switch: the flag only turns it on)', () => {
    expect(debugRequested(['--debug'], { NETINTEL_DEBUG: '0' })).toBe(true);
    expect(debugRequested([], { NETINTEL_DEBUG: '1' })).toBe(true);
    expect(debugRequested([], { NETINTEL_DEBUG: 'FALSE' })).toBe(false);
    expect(debugRequested([], { NETINTEL_DEBUG: '' })).toBe(false);
    expect(debugRequested(['--', '--debug'], {})).toBe(false);
  });

  it('NETINTEL_CONFIG names the config file; an empty one counts as unset', () => {
    expect(configFilePath({ NETINTEL_CONFIG: '/etc/netintel.json', XDG_CONFIG_HOME: '/xdg' })).toBe('/etc/netintel.json');
    expect(configFilePath({ NETINTEL_CONFIG: '', XDG_CONFIG_HOME: '/xdg' })).toBe('/xdg/netintel/config.json');
  });
});
