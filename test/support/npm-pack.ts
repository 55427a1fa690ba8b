import { execFileSync } from 'node:child_process';
import { REPO_ROOT } from './cli.js';

export interface PackReport {
  filename: string;
  size: number;
  unpackedSize: number;
  files: Array<{ path: string }>;
}

/** `npm pack --json --ignore-scripts ...args` of the repository: its report of the one package. */
export function npmPack(args: readonly string[]): PackReport {
  // stderr piped, not ignored: a failing npm pack then throws with npm's own words in the message.
  const output = execFileSync('npm', ['pack', '--json', '--ignore-scripts', ...args], { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const report = JSON.parse(output) as PackReport[] | Record<string, PackReport>;
  // npm 11 reports an array of packages, npm 12 an object keyed by package name.
  const packed = Array.isArray(report) ? report[0] : Object.values(report)[0];
  if (packed === undefined) throw new Error(`npm pack reported no package: ${output.slice(0, 200)}`);
  return packed;
}
