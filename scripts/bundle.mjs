// Bundles the CLI into CommonJS files: dist/bundle/main.cjs (every command),
// dist/bundle/lookup.cjs (ip, asn and vpn only; bin/netintel.js picks
// it for those commands, so a one-off lookup loads a third of the code) and
// dist/bundle/bulk-worker.cjs (the worker thread of long bulk runs). A Node start
// pays for every module file it resolves, reads and compiles, and an ESM
// import of a builtin (node:fs) loads all of its lazy parts; one CommonJS
// file whose modules initialise on first use keeps `netintel ip 8.8.8.8`
// close to the cost of starting Node itself (see bench/). Type checking
// stays with tsc.
import { build } from 'esbuild';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * chalk detects colour support when it loads, through node:tty, which
 * brings node:net and the stream modules with it (about 7 ms of a one-off
 * lookup). netintel decides colour itself (a terminal, NO_COLOR, TERM=dumb;
 * src/cli/global-options.ts) and always gives chalk the level, so the
 * bundle gets a detector that detects nothing.
 */
const chalkWithoutDetection = {
  name: 'chalk-without-detection',
  setup(b) {
    b.onResolve({ filter: /^#supports-color$/ }, (args) =>
      args.importer.includes('node_modules/chalk/') ? { path: 'supports-color', namespace: 'no-detection' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'no-detection' }, () => ({
      contents: 'export default { stdout: false, stderr: false };',
      loader: 'js',
    }));
  },
};

/**
 * Built-in modules that Node's start-up does not load, imported where a
 * one-off lookup never uses them, by importer: commander loads
 * node:child_process for executable subcommands, which netintel does not
 * use (about 10 ms); netintel's own modules use node:module and node:os
 * only in fallbacks (a hoisted install, no $HOME), a few tenths of a
 * millisecond each. Those imports get a stand-in, an ES module whose
 * functions load the real module on first call: esbuild binds an import to
 * the function itself, so the stand-in costs nothing until then. Only
 * functions are stood in for; importing anything else from these modules
 * fails the build ("No matching export"), which is the cue to widen this.
 */
const LAZY_BUILTINS = [
  { module: 'node:child_process', importers: join(root, 'node_modules', 'commander') },
  { module: 'node:module', importers: join(root, 'src') },
  { module: 'node:os', importers: join(root, 'src') },
];
const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(b) {
    b.onResolve({ filter: /^(node:)?(child_process|module|os)$/ }, (args) => {
      const module = args.path.startsWith('node:') ? args.path : `node:${args.path}`;
      const lazy = LAZY_BUILTINS.some((entry) => entry.module === module && args.importer.startsWith(entry.importers));
      return lazy ? { path: module, namespace: 'lazy-builtin' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, async (args) => {
      const real = await import(args.path);
      const functions = Object.keys(real).filter((name) => name !== 'default' && /^[A-Za-z_$][\w$]*$/.test(name) && typeof real[name] === 'function');
      const stand = (name) =>
        `export function ${name}(...args) { const real = load().${name}; return new.target ? Reflect.construct(real, args, new.target) : real.apply(this, args); }`;
      return {
        contents: [`let real; const load = () => (real ??= require(${JSON.stringify(args.path)}));`, ...functions.map(stand)].join('\n'),
        loader: 'js',
      };
    });
  },
};

/** commander takes `process` from node:process, the object every module already has. */
const processGlobal = {
  name: 'process-global',
  setup(b) {
    b.onResolve({ filter: /^(node:)?process$/ }, () => ({ path: 'node:process', namespace: 'process-global' }));
    b.onLoad({ filter: /.*/, namespace: 'process-global' }, () => ({ contents: 'module.exports = process;', loader: 'js' }));
  },
};

/** cli-table3's string-width: scripts/bundle/string-width.cjs says why. */
const fastStringWidth = {
  name: 'fast-string-width',
  setup(b) {
    b.onResolve({ filter: /^string-width$/ }, (args) =>
      args.importer.includes('node_modules/cli-table3/') ? { path: fileURLToPath(new URL('bundle/string-width.cjs', import.meta.url)) } : undefined,
    );
  },
};

// Data packages are read from disk at run time, never bundled. The server's
// packages (better-sqlite3 is native) load from node_modules, and only for
// serve, keys and remote runs: they would make every start-up pay for them.
const EXTERNAL = ['@ip-location-db/*', 'fastify', 'better-sqlite3', 'ioredis'];

function isExternal(path) {
  return (
    path.startsWith('node:') ||
    EXTERNAL.some((pattern) => (pattern.endsWith('/*') ? path.startsWith(pattern.slice(0, -1)) : path === pattern || path.startsWith(`${pattern}/`)))
  );
}

/**
 * esbuild keeps `import('node:fs')` (an external) as a real dynamic import,
 * which a bundle run through vm.Script (bin/load-bundle.js) cannot perform.
 * Route dynamic imports of externals to a module that requires them.
 */
const dynamicImportAsRequire = {
  name: 'dynamic-import-as-require',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) =>
      args.kind === 'dynamic-import' && isExternal(args.path) ? { path: args.path, namespace: 'required' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'required' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/**
 * bin/load-bundle.js compiles main.cjs, lookup.cjs and the vendor chunks with vm.Script, which
 * needs the CommonJS function wrapper around the source. Written into the
 * file, it spares every start a concatenation that V8 then flattens: a
 * second copy of half a megabyte of source (about 0.4 ms of a one-off
 * lookup). The wrapper is Node's own (Module.wrap), so line 1 reads as it
 * did when Node added it at run time.
 */
const WRAPPER_HEAD = '(function (exports, require, module, __filename, __dirname) { ';
const WRAPPER_TAIL = '\n});';
const IMPORT_META_URL = "const __netintelModule = { get url() { return require('node:url').pathToFileURL(__filename).href; } };";

const common = {
  absWorkingDir: root,
  outdir: 'dist/bundle',
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  // A .map file beside each bundle, named by its last line: stack traces of
  // a debug run (NETINTEL_DEBUG=1, --debug; bin/debug-stack.js) name the sources.
  sourcemap: 'linked',
  // Without comments and indentation the bundle is a third smaller and pure
  // ASCII (esbuild escapes any other character): less to read and decode at
  // every start, and bin/load-bundle.js can read it as latin1. Names stay
  // (except in the start-up bundles, STARTUP_NAMES), so a stack trace still
  // reads (and the source map maps it back).
  minifyWhitespace: true,
  minifySyntax: true,
  charset: 'ascii',
  legalComments: 'none',
  external: EXTERNAL,
  // import.meta.dirname finds the package's data; both get their CommonJS
  // meaning. The URL is made on use: pathToFileURL costs a third of a
  // millisecond, and a one-off lookup never needs it.
  define: { 'import.meta.url': '__netintelModule.url', 'import.meta.dirname': '__dirname' },
  plugins: [lazyBuiltins, processGlobal, chalkWithoutDetection, fastStringWidth, dynamicImportAsRequire],
  logLevel: 'warning',
};

/**
 * Packages the lookup commands use only on some runs (a host name to
 * resolve, a table, XML or CSV output, tz-lookup's world map for a city
 * database other than the one data/build/zones.idx was built from) are
 * more than a third of the lookup bundle's code, and every start reads and
 * copies the whole bundle and its code cache (about 0.5 ms for tz-lookup's
 * 73 KB alone here). In the start-up bundles they are chunks of their own
 * under dist/bundle/vendor/, loaded with their own code cache through
 * bin/load-bundle.js (loadVendorChunk) where the modules that use them
 * initialise (tz-lookup: on first call). These are libraries without state
 * shared with netintel's code, so a separate copy changes nothing. The
 * whole CLI's bundle and the worker's keep them all inside.
 */
const VENDOR_CHUNKS = {
  'dns-packet': { file: 'dns-packet', contents: "module.exports = require('dns-packet');" },
  'cli-table3': { file: 'cli-table3', contents: "module.exports = require('cli-table3');" },
  'fast-xml-parser': { file: 'fast-xml-builder', contents: "export { XMLBuilder } from 'fast-xml-parser';" },
  'csv-stringify/sync': { file: 'csv-stringify', contents: "export { stringify } from 'csv-stringify/sync';" },
  '@photostructure/tz-lookup': { file: 'tz-lookup', contents: "module.exports = require('@photostructure/tz-lookup');" },
};

const vendorChunkImports = {
  name: 'vendor-chunk-imports',
  setup(b) {
    const vendored = new RegExp(`^(${Object.keys(VENDOR_CHUNKS).map((name) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|')})$`);
    b.onResolve({ filter: vendored }, (args) => ({ path: args.path, namespace: 'vendor-chunk' }));
    b.onResolve({ filter: /^\.\.\/\.\.\/bin\/load-bundle\.js$/, namespace: 'vendor-chunk' }, (args) => ({ path: args.path, external: true }));
    b.onLoad({ filter: /.*/, namespace: 'vendor-chunk' }, (args) => ({
      // The bundle's require resolves from dist/bundle/, where the loader is two levels up.
      contents: `module.exports = require('../../bin/load-bundle.js').loadVendorChunk(${JSON.stringify(VENDOR_CHUNKS[args.path].file)});`,
      loader: 'js',
    }));
  },
};

const vendorEntries = {
  name: 'vendor-entries',
  setup(b) {
    b.onResolve({ filter: /^vendor-entry:/ }, (args) => ({ path: args.path.slice('vendor-entry:'.length), namespace: 'vendor-entry' }));
    b.onLoad({ filter: /.*/, namespace: 'vendor-entry' }, (args) => ({ contents: VENDOR_CHUNKS[args.path].contents, loader: 'js', resolveDir: root }));
  },
};

/**
 * The direct bundle (src/cli/main-direct.ts) runs ip, vpn and asn only for
 * addresses and AS numbers: src/cli/direct-request.ts declines host names,
 * so nothing in it asks DNS. The engine context still names the DNS
 * transport (a dynamic import, which esbuild bundles), a sixth of the
 * bundle; here it is a module whose use fails loudly instead.
 */
const withoutDnsTransport = {
  name: 'without-dns-transport',
  setup(b) {
    b.onResolve({ filter: /^\.\/dns\/dns-transport\.js$/ }, (args) =>
      args.kind === 'dynamic-import' && args.importer.endsWith(join('src', 'engine', 'context.ts')) ? { path: 'dns-transport', namespace: 'left-out' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'left-out' }, () => ({
      contents: "export function createDnsTransport() { throw new Error('the direct bundle holds no DNS engine: src/cli/direct-request.ts must decline this run'); }",
      loader: 'js',
    }));
  },
};

/**
 * The two bundles a one-off lookup starts from also get short local names:
 * the direct bundle goes from 201 to 164 KB, and reading it into a fresh
 * buffer and copying it into a string cost about 2.5 µs per KB here (page
 * faults of new memory, mostly): about 0.2 ms of `netintel ip 8.8.8.8`.
 * Property names, and so every message and JSON key, are untouched; a
 * stack trace maps back through the source map (node --enable-source-maps).
 */
const STARTUP_NAMES = { minifyIdentifiers: true };

await Promise.all([
  build({
    ...common,
    entryPoints: { main: 'src/cli/main.ts' },
    banner: { js: `${WRAPPER_HEAD}${IMPORT_META_URL}` },
    footer: { js: WRAPPER_TAIL },
  }),
  build({
    ...common,
    entryPoints: { lookup: 'src/cli/main-lookup.ts' },
    banner: { js: `${WRAPPER_HEAD}${IMPORT_META_URL}` },
    footer: { js: WRAPPER_TAIL },
    plugins: [vendorChunkImports, ...common.plugins],
    ...STARTUP_NAMES,
  }),
  build({
    ...common,
    entryPoints: { direct: 'src/cli/main-direct.ts' },
    banner: { js: `${WRAPPER_HEAD}${IMPORT_META_URL}` },
    footer: { js: WRAPPER_TAIL },
    plugins: [withoutDnsTransport, vendorChunkImports, ...common.plugins],
    ...STARTUP_NAMES,
  }),
  build({
    ...common,
    entryPoints: Object.fromEntries(Object.entries(VENDOR_CHUNKS).map(([name, { file }]) => [`vendor/${file}`, `vendor-entry:${name}`])),
    banner: { js: WRAPPER_HEAD },
    footer: { js: WRAPPER_TAIL },
    plugins: [vendorEntries, ...common.plugins],
  }),
  // A worker thread loads its file as an ordinary CommonJS module.
  build({ ...common, entryPoints: { 'bulk-worker': 'src/cli/bulk-worker.ts' }, banner: { js: IMPORT_META_URL } }),
]);

// load-bundle.js reads these as latin1, which is their text only while they are ASCII.
for (const name of ['main.cjs', 'lookup.cjs', 'direct.cjs', ...Object.values(VENDOR_CHUNKS).map(({ file }) => `vendor/${file}.cjs`)]) {
  const bytes = readFileSync(join(root, 'dist', 'bundle', name));
  const offset = bytes.findIndex((byte) => byte > 0x7f);
  if (offset !== -1) throw new Error(`dist/bundle/${name}: a byte above 0x7f at offset ${offset}; the loader reads the bundle as latin1`);
}
