/**
 * The list of operations (docs/design.md, Operations) names each operation
 * beside the loader of its descriptor: the two names must be one, and a
 * run of one command loads its own descriptor alone.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadOperations, OPERATIONS } from '../../src/operations/operations.js';
import { isolatedEnv, REPO_ROOT } from '../support/cli.js';

const BUILT = existsSync(join(REPO_ROOT, 'dist', 'src', 'app', 'main.js'));

/** The descriptors a run of the built CLI loads, by operation name, in the order of the list. */
function descriptorsLoaded(argv: readonly string[]): string[] {
  const run = spawnSync(process.execPath, [join(REPO_ROOT, 'test', 'support', 'loaded-operations.mjs'), ...argv], {
    env: { PATH: process.env.PATH, ...isolatedEnv() },
    encoding: 'utf8',
    timeout: 30_000,
  });
  const files = JSON.parse(run.stderr.trimEnd().split('\n').at(-1)!) as string[];
  return OPERATIONS.map(({ name }) => name).filter((name) => files.includes(`${name}.js`));
}

describe('OPERATIONS', () => {
  it('names each operation once', () => {
    const names = OPERATIONS.map(({ name }) => name);
    expect(names.length).toBeGreaterThan(0);
    expect(new Set(names).size).toBe(names.length);
  });

  it('loads, for each entry, the descriptor of the entry\'s name', async () => {
    for (const entry of OPERATIONS) expect((await entry.load()).name, entry.name).toBe(entry.name);
  });

  it('loads every descriptor in the list\'s order with loadOperations, each the one its entry loads', async () => {
    const operations = await loadOperations();
    expect(operations.map(({ name }) => name)).toEqual(OPERATIONS.map(({ name }) => name));
    for (const [i, entry] of OPERATIONS.entries()) expect(operations[i]).toBe(await entry.load());
  });
});

describe.skipIf(!BUILT)('a run of the built CLI (npm run build first)', () => {
  it('of one command loads that command\'s descriptor alone', () => {
    expect(descriptorsLoaded(['ip', '8.8.8.8', '-f', 'json'])).toEqual(['ip']);
    expect(descriptorsLoaded(['dns', '--help'])).toEqual(['dns']);
  });

  it('of help, or of a command it does not know, loads every descriptor', () => {
    const all = OPERATIONS.map(({ name }) => name);
    expect(descriptorsLoaded(['--help'])).toEqual(all);
    expect(descriptorsLoaded(['nonesuch'])).toEqual(all);
  });
});
