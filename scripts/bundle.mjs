// Bundles the CLI into CommonJS files: dist/bundle/main.cjs (every command,
// the one entry bin/netintel.js loads) and dist/bundle/bulk-worker.cjs (the
// worker thread of long bulk runs). A Node start
// pays for every module file it resolves, reads and compiles, and an ESM
// import of a builtin (node:fs) loads all of its lazy parts; one CommonJS
// file whose modules initialise on first use keeps `netintel ip 8.8.8.8`
// close to the cost of starting Node itself (see bench/). Type checking
// stays with tsc.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * chalk detects colour support when it loads, through node:tty, which
 * brings node:net and the stream modules with it. netintel decides colour itself (a terminal, NO_COLOR, TERM=dumb;
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
 * use and which is slow to load; netintel's own modules use node:module and
 * node:os only in fallbacks (a hoisted install, no $HOME). Those imports get a stand-in, an ES module whose
 * functions load the real module on first call: esbuild binds an import to
 * the function itself, so the stand-in costs nothing until then. Only
 * functions are stood in for; importing anything else from these modules
 * fails the build ("No matching export"), which is the cue to widen this.
 * A stood-in class makes real instances, but `instanceof` the stand-in is
 * false: test what an object is some other way.
 */
const LAZY_BUILTINS = [
  // esbuild names an importer by its real path: node_modules may be a link.
  { module: 'node:child_process', importers: realpathSync(join(root, 'node_modules', 'commander')) },
  { module: 'node:module', importers: join(root, 'src') },
  { module: 'node:os', importers: join(root, 'src') },
  // The bulk command's worker threads, which only long bulk runs start.
  { module: 'node:worker_threads', importers: join(root, 'src', 'operations', 'bulk-threads.ts') },
  // Hashes, keys and random bytes: a lookup of an address uses none.
  { module: 'node:crypto', importers: join(root, 'src') },
  // Files read and written whole (resolv.conf, datasets, keys): node:fs/promises brings nine of Node's modules
  // (readline's, the watchers') that a lookup of an address never uses.
  { module: 'node:fs/promises', importers: join(root, 'src') },
];
const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(b) {
    b.onResolve({ filter: /^(node:)?(child_process|crypto|fs\/promises|module|os|worker_threads)$/ }, (args) => {
      const module = args.path.startsWith('node:') ? args.path : `node:${args.path}`;
      const lazy = LAZY_BUILTINS.some((entry) => entry.module === module && args.importer.startsWith(entry.importers));
      return lazy ? { path: module, namespace: 'lazy-builtin' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, async (args) => {
      const real = await import(args.path);
      const functions = Object.keys(real).filter((name) => name !== 'default' && /^[A-Za-z_$][\w$]*$/.test(name) && typeof real[name] === 'function');
      const stand = (name) =>
        // `new` of the stand-in itself makes an instance of the real class (its prototype, its methods).
        `export function ${name}(...args) { const real = load().${name}; return new.target ? Reflect.construct(real, args, new.target === ${name} ? real : new.target) : real.apply(this, args); }`;
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

// Data packages are read from disk at run time, never bundled. The server's
// packages (better-sqlite3 and secure-session's sodium-native are native) load from node_modules, and only for
// serve, keys and remote runs: they would make every start-up pay for them.
// undici (data update's downloads), pino-pretty (serve's terminal log),
// prom-client (serve's metrics), mailparser (the reports attached to mail
// that dmarc-report reads) and @peculiar's ASN.1 readers (the certificates
// netintel tls describes) likewise load only for the command that uses them.
const EXTERNAL = ['@ip-location-db/*', 'fastify', '@fastify/*', 'openid-client', 'better-sqlite3', 'pg', 'ioredis', 'undici', 'pino-pretty', 'prom-client', 'mailparser', '@peculiar/*'];

function isExternal(path) {
  return (
    path.startsWith('node:') ||
    EXTERNAL.some((pattern) => (pattern.endsWith('/*') ? path.startsWith(pattern.slice(0, -1)) : path === pattern || path.startsWith(`${pattern}/`)))
  );
}

/**
 * The mail libraries, with what they bring (iconv-lite's and
 * encoding-japanese's charset tables, joi), are over half of the CLI's
 * bytes, and only the mail commands use them (headers, dmarc-report, the
 * accounts' mail); so does tldts, the public suffix list of their
 * alignment (src/engine/mail/organisational-domain.ts). They go to a
 * bundle of their own, dist/bundle/mail.cjs, which bin/load-bundle.js
 * loads, with its own code cache, the first time one of them is needed:
 * every other command reads less than half as many bytes at start. An
 * import of one of them in main.cjs becomes a module that asks mail.cjs
 * for it; the imports met are recorded, and mail.cjs is built to answer
 * exactly those.
 */
const MAIL_LIBRARIES = ['mailauth', 'libmime', 'nodemailer', 'tldts'];
/** nodemailer's address parser, one small file and all that dkim --message needs of them, stays in main.cjs. */
const KEPT_IN_MAIN = ['nodemailer/lib/addressparser'];
const mailImports = new Set();
const mailLibrariesApart = {
  name: 'mail-libraries-apart',
  setup(b) {
    b.onResolve({ filter: new RegExp(`^(${MAIL_LIBRARIES.join('|')})(/|$)`) }, (args) => {
      if (!args.importer.startsWith(join(root, 'src')) || KEPT_IN_MAIN.includes(args.path)) return undefined;
      mailImports.add(args.path);
      return { path: args.path, namespace: 'mail-bundle' };
    });
    // The loader is the package's own file, beside dist/: required, not bundled.
    b.onResolve({ filter: /load-bundle\.js$/, namespace: 'mail-bundle' }, (args) => ({ path: args.path, external: true }));
    b.onLoad({ filter: /.*/, namespace: 'mail-bundle' }, (args) => ({
      contents: `module.exports = require('../../bin/load-bundle.js').mailLibrary(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/** The entry of mail.cjs: by specifier, a function that initialises and returns each library main.cjs imports. */
function mailEntry() {
  const cases = [...mailImports].sort().map((specifier) => `  ${JSON.stringify(specifier)}: () => require(${JSON.stringify(specifier)}),`);
  return `module.exports = {\n${cases.join('\n')}\n};\n`;
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
 * bin/load-bundle.js compiles main.cjs with vm.Script (for the code
 * cache), which needs the CommonJS function wrapper around the source. It
 * is written into the file, Node's own (Module.wrap), so the loader compiles
 * the file's text as it is and line 1 reads as it does under require().
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
  // Without comments, indentation and long local names the bundle is much
  // smaller and pure ASCII (esbuild escapes any other character): less to
  // read, and a smaller code cache to deserialise, at every start, and
  // bin/load-bundle.js can read it as latin1. Property names, and so every
  // message and JSON key, are untouched; a stack trace maps back to the
  // sources through the source map (NETINTEL_DEBUG=1).
  minifyWhitespace: true,
  minifySyntax: true,
  minifyIdentifiers: true,
  charset: 'ascii',
  legalComments: 'none',
  external: EXTERNAL,
  // import.meta.dirname finds the package's data; both get their CommonJS
  // meaning. The URL is made on use: a one-off lookup never needs it.
  define: { 'import.meta.url': '__netintelModule.url', 'import.meta.dirname': '__dirname' },
  plugins: [lazyBuiltins, processGlobal, chalkWithoutDetection, dynamicImportAsRequire],
  logLevel: 'warning',
};

// Bundles and caches of an earlier build, in another layout, go first.
rmSync(join(root, 'dist', 'bundle'), { recursive: true, force: true });

const loadedByTheLoader = { banner: { js: `${WRAPPER_HEAD}${IMPORT_META_URL}` }, footer: { js: WRAPPER_TAIL } };
await Promise.all([
  build({ ...common, ...loadedByTheLoader, entryPoints: { main: 'src/app/main.ts' }, plugins: [mailLibrariesApart, ...common.plugins] }),
  // A worker thread loads its file as an ordinary CommonJS module.
  build({ ...common, entryPoints: { 'bulk-worker': 'src/operations/bulk-worker.ts' }, banner: { js: IMPORT_META_URL } }),
]);
await build({ ...common, ...loadedByTheLoader, stdin: { contents: mailEntry(), resolveDir: root, sourcefile: 'mail-libraries.js' }, outfile: 'dist/bundle/mail.cjs', outdir: undefined });

for (const name of ['main', 'mail']) {
  // load-bundle.js reads a bundle as latin1, which is its text only while it is ASCII.
  const bytes = readFileSync(join(root, 'dist', 'bundle', `${name}.cjs`));
  const offset = bytes.findIndex((byte) => byte > 0x7f);
  if (offset !== -1) throw new Error(`dist/bundle/${name}.cjs: a byte above 0x7f at offset ${offset}; the loader reads the bundle as latin1`);
  // The bundle's identity, for the code caches a user's runs keep of it (bin/load-bundle.js).
  writeFileSync(join(root, 'dist', 'bundle', `${name}.cjs.sha256`), `${createHash('sha256').update(bytes).digest('hex')}\n`);
}
