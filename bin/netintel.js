#!/usr/bin/env node
'use strict';
// The executable: hands the process to the CLI and sets the exit code. It
// never calls process.exit() on a normal run, which would cut piped output
// short.
//
// CommonJS on purpose (bin/package.json): an ES module entry starts slower.
// Every command runs from one bundle (scripts/bundle.mjs), compiled with the
// V8 code cache written next to it at build time (bin/load-bundle.js), so a
// one-off lookup does not compile the CLI from source.
const { writeSync } = require('node:fs');

const argv = process.argv.slice(2);
const debug = isDebugRun(argv, process.env);
// Stack traces name the TypeScript sources (the bundles ship their maps)
// only when asked: reading the maps is for the one who debugs.
if (debug) require('./debug-stack.js').installSourceMappedStacks();

const BUG_HINT = 'this is a bug in netintel: please report it with the command that caused it; NETINTEL_DEBUG=1 (or --debug) shows the details';
let crashed = false;

/**
 * The net under everything: an exception nothing caught or a rejection
 * nothing handled is a bug, reported like any failure, as one line (the
 * stack with --debug) and exit 1, never as Node's dump of the bundle's
 * source. The run cannot go on safely after one; output already written
 * stays (writes to pipes and files are synchronous), and the process ends
 * shortly if something still holds it open.
 */
function crash(error) {
  if (crashed) return;
  crashed = true;
  process.exitCode = 1;
  const message = error instanceof Error ? error.message : String(error);
  let text = `netintel: internal error: ${visible(message)} (${BUG_HINT})\n`;
  if (debug && error instanceof Error && error.stack) text += `${error.stack}\n`;
  try {
    writeSync(2, text);
  } catch {
    // stderr is gone too: the exit code still tells.
  }
  setTimeout(() => process.exit(1), 1000).unref();
}
process.on('uncaughtException', crash);
process.on('unhandledRejection', crash);

/** Control characters written visibly, as src/output/terminal-text.ts does (this file loads before any bundle). */
function visible(text) {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, (char) => {
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

/** As src/cli/run-guard.ts's debugRequested: NETINTEL_DEBUG (not 0/false) or --debug before `--`. */
function isDebugRun(args, env) {
  const variable = env.NETINTEL_DEBUG;
  if (variable !== undefined && variable !== '' && !/^(0|false)$/i.test(variable)) return true;
  for (const arg of args) {
    if (arg === '--') break;
    if (arg === '--debug') return true;
  }
  return false;
}

try {
  const { loadCli } = require('./load-bundle.js');
  const cli = loadCli();
  cli.main(argv, cli.createProcessIo()).then((code) => {
    if (!crashed) process.exitCode = code;
  }, crash);
} catch (error) {
  crash(error);
}
