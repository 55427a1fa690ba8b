'use strict';
// Loads dist/bundle/main.cjs, the CLI, like require() would, but through
// vm.Script with a V8 code cache, so a start does not compile the bundle
// from source; and dist/bundle/mail.cjs, the mail libraries, the same way
// when the CLI first asks for one of them (scripts/bundle.mjs).
//
// V8 accepts a code cache only from its own version. `npm run build` writes
// one for the Node that ran it, beside each bundle and named by its V8
// version (scripts/write-code-cache.cjs). Under another Node (a package
// built elsewhere, Node upgraded after the install) the first run compiles
// from source and leaves a cache for that version in the user's cache
// directory ($XDG_CACHE_HOME/netintel, else ~/.cache/netintel), which the
// runs after it load: what v8-compile-cache and Node 22's
// module.enableCompileCache() do for code loaded through require(), which
// these bundles are not. A cache V8 still rejects (other V8 flags) or one that
// cannot be read or written only costs the time it would have saved.
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
// The CommonJS loader's Module class, without loading node:module.
const Module = module.constructor;

/** A bundle's files: its text, the build's code cache for the V8 of this Node, and its SHA-256 (a user's cache belongs to one build). */
function bundleFiles(name) {
  const file = path.join(__dirname, '..', 'dist', 'bundle', `${name}.cjs`);
  return { name, file, codeCache: `${file}.v8-${process.versions.v8}.cache`, id: `${file}.sha256` };
}
const MAIN = bundleFiles('main');
const MAIL = bundleFiles('mail');
const BUNDLE = MAIN.file;
const CODE_CACHE = MAIN.codeCache;

function readIfPresent(file, encoding) {
  try {
    return fs.readFileSync(file, encoding);
  } catch {
    return undefined;
  }
}

/**
 * Compiles the bundle (the cache, when given, spares compiling what it
 * holds) and runs it as a CommonJS module. The bundle holds Node's module
 * wrapper already (scripts/bundle.mjs) and is pure ASCII, read as latin1,
 * which V8 takes as it is.
 */
function compileBundle(cachedData, bundle = MAIN) {
  const { file } = bundle;
  const script = new vm.Script(fs.readFileSync(file, 'latin1'), { filename: file, cachedData });
  const mod = new Module(file, module);
  mod.filename = file;
  mod.paths = Module._nodeModulePaths(path.dirname(file));
  script.runInThisContext()(mod.exports, Module.createRequire(file), mod, file, path.dirname(file));
  return { exports: mod.exports, script };
}

/** Where this user's cache of this build of the bundle for this V8 is kept, or null when there is no such place. */
function userCodeCache(env, bundle) {
  const id = readIfPresent(bundle.id, 'latin1')?.trim();
  // The XDG base directory spec ignores a relative XDG_CACHE_HOME.
  const base = env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : env.HOME ? path.join(env.HOME, '.cache') : undefined;
  if (!id || !/^[0-9a-f]{64}$/.test(id) || base === undefined) return null;
  return { dir: path.join(base, 'netintel'), prefix: `${bundle.name}-`, name: `${bundle.name}-${id.slice(0, 16)}-v8-${process.versions.v8}.cache` };
}

/**
 * Writes the script's code cache to `where` when the process exits, so that
 * it holds what this run compiled. Written to a temporary name and renamed:
 * a concurrent run reads the old file or the new one, never half of one.
 * Caches of other builds for this V8 go (an upgrade replaces its
 * predecessor's); those of other V8 versions stay, for a user who switches.
 */
function writeAtExit(script, where) {
  process.once('exit', () => {
    try {
      fs.mkdirSync(where.dir, { recursive: true });
      const file = path.join(where.dir, where.name);
      const temporary = `${file}.${process.pid}.tmp`;
      // Opened before the cache is made: a directory that cannot take it costs no serialisation.
      const fd = fs.openSync(temporary, 'w');
      let written = false;
      try {
        fs.writeFileSync(fd, script.createCachedData());
        written = true;
      } finally {
        fs.closeSync(fd);
        // A full disk leaves no partial file behind.
        if (!written) fs.rmSync(temporary, { force: true });
      }
      fs.renameSync(temporary, file);
      const suffix = `-v8-${process.versions.v8}.cache`;
      for (const name of fs.readdirSync(where.dir)) {
        if (name !== where.name && name.startsWith(where.prefix) && name.endsWith(suffix)) fs.rmSync(path.join(where.dir, name), { force: true });
      }
    } catch {
      // A read-only or full cache directory: the next run compiles from source again.
    }
  });
}

/**
 * The bundle (main.cjs unless named) with the best code cache there is (see
 * above): the build's, else the user's, else none, and then the user's is
 * written at exit. Returns its exports and the compiled script.
 */
function loadBundle(env = process.env, bundle = MAIN) {
  const built = readIfPresent(bundle.codeCache);
  if (built !== undefined) return compileBundle(built, bundle);
  const where = userCodeCache(env, bundle);
  const own = where === null ? undefined : readIfPresent(path.join(where.dir, where.name));
  const loaded = compileBundle(own, bundle);
  if (where !== null && (own === undefined || loaded.script.cachedDataRejected)) writeAtExit(loaded.script, where);
  return loaded;
}

/** The CLI: `main(argv, io)` and `createProcessIo()` of src/app/main.ts. */
function loadCli() {
  return loadBundle().exports;
}

/** mail.cjs, once a mail library was asked for. */
let mail = null;

/** A mail library by the specifier main.cjs imports it with: mail.cjs is loaded on the first. */
function mailLibrary(specifier) {
  mail ??= loadBundle(process.env, MAIL);
  return mail.exports[specifier]();
}

/** mail.cjs's exports and script when this process loaded it, else null. */
function loadedMailBundle() {
  return mail;
}

module.exports = { loadCli, loadBundle, compileBundle, mailLibrary, loadedMailBundle, BUNDLE, CODE_CACHE, MAIN, MAIL };
