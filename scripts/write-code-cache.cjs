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
const { Readable } = require('node:stream');
const { loadBundle, loadVendorChunk, compiledScripts, codeCachePath, BUNDLE, LOOKUP_BUNDLE, DIRECT_BUNDLE, LOOKUP_COMMANDS } = require('../bin/load-bundle.js');

/**
 * What each warm-up process runs and writes: the bundle's cache (`variant`
 * as bin/load-bundle.js names it; none for the whole CLI's single cache),
 * or only the caches of the vendor chunks its runs loaded (`bundleCache:
 * false`: the XML and CSV chunks). Every process writes the caches of the
 * vendor chunks it loaded (the table's, from the table runs). DATA_DIR is
 * replaced by the warm-up data dir. A `chunk` job loads that vendor chunk
 * alone, calls its export with `call`, and writes its cache.
 */
const JOBS = [
  // An IPv4 and an IPv6 address: the IPv6 path (its text reader, the IPv6 tree walks) is a few
  // kilobytes of cache, and compiling it at the start of an IPv6 lookup costs more than that.
  // The direct bundle runs such arguments; the lookup bundle the rest (host names, lists on stdin).
  ...[DIRECT_BUNDLE, LOOKUP_BUNDLE].flatMap((bundle) =>
    [...LOOKUP_COMMANDS].flatMap((command) => [
      { bundle, variant: `${command}-records`, runs: [[command, '8.8.8.8', '2001:4860:4860::8888', '-f', 'json', '--data-dir', 'DATA_DIR']] },
      { bundle, variant: `${command}-table`, runs: [[command, '8.8.8.8', '2001:4860:4860::8888', '--data-dir', 'DATA_DIR']] },
    ]),
  ),
  { bundle: BUNDLE, runs: [['dns', '--help']] },
  {
    bundle: LOOKUP_BUNDLE,
    bundleCache: false,
    runs: [['ip', '8.8.8.8', '-f', 'xml', '--data-dir', 'DATA_DIR'], ['ip', '8.8.8.8', '-f', 'csv', '--data-dir', 'DATA_DIR']],
  },
  // tz-lookup's chunk, which a lookup loads only for a city database other than
  // the one data/build/zones.idx was built from: called once, at a point.
  { chunk: 'tz-lookup', call: [37.39, -122.08] },
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

async function runJob({ bundle, variant, bundleCache = true, runs, chunk, call }) {
  if (chunk !== undefined) {
    loadVendorChunk(chunk)(...call);
  } else {
    const { exports, script } = loadBundle(bundle, { withScript: true });
    // The process's own stdout and stderr (pipes the parent drains), as a run's are: the
    // code that writes to them is in the cache too.
    const io = { ...exports.createProcessIo(), stdin: Readable.from([]), env: {} };
    for (const argv of runs) await exports.main(argv, io);
    if (bundleCache) fs.writeFileSync(codeCachePath(bundle, variant), script.createCachedData());
  }
  for (const [file, compiled] of compiledScripts) {
    if (file !== bundle) fs.writeFileSync(codeCachePath(file), compiled.createCachedData());
  }
}

async function main() {
  const [, , job] = process.argv;
  if (job !== undefined) return runJob(JSON.parse(job));
  const dataDir = await writeWarmUpDataDir();
  try {
    for (const job of JOBS) {
      if (job.bundle !== undefined && job.bundleCache !== false) fs.rmSync(codeCachePath(job.bundle, job.variant), { force: true });
      const runs = job.runs?.map((argv) => argv.map((arg) => (arg === 'DATA_DIR' ? dataDir : arg)));
      const child = spawnSync(process.execPath, [__filename, JSON.stringify({ ...job, runs })], { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
      if (child.status !== 0) process.stderr.write(child.stderr);
      if (child.status !== 0) throw new Error(`the code caches of ${JSON.stringify(job.runs ?? job.chunk)} were not written`);
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
