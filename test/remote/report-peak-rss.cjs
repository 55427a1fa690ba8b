'use strict';
// Loaded with `node --require` into a CLI run under test: at exit it writes
// the process's peak resident set size, in KiB, to the file
// NETINTEL_TEST_RSS_FILE names. VmHWM is the peak of this program's own
// memory; process.resourceUsage().maxRSS (the fallback where /proc is
// missing) may also count the parent's memory at the fork that started it,
// as Linux carries that figure across exec.
const { readFileSync, writeFileSync } = require('node:fs');

process.on('exit', () => {
  const file = process.env.NETINTEL_TEST_RSS_FILE;
  if (!file) return;
  let peak = process.resourceUsage().maxRSS;
  try {
    const match = /VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match) peak = Number(match[1]);
  } catch {
    // no /proc: maxRSS stands
  }
  writeFileSync(file, String(peak));
});
