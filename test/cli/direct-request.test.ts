/**
 * The direct path of ip, vpn and asn (src/cli/direct-request.ts): what it
 * takes it must print exactly as the commander CLI prints it, byte for byte
 * and with the same exit code; everything else it must decline, so that the
 * CLI handles it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readDirectRequest } from '../../src/cli/direct-request.js';
import type { CliIo } from '../../src/cli/io.js';
import { runDirectRequest } from '../../src/cli/main-direct.js';
import { isolatedEnv, runCli, runEntry, tempDir, writeConfigFile, type RunOptions } from '../support/cli.js';

const scratch = tempDir();
afterAll(() => scratch.remove());

/** The direct path as bin/load-bundle.js runs it; fails the test when the arguments are declined. */
function directMain(argv: readonly string[], io: CliIo): Promise<number> {
  const request = readDirectRequest(argv, io.env);
  if (request === null) throw new Error(`declined: ${JSON.stringify(argv)}`);
  return runDirectRequest(request, io);
}

const emptyDataDir = join(scratch.path, 'empty-data');
mkdirSync(emptyDataDir);
const configs = {
  xml: writeConfigFile(join(scratch.path, 'xml'), { format: 'xml', quiet: true }),
  csvNoHeader: writeConfigFile(join(scratch.path, 'csv'), { format: 'csv', header: false }),
  fields: writeConfigFile(join(scratch.path, 'fields'), { fields: 'network', 'data-dir': emptyDataDir }),
  otherKeys: writeConfigFile(join(scratch.path, 'other'), { colour: 'never', theme: 1 }),
};

/** Argument lists and settings the direct path takes. */
const TAKEN: Array<[string[], RunOptions?]> = [
  [['ip', '8.8.8.8']],
  [['ip', '8.8.8.8', '-f', 'json']],
  [['ip', '8.8.8.8', '2001:4860:4860::8888', '10.1.2.3', '-f', 'ndjson']],
  [['ip', '1.1.1.1', '-fcsv', '--fields', 'location.city,network.asn']],
  [['ip', '1.1.1.1', '--format=csv', '--no-header']],
  [['ip', '9.9.9.9', '-f', 'xml']],
  [['ip', '256.1.1.1', '-f', 'json']],
  [['ip', '256.1.1.1', '8.8.8.8']],
  [['ip', '1.2.3', 'fe80::1%eth0', '-f', 'ndjson']],
  [['ip', '::ffff:1.2.3.4', '-q']],
  [['ip', '--', '8.8.8.8']],
  [['ip', ' 8.8.8.8 ', '-f', 'json']],
  [['ip', '8.8.8.8', '--fields', 'no.such.field', '-f', 'json']],
  [['ip', '8.8.8.8', '--fields=', '-f', 'csv']],
  [['ip', '8.8.8.8', '--data-dir', emptyDataDir, '-v', '-f', 'json']],
  [['ip', '8.8.8.8', '--data-dir=', '--verbose', '--quiet']],
  [['ip', '8.8.8.8', '-f', 'json', '-f', 'csv']],
  [['ip', '8.8.8.8'], { stdoutIsTty: true }],
  [['ip', '8.8.8.8'], { stdoutIsTty: true, env: { NO_COLOR: '1' } }],
  [['ip', '8.8.8.8'], { env: { NETINTEL_FORMAT: 'csv', NETINTEL_FIELDS: 'location' } }],
  [['ip', '8.8.8.8', '-f', 'json'], { env: { NETINTEL_FORMAT: 'csv', NETINTEL_QUIET: '0', NETINTEL_VERBOSE: 'false' } }],
  [['ip', '8.8.8.8', '1.1.1.1'], { env: { XDG_CONFIG_HOME: configs.xml } }],
  [['ip', '8.8.8.8', '-f', 'csv'], { env: { XDG_CONFIG_HOME: configs.csvNoHeader } }],
  [['ip', '8.8.8.8', '-f', 'ndjson'], { env: { XDG_CONFIG_HOME: configs.fields } }],
  [['ip', '8.8.8.8', '-f', 'json'], { env: { XDG_CONFIG_HOME: configs.otherKeys } }],
  [['vpn', '8.8.8.8', '-f', 'json']],
  [['vpn', '8.8.8.8', '10.0.0.1', '2606:4700:4700::1111']],
  [['vpn', 'bogus:', '-f', 'csv']],
  [['asn', 'AS15169', '-f', 'ndjson']],
  [['asn', '8.8.8.8']],
  [['asn', '8.8.8.8,AS13335,1.1.1.1', '-f', 'csv']],
  [['asn', 'AS0', '-f', 'json']],
  [['asn', 'example.com', 'AS13335']],
];

