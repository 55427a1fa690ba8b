/**
 * Python's `ipaddress` module as a reference implementation: the Python
 * interpreter to run it with (Debian's /usr/bin/python3 first, else the
 * python3 on PATH), or null when none can import it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export function findPython(): string | null {
  for (const candidate of [...(existsSync('/usr/bin/python3') ? ['/usr/bin/python3'] : []), 'python3']) {
    const probe = spawnSync(candidate, ['-c', 'import ipaddress, json, sys; print(sys.version.split()[0])'], { encoding: 'utf8' });
    if (probe.status === 0) return candidate;
  }
  return null;
}

/** Runs `script` once with `input` as JSON on stdin; its stdout read as JSON. */
export function runPythonJson<T>(python: string, script: string, input: unknown): T {
  const run = spawnSync(python, ['-c', script], { input: JSON.stringify(input), encoding: 'utf8', maxBuffer: 1 << 28 });
  if (run.status !== 0) throw new Error(`${python} failed (status ${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}
