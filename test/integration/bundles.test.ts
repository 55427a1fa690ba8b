import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { Readable, Writable } from 'node:stream';
import type { Script } from 'node:vm';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { LOOKUP_COMMAND_NAMES, LOOKUP_COMMANDS } from '../../src/cli/main-lookup.js';
import { createRuntime } from '../../src/cli/runtime.js';
import { isolatedEnv } from '../support/cli.js';
import { startDnsServer } from '../support/dns-server.js';

const require = createRequire(import.meta.url);
const { loadCli, loadBundle, loadVendorChunk, codeCacheVariant, codeCachePath, BUNDLE, LOOKUP_BUNDLE, DIRECT_BUNDLE, LOOKUP_COMMANDS: ROUTED } = require('../../bin/load-bundle.js') as {
  LOOKUP_COMMANDS: Set<string>;
  loadCli(argv: string[], env: Record<string, string | undefined>): CliBundle;
  loadVendorChunk(name: string): unknown;
  loadBundle(file: string, options: { cacheVariant?: string; withScript: true }): { exports: CliBundle; script: Script };
  loadBundle(file: string, options?: { cacheVariant?: string }): CliBundle;
  codeCacheVariant(argv: string[], env: Record<string, string | undefined>): string;
  codeCachePath(file: string, variant?: string): string;
  BUNDLE: string;
  LOOKUP_BUNDLE: string;
  DIRECT_BUNDLE: string;
};

interface CliBundle {
  main(argv: string[], io: unknown): Promise<number>;
}

class Memory extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

