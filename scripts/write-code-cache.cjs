'use strict';
// Build step after the bundles: runs representative commands through each
// bundle (so V8 compiles the functions a one-off run needs) and writes the
// V8 code cache for bin/load-bundle.js. Output goes nowhere.
//
// Each cache is written by a process of its own: within one process V8
// would hand a later compilation of the same source the functions an
// earlier warm-up compiled, and a cache that holds functions its run never
// calls costs time to deserialise (bin/load-bundle.js, codeCacheVariant).
//
// The lookups run against a data dir holding a small security index, as
// after `netintel data update`: a function the warm-up never ran is
// compiled from source at every start that needs it, and reading the index
// is most of what a one-off `vpn` does once feeds are installed.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { PassThrough, Readable } = require('node:stream');
const { loadBundle, codeCachePath, BUNDLE, LOOKUP_BUNDLE } = require('../bin/load-bundle.js');

const LOOKUP_COMMANDS = ['ip', 'asn', 'vpn'];

/** [bundle, cache variant, the runs that warm it]; DATA_DIR is replaced by the warm-up data dir. */
const CACHES = [
  ...LOOKUP_COMMANDS.flatMap((command) => [
    [LOOKUP_BUNDLE, `${command}-records`, [[command, '8.8.8.8', '-f', 'json', '--data-dir', 'DATA_DIR']]],
    [LOOKUP_BUNDLE, `${command}-table`, [[command, '8.8.8.8', '--data-dir', 'DATA_DIR']]],
  ]),
  [BUNDLE, undefined, [['dns', '--help']]],
];

/** A data dir whose security.idx holds a few ranges (none of them holding 8.8.8.8), compiled by the built engine. */
async function writeWarmUpDataDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'netintel-code-cache-'));
  const { compileSignalIndex } = await import('../dist/src/engine/security/compile-signal-index.js');
  const { parseFeed } = await import('../dist/src/engine/security/feed-formats.js');
  const source = (name, signal, text) => ({
    meta: { name, signal, provider: null, updated: '2026-01-01T00:00:00Z', version: null, licence: null, attribution: null },
    entries: parseFeed('cidr-list', text, name).entries,
  });
  const sources = [source('tor-exit', 'tor_exit_list', '198.51.100.7\n'), source('datacenter-ipv4', 'datacenter_range', '1.2.3.0/24\n2001:db8::/32\n')];
  fs.writeFileSync(path.join(dir, 'security.idx'), compileSignalIndex(sources, new Date('2026-01-01T00:00:00Z')).bytes);
  return dir;
}

async function writeCache(bundle, variant, runs) {
  const file = codeCachePath(bundle, variant);
  fs.rmSync(file, { force: true });
  const { exports, script } = loadBundle(bundle, { withScript: true });
  const sink = () => Object.assign(new PassThrough(), { isTTY: false }).resume();
  const io = { stdin: Readable.from([]), stdout: sink(), stderr: sink(), env: {} };
  for (const argv of runs) await exports.main(argv, io);
  fs.writeFileSync(file, script.createCachedData());
}

async function main() {
  const [, , bundle, variant, runs] = process.argv;
  if (bundle !== undefined) return writeCache(bundle, variant || undefined, JSON.parse(runs));
  const dataDir = await writeWarmUpDataDir();
  try {
    for (const [file, name, warmUp] of CACHES) {
      const argvs = warmUp.map((argv) => argv.map((arg) => (arg === 'DATA_DIR' ? dataDir : arg)));
      const child = spawnSync(process.execPath, [__filename, file, name ?? '', JSON.stringify(argvs)], { stdio: 'inherit' });
      if (child.status !== 0) throw new Error(`the cache ${codeCachePath(file, name)} was not written`);
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  // Caches of an earlier layout would only take disk space.
  fs.rmSync(`${LOOKUP_BUNDLE}.cache`, { force: true });
}

main().catch((error) => {
  // Without the cache the CLI still works; it only starts slower.
  process.stderr.write(`write-code-cache: ${error instanceof Error ? error.message : String(error)}\n`);
});
