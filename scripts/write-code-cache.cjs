'use strict';
// Build step after the bundles: runs representative commands through each
// bundle (so V8 compiles the functions a one-off run needs) and writes the
// V8 code cache for bin/load-bundle.js. Output goes nowhere.
//
// Each cache is written by a process of its own: within one process V8
// would hand a later compilation of the same source the functions an
// earlier warm-up compiled, and a cache that holds functions its run never
// calls costs time to deserialise (bin/load-bundle.js, codeCacheVariant).
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const { PassThrough, Readable } = require('node:stream');
const { loadBundle, codeCachePath, BUNDLE, LOOKUP_BUNDLE } = require('../bin/load-bundle.js');

const LOOKUP_COMMANDS = ['ip', 'asn', 'vpn'];

/** [bundle, cache variant, the runs that warm it]. */
const CACHES = [
  ...LOOKUP_COMMANDS.flatMap((command) => [
    [LOOKUP_BUNDLE, `${command}-records`, [[command, '8.8.8.8', '-f', 'json']]],
    [LOOKUP_BUNDLE, `${command}-table`, [[command, '8.8.8.8']]],
  ]),
  [BUNDLE, undefined, [['dns', '--help']]],
];

async function writeCache(bundle, variant, runs) {
  const file = codeCachePath(bundle, variant);
  fs.rmSync(file, { force: true });
  const { exports, script } = loadBundle(bundle, { withScript: true });
  const sink = () => Object.assign(new PassThrough(), { isTTY: false }).resume();
  const io = { stdin: Readable.from([]), stdout: sink(), stderr: sink(), env: {} };
  for (const argv of runs) await exports.main(argv, io);
  fs.writeFileSync(file, script.createCachedData());
}

function main() {
  const [, , bundle, variant, runs] = process.argv;
  if (bundle !== undefined) return writeCache(bundle, variant || undefined, JSON.parse(runs));
  for (const [file, name, warmUp] of CACHES) {
    const child = spawnSync(process.execPath, [__filename, file, name ?? '', JSON.stringify(warmUp)], { stdio: 'inherit' });
    if (child.status !== 0) throw new Error(`the cache ${codeCachePath(file, name)} was not written`);
  }
  // Caches of an earlier layout would only take disk space.
  for (const stale of [`${LOOKUP_BUNDLE}.cache`]) fs.rmSync(stale, { force: true });
  return Promise.resolve();
}

main().catch((error) => {
  // Without the cache the CLI still works; it only starts slower.
  process.stderr.write(`write-code-cache: ${error instanceof Error ? error.message : String(error)}\n`);
});
