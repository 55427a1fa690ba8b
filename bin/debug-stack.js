'use strict';
// Stack traces of a debug run (NETINTEL_DEBUG=1 or --debug) in terms of the
// TypeScript sources. bin/load-bundle.js compiles the bundle with
// vm.Script, whose frames Node's own source-map support (--enable-source-maps,
// process.setSourceMapsEnabled) does not map in Node 20; so frames in a file
// with a source map beside it (dist/bundle/*.cjs.map, scripts/bundle.mjs
// writes them) are mapped here, with node:module's SourceMap. Loaded in debug
// runs only: a normal start reads no map.
const fs = require('node:fs');
const path = require('node:path');
const { SourceMap } = require('node:module');

const maps = new Map();

function sourceMapOf(file) {
  if (!maps.has(file)) {
    let map = null;
    try {
      map = new SourceMap(JSON.parse(fs.readFileSync(`${file}.map`, 'utf8')));
    } catch {
      // No map beside it (or not readable): the frame stays as it is.
    }
    maps.set(file, map);
  }
  return maps.get(file);
}

function mappedFrame(frame) {
  const file = frame.getFileName();
  const line = frame.getLineNumber();
  const column = frame.getColumnNumber();
  const map = typeof file === 'string' && file.endsWith('.cjs') && line !== null && column !== null ? sourceMapOf(file) : null;
  const entry = map === null ? null : map.findEntry(line - 1, column - 1);
  if (!entry || entry.originalSource === undefined) return `    at ${frame}`;
  const source = entry.originalSource.startsWith('file://') ? new URL(entry.originalSource).pathname : path.resolve(path.dirname(file), entry.originalSource);
  const name = frame.getFunctionName() ?? '<anonymous>';
  return `    at ${frame.isAsync() ? 'async ' : ''}${name} (${source}:${entry.originalLine + 1}:${entry.originalColumn + 1})`;
}

/** Makes every stack trace of this process name the sources where a bundle's map allows. */
function installSourceMappedStacks() {
  process.setSourceMapsEnabled(true);
  Error.stackTraceLimit = Math.max(Error.stackTraceLimit, 30);
  Error.prepareStackTrace = (error, frames) => {
    let head;
    try {
      head = String(error);
    } catch {
      head = 'Error';
    }
    return [head, ...frames.map(mappedFrame)].join('\n');
  };
}

module.exports = { installSourceMappedStacks };
