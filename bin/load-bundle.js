'use strict';
// Loads a bundle of dist/bundle/ (main.cjs, or lookup.cjs for the lookup
// commands) like require() would, but through vm.Script with the V8 code
// cache that `npm run build` writes beside it (main.cjs.cache). When the cache is missing or V8 rejects it (another
// Node version), the bundle compiles as usual: the cache only saves time.
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
// The CommonJS loader's Module class, which require('node:module') would
// return after loading that module (not loaded by Node's start-up: a few
// tenths of a millisecond of a one-off lookup).
const Module = module.constructor;

const BUNDLE = path.join(__dirname, '..', 'dist', 'bundle', 'main.cjs');
const LOOKUP_BUNDLE = path.join(__dirname, '..', 'dist', 'bundle', 'lookup.cjs');

function compile(filename, cachedData) {
  const source = fs.readFileSync(filename, 'utf8');
  // The bundle holds no import() (scripts/bundle.mjs turns every dynamic
  // import into a require): vm.Script could not load one without a flag.
  return new vm.Script(Module.wrap(source), { filename, cachedData });
}

function readCache(filename) {
  try {
    return fs.readFileSync(`${filename}.cache`);
  } catch {
    return undefined;
  }
}

/** Runs the bundle as a CommonJS module and returns its exports; `script` is returned too for the cache writer. */
function loadBundle(filename = BUNDLE, withScript = false) {
  const script = compile(filename, readCache(filename));
  const mod = new Module(filename, module);
  mod.filename = filename;
  mod.paths = Module._nodeModulePaths(path.dirname(filename));
  script.runInThisContext()(mod.exports, Module.createRequire(filename), mod, filename, path.dirname(filename));
  return withScript ? { exports: mod.exports, script } : mod.exports;
}

module.exports = { loadBundle, BUNDLE, LOOKUP_BUNDLE };
