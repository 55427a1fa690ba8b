/**
 * A real browser for tests: Debian's chromium (package chromium) driven by
 * playwright-core, which never downloads a browser of its own.
 *
 * `findChromium()` is null when chromium is not installed: the tests that
 * need it skip and say so.
 */
import { accessSync, constants, mkdirSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Where Debian's /usr/bin/chromium script execs the browser itself. */
const DEBIAN_CHROMIUM_BINARY = '/usr/lib/chromium/chromium';

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function isScript(path: string): boolean {
  try {
    return readFileSync(path).subarray(0, 2).toString('latin1') === '#!';
  } catch {
    return false;
  }
}

/**
 * The chromium program to launch: `chromium` or `chromium-browser` on PATH,
 * else /usr/bin/chromium; null when there is none.
 *
 * Debian's /usr/bin/chromium is a shell script that adds desktop flags
 * (/etc/chromium.d: extensions to load, GPU rasterisation) before exec'ing
 * /usr/lib/chromium/chromium. playwright-core drives either, but launched
 * directly the browser runs with playwright's flags alone, so when the
 * found program is such a script and that binary exists, the binary is
 * returned.
 */
export function findChromium(): string | null {
  const onPath = (name: string) =>
    (process.env['PATH'] ?? '')
      .split(delimiter)
      .filter((dir) => dir !== '')
      .map((dir) => join(dir, name))
      .find(isExecutable);
  const found = onPath('chromium') ?? onPath('chromium-browser') ?? (isExecutable('/usr/bin/chromium') ? '/usr/bin/chromium' : undefined);
  if (found === undefined) return null;
  if (isScript(found) && isExecutable(DEBIAN_CHROMIUM_BINARY)) return DEBIAN_CHROMIUM_BINARY;
  return found;
}

/**
 * Launches chromium headless. As root (CI) chromium refuses to start with
 * its sandbox, which needs an unprivileged user: --no-sandbox then.
 *
 * @throws Error when chromium is not installed.
 */
export async function launchBrowser(): Promise<Browser> {
  const executablePath = findChromium();
  if (executablePath === null) throw new Error('chromium is not installed (apt-get install chromium)');
  const runningAsRoot = process.getuid?.() === 0;
  return chromium.launch({ executablePath, headless: true, args: runningAsRoot ? ['--no-sandbox'] : [] });
}

/**
 * test-artifacts/screenshots/<name>.png under the repository root, its
 * directory made (git ignores test-artifacts/). The name is one path
 * segment: a screenshot cannot land outside that directory.
 */
export function screenshotPath(name: string): string {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) throw new Error(`screenshot name ${JSON.stringify(name)} must be letters, digits, dots, dashes and underscores`);
  const dir = join(REPO_ROOT, 'test-artifacts', 'screenshots');
  mkdirSync(dir, { recursive: true });
  return join(dir, `${name}.png`);
}
