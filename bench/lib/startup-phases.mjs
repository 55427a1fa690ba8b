// Runs the CLI in-process the way bin/netintel.js does and reports where a
// one-off run's time goes: Node bootstrap (until this file runs), loading the
// CLI (the bundle, through bin/load-bundle.js, or the built module graph
// of an unbundled build), main() itself, and the event
// loop draining after it. The report is one line on fd 3 so it does not mix
// with the command's own stdout and stderr.
// Usage: node startup-phases.mjs ENTRY ARGS... 3>report
// ENTRY is bin/load-bundle.js or a built main module.
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';

const bootstrapMs = performance.now();
const [entry, ...args] = process.argv.slice(2);
const cli = entry.endsWith('load-bundle.js') ? createRequire(import.meta.url)(entry).loadCli() : await import(entry);
const importedAt = performance.now();
// The io bin/netintel.js gives main(): process.stdout would load Node's stream and socket modules.
const io = cli.createProcessIo?.() ?? { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env };
const code = await cli.main(args, io);
const ranAt = performance.now();
process.exitCode = code;
// The 'exit' event fires once the event loop is empty: the time from main()
// returning to it is handles still open (streams, timers, file descriptors).
process.on('exit', () => {
  const exitEventAt = performance.now();
  const report = { bootstrapMs, importMs: importedAt - bootstrapMs, mainMs: ranAt - importedAt, drainMs: exitEventAt - ranAt, exitEventAtMs: exitEventAt, code };
  writeSync(3, `${JSON.stringify(report)}\n`);
});
