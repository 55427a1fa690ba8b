import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import BetterSqlite3 from 'better-sqlite3';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { openFailure } from '../../src/store/sqlite-database.js';

const here = createRequire(import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'netintel-sqlite-driver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What better-sqlite3 itself throws when it is asked to open a database and `attempt` fails to load its native module. */
function driverError(attempt: () => unknown): Error {
  try {
    attempt();
  } catch (error) {
    return error as Error;
  }
  throw new Error('the driver opened a database');
}

describe('a key database whose SQLite driver cannot load', () => {
  it('installed without its build (npm 12 skipped its install script): data_unavailable, naming the fix', () => {
    // better-sqlite3 as an install that skipped its install script leaves it: its JavaScript and its
    // dependencies, no build directory.
    const packageDir = join(dir, 'node_modules', 'better-sqlite3');
    const real = join(here.resolve('better-sqlite3/package.json'), '..');
    mkdirSync(packageDir, { recursive: true });
    cpSync(join(real, 'lib'), join(packageDir, 'lib'), { recursive: true });
    cpSync(join(real, 'package.json'), join(packageDir, 'package.json'));
    for (const dependency of ['bindings', 'file-uri-to-path']) symlinkSync(join(here.resolve(`${dependency}/package.json`), '..'), join(dir, 'node_modules', dependency));
    const Unbuilt = createRequire(join(dir, 'index.js'))('better-sqlite3') as typeof BetterSqlite3;

    const error = driverError(() => new Unbuilt(':memory:'));
    expect(error.message).toMatch(/^Could not locate the bindings file/);
    const failure = openFailure('/srv/netintel/keys.db', error);
    expect(failure.code).toBe('data_unavailable');
    expect(exitCodeFor(failure.code)).toBe(6);
    expect(failure.message).toBe(
      `cannot open the key database /srv/netintel/keys.db: better-sqlite3, the SQLite driver, has no native module built for this Node (${process.version}): run npm rebuild better-sqlite3 in the directory netintel is installed in`,
    );
    // One line: the driver's own message lists every path it tried, a line each.
    expect(failure.message).not.toContain('\n');
  });

  it('a native module Node cannot load (built for another Node, or not a module at all): the same', () => {
    const notAModule = join(dir, 'better_sqlite3.node');
    writeFileSync(notAModule, 'not an ELF file\n');
    const error = driverError(() => new BetterSqlite3(':memory:', { nativeBinding: notAModule }));
    expect((error as NodeJS.ErrnoException).code).toBe('ERR_DLOPEN_FAILED');
    const failure = openFailure('keys.db', error);
    expect(failure.code).toBe('data_unavailable');
    expect(failure.message).toContain('run npm rebuild better-sqlite3');
  });

  it('a file SQLite cannot open stays a usage error about the path', () => {
    const error = driverError(() => new BetterSqlite3(join(dir, 'missing', 'dir', 'keys.db'), { fileMustExist: true }));
    const failure = openFailure('missing/dir/keys.db', error);
    expect(failure.code).toBe('usage');
    expect(failure.message).toMatch(/^cannot open the key database missing\/dir\/keys\.db: .+ \(check the path and its permissions\)$/);
  });
});
