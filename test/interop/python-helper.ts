/**
 * The Python side of the differential tests against dkimpy (Debian
 * python3-dkim): the interpreter that can import what a test needs, and a
 * helper script run once on one JSON request for a whole batch.
 */
import { spawn, spawnSync } from 'node:child_process';

/** The first Python that runs `probe` (an import line): the python3 first on PATH may be another install than Debian's. */
export function findPython(probe: string): string | null {
  for (const candidate of ['python3', '/usr/bin/python3', '/usr/local/bin/python3', 'python']) {
    if (spawnSync(candidate, ['-c', probe], { stdio: 'ignore' }).status === 0) return candidate;
  }
  return null;
}

/** Runs `helper` with `python` on one JSON request and resolves with its JSON reply. */
export function runPythonHelper<T>(python: string, helper: string, request: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, [helper], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${helper} exited ${code}: ${Buffer.concat(err).toString()}`));
      else resolve(JSON.parse(Buffer.concat(out).toString()) as T);
    });
    child.stdin.end(JSON.stringify(request));
  });
}