/** Argument lists and settings the direct path leaves to the CLI. */
const DECLINED: Array<[string[], Record<string, string | undefined>?]> = [
  [['ip']],
  [['ip', '-f', 'json']],
  [['asn']],
  [['dns', 'example.com']],
  [['bulk', '8.8.8.8']],
  [['ip', 'example.com']],
  [['ip', '8.8.8.8', 'example.com']],
  [['vpn', 'localhost', '-f', 'json']],
  [['ip', '8.8.8.8', '--help']],
  [['ip', '-h']],
  [['asn', '-V']],
  [['ip', '8.8.8.8', '-f', 'bogus']],
  [['ip', '8.8.8.8', '-f']],
  [['ip', '8.8.8.8', '--fields', '-x']],
  [['ip', '8.8.8.8', '-qv']],
  [['ip', '8.8.8.8', '-t', '100']],
  [['ip', '8.8.8.8', '--resolver', '192.0.2.53']],
  [['ip', '8.8.8.8', '--server', 'http://127.0.0.1:1']],
  [['ip', '8.8.8.8', '--api-key', 'k']],
  [['ip', '-', '8.8.8.8']],
  [['ip', '8.8.8.8', '--no-such-flag']],
  [['ip', '8.8.8.8'], { NETINTEL_SERVER: 'http://127.0.0.1:1' }],
  [['ip', '8.8.8.8'], { NETINTEL_TIMEOUT: '5' }],
  [['ip', '8.8.8.8'], { NETINTEL_FORMAT: 'bogus' }],
  [['ip', '8.8.8.8'], { XDG_CONFIG_HOME: writeConfigFile(join(scratch.path, 'timeout'), { timeout: 100 }) }],
  [['ip', '8.8.8.8'], { XDG_CONFIG_HOME: writeConfigFile(join(scratch.path, 'broken'), '{ not json') }],
  [['ip', '8.8.8.8'], { XDG_CONFIG_HOME: writeConfigFile(join(scratch.path, 'number'), { format: 5 }) }],
  [['ip', '8.8.8.8'], { XDG_CONFIG_HOME: writeConfigFile(join(scratch.path, 'server'), { server: 'http://127.0.0.1:1' }) }],
];

describe('the direct path of ip, vpn and asn', () => {
  it.each(TAKEN.map(([argv, options]) => [argv.join(' '), argv, options ?? {}] as const))(
    'prints what the CLI prints for `%s`, with the same exit code',
    async (_label, argv, options) => {
      const [direct, cli] = [await runEntry(directMain, argv, options), await runCli(argv, options)];
      expect(direct).toEqual(cli);
      expect(direct.stdout.length + direct.stderr.length).toBeGreaterThan(0);
    },
  );

  it('is compared on failures as well as answers: the corpus exits 0, 2 (usage, invalid input), 3 (not found) and 7 (partial)', async () => {
    const codes = await Promise.all(TAKEN.map(([argv, options]) => runCli(argv, options).then((result) => result.code)));
    expect(new Set(codes)).toEqual(new Set([0, 2, 3, 7]));
  });

  it.each(DECLINED.map(([argv, env]) => [`${argv.join(' ')} ${JSON.stringify(env ?? {})}`, argv, env ?? {}] as const))(
    'declines `%s`',
    (_label, argv, env) => {
      expect(readDirectRequest(argv, isolatedEnv(env))).toBeNull();
    },
  );

  it('reads the config file NETINTEL_CONFIG names, and declines when it cannot be read', () => {
    const path = join(scratch.path, 'named.json');
    writeFileSync(path, JSON.stringify({ format: 'ndjson' }));
    expect(readDirectRequest(['ip', '8.8.8.8'], isolatedEnv({ NETINTEL_CONFIG: path }))?.values.format).toBe('ndjson');
    expect(readDirectRequest(['ip', '8.8.8.8'], isolatedEnv({ NETINTEL_CONFIG: scratch.path }))).toBeNull();
  });
});
