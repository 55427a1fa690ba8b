#!/usr/bin/env node
// The executable: hands the process to the CLI and sets the exit code. It
// never calls process.exit(), which would cut piped output short. The CLI is
// one CommonJS bundle (see scripts/bundle.mjs), loaded with require so that
// Node does not scan it for ESM named exports.
import { createRequire } from 'node:module';

const { main } = createRequire(import.meta.url)('../dist/bundle/main.cjs');

process.exitCode = await main(process.argv.slice(2), {
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});
