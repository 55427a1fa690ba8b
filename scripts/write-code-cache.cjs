'use strict';
// Build step after the bundles: runs the common commands through
// dist/bundle/main.cjs (so V8 compiles the functions a one-off run needs)
// and writes the V8 code cache bin/load-bundle.js loads under this Node's
// V8. The runs write to the process's own stdout and stderr, pipes as in a
// scripted run (the code that writes to them is in the cache too), in a
// child process whose output the parent drains and drops.
//
// dist/bundle/mail.cjs gets its cache after every library in it is
// initialised: a mail command (headers, dkim) looks up DNS, which a build
// must not, and a cache of the bundle's top level alone left `headers`
// compiling its libraries from source at each run (about 50 ms, bench/).
//
// The lookups run against a data dir holding a small security index, as
// after `netintel data update`: a function the warm-up never ran is
// compiled from source at every start that needs it.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Readable } = require('node:stream');
const { compileBundle, MAIN, MAIL } = require('../bin/load-bundle.js');

/** The warm-up runs: the one-off lookups in the default and a record format, and the help every command shares. */
const RUNS = [
  ...['ip', 'asn', 'vpn'].flatMap((command) => [
    [command, '8.8.8.8', '2001:4860:4860::8888', '-f', 'json', '--data-dir', 'DATA_DIR'],
    [command, '8.8.8.8', '--data-dir', 'DATA_DIR'],
  ]),
  ['dns', '--help'],
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

async function warmUpAndWrite(dataDir) {
  const { exports, script } = compileBundle(undefined);
  const io = { ...exports.createProcessIo(), stdin: Readable.from([]), env: {} };
  for (const argv of RUNS) await exports.main(argv.map((arg) => (arg === 'DATA_DIR' ? dataDir : arg)), io);
  fs.writeFileSync(MAIN.codeCache, script.createCachedData());
  const mail = compileBundle(undefined, MAIL);
  for (const initialise of Object.values(mail.exports)) initialise();
  fs.writeFileSync(MAIL.codeCache, mail.script.createCachedData());
}

async function main() {
  const [, , dataDirArgument] = process.argv;
  if (dataDirArgument !== undefined) return warmUpAndWrite(dataDirArgument);
  // A cache of an earlier build would be handed to the warm-up's compilation.
  for (const bundle of [MAIN, MAIL]) fs.rmSync(bundle.codeCache, { force: true });
  const dataDir = await writeWarmUpDataDir();
  try {
    const child = spawnSync(process.execPath, [__filename, dataDir], { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
    if (child.status !== 0) process.stderr.write(child.stderr);
    if (child.status !== 0) throw new Error('the code cache was not written');
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  // Without the cache the CLI still works; it only starts slower.
  process.stderr.write(`write-code-cache: ${error instanceof Error ? error.message : String(error)}\n`);
});
