'use strict';
// Loads a bundle of dist/bundle/ (main.cjs, or direct.cjs and lookup.cjs for
// the lookup commands, and the vendor chunks those two ask for) like require() would,
// but through vm.Script with a V8 code cache that `npm run build` writes
// beside it (scripts/write-code-cache.cjs). When
// the cache is missing or V8 rejects it (another Node version), the bundle
// compiles as usual: the cache only saves time.
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
// The CommonJS loader's Module class, which require('node:module') would
// return after loading that module (not loaded by Node's start-up: a few
// tenths of a millisecond of a one-off lookup).
const Module = module.constructor;

const BUNDLE_DIR = path.join(__dirname, '..', 'dist', 'bundle');
const BUNDLE = path.join(BUNDLE_DIR, 'main.cjs');
const LOOKUP_BUNDLE = path.join(BUNDLE_DIR, 'lookup.cjs');
const DIRECT_BUNDLE = path.join(BUNDLE_DIR, 'direct.cjs');

/** Every script compiled in this process, by file: the cache writer asks them for their code cache. */
const compiledScripts = new Map();

// The lookup commands have a bundle of their own (src/cli/main-lookup.ts)
// that starts in about half the time of the whole CLI's.
const LOOKUP_COMMANDS = new Set(['ip', 'asn', 'vpn']);

/**
 * The code cache a run of the lookup bundle loads. V8 deserialises every
 * function a cache holds, used or not, so each lookup command has its own,
 * warmed on that command alone, in two kinds: `table` (the default output)
 * and `records` (json, ndjson, csv, xml). The format is read from the
 * arguments and NETINTEL_FORMAT only; when the config file chooses it, the
 * guess can be wrong, which costs time, never correctness.
 */
function codeCacheVariant(argv, env) {
  let format = env.NETINTEL_FORMAT;
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') break;
    if (arg === '-f' || arg === '--format') format = argv[++i];
    else if (arg.startsWith('--format=')) format = arg.slice('--format='.length);
    else if (arg.startsWith('-f') && arg.length > 2 && arg[2] !== '-') format = arg.slice(2);
  }
  return `${argv[0]}-${format === undefined || format === 'table' ? 'table' : 'records'}`;
}

function codeCachePath(filename, variant) {
  return variant === undefined ? `${filename}.cache` : `${filename}.${variant}.cache`;
}

function readCache(file) {
  try {
    return fs.readFileSync(file);
  } catch {
    return undefined;
  }
}

/**
 * Runs the bundle as a CommonJS module and returns its exports (with the
 * compiled script when `withScript`, for the cache writer). The bundle holds
 * Node's module wrapper already (scripts/bundle.mjs) and is pure ASCII, read
 * as latin1: V8 takes that as it is, where a UTF-8 read is decoded and
 * checked first (about 0.8 ms for the lookup bundle). It holds no import()
 * either: vm.Script could not run one without a flag.
 */
function loadBundle(filename = BUNDLE, { cacheVariant, withScript = false } = {}) {
  const script = new vm.Script(fs.readFileSync(filename, 'latin1'), {
    filename,
    cachedData: readCache(codeCachePath(filename, cacheVariant)),
  });
  compiledScripts.set(filename, script);
  const mod = new Module(filename, module);
  mod.filename = filename;
  mod.paths = Module._nodeModulePaths(path.dirname(filename));
  script.runInThisContext()(mod.exports, Module.createRequire(filename), mod, filename, path.dirname(filename));
  return withScript ? { exports: mod.exports, script } : mod.exports;
}

/**
 * A package the lookup bundle keeps in a chunk of its own
 * (dist/bundle/vendor/NAME.cjs, scripts/bundle.mjs says why), with its code
 * cache beside it.
 */
function loadVendorChunk(name) {
  return loadBundle(path.join(BUNDLE_DIR, 'vendor', `${name}.cjs`));
}

/**
 * The CLI for these arguments (after the executable). For ip, asn and vpn,
 * the direct bundle, without commander, when it takes the arguments
 * (src/cli/direct-request.ts: addresses and AS numbers with output options),
 * else the lookup bundle; the whole CLI's for every other command.
 */
function loadCli(argv, env) {
  if (!LOOKUP_COMMANDS.has(argv[0])) return loadBundle(BUNDLE);
  const cacheVariant = codeCacheVariant(argv, env);
  const direct = loadBundle(DIRECT_BUNDLE, { cacheVariant });
  const request = direct.readDirectRequest(argv, env);
  if (request === null) return loadBundle(LOOKUP_BUNDLE, { cacheVariant });
  return { main: (_argv, io) => direct.runDirectRequest(request, io), createProcessIo: direct.createProcessIo };
}

module.exports = { loadCli, loadBundle, loadVendorChunk, compiledScripts, codeCacheVariant, codeCachePath, BUNDLE, LOOKUP_BUNDLE, DIRECT_BUNDLE, LOOKUP_COMMANDS };
