import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Readable, Writable } from 'node:stream';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { LOOKUP_COMMAND_NAMES, LOOKUP_COMMANDS } from '../../src/cli/main-lookup.js';
import { createRuntime } from '../../src/cli/runtime.js';
import { BIN, isolatedEnv } from '../support/cli.js';

const require = createRequire(import.meta.url);
const { loadBundle, BUNDLE, LOOKUP_BUNDLE } = require('../../bin/load-bundle.js') as {
  loadBundle(file: string): { main(argv: string[], io: unknown): Promise<number> };
  BUNDLE: string;
  LOOKUP_BUNDLE: string;
};

class Memory extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString('utf8');
    done();
  }
}

async function run(bundle: { main(argv: string[], io: unknown): Promise<number> }, argv: string[]) {
  const stdout = new Memory();
  const stderr = new Memory();
  const stdin = Object.assign(Readable.from([]), { isTTY: true });
  const code = await bundle.main(argv, { stdin, stdout, stderr, env: isolatedEnv() });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe('the lookup bundle (bin/netintel.js runs ip, asn and vpn from it)', () => {
  it('is chosen for exactly the commands it registers', () => {
    const routed = /const LOOKUP_COMMANDS = new Set\(\[([^\]]*)\]\)/.exec(readFileSync(BIN, 'utf8'))?.[1];
    expect(routed?.split(',').map((name) => name.trim().replace(/'/g, ''))).toEqual([...LOOKUP_COMMAND_NAMES]);
    const program = new Command();
    const runtime = createRuntime({ stdin: Readable.from([]), stdout: new Memory(), stderr: new Memory(), env: {} });
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
