#!/usr/bin/env node
'use strict';
// The executable: hands the process to the CLI and sets the exit code. It
// never calls process.exit(), which would cut piped output short.
//
// CommonJS on purpose (bin/package.json): an ES module entry costs about
// 10 ms more to start. The CLI is one bundle (scripts/bundle.mjs) compiled
// with the V8 code cache written next to it at build time, so a one-off
// lookup does not pay for compiling half a megabyte of JavaScript.
const { loadBundle } = require('./load-bundle.js');

// A reader that goes away (`netintel --help | head`) ends the output, not
// the process with a stack trace; the commands stop writing on their own.
process.stdout.on('error', (error) => {
  if (error.code !== 'EPIPE') throw error;
});

// stdin is opened only when a command reads it: an open stdin handle keeps
// the process waiting after a one-off lookup.
const io = {
  get stdin() {
    return process.stdin;
  },
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
};

loadBundle()
  .main(process.argv.slice(2), io)
  .then((code) => {
    process.exitCode = code;
  });
