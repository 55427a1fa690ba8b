// Runs the CLI's built entry in-process and reports where a one-off run's
// time goes: Node bootstrap (until this file runs), importing the CLI's
// module graph, main() itself, and the event loop draining after it. The report is one line on fd 3 so it does
// not mix with the command's own stdout and stderr.
// Usage: node startup-phases.mjs ENTRY.js ARGS... 3>report
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';

const bootstrapMs = performance.now();
const [entry, ...args] = process.argv.slice(2);
// Loaded the way bin/netintel.js loads it: require() for a CommonJS bundle.
const { main } = entry.endsWith('.cjs') ? createRequire(import.meta.url)(entry) : await import(entry);
const importedAt = performance.now();
const code = await main(args, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env });
const ranAt = performance.now();
process.exitCode = code;
// The 'exit' event fires once the event loop is empty: the time from main()
// returning to it is handles still open (streams, timers, file descriptors).
process.on('exit', () => {
  const exitEventAt = performance.now();
  const report = { bootstrapMs, importMs: importedAt - bootstrapMs, mainMs: ranAt - importedAt, drainMs: exitEventAt - ranAt, exitEventAtMs: exitEventAt, code };
  writeSync(3, `${JSON.stringify(report)}\n`);
});
