#!/usr/bin/env node
// The executable: hands the process to the CLI and sets the exit code. It
// never calls process.exit(), which would cut piped output short.
import { main } from '../dist/src/cli/main.js';

process.exitCode = await main(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});
