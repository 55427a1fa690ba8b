/**
 * The world atlas is read from the world-atlas package when a map is drawn:
 * loading the map module costs a CLI start-up nothing, and the CLI bundle
 * (CommonJS, built by esbuild as scripts/bundle.mjs does) neither includes
 * the shapes nor fails to find them.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { build } from 'esbuild';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);
const ATLAS = require.resolve('world-atlas/countries-110m.json');
const FINER_ATLAS = require.resolve('world-atlas/countries-50m.json');

describe('loading the world atlas', () => {
  it('happens on the first map drawn, not when the module loads', async () => {
    const { renderWorldMapSvg } = await import('../../src/output/world-map-svg.js');
    expect(require.cache[ATLAS]).toBeUndefined();
    renderWorldMapSvg(new Map([['US', 1], ['EU', 4], ['SG', 0]]));
    expect(require.cache[ATLAS]).toBeDefined();
    // The finer atlas only for a small country with a count.
    expect(require.cache[FINER_ATLAS]).toBeUndefined();
    renderWorldMapSvg(new Map([['SG', 2]]));
    expect(require.cache[FINER_ATLAS]).toBeDefined();
  });
});

describe('the map module in a CommonJS bundle', () => {
  // Inside the repository, so that the bundle finds node_modules as dist/bundle/main.cjs does; git ignores test-artifacts/.
  const dir = join(REPO_ROOT, 'test-artifacts', 'world-map-bundle');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('bundles without the shapes and draws the map from the installed package', async () => {
    mkdirSync(dir, { recursive: true });
    const result = await build({
      absWorkingDir: REPO_ROOT,
      stdin: {
        contents: [
          "import { renderWorldMapSvg } from './src/output/world-map-svg.ts';",
          'const atlas = require.resolve("world-atlas/countries-110m.json");',
          'const loadedBefore = atlas in require.cache;',
          'const { svg, unmapped } = renderWorldMapSvg(new Map([["US", 3], ["SG", 1], ["EU", 2]]));',
          'process.stdout.write(JSON.stringify({ loadedBefore, loadedAfter: atlas in require.cache, bytes: svg.length, unmapped, us: svg.includes("<path data-country=\\"US\\""), sg: svg.includes("<circle data-country=\\"SG\\"") }));',
        ].join('\n'),
        resolveDir: REPO_ROOT,
        loader: 'ts',
        sourcefile: 'map-entry.ts',
      },
      bundle: true,
      format: 'cjs',
      platform: 'node',
      target: 'node20',
      charset: 'ascii',
      write: false,
      logLevel: 'silent',
      // As scripts/bundle.mjs defines it: the URL of the bundle file.
      banner: { js: "const __netintelModule = { get url() { return require('node:url').pathToFileURL(__filename).href; } };" },
      define: { 'import.meta.url': '__netintelModule.url' },
    });
    const code = result.outputFiles[0]!.text;
    // Shapes would show as the atlas's arcs and its country names.
    expect(code).not.toContain('Zimbabwe');
    expect(code).not.toContain('"arcs"');
    expect(code.length).toBeLessThan(200_000);

    const file = join(dir, 'map.cjs');
    writeFileSync(file, code);
    const run = spawnSync(process.execPath, [file], { encoding: 'utf8', timeout: 20_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    const report = JSON.parse(run.stdout) as { loadedBefore: boolean; loadedAfter: boolean; bytes: number; unmapped: string[]; us: boolean; sg: boolean };
    expect(report).toEqual({ loadedBefore: false, loadedAfter: true, bytes: expect.any(Number), unmapped: ['EU'], us: true, sg: true });
    expect(report.bytes).toBeGreaterThan(50_000);
  });
});
