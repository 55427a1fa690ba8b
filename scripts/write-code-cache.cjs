'use strict';
// Build step after the bundle: runs one representative lookup through the
// bundle (so V8 compiles the functions a one-off run needs) and writes the
// V8 code cache beside it for bin/load-bundle.js. Output goes nowhere.
const fs = require('node:fs');
const { PassThrough, Readable } = require('node:stream');
const { loadBundle, BUNDLE } = require('../bin/load-bundle.js');

async function main() {
  try {
    fs.rmSync(`${BUNDLE}.cache`, { force: true });
  } catch {}
  const { exports, script } = loadBundle(BUNDLE, true);
  const sink = () => Object.assign(new PassThrough(), { isTTY: false }).resume();
  const io = { stdin: Readable.from([]), stdout: sink(), stderr: sink(), env: {} };
  for (const argv of [['ip', '8.8.8.8', '-f', 'json'], ['asn', '8.8.8.8', '-f', 'json']]) await exports.main(argv, io);
  fs.writeFileSync(`${BUNDLE}.cache`, script.createCachedData());
}

main().catch((error) => {
  // Without the cache the CLI still works; it only starts slower.
  process.stderr.write(`write-code-cache: ${error instanceof Error ? error.message : String(error)}\n`);
});
