// Builds bench/baseline/mmdb-loop.c (gcc + libmaxminddb) into a temp dir,
// once per source version. Returns the binary, or why it could not be built.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function buildMmdbLoop(sourcePath) {
  const source = readFileSync(sourcePath);
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 12);
  const dir = join(tmpdir(), 'netintel-bench');
  mkdirSync(dir, { recursive: true });
  const binary = join(dir, `mmdb-loop-${hash}`);
  if (existsSync(binary)) return { binary, built: false };
  const compiler = ['gcc', 'cc'].find((name) => spawnSync(name, ['--version'], { stdio: 'ignore' }).status === 0);
  if (!compiler) {
    return { skipped: 'no C compiler (install: apt-get update && apt-get install -y gcc libmaxminddb-dev)' };
  }
  const result = spawnSync(compiler, ['-O2', '-o', binary, sourcePath, '-lmaxminddb'], { encoding: 'utf8' });
  if (result.status !== 0) {
    const detail = (result.stderr || result.stdout || '').trim().split('\n').slice(0, 3).join(' | ');
    const hint = /maxminddb\.h|lmaxminddb/.test(detail) ? 'libmaxminddb-dev missing (install: apt-get install -y libmaxminddb-dev)' : 'compile failed';
    return { skipped: `${hint}: ${detail}` };
  }
  return { binary, built: true, compiler };
}
