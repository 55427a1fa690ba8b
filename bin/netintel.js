#!/usr/bin/env node
'use strict';
// The executable: hands the process to the CLI and sets the exit code. It
// never calls process.exit(), which would cut piped output short.
//
// CommonJS on purpose (bin/package.json): an ES module entry costs about
// 10 ms more to start. The CLI is bundled (scripts/bundle.mjs) and compiled
// with the V8 code cache written next to it at build time, so a one-off
// lookup does not pay for compiling half a megabyte of JavaScript.
const { loadCli } = require('./load-bundle.js');

const argv = process.argv.slice(2);
const cli = loadCli(argv, process.env);
cli.main(argv, cli.createProcessIo()).then((code) => {
  process.exitCode = code;
});
