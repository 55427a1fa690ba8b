/**
 * flag > environment (NETINTEL_*) > config file > default, for every option
 * that has a variable or a config key:
 *
 * - read in-process off the options a command receives (src/app/program.ts);
 * - the built CLI as a process, for options whose effect shows (the format,
 *   the resolver that answered).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { runProgram, type CommandRegistration } from '../../src/app/program.js';
import { SETTINGS, type GlobalOptions } from '../../src/cli/global-options.js';
import { defaultDataDir } from '../../src/engine/data/data-files.js';
import { isolatedEnv, runEntry, spawnCli, tempDir, writeConfigFile } from '../support/cli.js';
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