async function run(bundle: CliBundle, argv: string[]) {
  const stdout = new Memory();
  const stderr = new Memory();
  const stdin = Object.assign(Readable.from([]), { isTTY: true });
  const code = await bundle.main(argv, { stdin, stdout, stderr, env: isolatedEnv() });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe('the lookup bundle (bin/netintel.js runs ip, asn and vpn from it)', () => {
  it('is chosen for exactly the commands it registers', () => {
    expect([...ROUTED]).toEqual([...LOOKUP_COMMAND_NAMES]);
    const program = new Command();
    const runtime = createRuntime({ stdin: Readable.from([]), stdout: new Memory(), stderr: new Memory(), env: {} }, () => {
      throw new Error('no command runs here');
    });
    for (const register of LOOKUP_COMMANDS) register(program, runtime);
    expect(program.commands.map((command) => command.name())).toEqual([...LOOKUP_COMMAND_NAMES]);
  });

  it.skipIf(!existsSync(LOOKUP_BUNDLE) || !existsSync(BUNDLE))('prints what the whole CLI prints, byte for byte, with the same exit codes', async () => {
    const lookup = loadBundle(LOOKUP_BUNDLE);
    const whole = loadBundle(BUNDLE);
    const cases = [
      ['ip', '8.8.8.8', '-f', 'json'],
      ['ip', '8.8.8.8', '2001:4860:4860::8888', '10.1.2.3'],
      ['ip', '1.1.1.1', '-f', 'csv', '--fields', 'location.city,network.asn'],
      ['ip', '9.9.9.9', '-f', 'xml'],
      // Alabama spans two zones in the data: the zone comes from tz-lookup.
      ['ip', '172.0.0.1', '-f', 'json'],
      ['ip', '256.1.1.1', '-f', 'json'],
      ['ip', '--bogus'],
      ['ip', '--help'],
      ['asn', 'AS15169', '-f', 'ndjson'],
      ['asn', '8.8.8.8'],
      ['vpn', '8.8.8.8', '-f', 'json'],
    ];
    for (const argv of cases) {
      const [fromLookup, fromWhole] = [await run(lookup, argv), await run(whole, argv)];
      expect({ argv, ...fromLookup }).toEqual({ argv, ...fromWhole });
      expect(fromLookup.stdout.length + fromLookup.stderr.length).toBeGreaterThan(0);
    }
  });
});

describe('the direct bundle (bin/netintel.js runs ip, asn and vpn of addresses and AS numbers from it)', () => {
  const built = existsSync(DIRECT_BUNDLE) && existsSync(LOOKUP_BUNDLE) && existsSync(BUNDLE);
  const sources = () => (JSON.parse(readFileSync(`${DIRECT_BUNDLE}.map`, 'utf8')) as { sources: string[] }).sources;

  it.skipIf(!built)('holds neither commander, nor the commander layer of the CLI, nor the DNS engine, nor tz-lookup', () => {
    expect(
      sources().filter((source) => /node_modules\/commander\/|src\/cli\/(program|global-options)\.ts$|src\/engine\/dns\/dns-(transport|wire|message)\.ts$|tz-lookup\/tz\.js$/.test(source)),
    ).toEqual([]);
    expect(sources().some((source) => source.endsWith('src/cli/direct-request.ts'))).toBe(true);
  });

  it.skipIf(!built)('is what bin/load-bundle.js runs for the arguments it takes, and prints what the whole CLI prints', async () => {
    const whole = loadBundle(BUNDLE);
    const env = isolatedEnv();
    for (const argv of [['ip', '8.8.8.8', '-f', 'json'], ['ip', '8.8.8.8', '2001:4860:4860::8888', '10.1.2.3'], ['vpn', '8.8.8.8', '-f', 'csv'], ['asn', 'AS13335', '-f', 'xml']]) {
      const cli = loadCli(argv, env);
      expect('LOOKUP_COMMAND_NAMES' in cli, argv.join(' ')).toBe(false);
      expect(await run(cli, argv)).toEqual(await run(whole, argv));
    }
  });

  it.skipIf(!built)('hands the arguments it declines to the lookup bundle', () => {
    for (const argv of [['ip', 'example.com'], ['ip', '--help'], ['vpn'], ['asn', 'AS1', '--server', 'http://127.0.0.1:1']]) {
      expect('LOOKUP_COMMAND_NAMES' in loadCli(argv, isolatedEnv()), argv.join(' ')).toBe(true);
    }
  });
});

describe('code caches (bin/load-bundle.js)', () => {
  it('are chosen by lookup command and by table or record output, from the arguments and NETINTEL_FORMAT', () => {
    expect(codeCacheVariant(['ip', '8.8.8.8'], {})).toBe('ip-table');
    expect(codeCacheVariant(['ip', '8.8.8.8', '-f', 'json'], {})).toBe('ip-records');
    expect(codeCacheVariant(['vpn', '-fcsv', '1.1.1.1'], {})).toBe('vpn-records');
    expect(codeCacheVariant(['asn', '--format=xml', 'AS1'], {})).toBe('asn-records');
    expect(codeCacheVariant(['asn', '--format', 'table', 'AS1'], { NETINTEL_FORMAT: 'json' })).toBe('asn-table');
    expect(codeCacheVariant(['ip', '1.1.1.1'], { NETINTEL_FORMAT: 'ndjson' })).toBe('ip-records');
    // After "--" a "-f" is a target, not a flag.
    expect(codeCacheVariant(['ip', '--', '-f', 'json'], {})).toBe('ip-table');
  });

  const variants = ['ip', 'asn', 'vpn'].flatMap((command) => [`${command}-table`, `${command}-records`]);
  it.skipIf(!existsSync(LOOKUP_BUNDLE) || !existsSync(DIRECT_BUNDLE) || !existsSync(BUNDLE))('exist for every variant, and this Node accepts each of them', () => {
    const caches: [string, string | undefined][] = [
      [BUNDLE, undefined],
      ...[LOOKUP_BUNDLE, DIRECT_BUNDLE].flatMap((bundle) => variants.map((variant): [string, string] => [bundle, variant])),
    ];
    for (const [bundle, variant] of caches) {
      expect(existsSync(codeCachePath(bundle, variant)), codeCachePath(bundle, variant)).toBe(true);
      const { script } = loadBundle(bundle, { cacheVariant: variant, withScript: true });
      expect(script.cachedDataRejected, codeCachePath(bundle, variant)).toBe(false);
    }
  });
});

describe('vendor chunks of the lookup bundle (scripts/bundle.mjs)', () => {
  const built = existsSync(LOOKUP_BUNDLE) && existsSync(BUNDLE);
  const chunkNames = () => [...readFileSync(LOOKUP_BUNDLE, 'latin1').matchAll(/loadVendorChunk\("([^"]+)"\)/g)].map((match) => match[1]!);

  it.skipIf(!built)('are the packages the lookup bundle leaves out, each a chunk that loads and exports what netintel uses', () => {
    expect(chunkNames().sort()).toEqual(['cli-table3', 'csv-stringify', 'dns-packet', 'fast-xml-builder', 'tz-lookup']);
    const lookupSource = readFileSync(LOOKUP_BUNDLE, 'latin1');
    for (const pkg of ['node_modules/cli-table3/', 'node_modules/dns-packet/', 'node_modules/fast-xml-builder/', 'node_modules/csv-stringify/']) {
      expect(lookupSource.includes(pkg), pkg).toBe(false);
    }
    // The sources are in the map; tz-lookup's world map is one long string.
    expect(lookupSource.includes('Europe/Mariehamn')).toBe(false);
    expect((loadVendorChunk('tz-lookup') as (latitude: number, longitude: number) => string)(48.2, 16.37)).toBe('Europe/Vienna');
    expect(typeof loadVendorChunk('cli-table3')).toBe('function');
    expect(typeof (loadVendorChunk('dns-packet') as { encode: unknown }).encode).toBe('function');
    expect(typeof (loadVendorChunk('fast-xml-builder') as { XMLBuilder: unknown }).XMLBuilder).toBe('function');
    expect(typeof (loadVendorChunk('csv-stringify') as { stringify: unknown }).stringify).toBe('function');
  });

  it.skipIf(!built)('have code caches from the build for the table, XML, CSV and time-zone chunks', () => {
    for (const name of ['cli-table3', 'fast-xml-builder', 'csv-stringify', 'tz-lookup']) {
      const file = join(dirname(LOOKUP_BUNDLE), 'vendor', `${name}.cjs`);
      expect(existsSync(codeCachePath(file)), name).toBe(true);
    }
  });

  it.skipIf(!built)('resolve host names (dns-packet) in the lookup bundle as the whole CLI does', async () => {
    const server = await startDnsServer({
      records: [
        { name: 'dual.test', type: 'A', data: '8.8.8.8' },
        { name: 'dual.test', type: 'AAAA', data: '2001:4860:4860::8888' },
      ],
    });
    try {
      const argv = ['ip', 'dual.test', '--resolver', server.address, '--retries', '0', '-t', '2000', '-f', 'ndjson'];
      const [fromLookup, fromWhole] = [await run(loadBundle(LOOKUP_BUNDLE), argv), await run(loadBundle(BUNDLE), argv)];
      expect(fromLookup).toEqual(fromWhole);
      expect(fromLookup.stdout.trim().split('\n').map((line) => JSON.parse(line).ip)).toEqual(['8.8.8.8', '2001:4860:4860::8888']);
    } finally {
      await server.close();
    }
  });
});
