/**
 * The DB-IP credit: on stderr once, under records shown on a terminal
 * (a real pseudo-terminal through util-linux `script`), never with -q and
 * never in redirected output.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin/netintel.js');
const CREDIT = 'IP geolocation by DB-IP (https://db-ip.com), CC BY 4.0';
const hasScript = spawnSync('sh', ['-c', 'command -v script']).status === 0;
if (!hasScript) console.warn('SKIPPED: util-linux script is not installed; the terminal cases of the credit do not run');

/** Runs netintel on a pseudo-terminal; stderr goes to the file `errPath` inside it, stdout stays on the terminal. */
function onTerminal(args: string, errRedirect: string): string {
  return execFileSync('script', ['-qfec', `node ${BIN} ${args} ${errRedirect}`, '/dev/null'], { encoding: 'utf8', cwd: ROOT });
}

describe('the data credit', () => {
  it.skipIf(!hasScript)('goes to stderr once when stdout is a terminal', () => {
    const both = onTerminal('ip 8.8.8.8 1.1.1.1 --fields location.city', '');
    expect(both.split(CREDIT)).toHaveLength(2);
    const withoutStderr = onTerminal('ip 8.8.8.8 1.1.1.1 --fields location.city', '2>/dev/null');
    expect(withoutStderr).toContain('Mountain View');
    expect(withoutStderr).not.toContain(CREDIT);
  });

  it.skipIf(!hasScript)('is left out with -q', () => {
    expect(onTerminal('ip 8.8.8.8 -q', '')).not.toContain(CREDIT);
  });

  it('is in neither stream when stdout is redirected, whatever the format', () => {
    for (const format of ['table', 'csv', 'json', 'value']) {
      const result = spawnSync(process.execPath, [BIN, 'ip', '8.8.8.8', '-f', format], { encoding: 'utf8' });
      expect(result.status).toBe(0);
      expect(result.stdout).not.toContain('DB-IP');
      expect(result.stderr).not.toContain('DB-IP');
    }
  });
});
