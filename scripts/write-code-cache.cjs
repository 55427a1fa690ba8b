'use strict';
// Build step after the bundles: runs representative commands through each
// bundle (so V8 compiles the functions a one-off run needs) and writes the
// V8 code cache beside it for bin/load-bundle.js. Output goes nowhere.
const fs = require('node:fs');
const { PassThrough, Readable } = require('node:stream');
const { loadBundle, BUNDLE, LOOKUP_BUNDLE } = require('../bin/load-bundle.js');

const WARM_UP = [
  [LOOKUP_BUNDLE, [['ip', '8.8.8.8', '-f', 'json'], ['ip', '8.8.8.8'], ['asn', '8.8.8.8', '-f', 'json'], ['vpn', '8.8.8.8', '-f', 'json']]],
  [BUNDLE, [['dns', '--help']]],
];

async function writeCache(bundle, runs) {
  fs.rmSync(`${bundle}.cache`, { force: true });
  const { exports, script } = loadBundle(bundle, true);
  const sink = () => Object.assign(new PassThrough(), { isTTY: false }).resume();
  const io = { stdin: Readable.from([]), stdout: sink(), stderr: sink(), env: {} };
  for (const argv of runs) await exports.main(argv, io);
  fs.writeFileSync(`${bundle}.cache`, script.createCachedData());
}

async function main() {
  for (const [bundle, runs] of WARM_UP) await writeCache(bundle, runs);
}

main().catch((error) => {
  // Without the cache the CLI still works; it only starts slower.
  process.stderr.write(`write-code-cache: ${error instanceof Error ? error.message : String(error)}\n`);
});
