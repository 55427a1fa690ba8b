'use strict';
// Loads dist/bundle/main.cjs, the CLI, like require() would, but through
// vm.Script with the V8 code cache that `npm run build` writes beside it
// (scripts/write-code-cache.cjs), so a start does not compile the bundle
// from source. When the cache is missing or V8 rejects it (another Node
// version), the bundle compiles as usual: the cache only saves time.
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
// The CommonJS loader's Module class, without loading node:module.
const Module = module.constructor;

const BUNDLE = path.join(__dirname, '..', 'dist', 'bundle', 'main.cjs');
const CODE_CACHE = `${BUNDLE}.cache`;

function readCache() {
  try {
    return fs.readFileSync(CODE_CACHE);
  } catch {
    return undefined;
  }
}

/**
 * Runs the bundle as a CommonJS module and returns its exports and the
 * compiled script (the cache writer asks it for the code cache). The bundle
 * holds Node's module wrapper already (scripts/bundle.mjs) and is pure
 * ASCII, read as latin1, which V8 takes as it is.
 */
function loadBundle() {
  const script = new vm.Script(fs.readFileSync(BUNDLE, 'latin1'), { filename: BUNDLE, cachedData: readCache() });
  const mod = new Module(BUNDLE, module);
  mod.filename = BUNDLE;
  mod.paths = Module._nodeModulePaths(path.dirname(BUNDLE));
  script.runInThisContext()(mod.exports, Module.createRequire(BUNDLE), mod, BUNDLE, path.dirname(BUNDLE));
  return { exports: mod.exports, script };
}

/** The CLI: `main(argv, io)` and `createProcessIo()` of src/app/main.ts. */
function loadCli() {
  return loadBundle().exports;
}

module.exports = { loadCli, loadBundle, BUNDLE, CODE_CACHE };
