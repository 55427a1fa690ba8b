/**
 * The net under every bug: an exception nothing caught or a rejection
 * nothing handled ends the built CLI with one `netintel: internal error: ...`
 * line and exit 1, never Node's dump of the bundle; NETINTEL_DEBUG=1 or
 * --debug adds the stack, mapped to the sources where the bundles' maps
 * allow. The fault is planted with `node --require` (NODE_OPTIONS).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnCli, tempDir } from '../support/cli.js';

const scratch = tempDir('netintel-crash-');
afterAll(() => scratch.remove());

function plant(name: string, source: string): string {
  const file = join(scratch.path, `${name}.cjs`);
  writeFileSync(file, source);
  return `--require ${file}`;
}

const THROWS = () => plant('throws', "setImmediate(() => { throw new Error('planted \\u001b]0;x\\u0007 fault'); });");
const REJECTS = () => plant('rejects', "setImmediate(() => { Promise.reject(new TypeError('planted rejection')); });");

describe('a bug nothing caught', () => {
  for (const [kind, planted, message] of [
    ['an uncaught exception', THROWS, 'planted \\x1b]0;x\\x07 fault'],
    ['an unhandled rejection', REJECTS, 'planted rejection'],
  ] as const) {
    for (const argv of [['ip', '8.8.8.8'], ['ip', '8.8.8.8', '-t', '1000'], ['data', 'status', '-q']]) {
      it(`is one line and exit 1 for ${kind}: netintel ${argv.join(' ')}`, async () => {
        const result = await spawnCli(argv, { env: { NODE_OPTIONS: planted() } });
        expect(result.code).toBe(1);
        expect(result.stderr).toBe(
          `netintel: internal error: ${message} (this is a bug in netintel: please report it with the command that caused it; NETINTEL_DEBUG=1 (or --debug) shows the details)\n`,
        );
      });
    }
  }

  it('shows the stack with NETINTEL_DEBUG=1 and with --debug', async () => {
    for (const [argv, env] of [
      [['ip', '8.8.8.8'], { NETINTEL_DEBUG: '1' }],
      [['ip', '8.8.8.8', '--debug'], {}],
    ] as const) {
      const result = await spawnCli([...argv], { env: { ...env, NODE_OPTIONS: THROWS() } });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/^netintel: internal error: planted/);
      expect(result.stderr).toMatch(/\n\s+at /);
    }
  });

  it('maps a failure\'s stack in a debug run to the TypeScript sources', async () => {
    const result = await spawnCli(['ip', '8.8.8.8', '--fields', 'nope'], { env: { NETINTEL_DEBUG: '1' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/src\/output\/record-schema\.ts:\d+:\d+/);
  });

  it('shows no stack without debug, for a usage error of any command', async () => {
    for (const argv of [['ip', '8.8.8.8', '--fields', 'constructor'], ['ip', '8.8.8.8', '-t', '1000', '--fields', '__proto__'], ['dns', 'example.test', '--fields', 'toString']]) {
      const result = await spawnCli(argv);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^netintel: unknown field "[^"]+" for \w+ records \([^\n]*see --help for the field list\)\n$/);
    }
  });
});
