#!/usr/bin/env node
'use strict';
// The executable: hands the process to the CLI and sets the exit code. It
// never calls process.exit(), which would cut piped output short.
//
// CommonJS on purpose (bin/package.json): an ES module entry costs about
// 10 ms more to start. The CLI is bundled (scripts/bundle.mjs) and compiled
// with the V8 code cache written next to it at build time, so a one-off
// lookup does not pay for compiling half a megabyte of JavaScript.
const { loadBundle, codeCacheVariant, BUNDLE, LOOKUP_BUNDLE } = require('./load-bundle.js');

// The lookup commands have a bundle of their own (src/cli/main-lookup.ts)
// that starts in about half the time of the whole CLI's.
const LOOKUP_COMMANDS = new Set(['ip', 'asn', 'vpn']);

const argv = process.argv.slice(2);
const cli = LOOKUP_COMMANDS.has(argv[0])
  ? loadBundle(LOOKUP_BUNDLE, { cacheVariant: codeCacheVariant(argv, process.env) })
  : loadBundle(BUNDLE);
cli.main(argv, cli.createProcessIo()).then((code) => {
  process.exitCode = code;
});
