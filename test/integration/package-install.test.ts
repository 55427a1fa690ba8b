/**
 * netintel as a package: `npm pack` of the built tree, `npm install -g` of
 * the tarball into an empty prefix (its dependencies from the npm
 * registry) as the README says, allowing better-sqlite3's install script
 * only, then the installed `netintel ip 8.8.8.8` answers from the data it
 * brought and `netintel keys` opens a key database with the driver that
 * script built. Skipped, loudly, when the npm registry cannot be reached.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../support/cli.js';
import { npmPack } from '../support/npm-pack.js';

const registryUp = spawnSync('npm', ['ping'], { encoding: 'utf8', timeout: 20_000 }).status === 0;
if (!registryUp) console.warn('SKIPPING test/integration/package-install.test.ts: the npm registry cannot be reached (npm ping failed)');

describe.skipIf(!registryUp)('the package', () => {
  const dir = tempDir('netintel-package-');
  afterAll(() => dir.remove());

  it('packs without tests or TypeScript sources, installs globally into an empty prefix, looks up 8.8.8.8 and keeps keys', () => {
    // The tree `npm test` built: packing runs no build of its own.
    const { filename, size, unpackedSize, files } = npmPack(['--pack-destination', dir.path]);
    console.info(`package ${filename}: ${(size / 1e6).toFixed(1)} MB packed, ${(unpackedSize / 1e6).toFixed(1)} MB unpacked, ${files.length} files`);
    const paths = files.map((file) => file.path);
    expect(paths.filter((path) => path.startsWith('test/') || path.startsWith('src/') || /\.ts$/.test(path) && !path.endsWith('.d.ts'))).toEqual([]);
    for (const needed of ['bin/netintel.js', 'dist/bundle/main.cjs', 'dist/src/lib/index.js', 'dist/netintel.d.ts', 'data/build/asn.idx', 'LICENSE', 'README.md']) expect(paths).toContain(needed);

    const prefix = join(dir.path, 'prefix');
    const home = join(dir.path, 'home');
    mkdirSync(home);
    execFileSync('npm', ['install', '-g', '--allow-scripts=better-sqlite3', '--no-audit', '--no-fund', '--prefix', prefix, join(dir.path, filename)], {
      encoding: 'utf8',
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 600_000,
    });
    expect(readdirSync(join(prefix, 'bin'))).toContain('netintel');
    const netintel = (...args: string[]) =>
      spawnSync(join(prefix, 'bin', 'netintel'), args, {
        encoding: 'utf8',
        env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: home, XDG_DATA_HOME: join(home, 'data') },
        timeout: 30_000,
      });
    const run = netintel('ip', '8.8.8.8', '-f', 'json');
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ ip: '8.8.8.8', location: { country_code: 'US' }, network: { asn: 15169 } });

    const created = netintel('keys', 'create', '-f', 'json');
    expect(created.status, created.stderr).toBe(0);
    const listed = netintel('keys', 'list', '-f', 'json');
    expect(listed.status, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ id: (JSON.parse(created.stdout) as { id: string }).id })]);
  }, 660_000);
});
